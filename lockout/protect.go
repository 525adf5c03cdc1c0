package lockout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	nightshift "github.com/nightshift-dev/nightshift"
)

// Outcome is what Protect did with one committed change.
type Outcome struct {
	// Canary is the canary's verdict right after the commit.
	Canary Result
	// RolledBack is set when the change was undone (the canary found a
	// lockout, or could not run, or the switch fired); Reason then says
	// why, for the model's next turn and the report.
	RolledBack bool
	Reason     string
	// ByKeptConnection: the undo through the kept connection succeeded.
	ByKeptConnection bool
	// SwitchFired: the switch on the host fired (before Disarm reached
	// it) and restored the snapshot.
	SwitchFired bool
	// After is the canary's verdict after the undo (nil when no undo).
	After *Result
	// CommitErr is the commit function's error, if any (the canary ran
	// anyway: a partial commit can lock the worker out too).
	CommitErr error
}

// Protect guards one commit: it checks that the login works before the
// commit (a fresh login through Config.FreshLogin and the latent check,
// concurrently), arms the switch (which takes the snapshot unless
// opts.Snapshot is given: one round trip), runs commit, runs the canary and
// then either disarms the switch (the change stays) or undoes the change:
// opts.Restore and the snapshot's restore through the kept connection r,
// or, when that connection is gone, the switch on the host, waited for by
// fresh logins until its deadline plus wait. After an undo it runs the
// canary again.
//
// The error is for what Protect could not do (take the snapshot, arm the
// switch, reach the host after an undo); a rolled-back change is an
// Outcome with RolledBack and Reason, not an error. When the fresh login
// already fails before the commit (and again a second later), commit is
// not run and the error is a
// *LockedOutError with Before set (the host was locked out by something
// else: the change cannot be judged); when the login still fails after the
// undo (and at the canary's second try), the Outcome says RolledBack and
// the error is a *LockedOutError without Before. Both match ErrLockedOut: the caller must stop running
// commands on the host and report it. A switch that did not restore access
// by its deadline is an error matching ErrLost.
func (g *Guard) Protect(ctx context.Context, r nightshift.Runner, opts ArmOptions, wait time.Duration, commit func(context.Context) error) (Outcome, error) {
	var out Outcome
	// What the latent check finds before the change is not the change's
	// doing (a host whose sshd already would not serve this login the way
	// it connects, as on a host reached through another sshd): only what
	// the change adds counts. A fresh login that fails before the change
	// is not its doing either: an earlier change made live since (an undo
	// restarts sshd), or something outside the worker.
	before, loginErr := g.precheck(ctx, r)
	if loginErr != nil && pause(ctx, time.Second) {
		// Once more before giving the host up: a login that failed for a
		// moment (a loaded host, sshd restarting) must not end it.
		loginErr = g.login(ctx)
	}
	if loginErr != nil {
		return out, &LockedOutError{User: g.cfg.User, Before: true, Reason: g.loginReason(loginErr)}
	}
	sw, err := g.Arm(ctx, r, opts)
	if err != nil {
		return out, err
	}
	snap := sw.Snapshot
	out.CommitErr = commit(ctx)
	res, cerr := g.Check(ctx, r)
	res.Lockouts, res.Warnings = newLockouts(res.Lockouts, before, res.Warnings)
	out.Canary = res
	if cerr == nil && res.OK() {
		derr := g.Disarm(ctx, r, sw)
		if derr == nil {
			return out, nil
		}
		if !errors.Is(derr, ErrFired) {
			return out, derr
		}
		out.SwitchFired = true
		out.RolledBack, out.Reason = true, "the dead-man switch fired before it was disarmed (deadline too short for the commit and the canary); the change was undone"
	} else {
		out.RolledBack = true
		out.Reason = res.Reason()
		if cerr != nil {
			out.Reason = "the canary could not run through the kept connection: " + oneLine(cerr.Error())
			if res.Reason() != "" {
				out.Reason += "; " + res.Reason()
			}
		}
		if g.undo(ctx, r, opts, snap) {
			out.ByKeptConnection = true
			if derr := g.Disarm(ctx, r, sw); errors.Is(derr, ErrFired) {
				out.SwitchFired = true
			} else if derr != nil {
				return out, derr
			}
		}
	}
	if !out.ByKeptConnection {
		out.SwitchFired = true
		if err := g.waitSwitch(ctx, r, sw, wait); err != nil {
			return out, err
		}
	}
	for try := 0; ; try++ {
		after, err := g.Check(ctx, r)
		after.Lockouts, after.Warnings = newLockouts(after.Lockouts, before, after.Warnings)
		out.After = &after
		if err != nil {
			return out, fmt.Errorf("lockout: the canary after the undo: %w", err)
		}
		if after.OK() {
			return out, nil
		}
		// Once more, as before the commit, before giving the host up.
		if try == 1 || !pause(ctx, time.Second) {
			return out, &LockedOutError{User: g.cfg.User, Reason: after.Reason()}
		}
	}
}

// pause waits d; false when ctx ended first.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// precheck runs the latent check alone (its lockouts, as a set; none when
// it cannot run) and, concurrently, the fresh login (its error; nil without
// a LoginFunc).
func (g *Guard) precheck(ctx context.Context, r nightshift.Runner) (map[string]bool, error) {
	var loginErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		if g.cfg.FreshLogin != nil {
			loginErr = g.login(ctx)
		}
	}()
	before := g.latent(ctx, r)
	<-done
	return before, loginErr
}

// undo runs opts.Restore and the snapshot's restore through r, in one
// round trip; false when either failed. sshd is restarted after it unless
// opts.FilesOnly and the change left /etc/ssh as the snapshot holds it
// (compared before the undo).
func (g *Guard) undo(ctx context.Context, r nightshift.Runner, opts ArmOptions, snap *Snapshot) bool {
	if snap == nil || !plainPath.MatchString(snap.Dir) {
		return false
	}
	uctx, cancel := context.WithTimeout(ctx, g.cfg.LoginTimeout+g.cfg.LoginRetry)
	defer cancel()
	var b strings.Builder
	b.WriteString("ssh=1\n")
	if opts.FilesOnly {
		b.WriteString("sh -c " + quote(script("sshdiff.sh")) + " sh " + quote(snap.Dir) + " && ssh=0\n")
	}
	if opts.Restore != "" {
		b.WriteString("sh -c " + quote(opts.Restore) + " || { echo \"FAIL the restore command: exit $?\"; exit 1; }\n")
	}
	b.WriteString(g.restoreScript(snap, "[ $ssh = 1 ] || { echo 'sshd not restarted: the change left /etc/ssh as it was'; echo OK; exit 0; }\n"))
	out, err := run(uctx, r, "restore", b.String())
	return err == nil && lastLine(out) == "OK"
}

// waitSwitch waits for the switch to have restored: fresh logins (or,
// without a LoginFunc, the kept runner) until one works and the switch's
// state is restored, or the deadline plus wait passes.
func (g *Guard) waitSwitch(ctx context.Context, r nightshift.Runner, sw *Switch, wait time.Duration) error {
	end := sw.Deadline.Add(wait)
	for {
		sctx, cancel := context.WithTimeout(ctx, g.cfg.LoginTimeout)
		st, _, err := g.State(sctx, r, sw)
		cancel()
		if err == nil && (st == StateRestored || st == StateDisarmed) {
			return nil
		}
		if time.Now().After(end) {
			return fmt.Errorf("%w: switch %s did not restore access by %s (state %q; a host whose programs no longer start, for example with its dynamic loader gone, can be restored only as far as the switch's loader repair reaches, see the package documentation): %w", ErrLost, sw.ID, end.Format(time.RFC3339), st, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// latent runs the latent-lockout check alone and returns the lockouts it
// finds, as a set (none when it cannot run).
func (g *Guard) latent(ctx context.Context, r nightshift.Runner) map[string]bool {
	out, err := run(ctx, r, "check", g.checkCommand())
	var res Result
	if err != nil || parseCheck(out, &res) != nil {
		return nil
	}
	set := map[string]bool{}
	for _, l := range res.Lockouts {
		set[l] = true
	}
	return set
}

// newLockouts keeps the lockouts not found before the change; the others
// become warnings.
func newLockouts(after []string, before map[string]bool, warnings []string) ([]string, []string) {
	var keep []string
	for _, l := range after {
		if before[l] {
			warnings = append(warnings, "already before the change: "+l)
			continue
		}
		keep = append(keep, l)
	}
	return keep, warnings
}
