package rules

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/internal/textcut"
	"github.com/nightshift-dev/nightshift/safety"
)

// MaxCheckOutput bounds CheckResult.Output in bytes; longer output keeps its
// head and tail around an omission marker.
const MaxCheckOutput = 4096

// CheckResult is the outcome of evaluating a check.
type CheckResult struct {
	// Status is the check's verdict. Evaluate never returns the zero value,
	// nightshift.CheckNotRun, so a zero CheckResult never reads as
	// compliant.
	Status nightshift.CheckStatus
	// ExitCode is the check command's exit status, -1 when there is none
	// (signal, timeout, not run).
	ExitCode int
	// Output is stdout followed by stderr, at most about MaxCheckOutput
	// bytes, valid UTF-8.
	Output string
	// Detail explains the status in a few words ("exit 1: not compliant").
	Detail string
}

// Passed reports whether the check found the host compliant.
func (r CheckResult) Passed() bool { return r.Status == nightshift.CheckPass }

// Check decides whether a host complies with a rule. Implementations must
// be safe for concurrent use. The kinds are ShellCheck and scap.Check.
type Check interface {
	// Kind names the kind of check ("shell", "oscap").
	Kind() string
	// String describes the check for people and prompts.
	String() string
	// Evaluate runs the check on the target through r (sshexec's client,
	// the worker's target, a simulated host).
	Evaluate(ctx context.Context, r nightshift.Runner) (CheckResult, error)
}

// ShellCheck is a shell command run on the target: exit 0 means compliant,
// 1..125 not compliant, anything else (126/127, a signal, a timeout) a check
// error.
type ShellCheck struct {
	Command string
}

// Kind returns "shell".
func (ShellCheck) Kind() string { return "shell" }

// String returns the command.
func (c ShellCheck) String() string { return c.Command }

// Evaluate runs the command through r and classifies the outcome. The
// command is first matched against DefaultBanList and never run if banned
// (nightshift.CheckError, an error matching safety.ErrBanned). The returned error is non-nil
// only when the outcome is unknown: the command was banned, the runner
// failed or ctx ended; the result then has nightshift.CheckError and says why. Exit
// 126/127, a signal or a timeout are nightshift.CheckError with a nil error: the check
// ran and is broken, which the worker reports, never as fixed.
func (c ShellCheck) Evaluate(ctx context.Context, r nightshift.Runner) (CheckResult, error) {
	res := CheckResult{Status: nightshift.CheckError, ExitCode: -1}
	if c.Command == "" {
		res.Detail = "empty check command"
		return res, ErrNoCheck
	}
	if ban, banned := safety.DefaultBanList().Match(c.Command); banned {
		res.Detail = "check command is banned: " + ban.Reason
		return res, &safety.BannedError{Command: c.Command, Ban: ban}
	}
	if r == nil {
		res.Detail = "no runner"
		return res, errors.New("rules: evaluate check: nil runner")
	}
	if err := ctx.Err(); err != nil {
		res.Detail = "not run: " + err.Error()
		return res, fmt.Errorf("rules: evaluate check: %w", err)
	}
	out, err := r.Run(ctx, c.Command)
	res.Output = capOutput(out.Stdout, out.Stderr)
	if err != nil {
		res.Detail = "check could not run: " + err.Error()
		return res, fmt.Errorf("rules: run check: %w", err)
	}
	switch code := out.ExitCode; {
	case out.TimedOut:
		res.Detail = "check timed out"
	case out.Signal != "":
		res.Detail = "check killed by signal " + out.Signal
	case code == 0:
		res.Status, res.ExitCode, res.Detail = nightshift.CheckPass, 0, "exit 0: compliant"
	case code >= 1 && code <= 125:
		res.Status, res.ExitCode, res.Detail = nightshift.CheckFail, code, "exit "+strconv.Itoa(code)+": not compliant"
	case code == 126:
		res.ExitCode, res.Detail = code, "exit 126: check command not executable"
	case code == 127:
		res.ExitCode, res.Detail = code, "exit 127: check command not found"
	case code > 128 && code < 128+65:
		res.ExitCode, res.Detail = code, "exit "+strconv.Itoa(code)+": check killed by signal "+strconv.Itoa(code-128)
	default:
		res.ExitCode, res.Detail = code, "exit "+strconv.Itoa(code)+": check error"
	}
	return res, nil
}

// capOutput joins stdout and stderr and keeps at most about MaxCheckOutput
// bytes: the head and the tail, cut on UTF-8 boundaries, around a marker
// saying how much was left out. Invalid UTF-8 is replaced.
func capOutput(stdout, stderr string) string {
	s := stdout
	if stderr != "" {
		if s != "" && s[len(s)-1] != '\n' {
			s += "\n"
		}
		s += stderr
	}
	out, _ := textcut.Middle(s, MaxCheckOutput)
	return out
}
