package fleet

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/lessons"
	"github.com/nightshift-dev/nightshift/orchestrate"
	"github.com/nightshift-dev/nightshift/served"

	"github.com/nightshift-dev/nightshift"
)

// maxLessonsPerRule bounds the lessons of one rule handed to a host
// workflow (the newest are kept), so that inputs stay small on big fleets.
const maxLessonsPerRule = 24

// Workflows are the night and host workflows. The tokenizer a night names
// is loaded once per process and shared.
type Workflows struct {
	// LoadModel loads a tokenizer by name or path, as the model of no
	// server (each night names its model and window); nil means
	// served.Offline with the tokenizer.
	LoadModel func(spec string) (*served.Model, error)

	mu     sync.Mutex
	models map[string]*served.Model
}

// Preload loads the tokenizers named, so that no workflow task waits for
// one (loading takes long enough for the SDK's deadlock detector, which
// fails the task; it is retried, but the first night would log panics).
func (f *Workflows) Preload(specs ...string) error {
	for _, s := range specs {
		if _, err := f.model(s); err != nil {
			return fmt.Errorf("fleet: tokenizer %s: %w", s, err)
		}
	}
	return nil
}

func (f *Workflows) model(spec string) (*served.Model, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m, ok := f.models[spec]; ok {
		return m, nil
	}
	load := f.LoadModel
	if load == nil {
		load = func(spec string) (*served.Model, error) { return served.Offline(served.Config{Tokenizer: spec}) }
	}
	m, err := load(spec)
	if err != nil {
		return nil, err
	}
	if f.models == nil {
		f.models = map[string]*served.Model{}
	}
	f.models[spec] = m
	return m, nil
}

// Versions of the night workflow (workflow.GetVersion), so that nights
// running when a worker is upgraded replay with the code they started on.
const (
	// versionWaves: the night starts at most HostsPerRun host workflows
	// per run, then waits for them and continues as new; its result leaves
	// hosts' results in their workflows (Result.InChildren).
	versionWaves = "night-waves"
)

// Night is the night workflow: one child host workflow per host, on the
// task queue of the host's zone, ParallelHosts at a time, in inventory
// order. Lessons of the hosts that finished reach the hosts started after.
// A cancelled night stops starting hosts, lets the running ones stop after
// their current step, and completes with what was done.
//
// Its history stays bounded: after starting HostsPerRun host workflows (or
// when the server suggests it) a run stops starting hosts, waits for the
// running ones and continues as new with a Carry; hosts' results stay in
// their own workflows' histories (NightResult.InChildren).
func (f *Workflows) night(ctx workflow.Context, n Night) (NightResult, error) {
	n = n.withDefaults()
	if err := n.Validate(); err != nil {
		return NightResult{}, temporal.NewNonRetryableApplicationError(err.Error(), "InvalidNight", err)
	}
	waves := workflow.GetVersion(ctx, versionWaves, workflow.DefaultVersion, 1) >= 1
	var recs *nightRecipes // nil: a night started before recipes
	if workflow.GetVersion(ctx, versionNightRecipes, workflow.DefaultVersion, 1) >= 1 {
		seed := n.Recipes
		if n.Carry != nil {
			seed = n.Carry.Recipes // started from n.Recipes
		}
		recs = newNightRecipes(ctx, seed)
	}
	res := NightResult{Name: n.Name, Model: n.Model.Name, Started: workflow.Now(ctx), InChildren: waves}
	st := NightStatus{Name: n.Name, Hosts: map[string]HostState{}, Outcomes: map[nightshift.RuleStatus]int{}}
	byHost := map[string]HostResult{}
	ordered := func() []HostResult {
		var out []HostResult
		for _, h := range n.Hosts {
			if r, ok := byHost[h.Name]; ok {
				out = append(out, r)
			}
		}
		return out
	}
	// Queries are answered from the start, the datastream's reading
	// included (registering a handler is no step of the history).
	if err := workflow.SetQueryHandler(ctx, statusQuery, func() (NightStatus, error) { return st, nil }); err != nil {
		return res, err
	}
	if err := workflow.SetQueryHandler(ctx, resultQuery, func() (NightResult, error) {
		r := res
		r.HostRuns = ordered()
		if recs != nil {
			r.Recipes = recs.all()
		}
		return r, nil
	}); err != nil {
		return res, err
	}
	for _, h := range n.Hosts {
		res.Hosts = append(res.Hosts, h.Name)
		st.Hosts[h.Name] = HostWaiting
	}
	if n.Datastream != nil && len(n.SCAPRules) == 0 {
		// Only nights given a datastream take this step (none did before
		// it existed): no version needed.
		srs, err := readDatastream(ctx, n)
		if err != nil {
			return NightResult{}, err
		}
		n.SCAPRules = srs
	}
	rs, err := n.Rules()
	if err != nil || len(rs) == 0 {
		return NightResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("fleet: no rules: %v", err), "InvalidNight", err)
	}
	for _, r := range rs {
		res.Rules = append(res.Rules, orchestrate.RuleRef{ID: r.ID, Title: r.Title})
	}
	st.Total = len(rs) * len(n.Hosts)
	learned := append([]lessons.Lesson(nil), n.Lessons...)
	next := 0
	if c := n.Carry; waves && c != nil {
		next, res.Started, res.Runs = c.Next, c.Started, c.Runs
		if c.Status.Hosts != nil {
			st = c.Status
		}
		for _, hr := range c.Failed {
			byHost[hr.Host] = hr
		}
		learned = append(learned, c.Learned...)
	}
	// The fleet's recipe book: what earlier nights proved (and demoted,
	// and operators pinned or retired) is the night's before its seed;
	// what its hosts prove is published to it as each host ends.
	// pub.book is "" (no book) for a night started before the book or
	// whose workers cannot reach it.
	pub := &publisher{night: workflow.GetInfo(ctx).WorkflowExecution.ID}
	if recs != nil && workflow.GetVersion(ctx, versionNightBook, workflow.DefaultVersion, 1) >= 1 {
		if c := n.Carry; c != nil {
			pub.book = c.Book
		} else if have, ok := readBook(ctx, n.book()); ok {
			pub.book = n.book()
			if a := recs.useBook(have, n.Recipes); len(a) > 0 {
				pub.publish(ctx, BookChanges{Adopt: a})
			}
		}
	}
	res.Runs++

	child := n
	child.Hosts, child.Lessons, child.Carry, child.Recipes = nil, nil, nil, nil
	sel := workflow.NewSelector(ctx)
	running, startedHere := 0, 0
	start := func(h inventory.Host) {
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:          hostWorkflowID(workflow.GetInfo(ctx).WorkflowExecution.ID, h.Name),
			TaskQueue:           ZoneQueue(ZoneOf(h)),
			WaitForCancellation: true,
		})
		in := hostInput{Night: child, Host: h}
		if !n.NoLessons {
			in.Lessons = newest(learned, maxLessonsPerRule)
		}
		if recs != nil && !n.NoRecipes {
			in.Recipes = recs.forHost()
		}
		st.Hosts[h.Name] = HostRunning
		fut := workflow.ExecuteChildWorkflow(cctx, hostWorkflowName, in)
		sel.AddFuture(fut, func(fu workflow.Future) {
			running--
			var hr HostResult
			err := fu.Get(ctx, &hr)
			if err != nil {
				hr = HostResult{Host: h.Name, Zone: ZoneOf(h), Stopped: err.Error()}
				for _, r := range rs {
					hr.Tasks = append(hr.Tasks, orchestrate.Task{Rule: r.ID, Title: r.Title, Host: h.Name})
				}
			}
			if !waves || err != nil {
				byHost[h.Name] = hr
			}
			learned = append(learned, hr.Lessons...)
			if recs != nil {
				recs.merge(hr.Recipes)
				if len(hr.Recipes) > 0 {
					pub.publish(ctx, BookChanges{Changes: hr.Recipes})
				}
			}
			if waves {
				learned = newest(learned, maxLessonsPerRule)
			}
			st.Hosts[h.Name] = stateOf(hr)
			for _, t := range hr.Tasks {
				if t.Finished {
					st.Finished++
					st.Outcomes[t.Outcome.Status]++
				}
			}
		})
	}
	full := func() bool {
		return waves && (startedHere >= n.HostsPerRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested())
	}
	for {
		for running < n.ParallelHosts && next < len(n.Hosts) && ctx.Err() == nil && !full() {
			start(n.Hosts[next])
			next++
			running++
			startedHere++
		}
		if running == 0 {
			break
		}
		sel.Select(ctx)
	}
	if waves && next < len(n.Hosts) && ctx.Err() == nil {
		// Every host this run started has ended: the next run starts
		// with an empty history where this one stopped.
		cont := n
		cont.Carry = &Carry{Next: next, Started: res.Started, Runs: res.Runs, Status: st, Failed: ordered(),
			Learned: newest(learned, maxLessonsPerRule)}
		cont.Lessons = nil // in Learned, which started from them
		if recs != nil {
			cont.Carry.Recipes, cont.Recipes = recs.all(), nil // started from n.Recipes
			cont.Carry.Book = pub.book
		}
		pub.wait(ctx)
		return NightResult{}, workflow.NewContinueAsNewError(ctx, nightWorkflowName, cont)
	}
	res.HostRuns = ordered()
	if recs != nil {
		res.Recipes = recs.all()
	}
	pub.wait(ctx)
	res.Ended = workflow.Now(ctx)
	return res, nil
}

// readDatastream reads the night's datastream on the first hosts of the
// first host's zone (the datastream activity on that zone's queue) and
// returns the rules of its profile.
func readDatastream(ctx workflow.Context, n Night) ([]ProfileRule, error) {
	zone := ZoneOf(n.Hosts[0])
	in := datastreamInput{Datastream: *n.Datastream}
	for _, h := range n.Hosts {
		if ZoneOf(h) == zone && len(in.Hosts) < maxDatastreamHosts {
			in.Hosts = append(in.Hosts, h)
		}
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           ZoneQueue(zone),
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    n.Heartbeat,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 3,
			NonRetryableErrorTypes: []string{errTypeDatastream}},
	})
	var out []ProfileRule
	if err := workflow.ExecuteActivity(actx, datastreamActivity, in).Get(ctx, &out); err != nil {
		why := rootMessage(err)
		var ae *temporal.ApplicationError
		if errors.As(err, &ae) {
			why = ae.Message()
		}
		msg := fmt.Sprintf("fleet: the datastream %s (profile %s): %s", n.Datastream.Path, n.Datastream.Profile, why)
		return nil, temporal.NewNonRetryableApplicationError(msg, errTypeDatastream, nil)
	}
	return out, nil
}

// newest keeps at most per lessons of each rule, the newest, in order.
func newest(ls []lessons.Lesson, per int) []lessons.Lesson {
	count := map[string]int{}
	keep := make([]bool, len(ls))
	for i := len(ls) - 1; i >= 0; i-- {
		if count[ls[i].Rule] < per {
			count[ls[i].Rule]++
			keep[i] = true
		}
	}
	var out []lessons.Lesson
	for i, l := range ls {
		if keep[i] {
			out = append(out, l)
		}
	}
	return out
}
