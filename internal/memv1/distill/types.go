// Package distill is package distill of commit d28eab4, frozen as the
// baseline of the before/after memory benchmarks; see package memv1.
// Concurrency: a Distiller is immutable and safe for concurrent use.
package distill

import "github.com/nightshift-dev/nightshift"

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
