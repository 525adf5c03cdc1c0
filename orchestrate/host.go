package orchestrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

// Engine is what records a host's night and carries its rule checks: the
// SQLite journal (package batch: every step committed, a resume replays
// them) and Temporal (package fleet: every step an activity, a replay
// reads them from the workflow's history). The worker's model, target,
// probe and observer are the engine's too; Work is the one rule loop both
// run them in. An Engine is used by one goroutine (the host's, or its
// workflow's).
type Engine interface {
	// Begin starts rule's task, the next one worked on. done reports a
	// task an earlier run finished: it is skipped.
	Begin(ctx context.Context, rule rules.Rule) (done bool, err error)
	// Check is the rule's check as the worker evaluates it through the
	// engine (recorded, or run as an activity).
	Check(c rules.Check) rules.Check
	// Finish records how rule's task ended, for the task Work is on and
	// for those it ends without working on them (the rest of a host that
	// stopped answering). A task already finished is left as it is.
	Finish(ctx context.Context, rule rules.Rule, out nightshift.Outcome) error
	// HostDown records that the host stopped answering, and why, before
	// its remaining tasks are finished as unreachable.
	HostDown(ctx context.Context, reason string) error
	// HostErr is the transport error of the host seen in the current
	// task, nil if none.
	HostErr() error
	// Err is the engine's own failure (a journal write), which ends the
	// host's work; nil if none.
	Err() error
	// Stopped reports whether the night was asked to stop: no task starts
	// after it, and the one whose work it cut short stays unfinished.
	Stopped() bool
}

// Fixer works on one rule on one host: package worker's *Worker.
type Fixer interface {
	Fix(ctx context.Context, r rules.Rule) (nightshift.Outcome, error)
}

var _ Fixer = (*worker.Worker)(nil)

// HostEnd is how Work ended on a host.
type HostEnd struct {
	// Unreachable is why the host stopped answering; its remaining tasks
	// were finished as unreachable.
	Unreachable string
	// Stopped is set when the work ended before its end (a stop, a
	// cancelled context, the model server down): the task in progress
	// stays unfinished.
	Stopped bool
	// ModelDown, with Stopped, is the model server staying unreachable:
	// it wraps nightshift.ErrModelUnreachable and the worker's error.
	ModelDown error
}

// Work runs todo on one host, one rule at a time, in order, with w and e.
// Fix runs under fixCtx, which a stop ends at once (a model call, its
// backoff, a redial); ctx is the night's. A rule whose Fix fails on a
// transport error of the host (e.HostErr) ends the host: that task and
// every later one are finished as unreachable. An error is the engine's
// (Err, Begin, Finish, HostDown) and ends the host's work.
func Work(ctx, fixCtx context.Context, e Engine, w Fixer, todo []rules.Rule) (HostEnd, error) {
	for i, rule := range todo {
		if e.Stopped() || ctx.Err() != nil {
			return HostEnd{Stopped: true}, nil
		}
		done, err := e.Begin(ctx, rule)
		switch {
		case err != nil && ctx.Err() != nil:
			return HostEnd{Stopped: true}, nil
		case err != nil:
			return HostEnd{}, err
		case done:
			continue
		}
		rr := rule
		if rr.Check != nil {
			rr.Check = e.Check(rule.Check)
		}
		out, ferr := w.Fix(fixCtx, rr)
		var ue *worker.UnreachableError
		switch {
		case e.Err() != nil:
			return HostEnd{}, fmt.Errorf("%s: %w", rule.ID, e.Err())
		case ctx.Err() != nil:
			return HostEnd{Stopped: true}, nil
		case e.Stopped() && (ferr != nil || out.Status == nightshift.RuleInterrupted):
			// A stop ended a wait (or the worker saw it between steps):
			// whatever the wait's error, the task resumes later.
			return HostEnd{Stopped: true}, nil
		case errors.As(ferr, &ue):
			return HostEnd{Stopped: true, ModelDown: fmt.Errorf("%w: %w", nightshift.ErrModelUnreachable, ferr)}, nil
		case ferr != nil && e.HostErr() != nil:
			reason := fmt.Sprintf("host stopped answering: %v", e.HostErr())
			return HostEnd{Unreachable: reason}, Unreachable(ctx, e, todo[i:], reason)
		case out.Status == nightshift.RuleInterrupted:
			return HostEnd{Stopped: true}, nil // graceful stop: resumed later
		}
		if err := e.Finish(ctx, rule, out); err != nil {
			return HostEnd{}, err
		}
	}
	return HostEnd{}, nil
}

// Unreachable records that the host stopped answering and finishes todo
// as unreachable with reason.
func Unreachable(ctx context.Context, e Engine, todo []rules.Rule, reason string) error {
	if err := e.HostDown(ctx, reason); err != nil {
		return err
	}
	return End(ctx, e, todo, nightshift.RuleUnreachable, reason)
}

// End finishes every task of todo with status and reason, without working
// on them (a host that did not answer, a sandbox required and missing).
func End(ctx context.Context, e Engine, todo []rules.Rule, status nightshift.RuleStatus, reason string) error {
	for _, r := range todo {
		if err := e.Finish(ctx, r, nightshift.Outcome{Rule: r.ID, Status: status, Reason: reason}); err != nil {
			return err
		}
	}
	return nil
}
