package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/budget"
	v1distill "github.com/nightshift-dev/nightshift/internal/memv1/distill"
	v1memory "github.com/nightshift-dev/nightshift/internal/memv1/memory"
	"github.com/nightshift-dev/nightshift/memory"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// This file runs conversations between the vLLM simulator (a policy that
// reads its prompt) and a simulated host through four memories, the same
// turns for each: the memory of this package ("new"), the memory before
// issue 22 (internal/memv1, "old"), the full history sent as is until it no
// longer fits ("full"), and the instruction with only the last K turns
// ("last-K").

// conv is one conversation's memory as the loop below drives it.
type conv interface {
	add(msg openai.ChatCompletionMessage, id, content string, step memory.Step, check nightshift.CheckStatus, checkOut, feedback string) error
	prompt(ctx context.Context) ([]openai.ChatCompletionMessage, error)
}

// errOverflow ends a full-history conversation: its prompt no longer fits.
var errOverflow = errors.New("the full history no longer fits the window")

const (
	readingInstruction = "Rule: sshd_and_audit\nYou fix one compliance rule on a Debian host over SSH, as root, with the ssh_apply tool.\nBanned commands (never run): rm -rf /, reboot, shutdown, mkfs, dd of=/dev/*."
	readingTask        = "Fix the rule on host db1. The worker re-runs the rule's check after every command."
	window, reserve    = 16384, 1024
	keepLast           = 3
)

// readingEnv holds what every conversation shares.
type readingEnv struct {
	model   *served.Model
	budget  *budget.Budget
	simCnt  vllmsim.Counter
	prompts vllmsim.PromptCounter // nil: simCnt
}

var (
	envOnce sync.Once
	envVal  *readingEnv
	envErr  error
)

func newReadingEnv(tb testing.TB) *readingEnv {
	tb.Helper()
	envOnce.Do(func() {
		e := &readingEnv{}
		if e.model, envErr = served.Offline(served.Config{Tokenizer: "qwen3", Budget: budget.Config{ContextWindow: window, Reserve: reserve}}); envErr != nil {
			return
		}
		e.budget = e.model.Budget()
		e.simCnt = vllmsim.NewModelCounter(e.model)
		envVal = e
	})
	if envErr != nil {
		tb.Fatal(envErr)
	}
	return envVal
}

func (e *readingEnv) newConv(tb testing.TB, kind string, obs memory.Observer) conv {
	tb.Helper()
	tools := readingTools()
	switch kind {
	case "new":
		m, err := memory.New(memory.Config{Model: e.model, Tools: tools, Observer: obs}, readingInstruction, readingTask)
		if err != nil {
			tb.Fatal(err)
		}
		return newConv{m}
	case "old":
		m, err := v1memory.New(v1memory.Config{Budget: e.budget, Prompt: e.model.Chat(), Text: e.model.Tokenizer(), Tools: tools}, readingInstruction, readingTask)
		if err != nil {
			tb.Fatal(err)
		}
		return oldConv{m}
	case "full", "last-K":
		return &plainConv{env: e, tools: tools, lastK: kind == "last-K"}
	}
	tb.Fatalf("unknown memory %q", kind)
	return nil
}

func readingTools() []openai.Tool {
	return []openai.Tool{
		{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: nightshift.ToolApply, Description: "Run one shell command on the host.",
			Parameters: json.RawMessage(`{"type": "object", "properties": {"command": {"type": "string"}, "reason": {"type": "string"}}, "required": ["command"]}`)}},
		{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: nightshift.ToolGiveUp, Description: "Stop working on this rule.",
			Parameters: json.RawMessage(`{"type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]}`)}},
	}
}

type newConv struct{ m *memory.Memory }

func (c newConv) add(msg openai.ChatCompletionMessage, id, content string, step memory.Step, check nightshift.CheckStatus, checkOut, feedback string) error {
	c.m.AddAssistant(msg)
	if err := c.m.AddToolResult(id, step); err != nil {
		return err
	}
	if err := c.m.SetCheckResult(check, checkOut); err != nil {
		return err
	}
	return c.m.AddFeedback(memory.FeedbackCheck, feedback)
}

func (c newConv) prompt(ctx context.Context) ([]openai.ChatCompletionMessage, error) {
	p, err := c.m.Prompt(ctx)
	return p.Messages, err
}

type oldConv struct{ m *v1memory.Memory }

func (c oldConv) add(msg openai.ChatCompletionMessage, id, content string, step memory.Step, check nightshift.CheckStatus, checkOut, feedback string) error {
	c.m.AddAssistant(msg)
	if err := c.m.AddToolResult(id, content, v1distill.Step{Tool: step.Tool, Command: step.Command, Reason: step.Reason, Action: step.Action,
		ExitCode: step.ExitCode, Signal: step.Signal, Stdout: step.Stdout, Stderr: step.Stderr, Note: step.Note}); err != nil {
		return err
	}
	if err := c.m.SetCheck(check); err != nil {
		return err
	}
	return c.m.AddFeedback(v1memory.FeedbackCheck, feedback)
}

func (c oldConv) prompt(ctx context.Context) ([]openai.ChatCompletionMessage, error) {
	p, err := c.m.Prompt(ctx)
	return p.Messages, err
}

// plainConv is the full history (every message, until the prompt no
// longer fits) or the last K turns only.
type plainConv struct {
	env   *readingEnv
	tools []openai.Tool
	lastK bool
	turns [][]openai.ChatCompletionMessage
}

func (c *plainConv) add(msg openai.ChatCompletionMessage, id, content string, _ memory.Step, _ nightshift.CheckStatus, _, feedback string) error {
	c.turns = append(c.turns, []openai.ChatCompletionMessage{msg,
		{Role: openai.ChatMessageRoleTool, ToolCallID: id, Content: content},
		{Role: openai.ChatMessageRoleUser, Content: feedback}})
	return nil
}

func (c *plainConv) prompt(context.Context) ([]openai.ChatCompletionMessage, error) {
	msgs := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: readingInstruction}, {Role: openai.ChatMessageRoleUser, Content: readingTask}}
	turns := c.turns
	if c.lastK && len(turns) > keepLast {
		turns = turns[len(turns)-keepLast:]
	}
	for _, t := range turns {
		msgs = append(msgs, t...)
	}
	pc, err := c.env.model.Count(msgs, c.tools)
	if err != nil {
		return nil, err
	}
	if a := c.env.budget.AssessCount(pc, budget.Split{SystemEnd: 2, CurrentStart: len(msgs)}); a.Over() {
		return nil, fmt.Errorf("%w: %s", errOverflow, a)
	}
	return msgs, nil
}

// host answers commands: a scenario's host, or any function.
type host interface {
	run(command string, attempt int) (ex nightshift.Exec, changes []nightshift.FileChange, check nightshift.CheckStatus, checkOut string)
}

// runResult is what one conversation came to.
type runResult struct {
	fixed      bool
	attempts   int // attempts made (the fixing one included)
	overflowed bool
	rejected   int
	prompt     int // prompt tokens over all calls, by the server
	cached     int
	last       []openai.ChatCompletionMessage // the last prompt sent
	prompts    [][]openai.ChatCompletionMessage
}

// runConversation drives one conversation of at most maxAttempts attempts
// against a fresh simulator with policy; keepPrompts keeps every prompt.
func (e *readingEnv) runConversation(tb testing.TB, c conv, policy vllmsim.Policy, h host, maxAttempts int, keepPrompts bool) runResult {
	tb.Helper()
	ctx := context.Background()
	sim, err := vllmsim.New(vllmsim.Config{MaxModelLen: window, Counter: e.simCnt, Prompts: e.prompts, Policy: policy, PromptTokensDetails: true})
	if err != nil {
		tb.Fatal(err)
	}
	hs := httptest.NewServer(sim.Handler())
	defer hs.Close()
	oc := openai.DefaultConfig("")
	oc.BaseURL = hs.URL + "/v1"
	client := openai.NewClientWithConfig(oc)
	var res runResult
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		msgs, err := c.prompt(ctx)
		if errors.Is(err, errOverflow) {
			res.overflowed = true
			break
		}
		if err != nil {
			tb.Fatalf("attempt %d: prompt: %v", attempt, err)
		}
		res.last = msgs
		if keepPrompts {
			res.prompts = append(res.prompts, msgs)
		}
		//lint:ignore SA1019 the worker sends max_tokens (vLLM has read it in every release).
		resp, err := client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: sim.Model(), Messages: msgs, Tools: readingTools(), MaxTokens: reserve})
		if err != nil {
			res.rejected++
			break
		}
		res.attempts = attempt
		msg := resp.Choices[0].Message
		msg.Role = openai.ChatMessageRoleAssistant
		if len(msg.ToolCalls) == 0 {
			tb.Fatalf("attempt %d: the policy made no tool call: %q", attempt, msg.Content)
		}
		var args struct {
			Command string `json:"command"`
		}
		if err := json.Unmarshal([]byte(msg.ToolCalls[0].Function.Arguments), &args); err != nil {
			tb.Fatalf("attempt %d: arguments %q: %v", attempt, msg.ToolCalls[0].Function.Arguments, err)
		}
		msg.ToolCalls = msg.ToolCalls[:1]
		ex, changes, check, checkOut := h.run(args.Command, attempt)
		step := memory.Step{Tool: nightshift.ToolApply, Command: args.Command, Action: nightshift.ActionRan, ExitCode: ex.ExitCode,
			Before: fmt.Sprintf("exit status: %d\n", ex.ExitCode), Stdout: ex.Stdout, Stderr: ex.Stderr, Changes: changes}
		feedback := fmt.Sprintf("Re-check after attempt %d: PASS. The rule is compliant.", attempt)
		if check != nightshift.CheckPass {
			feedback = fmt.Sprintf("Re-check after attempt %d: FAIL (exit 1). The host is still not compliant.", attempt)
			if checkOut != "" {
				feedback += "\nCheck output:\n" + checkOut
			}
			feedback += fmt.Sprintf("\nAttempt: %d", attempt+1)
		}
		if err := c.add(msg, msg.ToolCalls[0].ID, formatExec(ex), step, check, checkOut, feedback); err != nil {
			tb.Fatalf("attempt %d: %v", attempt, err)
		}
		if check == nightshift.CheckPass {
			res.fixed = true
			break
		}
	}
	res.prompt, res.cached = sim.Stats().PromptTokens()
	res.rejected += len(sim.Stats().Rejections())
	return res
}

// formatExec renders a result as the worker shows it to the model.
func formatExec(ex nightshift.Exec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "exit status: %d\n", ex.ExitCode)
	if ex.Stdout != "" {
		b.WriteString("stdout:\n" + strings.TrimSuffix(ex.Stdout, "\n") + "\n")
	}
	if ex.Stderr != "" {
		b.WriteString("stderr:\n" + strings.TrimSuffix(ex.Stderr, "\n") + "\n")
	}
	return b.String()
}

// scenarioHost is a Scenario's host: it counts the trap's runs.
type scenarioHost struct {
	s     *vllmsim.Scenario
	seed  uint64
	traps int
}

func (h *scenarioHost) run(command string, attempt int) (nightshift.Exec, []nightshift.FileChange, nightshift.CheckStatus, string) {
	ex, fixed := h.s.Respond(command, h.traps, attempt, h.seed)
	if h.s.IsTrap(command) {
		h.traps++
	}
	if fixed {
		return ex, nil, nightshift.CheckPass, ""
	}
	return ex, nil, nightshift.CheckFail, ""
}
