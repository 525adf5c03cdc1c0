package memory

import (
	"encoding/json"
	"errors"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/distill"

	"github.com/nightshift-dev/nightshift"
)

// FeedbackKind says what a worker feedback message is about. Every feedback
// message of a verbatim turn is shown; a distilled turn's feedback is part of
// its summary line.
type FeedbackKind string

// The feedback kinds the worker adds.
const (
	FeedbackCheck     FeedbackKind = "check"     // the rule's re-check result
	FeedbackBlocked   FeedbackKind = "blocked"   // a command refused by the ban list
	FeedbackRepeat    FeedbackKind = "repeat"    // an exact repeat of a failed command
	FeedbackMalformed FeedbackKind = "malformed" // a malformed tool call
)

// ErrInstructionTooLarge is returned by New when the pinned instruction and
// task alone do not fit the prompt limit: a configuration error.
var ErrInstructionTooLarge = errors.New("instruction and task exceed the prompt limit")

// ErrNoTurn is returned when a result or feedback is added before any turn.
var ErrNoTurn = errors.New("no turn to add to")

// ErrUnknownToolCall is returned for a tool result whose tool_call_id names no
// tool call of the current turn.
var ErrUnknownToolCall = errors.New("tool result names no tool call of the current turn")

type feedback struct {
	kind FeedbackKind
	text string
	seq  int // global order, to find the latest of each kind
}

type result struct {
	msg    openai.ChatCompletionMessage
	tokens int // token count of msg.Content, -1 until counted
	// shown is what the model is shown once compaction cut the output to
	// shownCap tokens (0: not cut, msg.Content is shown). A cut is made
	// once and kept, so the turn renders to the same bytes from then on.
	shown    string
	shownCap int
}

type turn struct {
	number    int
	assistant openai.ChatCompletionMessage // as sent to the model (arguments sanitised)
	results   map[string]*result
	feedback  []feedback
	facts     distill.Turn
	line      string
	hasLine   bool
	summary   *distill.Summary
	admitted  bool // its outputs were cut to CurrentTokens when it was first shown
}

// Memory is one conversation's sliding window. See the package comment.
type Memory struct {
	cfg    Config
	system openai.ChatCompletionMessage
	task   openai.ChatCompletionMessage
	turns  []*turn
	ledger *Ledger
	seq    int

	distilled  int               // turns[:distilled] are replaced by lines, for good
	entries    []*entry          // the history's distinct lines, in order of first turn
	entryOf    map[string]*entry // entries by body
	entriesOf  map[string][]int  // indexes of the entries holding each canonical command
	block      string            // the history block, rendered at the last compaction
	lineTokens map[string]int
	maxPrompt  int // prompt cap set by LimitPrompt; 0: none
	lastPrompt int // prompt tokens of the last prompt prepared
}

// New returns a Memory with the pinned instruction (system message) and task
// (first user message). It refuses a bad configuration and an instruction
// that alone exceeds the prompt limit.
func New(cfg Config, instruction, task string) (*Memory, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	m := &Memory{
		cfg:    cfg,
		system: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: instruction},
		task:   openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: task},
		ledger: newLedger(),
	}
	pinned := []openai.ChatCompletionMessage{m.system, m.task}
	pc, err := cfg.Model.Count(pinned, cfg.Tools)
	if err != nil {
		return nil, fmt.Errorf("%w: count instruction: %v", ErrConfig, err)
	}
	a := cfg.Model.Budget().AssessCount(pc, budget.Split{SystemEnd: 2, CurrentStart: 2})
	if a.Over() {
		return nil, fmt.Errorf("%w: %w: instruction, tools and task take %d tokens; with the reserve that is %d of a limit of %d",
			ErrConfig, ErrInstructionTooLarge, a.Prompt, a.Total, a.Limit)
	}
	return m, nil
}

// Turns returns the number of turns recorded.
func (m *Memory) Turns() int { return len(m.turns) }

// Ledger returns the ledger of every command tried.
func (m *Memory) Ledger() *Ledger { return m.ledger }

// AddAssistant starts a new turn with the model's message and returns the
// turn's number (1-based). Tool call arguments that are not valid JSON are
// replaced, in what is sent back to the model, by a JSON object holding the
// raw text — a server would reject the prompt otherwise; the caller keeps
// the message exactly as the model produced it if it needs an audit record.
func (m *Memory) AddAssistant(msg openai.ChatCompletionMessage) int {
	t := &turn{number: len(m.turns) + 1, results: map[string]*result{}}
	t.facts.Number = t.number
	t.facts.Text = msg.Content
	sent := msg
	sent.Role = openai.ChatMessageRoleAssistant
	if len(msg.ToolCalls) > 0 {
		sent.ToolCalls = make([]openai.ToolCall, len(msg.ToolCalls))
		copy(sent.ToolCalls, msg.ToolCalls)
		for i := range sent.ToolCalls {
			sent.ToolCalls[i].Function.Arguments = sanitizeArguments(sent.ToolCalls[i].Function.Arguments)
			if sent.ToolCalls[i].Type == "" {
				sent.ToolCalls[i].Type = openai.ToolTypeFunction
			}
		}
	}
	t.assistant = sent
	m.turns = append(m.turns, t)
	return t.number
}

// sanitizeArguments returns args when it is a JSON object, and otherwise a
// JSON object {"invalid_arguments": args}.
func sanitizeArguments(args string) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) == nil && obj != nil {
		return args
	}
	const max = 2000
	if len(args) > max {
		args = args[:max] + "…"
	}
	b, _ := json.Marshal(map[string]string{"invalid_arguments": args})
	return string(b)
}

// AddToolResult records the result of one tool call of the current turn:
// what the model is shown of it (see Step) and the facts the summary line
// and the ledger use. A result for an unknown tool_call_id is refused (it
// would be an orphan); a second result for the same call replaces the
// first.
func (m *Memory) AddToolResult(callID string, step Step) error {
	t, err := m.current()
	if err != nil {
		return err
	}
	known := false
	for _, c := range t.assistant.ToolCalls {
		if c.ID == callID {
			known = true
			break
		}
	}
	if !known {
		return fmt.Errorf("turn %d: %w: %q", t.number, ErrUnknownToolCall, callID)
	}
	if step.Action == nightshift.ActionNone && step.Command != "" {
		step.Action = nightshift.ActionRan
	}
	t.results[callID] = &result{
		msg:    openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, Content: step.Shown(), ToolCallID: callID},
		tokens: -1,
	}
	facts := step.facts()
	t.facts.Steps = append(t.facts.Steps, facts)
	m.ledger.record(t.number, facts)
	return nil
}

// AddFeedback adds a worker feedback message of the given kind to the
// current turn.
func (m *Memory) AddFeedback(kind FeedbackKind, text string) error {
	t, err := m.current()
	if err != nil {
		return err
	}
	m.seq++
	t.feedback = append(t.feedback, feedback{kind: kind, text: text, seq: m.seq})
	return nil
}

// SetCheck records the rule's re-check outcome for the current turn. It does
// not add a feedback message; the worker adds one with AddFeedback.
func (m *Memory) SetCheck(c nightshift.CheckStatus) error {
	t, err := m.current()
	if err != nil {
		return err
	}
	t.facts.Check = c
	m.ledger.check(t.number, c)
	return nil
}

// SetCheckResult records the rule's re-check outcome for the current turn
// with the check's output, whose decisive line (distill.CheckLine) the
// turn's summary line shows. It does not add a feedback message.
func (m *Memory) SetCheckResult(c nightshift.CheckStatus, output string) error {
	if err := m.SetCheck(c); err != nil {
		return err
	}
	m.turns[len(m.turns)-1].facts.CheckOutput = output
	return nil
}

// SetGaveUp records that the model gave up in the current turn.
func (m *Memory) SetGaveUp() error {
	t, err := m.current()
	if err != nil {
		return err
	}
	t.facts.GaveUp = true
	return nil
}

func (m *Memory) current() (*turn, error) {
	if len(m.turns) == 0 {
		return nil, ErrNoTurn
	}
	return m.turns[len(m.turns)-1], nil
}

func feedbackMessage(text string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: text}
}
