package nightshift

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrUnknownValue is wrapped by every UnmarshalText error: the text names no
// value of the type.
var ErrUnknownValue = errors.New("unknown value")

// enumText returns names[v], or a diagnostic form for a value outside the
// table (a bug, never a stored value: MarshalText refuses it).
func enumText(typ string, names []string, v uint8) string {
	if int(v) < len(names) {
		return names[v]
	}
	return typ + "(" + strconv.Itoa(int(v)) + ")"
}

func enumMarshal(typ string, names []string, v uint8) ([]byte, error) {
	if int(v) >= len(names) {
		return nil, fmt.Errorf("%s: %w: %d", typ, ErrUnknownValue, v)
	}
	return []byte(names[v]), nil
}

func enumParse(typ string, names []string, text []byte) (uint8, error) {
	for i, n := range names {
		if n == string(text) {
			return uint8(i), nil
		}
	}
	return 0, fmt.Errorf("%s: %w %q", typ, ErrUnknownValue, text)
}

// Action is what became of one command the model proposed (or of one tool
// call that proposed none). The zero value, ActionNone, means no action.
type Action uint8

// The actions.
const (
	ActionNone Action = iota
	// ActionRan: the command ran to completion; Exec says how it ended.
	ActionRan
	// ActionBlocked: the ban list refused the command before it ran, or
	// the judge refused what it did in the sandbox: nothing reached the host.
	ActionBlocked
	// ActionRefused: the worker refused an exact repeat of a command that
	// had failed too often; nothing ran.
	ActionRefused
	// ActionMalformed: the tool call could not be read; nothing ran.
	ActionMalformed
	// ActionTimedOut: the command ran past its time limit and was stopped.
	ActionTimedOut
	// ActionUnknown: the connection was lost while the command ran (or a
	// crash came between its start and its result): whether it ran to
	// completion is not known, and it is never run again automatically.
	ActionUnknown
	// ActionGiveUp: the model called give_up.
	ActionGiveUp
)

var actionNames = []string{"", "ran", "blocked", "refused", "malformed", "timed_out", "unknown", "give_up"}

// String returns the action's text form ("ran", "timed_out"…; "" for ActionNone).
func (a Action) String() string { return enumText("Action", actionNames, uint8(a)) }

// MarshalText implements encoding.TextMarshaler.
func (a Action) MarshalText() ([]byte, error) { return enumMarshal("action", actionNames, uint8(a)) }

// UnmarshalText implements encoding.TextUnmarshaler; unknown text is an error.
func (a *Action) UnmarshalText(text []byte) error {
	v, err := enumParse("action", actionNames, text)
	*a = Action(v)
	return err
}

// Ran reports whether the command was started on the host (ActionRan,
// ActionTimedOut or ActionUnknown): only those may have changed it.
func (a Action) Ran() bool { return a == ActionRan || a == ActionTimedOut || a == ActionUnknown }

// CheckStatus is the result of evaluating a rule's check. The zero value,
// CheckNotRun, means no check was evaluated; no evaluation returns it, so a
// zero value never reads as compliant.
type CheckStatus uint8

// The check results.
const (
	CheckNotRun CheckStatus = iota
	// CheckPass: the host complies.
	CheckPass
	// CheckFail: the host does not comply.
	CheckFail
	// CheckError: the check itself failed (could not run, a signal, a
	// timeout, a banned check command). Never a pass.
	CheckError
	// CheckNotApplicable: the rule does not apply to the host (SCAP).
	CheckNotApplicable
)

var checkNames = []string{"", "pass", "fail", "error", "notapplicable"}

// String returns "pass", "fail", "error", "notapplicable" or "" (CheckNotRun).
func (c CheckStatus) String() string { return enumText("CheckStatus", checkNames, uint8(c)) }

// MarshalText implements encoding.TextMarshaler.
func (c CheckStatus) MarshalText() ([]byte, error) {
	return enumMarshal("check status", checkNames, uint8(c))
}

// UnmarshalText implements encoding.TextUnmarshaler; unknown text is an error.
func (c *CheckStatus) UnmarshalText(text []byte) error {
	v, err := enumParse("check status", checkNames, text)
	*c = CheckStatus(v)
	return err
}

// RuleStatus is how a rule ended on a host. The zero value, RuleNone, means
// the rule has not ended.
type RuleStatus uint8

// The rule outcomes.
const (
	RuleNone RuleStatus = iota
	// RuleFixed: the re-check passed after an attempt.
	RuleFixed
	// RuleCompliant: the check passed before any attempt.
	RuleCompliant
	// RuleNotFixed: the attempts ran out.
	RuleNotFixed
	// RuleGaveUp: the model called give_up.
	RuleGaveUp
	// RuleCheckError: the check could not be evaluated.
	RuleCheckError
	// RuleFailed: an error stopped the attempt loop.
	RuleFailed
	// RuleUnreachable: the host or the model server stayed down.
	RuleUnreachable
	// RuleInterrupted: the run was stopped (signal, cancelled context).
	RuleInterrupted
	// RuleNotApplicable: the check says the rule does not apply to the host.
	RuleNotApplicable
	// RuleNeedsAccessChange: the rule was not fixed because the changes
	// that fix it would lock the worker's own login out (for example
	// PermitRootLogin no for a worker logging in as root); the reason names
	// the change. It needs another login (a non-root user with sudo) or a
	// change a person makes.
	RuleNeedsAccessChange
)

var ruleNames = []string{"", "fixed", "compliant", "not_fixed", "gave_up", "check_error", "failed", "unreachable", "interrupted", "notapplicable", "needs_access_change"}

// RuleStatuses returns every rule outcome (not RuleNone), in the order
// reports list them.
func RuleStatuses() []RuleStatus {
	return []RuleStatus{RuleFixed, RuleCompliant, RuleNotFixed, RuleNeedsAccessChange, RuleGaveUp, RuleCheckError, RuleFailed, RuleUnreachable, RuleInterrupted, RuleNotApplicable}
}

// String returns the outcome's text form ("fixed", "not_fixed"…; "" for RuleNone).
func (s RuleStatus) String() string { return enumText("RuleStatus", ruleNames, uint8(s)) }

// MarshalText implements encoding.TextMarshaler.
func (s RuleStatus) MarshalText() ([]byte, error) {
	return enumMarshal("rule status", ruleNames, uint8(s))
}

// UnmarshalText implements encoding.TextUnmarshaler; unknown text is an error.
func (s *RuleStatus) UnmarshalText(text []byte) error {
	v, err := enumParse("rule status", ruleNames, text)
	*s = RuleStatus(v)
	return err
}

// Passed reports whether the rule is compliant at the end.
func (s RuleStatus) Passed() bool { return s == RuleFixed || s == RuleCompliant }

// IsFailure reports whether the rule is known not to comply at the end (a
// JUnit failure).
func (s RuleStatus) IsFailure() bool {
	return s == RuleNotFixed || s == RuleGaveUp || s == RuleNeedsAccessChange
}

// IsError reports whether it is unknown if the rule complies (a JUnit error).
func (s RuleStatus) IsError() bool {
	return s == RuleCheckError || s == RuleFailed || s == RuleUnreachable || s == RuleInterrupted
}

// RunStatus is the state of a run of rules over hosts. The zero value,
// RunNone, means no state.
type RunStatus uint8

// The run states.
const (
	RunNone RunStatus = iota
	// RunRunning: started (or resumed) and not ended; after a crash, a run
	// stays running until it is resumed.
	RunRunning
	// RunDone: every task ended.
	RunDone
	// RunInterrupted: stopped by a signal or a cancelled context; resumable.
	RunInterrupted
	// RunFailed: an error stopped the run; resumable.
	RunFailed
)

var runNames = []string{"", "running", "done", "interrupted", "failed"}

// String returns "running", "done", "interrupted", "failed" or "" (RunNone).
func (s RunStatus) String() string { return enumText("RunStatus", runNames, uint8(s)) }

// MarshalText implements encoding.TextMarshaler.
func (s RunStatus) MarshalText() ([]byte, error) {
	return enumMarshal("run status", runNames, uint8(s))
}

// UnmarshalText implements encoding.TextUnmarshaler; unknown text is an error.
func (s *RunStatus) UnmarshalText(text []byte) error {
	v, err := enumParse("run status", runNames, text)
	*s = RunStatus(v)
	return err
}
