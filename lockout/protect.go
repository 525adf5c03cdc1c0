package lockout

import (
	"context"
	"errors"
	"fmt"
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

// Protect guards one commit: it arms the switch (which takes the snapshot
// unless opts.Snapshot is given: one round trip), runs commit, runs the canary and then either
// disarms the switch (the change stays) or undoes the change: opts.Restore
// and the snapshot's restore through the kept connection r, or, when that
// connection is gone, the switch on the host, waited for by fresh logins
// until its deadline plus wait. After an undo it runs the canary again.
//
// The error is for what Protect could not do (take the snapshot, arm the
// switch, reach the host after an undo); a rolled-back change is an
// Outcome with RolledBack and Reason, not an error.
func (g *Guard) Protect(ctx context.Context, r nightshift.Runner, opts ArmOptions, wait time.Duration, commit func(context.Context) error) (Outcome, error) {
	var out Outcome
	// What the latent check finds before the change is not the change's
	// doing (a host whose sshd already would not serve this login the way
	// it connects, as on a host reached through another sshd): only what
	// the change adds counts.
	before := g.latent(ctx, r)
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
		if g.undo(ctx, r, opts.Restore, snap) {
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
	after, err := g.Check(ctx, r)
	out.After = &after
	if err != nil {
		return out, fmt.Errorf("lockout: the canary after the undo: %w", err)
	}
	return out, nil
}

// undo runs restore and the snapshot's restore through r; false when
// either failed.
func (g *Guard) undo(ctx context.Context, r nightshift.Runner, restore string, snap *Snapshot) bool {
	uctx, cancel := context.WithTimeout(ctx, g.cfg.LoginTimeout+g.cfg.LoginRetry)
	defer cancel()
	if restore != "" {
		if _, err := run(uctx, r, "restore command", restore); err != nil {
			return false
		}
	}
	return g.Restore(uctx, r, snap) == nil
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
			return fmt.Errorf("lockout: switch %s did not restore access by %s (state %q): %w", sw.ID, end.Format(time.RFC3339), st, err)
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
