package distill

// Action says what happened to one tool call.
type Action int

// The actions. The zero value is Ran.
const (
	// Ran: the command ran over SSH to completion; ExitCode (and Signal)
	// say how it ended.
	Ran Action = iota
	// Blocked: the ban list refused the command before it ran; Note names
	// the ban pattern.
	Blocked
	// Rejected: the tool call was malformed and nothing ran; Note says what
	// was wrong with it.
	Rejected
	// TimedOut: the command ran past its time limit and was stopped.
	TimedOut
	// Unknown: the connection dropped while the command ran; whether it ran
	// to completion is not known.
	Unknown
)

var actionNames = [...]string{"ran", "blocked", "rejected", "timed out", "unknown"}

// String returns the action's past-tense word: "ran", "blocked", "rejected",
// "timed out" or "unknown".
func (a Action) String() string {
	if a >= 0 && int(a) < len(actionNames) {
		return actionNames[a]
	}
	return "unknown"
}

// Check is the outcome of the rule's re-check after a turn.
type Check int

// The re-check outcomes. The zero value is NotRun.
const (
	NotRun Check = iota // no re-check ran after the turn
	Passed              // the rule's check passed
	Failed              // the rule's check ran and failed
	Error               // the check itself could not run or errored
)

var checkNames = [...]string{"not run", "passed", "failed", "errored"}

// String returns "not run", "passed", "failed" or "errored".
func (c Check) String() string {
	if c >= 0 && int(c) < len(checkNames) {
		return checkNames[c]
	}
	return "errored"
}

// Step is one tool call of a turn and what happened to it.
type Step struct {
	// Tool is the tool the model called: [nightshift.ToolApply],
	// [nightshift.ToolGiveUp] or another (summarised generically).
	Tool string
	// Command is the shell command proposed (ssh_apply), as the model wrote it.
	Command string
	// Reason is the model's stated reason (ssh_apply's optional reason, or
	// give_up's reason).
	Reason string
	// Action says what happened to the call.
	Action Action
	// ExitCode is the command's exit status when Action is Ran.
	ExitCode int
	// Signal names the signal that ended the command, if any ("KILL").
	Signal string
	// Stdout and Stderr are the command's output. Error classes are read
	// from both, since apt and aide print errors to stdout.
	Stdout, Stderr string
	// Note explains a Blocked (the ban pattern) or Rejected (what was
	// malformed) call.
	Note string
}

// Turn is the record of one turn: the model's tool calls, what happened to
// them, and the re-check after them.
type Turn struct {
	// Number is the turn's 1-based number in the conversation.
	Number int
	// Steps are the tool calls, in the order the model made them.
	Steps []Step
	// Check is the rule's re-check outcome after the turn.
	Check Check
	// GaveUp records that the model gave up in this turn.
	GaveUp bool
	// Text is the model's own text in the turn. The deterministic distiller
	// does not quote it: the model's words are not facts.
	Text string
}

// Counter counts the tokens of a text; every budget.Tokenizer satisfies it.
// Implementations must be safe for concurrent use if the Distiller is used
// concurrently.
type Counter interface {
	Count(text string) int
}

// approxCounter estimates one token per three bytes, rounded up: more than
// the real tokenizers count for English and shell text, so budgets hold. It
// is used only when Config.Counter is nil.
type approxCounter struct{}

func (approxCounter) Count(text string) int { return (len(text) + 2) / 3 }
