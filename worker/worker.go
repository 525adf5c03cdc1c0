package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nightshift-dev/nightshift/safety"

	"github.com/nightshift-dev/nightshift/memory"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/served"

	"github.com/nightshift-dev/nightshift"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultMaxAttempts    = 20
	DefaultRetryDeadline  = 10 * time.Minute
	DefaultRequestTimeout = 5 * time.Minute
	DefaultRefuseRepeats  = 3
	DefaultInstructionPct = 25
)

// ErrConfig is wrapped by every configuration error New returns.
var ErrConfig = errors.New("invalid worker configuration")

// Config configures a Worker. Required fields are marked; the zero value of
// every other field selects its default.
type Config struct {
	// Model is the served model: its name (asked in every request), the
	// tokenizer and chat template its prompts are counted with, and the
	// budget of its window (reserve = max_tokens). Required.
	Model *served.Model
	// Chat makes the model calls (required): a *Client, or any client of
	// the model's server.
	Chat   ChatModel
	Target nightshift.Runner // runs the remediation commands and the checks on the host (required)

	// Probe runs the read-only host probe (ProbeCommand, once per Worker
	// before its first attempt; EventProbe reports it). Nil means Target.
	// Callers that record or route remediation commands (package batch
	// journals them, package fleet runs them as unretried activities) give
	// the probe its own runner, so that they never have to guess which
	// command is the probe.
	Probe nightshift.Runner

	// Checks runs the rules' checks. Nil means Target. Callers whose
	// Target runs commands through the recording sandbox (Sandboxed) give
	// the checks the plain runner: a check is read-only and must see the
	// host as it is.
	Checks nightshift.Runner
	// Sandboxed says that Target runs every command first in the
	// recording sandbox and applies only effects its judge allows (a
	// *sandbox.Runner underneath). Commands the static check cannot
	// analyse then go to Target instead of being refused; what the static
	// check finds certainly harmful is still refused before it runs.
	// Target is given each rule's declared scope (sandbox.WithRuleScope).
	Sandboxed bool
	// Recipes, when its Store is set, replays the fixes other hosts of the
	// same key proved before the model is asked, and proves this host's.
	Recipes Recipes
	// Fallback, when set, says that no sandbox runs on this host and why
	// (--sandbox auto): it is reported with every rule's outcome.
	Fallback string

	// Bans is the ban list; nil means safety.DefaultBanList(). A rule's own
	// patterns are added to it for that rule.
	Bans *safety.BanList
	// MaxAttempts, when set, caps the attempts of every rule: a rule
	// without max_attempts gets MaxAttempts, a rule whose max_attempts is
	// higher is cut to MaxAttempts, a lower one is kept (the user who sets
	// it bounds the night). Zero: each rule's max_attempts, else
	// DefaultMaxAttempts (20).
	MaxAttempts int
	// KeepTurns is the memory's K. Zero means memory.DefaultKeepTurns (3).
	KeepTurns int
	// LowWaterPercent is the memory's low-water mark (see
	// memory.Config.LowWaterPercent). Zero means its default.
	LowWaterPercent int
	// OutputTokens is the memory's cap on older turns' tool outputs (see
	// memory.Config.OutputTokens); the current turn gets twice as much.
	// Zero means its default.
	OutputTokens int
	// RefuseRepeats refuses an exact repeat of a failed command once it was
	// tried this many times (it is warned about before). Zero means
	// DefaultRefuseRepeats (3); negative means never refuse.
	RefuseRepeats int
	// InstructionPercent is the share of the prompt limit the system and
	// task messages may take together; descriptions and hints are
	// shortened to fit, the ban lists never. Zero means DefaultInstructionPct (25).
	InstructionPercent int
	// RetryDeadline is how long the model server may stay unreachable
	// before Fix gives up with *UnreachableError. Zero means no retries:
	// Fix gives up at the first failed model call, as the CLI's
	// --retry-deadline 0 does (the CLI passes its flag here unchanged).
	// DefaultRetryDeadline (10 minutes) is the CLI's default; negative is
	// refused.
	RetryDeadline time.Duration
	// RequestTimeout bounds one model call. Zero means 5 minutes.
	RequestTimeout time.Duration
	// Distiller writes summary lines; nil means the deterministic one. A
	// FallbackDistiller's fallbacks are reported as EventDistillFallback.
	Distiller memory.LineDistiller
	// Logger receives budget events and retries; nil discards them.
	Logger *slog.Logger
	// Observer receives per-attempt events; nil discards them.
	Observer nightshift.Observer
	// MemoryObserver also receives the memory's events (prompts,
	// distillations with the messages they replaced); nil discards them.
	MemoryObserver memory.Observer
	// Lessons supplies what earlier attempts at a rule learned on other
	// hosts and in earlier runs (package lessons), most relevant first. As
	// many whole lessons as fit in the instruction's share are added to it
	// after the rule's own text. Nil means no lessons.
	Lessons LessonSource
	// Stop, when closed, ends Fix after the current step with
	// nightshift.RuleInterrupted (a graceful stop; cancelling the context is the
	// hard one). Nil means never.
	Stop <-chan struct{}

	sleep func(ctx context.Context, d time.Duration) error // tests; nil sleeps for real
}

// Worker fixes rules on one target. It is safe for concurrent Fix calls:
// its Config is read-only after New and the host facts are guarded.
type Worker struct {
	cfg Config

	probeMu sync.Mutex            // held while probing: concurrent Fix calls wait for one probe
	facts   *nightshift.HostFacts // set once by the first successful probe
}

// New validates cfg and returns a Worker.
func New(cfg Config) (*Worker, error) {
	switch {
	case cfg.Model == nil:
		return nil, fmt.Errorf("%w: Model is required", ErrConfig)
	case cfg.Chat == nil:
		return nil, fmt.Errorf("%w: Chat is required", ErrConfig)
	case cfg.Target == nil:
		return nil, fmt.Errorf("%w: Target is required", ErrConfig)
	case cfg.MaxAttempts < 0 || cfg.KeepTurns < 0 || cfg.RetryDeadline < 0:
		return nil, fmt.Errorf("%w: MaxAttempts, KeepTurns and RetryDeadline must not be negative", ErrConfig)
	case cfg.InstructionPercent < 0 || cfg.InstructionPercent > 90:
		return nil, fmt.Errorf("%w: InstructionPercent %d is outside 1..90", ErrConfig, cfg.InstructionPercent)
	}
	if cfg.Probe == nil {
		cfg.Probe = cfg.Target
	}
	if cfg.Checks == nil {
		cfg.Checks = cfg.Target
	}
	if cfg.Bans == nil {
		cfg.Bans = safety.DefaultBanList()
	}
	if cfg.RefuseRepeats == 0 {
		cfg.RefuseRepeats = DefaultRefuseRepeats
	}
	if cfg.InstructionPercent == 0 {
		cfg.InstructionPercent = DefaultInstructionPct
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Worker{cfg: cfg}, nil
}

// tally is the Outcome Fix builds, with what only the worker needs.
type tally struct {
	nightshift.Outcome
	lockout   string       // the first refusal that would have locked the worker out
	turn      []ranCommand // the current attempt's commands that reached the host
	turnCheck string       // the current attempt's re-check line
	replaying string       // the recipe being replayed, for its events
}

// needsAccess turns an unfixed rule whose fixes were refused for locking
// the worker's own login out into RuleNeedsAccessChange, naming the change.
func (o *tally) needsAccess() {
	if o.lockout == "" {
		return
	}
	o.Status = nightshift.RuleNeedsAccessChange
	o.Reason = "fixing it needs a change of the worker's access: a proposed fix " + o.lockout +
		"; give the worker a login this rule does not lock out (a non-root user with sudo, see the README) or apply the change by hand"
}

func (w *Worker) log() *slog.Logger { return w.cfg.Logger }

// emit passes e to the observer with its secrets masked
// (nightshift.RedactText of the command, detail and error; the Exec and
// Evidence Redacted): every observer (the journal, the fleet's report,
// lessons, progress, metrics) records or shows it, none runs it.
func (w *Worker) emit(e nightshift.Event) {
	if w.cfg.Observer == nil {
		return
	}
	e.Command, e.Detail, e.Error = nightshift.RedactText(e.Command), nightshift.RedactText(e.Detail), nightshift.RedactText(e.Error)
	if e.Evidence != nil {
		ev := e.Evidence.Redacted()
		e.Evidence = &ev
	}
	if e.Exec != nil {
		ex := e.Exec.Redacted()
		e.Exec = &ex
	}
	w.cfg.Observer.Observe(e)
}

// check evaluates the rule on the target.
func (w *Worker) check(ctx context.Context, r rules.Rule) (rules.CheckResult, error) {
	if r.Check == nil {
		return rules.CheckResult{}, fmt.Errorf("rule %s has no check", r.ID)
	}
	// The check's output is shown to the model: its secrets masked.
	res, err := r.Check.Evaluate(ctx, w.cfg.Checks)
	res.Output, res.Detail = nightshift.RedactText(res.Output), nightshift.RedactText(res.Detail)
	return res, err
}

// stepOf turns an execution into the memory's step: the facts of its
// summary line and what the model is shown (the status, the output, what a
// committed command changed).
func stepOf(c call, ex nightshift.Exec, err error) memory.Step {
	s := memory.Step{Tool: c.name, Command: c.command, Reason: c.reason, Action: nightshift.ActionOf(ex, err)}
	if err != nil {
		s.Note = nightshift.RedactText(err.Error())
	}
	s.ExitCode, s.Signal, s.Stdout, s.Stderr = ex.ExitCode, ex.Signal, ex.Stdout, ex.Stderr
	s.Before = execStatus(ex, err)
	if ev := ex.Evidence; ev != nil && ev.Verdict == nightshift.VerdictCommitted {
		s.Changes = ev.Effects.Changes // what the sandbox saw it change
		s.After = appliedText(ev.Effects)
	}
	return s
}

// execStatus is what the model is told of a command's result before its
// output: the exit status (or the signal, the timeout, an unknown
// outcome) and how much of the output the cap cut.
func execStatus(ex nightshift.Exec, err error) string {
	var b strings.Builder
	switch {
	case err != nil:
		fmt.Fprintf(&b, "The command's outcome is unknown: %v\nIt was not re-run automatically.\n", err)
		return b.String()
	case ex.TimedOut:
		fmt.Fprintf(&b, "timed out after %s (the command was signalled)\n", ex.Duration.Round(time.Millisecond))
	case ex.Signal != "":
		fmt.Fprintf(&b, "killed by signal %s\n", ex.Signal)
	default:
		fmt.Fprintf(&b, "exit status: %d\n", ex.ExitCode)
	}
	if cut := ex.CutBytes(); cut > 0 {
		fmt.Fprintf(&b, "(output cap: %d bytes cut from the middle)\n", cut)
	}
	return b.String()
}

// appliedText says what a committed command changed on the host and how
// its recorded actions ended.
func appliedText(e nightshift.Effects) string {
	var b strings.Builder
	files := nightshift.Effects{Changes: e.Changes}
	if len(e.Changes) == 0 {
		b.WriteString("It changed no file on the host.\n")
	} else {
		fmt.Fprintf(&b, "Applied to the host (judged in a sandbox first): %s.\n", files.Summary(800))
	}
	for _, a := range e.Actions {
		switch {
		case a.Exit == nil:
			fmt.Fprintf(&b, "Not run: %s.\n", a.String())
		case *a.Exit == 0:
			fmt.Fprintf(&b, "Ran: %s (exit 0).\n", a.String())
		default:
			fmt.Fprintf(&b, "Ran: %s (exit %d): %s\n", a.String(), *a.Exit, strings.TrimSpace(a.Output))
		}
	}
	return b.String()
}
