package memory

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift"
)

// TestAppendOnlyBetweenCompactions runs 60 scripted turns of realistic
// outputs. Between compactions every prompt must start with the previous
// prompt, message for message and byte for byte of the rendered template
// (what a server's prefix cache needs); compactions must be rare, and each
// must bring the prompt to the low-water mark; every feedback message of a
// verbatim turn stays shown.
func TestAppendOnlyBetweenCompactions(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := context.Background()
	var prev Prompt
	compactions, appended := 0, 0
	for turn := 1; turn <= 60; turn++ {
		addScriptedTurn(t, h.m, turn)
		seen := len(h.events.events)
		p, err := h.m.Prompt(ctx)
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		compacted := false
		for _, e := range h.events.events[seen:] {
			if e.Kind != EventPrompt {
				compacted = true
			}
		}
		if turn > 1 && !compacted {
			appended++
			if len(p.Messages) <= len(prev.Messages) || !reflect.DeepEqual(prev.Messages, p.Messages[:len(prev.Messages)]) {
				t.Fatalf("turn %d: no compaction, yet the prompt does not start with the previous one", turn)
			}
			old, err := h.model.Chat().Render(prev.Messages, testTools)
			if err != nil {
				t.Fatal(err)
			}
			cur, err := h.model.Chat().Render(p.Messages, testTools)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(cur, old) {
				t.Fatalf("turn %d: the rendered prompt does not start with the previous render", turn)
			}
		}
		if compacted {
			compactions++
			// Over the mark only when nothing but the last 3 turns, with
			// their older outputs cut, is left.
			if low := h.m.lowWater(); p.Assessment.Prompt > low && len(h.m.turns)-h.m.distilled > 3 {
				t.Errorf("turn %d: compaction left %d prompt tokens and %d verbatim turns, over the low-water mark %d",
					turn, p.Assessment.Prompt, len(h.m.turns)-h.m.distilled, low)
			}
		}
		verbatim := len(h.m.turns) - h.m.distilled
		if got := countIn(p.Messages, "Re-check after turn"); got != verbatim {
			t.Errorf("turn %d: %d re-check messages shown for %d verbatim turns", turn, got, verbatim)
		}
		if verbatim < min(turn, 3) {
			t.Errorf("turn %d: %d verbatim turns, want at least 3 (they fit)", turn, verbatim)
		}
		prev = p
	}
	t.Logf("60 turns: %d compactions, %d prompts appended to the previous one", compactions, appended)
	if compactions == 0 || compactions > 60/4 {
		t.Errorf("%d compactions in 60 turns; want some, and at most one per 4 turns", compactions)
	}
}

func countIn(msgs []openai.ChatCompletionMessage, s string) int {
	n := 0
	for _, m := range msgs {
		n += strings.Count(m.Content, s)
	}
	return n
}

// bigTurn adds a turn whose one output takes about tokens tokens, with
// error lines named "ERRLINE <turn>.<i>" spread through it, and returns the
// error lines.
func bigTurn(t *testing.T, m *Memory, turn, lines int) []string {
	t.Helper()
	var b strings.Builder
	var errs []string
	for i := 0; i < lines; i++ {
		if i%97 == 50 {
			e := fmt.Sprintf("ERRLINE %d.%d: error: cannot open /var/lib/aide/aide.db.%d", turn, i, i)
			errs = append(errs, e)
			b.WriteString(e + "\n")
			continue
		}
		fmt.Fprintf(&b, "drwxr-xr-x 2 root root 4096 Jan  1 00:00 /usr/share/doc/pkg-%d-%d\n", turn, i)
	}
	id := fmt.Sprintf("call_%d", turn)
	cmd := fmt.Sprintf("ls -laR /usr/share/doc # %d", turn)
	m.AddAssistant(openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: id, Type: "function",
		Function: openai.FunctionCall{Name: "ssh_apply", Arguments: fmt.Sprintf(`{"command": %q}`, cmd)}}}})
	if err := m.AddToolResult(id, Step{Tool: "ssh_apply", Command: cmd, Action: nightshift.ActionRan, ExitCode: 1, Before: "exit status: 1\n", Stdout: b.String()}); err != nil {
		t.Fatal(err)
	}
	if err := m.SetCheck(nightshift.CheckFail); err != nil {
		t.Fatal(err)
	}
	if err := m.AddFeedback(FeedbackCheck, fmt.Sprintf("Re-check after turn %d: FAIL (exit 1).", turn)); err != nil {
		t.Fatal(err)
	}
	return errs
}

// TestKeepsThreeTurnsBeforeBytes: with outputs of 3,000 to 20,000 tokens —
// some larger than the window — every prompt keeps the last 3 turns' calls
// and every error line of their outputs, cutting the outputs rather than
// dropping turns, and stays under the hard limit.
func TestKeepsThreeTurnsBeforeBytes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := context.Background()
	sizes := []int{150, 900, 200, 400, 1000, 150, 300} // lines of about 20 tokens
	var errs [][]string
	for turn := 1; turn <= 21; turn++ {
		errs = append(errs, bigTurn(t, h.m, turn, sizes[turn%len(sizes)]))
		p, err := h.m.Prompt(ctx)
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		if p.Assessment.Over() {
			t.Fatalf("turn %d: over the hard limit: %s", turn, p.Assessment)
		}
		all := ""
		for _, m := range p.Messages {
			all += m.Content + "\n"
			for _, c := range m.ToolCalls {
				all += c.Function.Arguments + "\n"
			}
		}
		for k := max(1, turn-2); k <= turn; k++ {
			if !strings.Contains(all, fmt.Sprintf("# %d\"", k)) {
				t.Fatalf("turn %d: the call of turn %d is not in the prompt", turn, k)
			}
			for _, e := range errs[k-1] {
				if !strings.Contains(all, e) {
					t.Fatalf("turn %d: error line %q of turn %d is not in the prompt", turn, e, k)
				}
			}
		}
	}
}

// TestCutOnceSameBytes: between compactions an older turn's output is
// shown with the same bytes in every prompt; a compaction may cut it once.
func TestCutOnceSameBytes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := context.Background()
	shown := map[string]string{}
	compactions := 0
	for turn := 1; turn <= 12; turn++ {
		bigTurn(t, h.m, turn, 700)
		before := len(h.events.events)
		p, err := h.m.Prompt(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range h.events.events[before:] {
			if e.Kind == EventDistill || e.Kind == EventDegrade {
				shown = map[string]string{}
				compactions++
				break
			}
		}
		for _, m := range p.Messages[:len(p.Messages)-3] { // not the current turn
			if m.Role != openai.ChatMessageRoleTool {
				continue
			}
			if old, ok := shown[m.ToolCallID]; ok && old != m.Content {
				t.Fatalf("turn %d: %s was shown as %d bytes, now %d", turn, m.ToolCallID, len(old), len(m.Content))
			}
			shown[m.ToolCallID] = m.Content
		}
	}
	if len(shown) == 0 || compactions == 0 {
		t.Fatalf("no older turn shown after the last of %d compactions; the test proves nothing", compactions)
	}
}
