package distill

import "github.com/nightshift-dev/nightshift"

// actionWord is the past-tense word the summaries use for an action (the
// model distiller's facts too): a refused repeat reads as blocked, a
// malformed call as rejected.
func actionWord(a nightshift.Action) string {
	switch a {
	case nightshift.ActionRan:
		return "ran"
	case nightshift.ActionBlocked, nightshift.ActionRefused:
		return "blocked"
	case nightshift.ActionMalformed:
		return "rejected"
	case nightshift.ActionTimedOut:
		return "timed out"
	case nightshift.ActionUnknown:
		return "unknown"
	case nightshift.ActionGiveUp:
		return "gave up"
	case nightshift.ActionNone:
		return "no action"
	default:
		return a.String()
	}
}

// checkWord is the word the summaries use for a re-check's status.
func checkWord(c nightshift.CheckStatus) string {
	switch c {
	case nightshift.CheckNotRun:
		return "not run"
	case nightshift.CheckPass:
		return "passed"
	case nightshift.CheckFail:
		return "failed"
	case nightshift.CheckError:
		return "errored"
	case nightshift.CheckNotApplicable:
		return "not applicable"
	default:
		return c.String()
	}
}

// blocked reports whether a is a call refused before it ran: by the ban
// list or as a repeat of a failed command.
func blocked(a nightshift.Action) bool {
	return a == nightshift.ActionBlocked || a == nightshift.ActionRefused
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
	// Action says what happened to the call: ActionRan, ActionBlocked or
	// ActionRefused (summarised as blocked), ActionMalformed (summarised as
	// rejected), ActionTimedOut, ActionUnknown (the connection was lost) or
	// ActionGiveUp. Only the actions that started the command
	// (Action.Ran) have their output classified.
	Action nightshift.Action
	// ExitCode is the command's exit status when Action is ActionRan.
	ExitCode int
	// Signal names the signal that ended the command, if any ("KILL").
	Signal string
	// Stdout and Stderr are the command's output. Error classes are read
	// from both, since apt and aide print errors to stdout.
	Stdout, Stderr string
	// Note explains a blocked (the ban pattern), refused or malformed (what
	// was wrong with it) call.
	Note string
	// Changes are the files the command changed on the host, from the
	// runner's change records when it keeps them (a sandbox that records
	// what a command wrote); nil when it does not. The line shows them as
	// "changed …"; without them it shows the targets the command names.
	Changes []nightshift.FileChange
}

// Turn is the record of one turn: the model's tool calls, what happened to
// them, and the re-check after them.
type Turn struct {
	// Number is the turn's 1-based number in the conversation.
	Number int
	// Steps are the tool calls, in the order the model made them.
	Steps []Step
	// Check is the rule's re-check outcome after the turn (CheckNotRun when
	// none ran).
	Check nightshift.CheckStatus
	// CheckOutput is the re-check's output; its decisive line (CheckLine)
	// is shown after the outcome.
	CheckOutput string
	// GaveUp records that the model gave up in this turn.
	GaveUp bool
	// Text is the model's own text in the turn. The deterministic distiller
	// does not quote it: the model's words are not facts.
	Text string
}

// Counter counts the tokens of a text; every served.Tokenizer satisfies it.
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
