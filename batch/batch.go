package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/orchestrate"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

// Defaults for Config's zero values.
const (
	DefaultParallelHosts    = 4
	DefaultModelConcurrency = 4
)

// Errors. Match them with errors.Is.
var (
	// ErrConfig is wrapped by every configuration error New returns.
	ErrConfig = errors.New("invalid batch configuration")
	// ErrSpec: the rules or hosts given are empty, duplicated, or (on
	// resume) lack a rule or host the journal's run recorded.
	ErrSpec = errors.New("invalid batch spec")
)

// Config configures a Runner. Required fields are marked; the zero value of
// every other field selects its default.
type Config struct {
	// Journal records every step (required).
	Journal *journal.Journal
	// Connector reaches the hosts (required).
	Connector nightshift.Connector
	// Worker holds the settings of each host's worker that the Runner does
	// not own. Model and Chat are required, as for worker.New. The Runner
	// owns Target and Probe (each host's connection) and Stop
	// (Config.Stop): New refuses a Worker that sets them. What the Runner
	// adds to the rest: Chat is wrapped (the
	// ModelConcurrency cap, the journal); Observer and MemoryObserver, if
	// set, receive every event after the journal has recorded it (called
	// from the host's goroutine). Every other field is passed on as is.
	Worker worker.Config
	// ParallelHosts is how many hosts are worked on at once, one rule at a
	// time each. Zero means DefaultParallelHosts.
	ParallelHosts int
	// ModelConcurrency caps the model calls in flight across all hosts.
	// Zero means DefaultModelConcurrency.
	ModelConcurrency int
	// Stop, when closed, ends the run after each host's current step: the
	// step is recorded, the task stays unfinished for `worker resume`, no
	// new task starts, and every wait (model calls and their backoff, the
	// model-call limiter, redials) ends at once. Cancelling the context is
	// the hard stop. Nil means never.
	Stop <-chan struct{}
	// ReportOutputCap bounds each command's output in reports built by
	// Report, in bytes. Zero means orchestrate.DefaultOutputCap.
	ReportOutputCap int
	// HostObserver, if set, is called once per host worked on in a run
	// (from the host's goroutine, after it connects) and returns an
	// observer of that host's worker events only, called after the journal
	// has recorded each event and after Worker.Observer. A nil result
	// observes nothing. Events replayed by a resumed task are observed
	// again.
	HostObserver func(host string) nightshift.Observer
	// Progress, if set, hears how the run goes: each host's plan, each
	// task's start and end, hosts that stop answering. Nil means none.
	Progress Progress
	// Sandbox, if set, is called once per host worked on in a run, after it
	// connects, with its connection. It returns what remediation commands
	// run through (a *sandbox.Runner over the connection, or the
	// connection itself) and the worker's Sandboxed and Fallback settings;
	// the checks and the probe keep the plain connection. An error
	// matching sandbox.ErrUnavailable (the sandbox is required and cannot
	// run there) ends the host's tasks as failed with the error as their
	// reason; any other error means the host did not answer (unreachable).
	// Nil means no sandbox.
	Sandbox func(ctx context.Context, host inventory.Host, conn nightshift.Runner) (SandboxSetup, error)
}

// SandboxSetup is Config.Sandbox's answer for one host.
type SandboxSetup struct {
	Runner    nightshift.Runner
	Sandboxed bool
	Fallback  string
}

// Progress is told how a run goes; package progress's Progress satisfies
// it. Plan is called for every host before any work starts, with the
// number of its tasks not yet finished; the other methods from the host's
// goroutine. RuleEnded's status is the task's outcome
// (nightshift.RuleUnreachable for the rules of a host that stopped
// answering, after HostDown). A task stopped before its end (Stop, a cancelled context, the
// model server down) is started but not ended.
type Progress interface {
	Plan(host string, rules int)
	RuleStarted(host, rule string)
	RuleEnded(host, rule string, status nightshift.RuleStatus)
	HostDown(host string, err error)
}

// Runner runs batches of rules × hosts. It is safe to call Run, Resume and
// Report from several goroutines, though a journal normally holds one run
// at a time in progress.
type Runner struct {
	cfg   Config
	limit *limiter
}

// New validates cfg and returns a Runner.
func New(cfg Config) (*Runner, error) {
	switch {
	case cfg.Journal == nil:
		return nil, fmt.Errorf("%w: Journal is required", ErrConfig)
	case cfg.Connector == nil:
		return nil, fmt.Errorf("%w: Connector is required", ErrConfig)
	case cfg.Worker.Model == nil || cfg.Worker.Chat == nil:
		return nil, fmt.Errorf("%w: Worker.Model and Worker.Chat are required", ErrConfig)
	case cfg.Worker.Target != nil || cfg.Worker.Probe != nil || cfg.Worker.Checks != nil || cfg.Worker.Sandboxed || cfg.Worker.Fallback != "":
		return nil, fmt.Errorf("%w: Worker.Target, Probe, Checks, Sandboxed and Fallback are set by the Runner for each host (Connector, Sandbox)", ErrConfig)
	case cfg.Worker.Stop != nil:
		return nil, fmt.Errorf("%w: Worker.Stop is set by the Runner (use Config.Stop)", ErrConfig)
	case cfg.ParallelHosts < 0 || cfg.ModelConcurrency < 0 || cfg.ReportOutputCap < 0:
		return nil, fmt.Errorf("%w: ParallelHosts, ModelConcurrency and ReportOutputCap must not be negative", ErrConfig)
	}
	if cfg.ParallelHosts == 0 {
		cfg.ParallelHosts = DefaultParallelHosts
	}
	if cfg.ModelConcurrency == 0 {
		cfg.ModelConcurrency = DefaultModelConcurrency
	}
	if cfg.ReportOutputCap == 0 {
		cfg.ReportOutputCap = orchestrate.DefaultOutputCap
	}
	return &Runner{cfg: cfg, limit: newLimiter(cfg.Worker.Chat, cfg.ModelConcurrency)}, nil
}

// Spec is what a run works on.
type Spec struct {
	// Name labels the run for people ("nightly cis-server").
	Name string
	// Rules are worked on in this order on every host.
	Rules []rules.Rule
	// Hosts are started in this order, ParallelHosts at a time.
	Hosts []inventory.Host
	// Meta is stored with the run as JSON: whatever the caller needs to
	// rebuild Rules and Hosts for Resume (file names, flags). No secrets.
	Meta any
}

// Recorded is the spec a journal holds for a run.
type Recorded struct {
	Name  string                `json:"name"`
	Model string                `json:"model,omitempty"`
	Rules []orchestrate.RuleRef `json:"rules"`
	Hosts []string              `json:"hosts"`
	Meta  json.RawMessage       `json:"meta,omitempty"`
}

// RunResult is what Run and Resume did.
type RunResult struct {
	Run journal.RunID
	// Total is rules × hosts; Finished counts the tasks finished in the
	// journal (in this process or before).
	Total, Finished int
	// Stopped is set when Config.Stop or the context ended the run early.
	Stopped bool
	// Unreachable lists the hosts marked unreachable in this process.
	Unreachable []string
	// Continued counts the tasks in progress that this process continued
	// from their recorded state (Resume).
	Continued int
}

func (s Spec) validate() error {
	if len(s.Rules) == 0 || len(s.Hosts) == 0 {
		return fmt.Errorf("%w: no rules or no hosts", ErrSpec)
	}
	seen := map[string]bool{}
	for _, r := range s.Rules {
		if r.ID == "" || seen["r "+r.ID] {
			return fmt.Errorf("%w: rule %q is empty or listed twice", ErrSpec, r.ID)
		}
		seen["r "+r.ID] = true
	}
	for _, h := range s.Hosts {
		if h.Name == "" || seen["h "+h.Name] {
			return fmt.Errorf("%w: host %q is empty or listed twice", ErrSpec, h.Name)
		}
		seen["h "+h.Name] = true
	}
	return nil
}

func (s Spec) recorded() (Recorded, error) {
	rec := Recorded{Name: s.Name}
	for _, r := range s.Rules {
		rec.Rules = append(rec.Rules, orchestrate.RuleRef{ID: r.ID, Title: r.Title})
	}
	for _, h := range s.Hosts {
		rec.Hosts = append(rec.Hosts, h.Name)
	}
	if s.Meta != nil {
		b, err := json.Marshal(s.Meta)
		if err != nil {
			return rec, fmt.Errorf("%w: meta: %w", ErrSpec, err)
		}
		rec.Meta = b
	}
	return rec, nil
}

// RecordedSpec returns the spec recorded with run.
func RecordedSpec(ctx context.Context, j *journal.Journal, run journal.RunID) (Recorded, error) {
	r, err := j.Run(ctx, run)
	if err != nil {
		return Recorded{}, err
	}
	var rec Recorded
	if err := json.Unmarshal(r.Config, &rec); err != nil || len(rec.Rules) == 0 {
		return Recorded{}, fmt.Errorf("run %d: %w: not a batch run's config", run, ErrSpec)
	}
	return rec, nil
}

// Run records a new run of spec in the journal and works on it until every
// rule × host is finished, Stop is closed or ctx ends. The error is nil when
// the run was worked through (rules that were not fixed are not errors) or
// stopped by Stop.
func (r *Runner) Run(ctx context.Context, spec Spec) (RunResult, error) {
	if err := spec.validate(); err != nil {
		return RunResult{}, err
	}
	rec, err := spec.recorded()
	if err != nil {
		return RunResult{}, err
	}
	rec.Model = r.cfg.Worker.Model.Name()
	id, err := r.cfg.Journal.StartRun(ctx, journal.RunSpec{Name: spec.Name, Config: rec})
	if err != nil {
		return RunResult{}, fmt.Errorf("batch: start run: %w", err)
	}
	return r.execute(ctx, id, spec, nil)
}

// Resume continues run after a crash, a kill or a stop, and tries again the
// hosts that ended unreachable (their tasks are reopened). spec must hold
// every rule and host the run recorded (RecordedSpec says which); they are
// worked on in the recorded order. Finished tasks are not redone. Commands
// that started without a recorded result are marked unknown in the journal
// and are never run again. A task in progress continues from its recorded
// state: its recorded model replies, command results and check results are
// replayed to a fresh worker without calling the model or touching the host,
// and only then does the work go on live.
func (r *Runner) Resume(ctx context.Context, run journal.RunID, spec Spec) (RunResult, error) {
	rec, err := RecordedSpec(ctx, r.cfg.Journal, run)
	if err != nil {
		return RunResult{}, err
	}
	ordered, err := orderSpec(rec, spec)
	if err != nil {
		return RunResult{}, err
	}
	// Hosts that did not answer are tried again: their tasks are
	// reopened and resume from what they recorded.
	if _, err := r.cfg.Journal.ReopenTasks(ctx, run, nightshift.RuleUnreachable); err != nil {
		return RunResult{}, fmt.Errorf("batch: resume run %d: %w", run, err)
	}
	st, err := r.cfg.Journal.ResumeRun(ctx, run)
	if err != nil {
		return RunResult{}, fmt.Errorf("batch: resume run %d: %w", run, err)
	}
	for _, c := range st.Pending {
		if err := r.cfg.Journal.MarkUnknown(ctx, c.ID, "the worker stopped while the command ran (crash or kill); outcome unknown; not run again"); err != nil {
			return RunResult{}, fmt.Errorf("batch: resume run %d: %w", run, err)
		}
	}
	done := map[[2]string]bool{}
	for _, t := range st.Finished {
		done[[2]string{t.Rule, t.Host}] = true
	}
	return r.execute(ctx, run, ordered, done)
}

// orderSpec returns spec's rules and hosts in the recorded order, failing
// when one is missing.
func orderSpec(rec Recorded, spec Spec) (Spec, error) {
	out := Spec{Name: rec.Name, Meta: spec.Meta}
	rs := map[string]rules.Rule{}
	for _, r := range spec.Rules {
		rs[r.ID] = r
	}
	hs := map[string]inventory.Host{}
	for _, h := range spec.Hosts {
		hs[h.Name] = h
	}
	for _, rr := range rec.Rules {
		r, ok := rs[rr.ID]
		if !ok {
			return Spec{}, fmt.Errorf("%w: rule %s of the recorded run is not among the rules given", ErrSpec, rr.ID)
		}
		out.Rules = append(out.Rules, r)
	}
	for _, name := range rec.Hosts {
		h, ok := hs[name]
		if !ok {
			return Spec{}, fmt.Errorf("%w: host %s of the recorded run is not in the inventory given", ErrSpec, name)
		}
		out.Hosts = append(out.Hosts, h)
	}
	return out, nil
}

// execute works on every task of spec not in done.
func (r *Runner) execute(ctx context.Context, run journal.RunID, spec Spec, done map[[2]string]bool) (RunResult, error) {
	res := RunResult{Run: run, Total: len(spec.Rules) * len(spec.Hosts)}
	stop := make(chan struct{}) // closed by Config.Stop, a fatal error, or the model going down
	var stopOnce sync.Once
	halt := func() { stopOnce.Do(func() { close(stop) }) }
	watchDone := make(chan struct{})
	defer close(watchDone)
	go func() {
		select {
		case <-r.cfg.Stop:
			halt()
		case <-watchDone:
		}
	}()

	var (
		mu        sync.Mutex
		firstErr  error
		continued atomic.Int64
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		halt()
	}
	todo := func(h inventory.Host) []rules.Rule {
		var out []rules.Rule
		for _, rule := range spec.Rules {
			if !done[[2]string{rule.ID, h.Name}] {
				out = append(out, rule)
			}
		}
		return out
	}
	if p := r.cfg.Progress; p != nil {
		for _, h := range spec.Hosts {
			p.Plan(h.Name, len(todo(h)))
		}
	}
	hosts := make(chan inventory.Host)
	var wg sync.WaitGroup
	for range min(r.cfg.ParallelHosts, len(spec.Hosts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for h := range hosts {
				todo := todo(h)
				hr := &hostRun{r: r, run: run, host: h, stop: stop, continued: &continued}
				unreachable, err := hr.work(ctx, todo)
				if err != nil {
					fail(err)
				}
				if unreachable {
					mu.Lock()
					res.Unreachable = append(res.Unreachable, h.Name)
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for _, h := range spec.Hosts {
		select {
		case hosts <- h:
		case <-stop:
			break feed
		case <-ctx.Done():
			break feed
		}
	}
	close(hosts)
	wg.Wait()
	slices.Sort(res.Unreachable)
	res.Continued = int(continued.Load())

	// Count what the journal holds, whoever finished it.
	jctx := context.WithoutCancel(ctx)
	tasks, err := r.cfg.Journal.Tasks(jctx, run)
	if err == nil {
		for _, t := range tasks {
			if t.Finished {
				res.Finished++
			}
		}
	}
	status := nightshift.RunDone
	switch {
	case firstErr != nil && !errors.Is(firstErr, nightshift.ErrModelUnreachable):
		status = nightshift.RunFailed
	case res.Finished < res.Total:
		status = nightshift.RunInterrupted
		res.Stopped = true
	}
	if err := r.cfg.Journal.EndRun(jctx, run, status); err != nil && firstErr == nil {
		firstErr = fmt.Errorf("batch: end run: %w", err)
	}
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	return res, firstErr
}
