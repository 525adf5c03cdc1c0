package journal

import (
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"

	"github.com/nightshift-dev/nightshift"
)

// RunID, TaskID and CommandID identify rows of a journal.
type (
	RunID     int64
	TaskID    int64
	CommandID int64
)

// RunSpec describes a run being started.
type RunSpec struct {
	// Name is a label for people ("nightly cis-server").
	Name string
	// Config is stored as JSON (the rules, hosts and settings of the run,
	// enough to resume it). Secrets must not be put here.
	Config any
}

// Run is a recorded run.
type Run struct {
	ID     RunID
	Name   string
	Config []byte // JSON
	// Status is nightshift.RunRunning from StartRun and ResumeRun until
	// EndRun records the end.
	Status  nightshift.RunStatus
	Resumes int
	Started time.Time
	Ended   time.Time // zero while running (or after a crash)
}

// Outcome is how a task ended.
type Outcome struct {
	// Status is how the rule ended; RuleNone is refused.
	Status   nightshift.RuleStatus
	Reason   string
	Attempts int
	// Detail is stored as JSON (the worker's full Outcome).
	Detail any
}

// Task is one rule × host of a run.
type Task struct {
	ID       TaskID
	Run      RunID
	Rule     string
	Host     string
	Finished bool
	Status   nightshift.RuleStatus // RuleNone until finished
	Reason   string
	Attempts int
	Outcome  []byte // JSON of Outcome.Detail; "null" while running
	Started  time.Time
	Ended    time.Time
}

// ModelCall is one model call and the budget of its prompt.
type ModelCall struct {
	Attempt    int
	Assessment budget.Assessment
	MaxTokens  int
	Duration   time.Duration
	// Rejected marks a context-length rejection by the server, with the
	// server's count of the prompt.
	Rejected     bool
	ServerTokens int
	Error        string
	// UsagePrompt and CachedTokens are the server's usage of an answered
	// call: usage.prompt_tokens and usage.prompt_tokens_details.cached_tokens
	// (0 when the server does not report it).
	UsagePrompt  int
	CachedTokens int
}

// Command states.
type CommandState string

const (
	// CommandStarted: begun, no result recorded. After a crash its outcome
	// is unknown.
	CommandStarted CommandState = "started"
	// CommandFinished: ran, with its result.
	CommandFinished CommandState = "finished"
	// CommandUnknown: began before a crash; MarkUnknown recorded that its
	// outcome is not known.
	CommandUnknown CommandState = "unknown"
	// CommandSkipped: never ran (blocked, refused, malformed, give_up).
	CommandSkipped CommandState = "skipped"
)

// CommandResult is what running a command produced: the runner's Exec
// (both streams with what the output cap cut from each, exit code, signal,
// timeout, cancellation, duration) and what only the journal keeps.
type CommandResult struct {
	// Action is the worker's verdict on a command that ran: ActionRan,
	// ActionTimedOut or ActionUnknown (the runner failed). The zero value,
	// ActionNone, is recorded as ActionRan.
	Action nightshift.Action
	nightshift.Exec
	// Error is the transport error, if any (connection lost…).
	Error string
}

// Command is a recorded command.
type Command struct {
	ID       CommandID
	Task     TaskID
	Attempt  int
	Command  string
	State    CommandState
	Result   CommandResult // meaningful when State is CommandFinished
	Detail   string        // why it was skipped, or the MarkUnknown note
	Started  time.Time
	Finished time.Time
}

// PendingCommand is the handle of a command begun with BeginCommand; only
// FinishCommand can record its result.
type PendingCommand struct {
	id   CommandID
	task TaskID
}

// ID returns the command's ID.
func (p PendingCommand) ID() CommandID { return p.id }

// CheckRecord is one recorded evaluation of a rule's check.
type CheckRecord struct {
	Attempt  int                    // 0: before the first attempt
	Status   nightshift.CheckStatus // never CheckNotRun
	ExitCode int
	Output   string
	Detail   string
	Duration time.Duration
}

// AttemptEnd records the end of an attempt.
type AttemptEnd struct {
	Attempt int
	// Check is the re-check after the attempt's commands; CheckNotRun when
	// nothing ran or the model gave up.
	Check nightshift.CheckStatus
	// GaveUp is set when the model gave up in the attempt (stored as the
	// check status "give_up", as journals before typed values did).
	GaveUp       bool
	PromptTokens int
	Limit        int
}

// Distillation records turns replaced by summary lines: the lines and, as
// the audit record, the exact messages of the prompt before it.
type Distillation struct {
	Attempt      int
	Turn         int
	FromTurn     int
	ToTurn       int
	TokensBefore int
	TokensAfter  int
	Messages     []openai.ChatCompletionMessage
	Lines        []string
}

// Event is a free-form event.
type Event struct {
	Attempt int
	Name    string
	Payload []byte // JSON
}

// StepKind names a step.
type StepKind string

// Step kinds.
const (
	StepModelCall StepKind = "model_call"
	StepCommand   StepKind = "command"
	StepCheck     StepKind = "check"
	StepAttempt   StepKind = "attempt"
	StepDistill   StepKind = "distill"
	StepEvent     StepKind = "event"
)

// Step is one recorded step of a task; exactly the field of its Kind is
// set.
type Step struct {
	ID      int64
	Kind    StepKind
	Attempt int
	At      time.Time

	ModelCall    *ModelCall
	Command      *Command
	Check        *CheckRecord
	AttemptEnd   *AttemptEnd
	Distillation *Distillation
	Event        *Event
}
