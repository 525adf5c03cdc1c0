package sandbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/lockout"
	"github.com/nightshift-dev/nightshift/safety"
)

type scopeKey struct{}

// Scope is a rule's scope as the judge reads it: the paths it declares
// (safety.EffectsPolicy.Scope), whether they are default-deny (Strict:
// StrictScope; the worker sets it for every rule), what its check reads
// besides files (Units, Sysctl, Keys: they scope the recorded actions and
// the lines changed inside Paths under StrictScope), and for refusals the
// rule's id and why its paths are empty (Rule, Note:
// safety.EffectsPolicy.Rule, ScopeNote).
type Scope struct {
	Paths  []string `json:"paths,omitempty"`
	Strict bool     `json:"strict,omitempty"`
	Units  []string `json:"units,omitempty"`
	Sysctl []string `json:"sysctl,omitempty"`
	Keys   []string `json:"keys,omitempty"`
	Rule   string   `json:"rule,omitempty"`
	Note   string   `json:"note,omitempty"`
}

func (s Scope) clone() Scope {
	return Scope{Paths: slices.Clone(s.Paths), Strict: s.Strict, Units: slices.Clone(s.Units), Sysctl: slices.Clone(s.Sysctl), Keys: slices.Clone(s.Keys), Rule: s.Rule, Note: s.Note}
}

// WithRuleScope returns a context whose commands are judged under the
// rule's scope s.
func WithRuleScope(ctx context.Context, s Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, s.clone())
}

// RuleScopeOf returns the scope WithRuleScope put in ctx; the zero Scope
// without.
func RuleScopeOf(ctx context.Context) Scope {
	s, _ := ctx.Value(scopeKey{}).(Scope)
	return s.clone()
}

// Runner is a nightshift.Runner that runs every command first in the
// Sandbox, judges its effects with safety.JudgeEffects and applies them
// (Commit, then the approved recorded actions) only when the judge allows
// them. The Exec it returns is what the command printed and returned in
// the sandbox, with Evidence saying what it did (its Effects redacted:
// nightshift.Effects.Redacted) and what became of it; a
// refusal, a conflict or a failure of the sandbox itself is an Exec whose
// Evidence says so (ExitCode -1 unless the command ran), not an error. An
// error means the host did not answer and the outcome is unknown (the
// trial may or may not have been committed).
//
// Runner is safe for concurrent use if the Sandbox is.
type Runner struct {
	sb     *Sandbox
	policy safety.EffectsPolicy
	cfg    RunnerConfig

	mu sync.Mutex
	// lockedOut is the lockout net's *lockout.LockedOutError once the
	// host's login failed whatever a command did, or its ErrLost once the
	// switch did not bring the host back: every later Run returns it
	// without running anything.
	lockedOut error
}

// RunnerConfig configures a Runner. The zero value judges with
// safety.JudgeEffects and commits without a lockout net.
type RunnerConfig struct {
	// Guard, when set, guards every commit with the lockout net: a
	// snapshot of what the worker's login depends on, a dead-man switch
	// armed before the commit (it runs the trial's undo and restores the
	// snapshot unless disarmed in time), the canary after the commit and
	// its actions, and an undo when the canary finds a lockout (the
	// evidence's verdict is then rolled_back, with the canary's reason).
	Guard *lockout.Guard
	// GuardWait is how long, past the switch's deadline, a rollback waits
	// for the switch when the kept connection is gone. Zero: 30s.
	GuardWait time.Duration
	// Judge replaces safety.JudgeEffects (tests that must let a harmful
	// change through to prove the lockout net behind the judge). Nil: the
	// judge.
	Judge func(nightshift.Effects, safety.EffectsPolicy) []safety.Refusal
}

// NewRunner returns a Runner over sb judging with policy (its Scope is
// replaced per call by WithRuleScope, with its Units, Sysctl and Keys).
func NewRunner(sb *Sandbox, policy safety.EffectsPolicy, cfg RunnerConfig) *Runner {
	if cfg.Judge == nil {
		cfg.Judge = safety.JudgeEffects
	}
	if cfg.GuardWait <= 0 {
		cfg.GuardWait = 30 * time.Second
	}
	return &Runner{sb: sb, policy: policy, cfg: cfg}
}

// Sandbox returns the sandbox the Runner runs commands in.
func (r *Runner) Sandbox() *Sandbox { return r.sb }

// Run implements nightshift.Runner.
//
// With a Guard, an error matching lockout.ErrLockedOut means the host's
// login fails whatever the command did (before its commit, when nothing
// was committed and the trial is discarded, or still after its undo): the
// host is locked out by an earlier change or from outside. The Runner then
// runs nothing more on the host: every later Run returns that error at
// once. So it does after an error matching lockout.ErrLost (the dead-man
// switch did not bring the host back). The caller treats either as a
// failure of the host.
func (r *Runner) Run(ctx context.Context, command string) (nightshift.Exec, error) {
	ex, err := r.run(ctx, command)
	if ex.Evidence != nil {
		// The reasons too leave the Runner redacted (a reason that quoted
		// a line of /etc/shadow would carry its hash).
		red := ex.Evidence.Redacted()
		ex.Evidence = &red
	}
	return ex, err
}

// run is Run before the evidence's redaction.
func (r *Runner) run(ctx context.Context, command string) (nightshift.Exec, error) {
	r.mu.Lock()
	locked := r.lockedOut
	r.mu.Unlock()
	if locked != nil {
		return nightshift.Exec{ExitCode: -1}, fmt.Errorf("sandbox: nothing runs on this host any more: %w", locked)
	}
	tr, err := r.sb.Try(ctx, command)
	if err != nil {
		if errors.Is(err, ErrHelper) || errors.Is(err, ErrReport) || errors.Is(err, ErrUnavailable) {
			ev := &nightshift.Evidence{Verdict: nightshift.VerdictDiscarded, Reasons: []string{"the sandbox failed: " + err.Error()}}
			return nightshift.Exec{ExitCode: -1, Stderr: "the sandbox failed; nothing was run on the host: " + err.Error() + "\n", Evidence: ev}, nil
		}
		return nightshift.Exec{ExitCode: -1}, err
	}
	ex := tr.Exec
	// The judge reads tr.Effects as they are (it reads /etc/shadow's diff
	// to refuse a blanked password); the evidence that leaves the Runner
	// (events, the journal, reports, fleet results, the model's next turn)
	// carries them redacted: no password hash, no private key.
	ev := &nightshift.Evidence{Trial: tr.ID, Effects: tr.Effects.Redacted()}
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
	if s, ok := ctx.Value(scopeKey{}).(Scope); ok {
		pol.Scope, pol.StrictScope, pol.Units, pol.Sysctl, pol.Keys = s.Paths, s.Strict, s.Units, s.Sysctl, s.Keys
		pol.Rule, pol.ScopeNote = s.Rule, s.Note
	}
	if refs := r.cfg.Judge(tr.Effects, pol); len(refs) > 0 {
		reasons := make([]string, len(refs))
		for i, rf := range refs {
			reasons[i] = rf.Reason
			ev.Lockout = ev.Lockout || rf.Entry == "lockout"
		}
		return discard(nightshift.VerdictRefused, reasons...)
	}
	if len(tr.ops) == 0 && len(tr.Effects.Actions) == 0 {
		ev.Trial = "" // nothing to apply, nothing to undo
		return discard(nightshift.VerdictCommitted)
	}
	// apply commits the files, then runs the approved actions. Its error
	// is the commit's (a conflict: nothing applied) or the host's.
	var conflict error
	applied := false
	apply := func(ctx context.Context) error {
		applied = true
		if len(tr.ops) == 0 {
			ev.Trial = "" // actions only: no file to undo
			if err := r.sb.Discard(ctx, tr); err != nil {
				return err
			}
		} else if err := r.sb.Commit(ctx, tr); err != nil {
			if errors.As(err, new(*ConflictError)) || errors.Is(err, ErrHelper) {
				conflict = err
				return nil // nothing applied: nothing for the net to undo
			}
			return err
		}
		ev.Verdict = nightshift.VerdictCommitted
		if len(tr.Effects.Actions) > 0 {
			acts, err := r.sb.RunActions(ctx, tr.Effects.Actions)
			ran := nightshift.Effects{Actions: acts}.Redacted().Actions
			ev.Effects.Actions = append(ran, ev.Effects.Actions[len(ran):]...)
			return err
		}
		return nil
	}
	err = nil
	if g := r.cfg.Guard; g != nil {
		var out lockout.Outcome
		// Without recorded actions the commit only changes files: an undo
		// then restarts sshd only when the commit touched /etc/ssh.
		opts := lockout.ArmOptions{FilesOnly: len(tr.Effects.Actions) == 0}
		if len(tr.ops) > 0 {
			opts.Restore = r.sb.UndoCommand(tr.ID)
		}
		out, err = g.Protect(ctx, r.sb.r, opts, r.cfg.GuardWait, apply)
		if err == nil {
			err = out.CommitErr
		}
		if out.RolledBack {
			ev.Verdict, ev.Lockout = nightshift.VerdictRolledBack, true
			ev.Reasons = append(ev.Reasons, "rolled back: "+out.Reason)
		}
		if errors.Is(err, lockout.ErrLockedOut) || errors.Is(err, lockout.ErrLost) {
			r.mu.Lock()
			r.lockedOut = err
			r.mu.Unlock()
		}
		if !applied {
			// The net stopped before the commit (the login already
			// failed, or the switch could not be armed): nothing of the
			// trial reached the host.
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			_ = r.sb.Discard(dctx, tr)
			cancel()
			ev.Verdict = nightshift.VerdictDiscarded
			if err != nil {
				ev.Reasons = append(ev.Reasons, "not applied: "+err.Error())
			}
		}
	} else {
		err = apply(ctx)
	}
	if conflict != nil {
		_ = r.sb.Discard(context.WithoutCancel(ctx), tr)
		v := nightshift.VerdictDiscarded
		if errors.As(conflict, new(*ConflictError)) {
			v = nightshift.VerdictConflict
		}
		ev.Verdict, ev.Reasons = v, append(ev.Reasons, "not applied: "+conflict.Error())
	}
	return ex, err
}
