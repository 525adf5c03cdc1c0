package lockout

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nightshift-dev/nightshift"
)

// Runner runs each command on a host under the lockout net, for hosts
// where no recording sandbox runs (--sandbox auto on a host that cannot
// have one): a snapshot of what the worker's login depends on, the switch
// armed, the command, the canary, then the switch disarmed, or the
// snapshot restored (through the kept connection, or by the switch) when
// the canary finds a lockout. A rolled-back command's Exec carries
// Evidence with the verdict rolled_back and the canary's reason. An error
// means the net could not run (snapshot, switch) or the host did not
// answer. Safe for concurrent use if the Runner is, but one command per
// host at a time (one switch per host).
type Runner struct {
	g    *Guard
	r    nightshift.Runner
	wait time.Duration

	mu        sync.Mutex
	lockedOut error // the *LockedOutError or ErrLost that stopped the host
}

// NewRunner returns a Runner running commands through r under g; wait is
// how long past a switch's deadline a rollback waits for it (zero: 30s).
func NewRunner(g *Guard, r nightshift.Runner, wait time.Duration) *Runner {
	if wait <= 0 {
		wait = 30 * time.Second
	}
	return &Runner{g: g, r: r, wait: wait}
}

// Run implements nightshift.Runner. An error matching ErrLockedOut means
// the login fails whatever the command did (see Guard.Protect): the
// command did not run, or was undone; after it, or after one matching
// ErrLost, every later Run returns that error at once without running
// anything.
func (x *Runner) Run(ctx context.Context, command string) (nightshift.Exec, error) {
	x.mu.Lock()
	locked := x.lockedOut
	x.mu.Unlock()
	if locked != nil {
		return nightshift.Exec{ExitCode: -1}, fmt.Errorf("lockout: nothing runs on this host any more: %w", locked)
	}
	ex := nightshift.Exec{ExitCode: -1}
	var runErr error
	ran := false
	out, err := x.g.Protect(ctx, x.r, ArmOptions{}, x.wait, func(ctx context.Context) error {
		ran = true
		ex, runErr = x.r.Run(ctx, command)
		return runErr
	})
	if errors.Is(err, ErrLockedOut) || errors.Is(err, ErrLost) {
		x.mu.Lock()
		x.lockedOut = err
		x.mu.Unlock()
	}
	if out.RolledBack {
		ex.Evidence = &nightshift.Evidence{Verdict: nightshift.VerdictRolledBack, Lockout: true,
			Reasons:  []string{"rolled back: " + out.Reason},
			Fallback: "no sandbox on this host: the command ran, the lockout net undid it"}
	}
	switch {
	case runErr != nil:
		return ex, runErr
	case err != nil && !ran:
		return nightshift.Exec{ExitCode: -1}, err
	default:
		return ex, err
	}
}
