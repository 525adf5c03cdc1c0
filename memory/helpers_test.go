package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/served"

	"github.com/nightshift-dev/nightshift"
)

// The real Qwen3 tokenizer and chat template, loaded once for all tests,
// with the 16,384-token window and a reserve of 1,024.
var (
	qwenOnce  sync.Once
	qwenModel *served.Model
	qwenErr   error
)

func qwen3(tb testing.TB) *served.Model {
	tb.Helper()
	qwenOnce.Do(func() {
		qwenModel, qwenErr = served.Offline(served.Config{Tokenizer: "qwen3", Budget: budget.Config{ContextWindow: 16384, Reserve: 1024}})
	})
	if qwenErr != nil {
		tb.Fatalf("load qwen3: %v", qwenErr)
	}
	return qwenModel
}

// sized is qwen3 with the budget of cfg.
func sized(tb testing.TB, cfg budget.Config) *served.Model {
	tb.Helper()
	b, err := budget.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return qwen3(tb).With("", b)
}

// harness is a Memory wired to the real Qwen3 tokenizer and template with the
// 16,384 window and max_tokens 1,024 the issue asks for.
type harness struct {
	m      *Memory
	model  *served.Model
	events *recorder
}

type recorder struct{ events []Event }

func (r *recorder) Observe(e Event) { r.events = append(r.events, e) }

func (r *recorder) last(kind EventKind) (Event, bool) {
	for i := len(r.events) - 1; i >= 0; i-- {
		if r.events[i].Kind == kind {
			return r.events[i], true
		}
	}
	return Event{}, false
}

func newHarness(tb testing.TB, mod func(*Config)) *harness {
	tb.Helper()
	model := qwen3(tb)
	rec := &recorder{}
	cfg := Config{Model: model, Tools: testTools, Observer: rec}
	if mod != nil {
		mod(&cfg)
	}
	m, err := New(cfg, testInstruction, "Fix the rule aide_build_database on host db1. The check must pass.")
	if err != nil {
		tb.Fatal(err)
	}
	return &harness{m: m, model: model, events: rec}
}

const testInstruction = `Rule: aide_build_database
Title: Build and Test AIDE Database
You fix one compliance rule on a Debian 12 host over SSH. Call ssh_apply with one shell command at a time; after each command the worker re-runs the rule's check and tells you the result. Call give_up with a reason if the rule cannot be fixed.
Banned commands (refused before they run): rm -rf /, mkfs, dd to block devices, reboot, shutdown, halt, poweroff, iptables -F, passwd -d root, fork bombs, chmod -R / chown -R on /, killing sshd.`

var testTools = []openai.Tool{
	{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name:        "ssh_apply",
		Description: "Run one shell command on the target host as root.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"command":{"type":"string","description":"the shell command"},"reason":{"type":"string","description":"why"}},"required":["command"]}`),
	}},
	{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name:        "give_up",
		Description: "Stop working on this rule.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"reason":{"type":"string"}},"required":["reason"]}`),
	}},
}

// outputs are the realistic tool outputs of testdata/outputs, sorted by name.
var (
	outputsOnce sync.Once
	outputs     []string
)

func loadOutputs(tb testing.TB) []string {
	tb.Helper()
	outputsOnce.Do(func() {
		paths, _ := filepath.Glob("../testdata/outputs/*.txt")
		sort.Strings(paths)
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err == nil {
				outputs = append(outputs, string(b))
			}
		}
	})
	if len(outputs) < 20 {
		tb.Fatalf("need at least 20 realistic outputs in testdata/outputs, found %d", len(outputs))
	}
	return outputs
}

// scriptedCommands are the kind of commands a model tries on aide_build_database.
var scriptedCommands = []string{
	`sed -i 's/^database=.*/database=file:\/var\/lib\/aide\/aide.db/' /etc/aide.conf`,
	`apt-get install -y aide aide-common`,
	`aideinit -y -f`,
	`systemctl restart aidecheck.timer`,
	`cp /var/lib/aide/aide.db.new /var/lib/aide/aide.db`,
	`journalctl -u aidecheck --no-pager -n 200`,
	`dpkg --configure -a`,
	`aide --init --config /etc/aide/aide.conf`,
	`chmod 600 /etc/aide/aide.conf`,
	`cat /var/log/aide/aide.log`,
}

// addScriptedTurn records turn n (1-based): one or two tool calls with
// realistic outputs picked by n mod 20 (so turns 20, 100 and 1,000 have the
// same neighbourhood of output sizes), a failed re-check and its feedback.
func addScriptedTurn(tb testing.TB, m *Memory, n int) {
	tb.Helper()
	outs := loadOutputs(tb)
	calls := 1 + n%2
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: fmt.Sprintf("Attempt %d: trying another approach.", n)}
	for c := 0; c < calls; c++ {
		cmd := scriptedCommands[(n*3+c)%len(scriptedCommands)]
		msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{
			ID: fmt.Sprintf("call_%d_%d", n, c), Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: "ssh_apply", Arguments: fmt.Sprintf(`{"command": %q, "reason": "try %d"}`, cmd, n)},
		})
	}
	m.AddAssistant(msg)
	for c, call := range msg.ToolCalls {
		out := outs[(n%20+c)%len(outs)]
		cmd := scriptedCommands[(n*3+c)%len(scriptedCommands)]
		if err := m.AddToolResult(call.ID, Step{Tool: "ssh_apply", Command: cmd, Action: nightshift.ActionRan, ExitCode: 1,
			Before: "exit status: 1\n", Stdout: out, Stderr: "E: Sub-process /usr/bin/dpkg returned an error code (1)"}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := m.SetCheck(nightshift.CheckFail); err != nil {
		tb.Fatal(err)
	}
	if err := m.AddFeedback(FeedbackCheck, fmt.Sprintf("Re-check after turn %d: FAIL (exit 1). The rule is still not compliant.", n)); err != nil {
		tb.Fatal(err)
	}
}

// checkPairing fails if msgs hold a tool result without its call or a call
// without its result.
func checkPairing(msgs []openai.ChatCompletionMessage) error {
	open := map[string]bool{}
	inCalls := false
	for i, msg := range msgs {
		switch msg.Role {
		case openai.ChatMessageRoleAssistant:
			if len(open) > 0 {
				return fmt.Errorf("message %d: assistant message while tool calls %v have no result", i, keys(open))
			}
			open = map[string]bool{}
			for _, c := range msg.ToolCalls {
				open[c.ID] = true
			}
			inCalls = len(open) > 0
		case openai.ChatMessageRoleTool:
			if !inCalls || !open[msg.ToolCallID] {
				return fmt.Errorf("message %d: tool result %q has no open tool call", i, msg.ToolCallID)
			}
			delete(open, msg.ToolCallID)
		default:
			if len(open) > 0 {
				return fmt.Errorf("message %d (%s): tool calls %v have no result", i, msg.Role, keys(open))
			}
			inCalls = false
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("end: tool calls %v have no result", keys(open))
	}
	return nil
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// exactCount renders msgs and tokenizes the whole render with no cache: an
// independent check of the incremental count.
func exactCount(tb testing.TB, h *harness, msgs []openai.ChatCompletionMessage) int {
	tb.Helper()
	text, err := h.model.Chat().Render(msgs, testTools)
	if err != nil {
		tb.Fatal(err)
	}
	return len(h.model.Tokenizer().Encode(text))
}

func historyBlockOf(msgs []openai.ChatCompletionMessage) string {
	if len(msgs) > 2 && strings.HasPrefix(msgs[2].Content, DefaultHistoryHeader) {
		return msgs[2].Content
	}
	return ""
}

var _ = context.Background
