package nightshift

import (
	"context"
	"time"
)

// Exec is the result of one shell command on a host. A non-zero exit, a
// signal or a timeout is a result; a command whose outcome is unknown
// (connection lost) is reported by the Runner as an error instead.
type Exec struct {
	// Stdout and Stderr are the captured streams, each possibly cut by the
	// runner's output cap (the cut is marked in place).
	Stdout, Stderr string
	// StdoutCut and StderrCut count the bytes the cap dropped from each
	// stream.
	StdoutCut, StderrCut int64
	// ExitCode is the exit status; 128+N when signal N ended the command (as
	// shells report); -1 when unknown (timed out or cancelled before the
	// host reported one).
	ExitCode int
	// Signal names the signal that ended the command ("TERM", "KILL"), or "".
	Signal string
	// TimedOut is set when the runner stopped the command at its deadline.
	TimedOut bool
	// Canceled is set when the caller's context ended the command.
	Canceled bool
	// Duration runs from sending the command to its end.
	Duration time.Duration
	// Evidence is set when the command ran first in the recording sandbox:
	// what it did there and what became of it (committed, refused, …).
	// Stdout, Stderr and ExitCode are then what the command printed and
	// returned in the sandbox.
	Evidence *Evidence `json:",omitempty"`
}

// CutBytes is the number of bytes cut from both streams together.
func (e Exec) CutBytes() int64 { return e.StdoutCut + e.StderrCut }

// Exited reports whether the command ran to its own end with an exit
// status: not stopped at a deadline, not cancelled, not killed by a signal.
func (e Exec) Exited() bool { return !e.TimedOut && !e.Canceled && e.Signal == "" && e.ExitCode >= 0 }

// Runner runs one shell command on a host. Run returns an error only when
// the command could not be started or its outcome is unknown (connection
// lost, context ended before the result); a command that ran and failed is
// an Exec with a non-zero ExitCode. Implementations say in their own
// documentation whether Run may be called concurrently.
type Runner interface {
	Run(ctx context.Context, command string) (Exec, error)
}
