package sandbox

import (
	"context"
	"errors"
	"slices"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/safety"
)

type scopeKey struct{}

// WithScope returns a context whose commands are judged against the paths
// a rule declares it touches (safety.EffectsPolicy.Scope).
func WithScope(ctx context.Context, paths []string) context.Context {
	return context.WithValue(ctx, scopeKey{}, slices.Clone(paths))
}

// ScopeOf returns the paths WithScope put in ctx (nil without).
func ScopeOf(ctx context.Context) []string {
	s, _ := ctx.Value(scopeKey{}).([]string)
	return slices.Clone(s)
}

// Runner is a nightshift.Runner that runs every command first in the
// Sandbox, judges its effects with safety.JudgeEffects and applies them
// (Commit, then the approved recorded actions) only when the judge allows
// them. The Exec it returns is what the command printed and returned in
// the sandbox, with Evidence saying what it did and what became of it; a
// refusal, a conflict or a failure of the sandbox itself is an Exec whose
// Evidence says so (ExitCode -1 unless the command ran), not an error. An
// error means the host did not answer and the outcome is unknown (the
// trial may or may not have been committed).
//
// Runner is safe for concurrent use if the Sandbox is.
type Runner struct {
	sb     *Sandbox
	policy safety.EffectsPolicy
}

// NewRunner returns a Runner over sb judging with policy (its Scope is
// replaced per call by WithScope).
func NewRunner(sb *Sandbox, policy safety.EffectsPolicy) *Runner {
	return &Runner{sb: sb, policy: policy}
}

// Sandbox returns the sandbox the Runner runs commands in.
func (r *Runner) Sandbox() *Sandbox { return r.sb }

// Run implements nightshift.Runner.
func (r *Runner) Run(ctx context.Context, command string) (nightshift.Exec, error) {
	tr, err := r.sb.Try(ctx, command)
	if err != nil {
		if errors.Is(err, ErrHelper) || errors.Is(err, ErrReport) || errors.Is(err, ErrUnavailable) {
			ev := &nightshift.Evidence{Verdict: nightshift.VerdictDiscarded, Reasons: []string{"the sandbox failed: " + err.Error()}}
			return nightshift.Exec{ExitCode: -1, Stderr: "the sandbox failed; nothing was run on the host: " + err.Error() + "\n", Evidence: ev}, nil
		}
		return nightshift.Exec{ExitCode: -1}, err
	}
	ex := tr.Exec
	ev := &nightshift.Evidence{Trial: tr.ID, Effects: tr.Effects}
	ex.Evidence = ev
	discard := func(v nightshift.Verdict, reasons ...string) (nightshift.Exec, error) {
		ev.Verdict, ev.Reasons = v, append(ev.Reasons, reasons...)
		if err := r.sb.Discard(ctx, tr); err != nil {
			return ex, err
		}
		return ex, nil
	}
	if ex.TimedOut {
		return discard(nightshift.VerdictDiscarded, "the command timed out in the sandbox; nothing was applied")
	}
	pol := r.policy
	if s, ok := ctx.Value(scopeKey{}).([]string); ok {
		pol.Scope = s
	}
	if refs := safety.JudgeEffects(tr.Effects, pol); len(refs) > 0 {
		reasons := make([]string, len(refs))
		for i, rf := range refs {
			reasons[i] = rf.Reason
			ev.Lockout = ev.Lockout || rf.Entry == "lockout"
		}
		return discard(nightshift.VerdictRefused, reasons...)
	}
	if len(tr.ops) == 0 {
		ev.Trial = "" // nothing to undo
		if _, err := discard(nightshift.VerdictCommitted); err != nil {
			return ex, err
		}
	} else if err := r.sb.Commit(ctx, tr); err != nil {
		var ce *ConflictError
		if errors.As(err, &ce) {
			return discard(nightshift.VerdictConflict, "not applied: "+ce.Error())
		}
		if errors.Is(err, ErrHelper) {
			return discard(nightshift.VerdictDiscarded, "not applied: "+err.Error())
		}
		return ex, err
	} else {
		ev.Verdict = nightshift.VerdictCommitted
	}
	if len(tr.Effects.Actions) > 0 {
		acts, err := r.sb.RunActions(ctx, tr.Effects.Actions)
		ev.Effects.Actions = append(acts, ev.Effects.Actions[len(acts):]...)
		if err != nil {
			return ex, err
		}
	}
	return ex, nil
}
