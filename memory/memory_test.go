package memory

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/internal/testenv"

	"github.com/nightshift-dev/nightshift"
)

func TestNewRefusesBadConfig(t *testing.T) {
	t.Parallel()
	ok := Config{Model: qwen3(t)}
	tests := []struct {
		name        string
		mod         func(*Config)
		instruction string
		want        error
		wantText    string
	}{
		{"K below 1", func(c *Config) { c.KeepTurns = -1 }, "x", ErrConfig, "KeepTurns (K) is -1"},
		{"no model", func(c *Config) { c.Model = nil }, "x", ErrConfig, "Model is required"},
		{"history share fills the prompt", func(c *Config) { c.HistoryTokens = 1 << 20 }, "x", ErrConfig, "leaves no room"},
		{"instruction bigger than the window", nil, strings.Repeat("PermitRootLogin no\n", 6000), ErrInstructionTooLarge, "instruction, tools and task take"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			if tt.mod != nil {
				tt.mod(&cfg)
			}
			_, err := New(cfg, tt.instruction, "task")
			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), tt.wantText)
		})
	}
	// A reserve as large as the window is refused by the budget itself.
	_, err := budget.New(budget.Config{ContextWindow: 4096, Reserve: 4096})
	assert.ErrorIs(t, err, budget.ErrConfig, "budget.New with reserve = window")
}

func TestUnderSoftLimitSendsAsIs(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.m.AddAssistant(openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{
		ID: "c1", Type: "function", Function: openai.FunctionCall{Name: "ssh_apply", Arguments: `{"command":"sshd -t"}`}}}})
	require.NoError(t, h.m.AddToolResult("c1", Step{Tool: "ssh_apply", Command: "sshd -t", Action: nightshift.ActionRan, Before: "exit status: 0\n"}))
	p, err := h.m.Prompt(context.Background())
	require.NoError(t, err)
	assert.Len(t, p.Messages, 4, "system, task, assistant, tool")
	assert.Empty(t, historyBlockOf(p.Messages), "history")
	assert.Equal(t, exactCount(t, h, p.Messages), p.Assessment.Prompt, "the assessed prompt tokens and an uncached count")
}

// TestLongHistories runs scripted histories of 20, 50, 100 and 1,000 turns with
// 300–3,000-token outputs and checks every prompt against the window, the
// growth of the history and the number of messages.
func TestLongHistories(t *testing.T) {
	t.Parallel()
	lengths := []int{20, 50, 100, 1000}
	switch {
	case testing.Short():
		lengths = []int{20, 100}
	case testenv.Race:
		// The 1000-turn history is pure compute (make test runs it
		// without -race: the Makefile's FULL list).
		lengths = []int{20, 50, 100}
	}
	for _, n := range lengths {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			h := newHarness(t, nil)
			history := map[int]int{}
			messages := map[int]int{}
			for turn := 1; turn <= n; turn++ {
				addScriptedTurn(t, h.m, turn)
				p, err := h.m.Prompt(context.Background())
				if err != nil {
					t.Fatalf("turn %d: %v", turn, err)
				}
				a := p.Assessment
				if a.Over() || a.Total > 16384 {
					t.Fatalf("turn %d: prompt over the limit: %s", turn, a)
				}
				if err := checkPairing(p.Messages); err != nil {
					t.Fatalf("turn %d: %v", turn, err)
				}
				if !strings.Contains(p.Messages[0].Content, "Banned commands") {
					t.Fatalf("turn %d: ban list missing from the instruction", turn)
				}
				// Check the incremental count against an uncached one now and then.
				if turn%37 == 0 || turn == n {
					if want := exactCount(t, h, p.Messages); a.Prompt != want {
						t.Fatalf("turn %d: assessed %d prompt tokens, uncached count %d", turn, a.Prompt, want)
					}
				}
				history[turn] = h.model.CountText(historyBlockOf(p.Messages))
				messages[turn] = len(p.Messages)
			}
			t.Logf("history block tokens: turn 20 %d, turn %d %d; messages %d → %d", history[20], n, history[n], messages[20], messages[n])
			early, late := 0, 0
			if n >= 100 {
				// The block keeps every distinct line while it fits its
				// share; it may pass the share only by its ledger line.
				share := h.m.cfg.HistoryTokens
				for turn, tokens := range history {
					if tokens > share+share/4 {
						t.Errorf("turn %d: history block of %d tokens, share %d", turn, tokens, share)
					}
				}
				// Messages go up and down with compactions: compare the
				// largest count of turns 1–20 with that of turns 21–100 (within
				// 25%: turns are kept by tokens, not by number).
				for turn, n := range messages {
					if turn <= 20 {
						early = max(early, n)
					} else if turn <= 100 {
						late = max(late, n)
					}
				}
				if late > early*5/4 {
					t.Errorf("messages grew from at most %d in turns 1–20 to %d in turns 21–100", early, late)
				}
			}
			if n >= 1000 {
				late1000 := 0
				for turn, n := range messages {
					if turn > 100 {
						late1000 = max(late1000, n)
					}
				}
				if late1000 > late*5/4 {
					t.Errorf("messages grew from at most %d in turns 21–100 to %d after", late, late1000)
				}
			}
			if h.m.Ledger().Len() == 0 {
				t.Error("ledger is empty")
			}
		})
	}
}

// TestPairingProperty builds random turn sequences — several tool calls per
// turn, missing results, every feedback kind, malformed arguments — and checks
// that no render holds an orphan or unpaired tool message.
func TestPairingProperty(t *testing.T) {
	t.Parallel()
	outs := loadOutputs(t)
	seeds := 40
	switch {
	case testing.Short():
		seeds = 8
	case testenv.Race:
		// The first 10 seeds; make test runs all 40 without -race (the
		// Makefile's FULL list).
		seeds = 10
	}
	kinds := []FeedbackKind{FeedbackCheck, FeedbackBlocked, FeedbackRepeat, FeedbackMalformed}
	first := testenv.Seed(t, 0) // seeds first, first+1, …
	for seed := first; seed < first+uint64(seeds); seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		h := newHarness(t, func(c *Config) { c.KeepTurns = 1 + rng.IntN(4) })
		turns := 5 + rng.IntN(40)
		for turn := 1; turn <= turns; turn++ {
			msg := openai.ChatCompletionMessage{Role: "assistant", Content: "thinking"}
			nc := rng.IntN(4)
			for c := 0; c < nc; c++ {
				args := fmt.Sprintf(`{"command":"echo %d"}`, c)
				if rng.IntN(6) == 0 {
					args = `{"command": "unterminated`
				}
				msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{ID: fmt.Sprintf("t%d_%d", turn, c), Type: "function",
					Function: openai.FunctionCall{Name: "ssh_apply", Arguments: args}})
			}
			h.m.AddAssistant(msg)
			for _, c := range msg.ToolCalls {
				if rng.IntN(4) == 0 {
					continue // missing result
				}
				out := outs[rng.IntN(len(outs))]
				if err := h.m.AddToolResult(c.ID, Step{Tool: "ssh_apply", Command: "echo x", Action: nightshift.ActionRan, ExitCode: rng.IntN(3), Stdout: out}); err != nil {
					t.Fatal(err)
				}
			}
			if err := h.m.AddToolResult("nope", Step{Before: "orphan"}); !errors.Is(err, ErrUnknownToolCall) {
				t.Fatalf("orphan result accepted: %v", err)
			}
			for f := rng.IntN(3); f > 0; f-- {
				if err := h.m.AddFeedback(kinds[rng.IntN(len(kinds))], "feedback"); err != nil {
					t.Fatal(err)
				}
			}
			p, err := h.m.Prompt(context.Background())
			if err != nil {
				t.Fatalf("seed %d turn %d: %v", seed, turn, err)
			}
			if err := checkPairing(p.Messages); err != nil {
				t.Fatalf("seed %d turn %d: %v", seed, turn, err)
			}
			if p.Assessment.Over() {
				t.Fatalf("seed %d turn %d: over the limit: %s", seed, turn, p.Assessment)
			}
		}
	}
}

// TestHugeOutput feeds one turn with 2 MB of output: the prompt fits, and
// keeps the output's head, tail and error lines.
func TestHugeOutput(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	var b strings.Builder
	for i := 0; b.Len() < 2<<20; i++ {
		switch {
		case i == 0:
			b.WriteString("HEAD-MARKER starting aide --init\n")
		case i == 20000:
			b.WriteString("aide: error: 53:syntax error:!PermitRootLogin\n")
		default:
			fmt.Fprintf(&b, "/usr/share/doc/package-%d/changelog.Debian.gz  [ok] %08x\n", i, i*2654435761)
		}
	}
	b.WriteString("TAIL-MARKER AIDE finished\n")
	out := b.String()
	h.m.AddAssistant(openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{
		ID: "big", Type: "function", Function: openai.FunctionCall{Name: "ssh_apply", Arguments: `{"command":"aide --init"}`}}}})
	if err := h.m.AddToolResult("big", Step{Tool: "ssh_apply", Command: "aide --init", Action: nightshift.ActionRan, ExitCode: 17, Stdout: out}); err != nil {
		t.Fatal(err)
	}
	p, err := h.m.Prompt(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p.Assessment.Over() {
		t.Fatalf("over the limit: %s", p.Assessment)
	}
	var tool string
	for _, msg := range p.Messages {
		if msg.ToolCallID == "big" {
			tool = msg.Content
		}
	}
	for _, want := range []string{"HEAD-MARKER", "TAIL-MARKER", "aide: error: 53:syntax error", "tokens elided …]"} {
		if !strings.Contains(tool, want) {
			t.Errorf("cut output lacks %q", want)
		}
	}
	if e, ok := h.events.last(EventPrompt); !ok || e.Cut != 1 {
		t.Errorf("the prompt event does not report the current turn's output cut: %+v", e)
	}
	if got, want := p.Assessment.Prompt, exactCount(t, h, p.Messages); got != want {
		t.Fatalf("assessed %d, uncached %d", got, want)
	}
}

// TestOverflowError: an instruction that fits alone but leaves no room for a
// turn yields a typed error before any model call.
func TestOverflowError(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) {
		c.Model = sized(t, budget.Config{ContextWindow: 2048, Reserve: 1024, SoftLimit: 1500})
		c.HistoryTokens = 100
	})
	long := strings.Repeat("x", 200)
	h.m.AddAssistant(openai.ChatCompletionMessage{Role: "assistant", Content: strings.Repeat("I will now explain at length. ", 300)})
	if err := h.m.AddFeedback(FeedbackMalformed, "no tool call "+long); err != nil {
		t.Fatal(err)
	}
	_, err := h.m.Prompt(context.Background())
	var oe *OverflowError
	if !errors.As(err, &oe) {
		t.Fatalf("got %v, want *OverflowError", err)
	}
	if oe.Assessment.Total <= oe.Assessment.Limit || !strings.Contains(err.Error(), "system") {
		t.Fatalf("overflow error without a breakdown: %v", err)
	}
}

func TestLedgerCountsRepeats(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	for turn := 1; turn <= 3; turn++ {
		cmd := "sed -i 's/a/b/'  /etc/aide.conf"
		if turn == 2 {
			cmd = `sed -i "s/a/b/" /etc/aide.conf`
		}
		h.m.AddAssistant(openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: fmt.Sprint(turn), Type: "function",
			Function: openai.FunctionCall{Name: "ssh_apply", Arguments: `{"command":"x"}`}}}})
		if err := h.m.AddToolResult(fmt.Sprint(turn), Step{Tool: "ssh_apply", Command: cmd, Action: nightshift.ActionRan, ExitCode: 0}); err != nil {
			t.Fatal(err)
		}
		if err := h.m.SetCheck(nightshift.CheckFail); err != nil {
			t.Fatal(err)
		}
	}
	e, ok := h.m.Ledger().Lookup("sed -i 's/a/b/' /etc/aide.conf")
	if !ok || e.Tries != 3 || e.Failed != 3 || e.Fixed {
		t.Fatalf("ledger entry %+v, want 3 tries, 3 failed", e)
	}
}
