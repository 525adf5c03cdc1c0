package fleet

import (
	"fmt"
	"sync"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/lessons"

	"github.com/nightshift-dev/nightshift"
)

// maxLessonsPerRule bounds the lessons of one rule handed to a host
// workflow (the newest are kept), so that inputs stay small on big fleets.
const maxLessonsPerRule = 24

// Workflows are the night and host workflows. The tokenizer a night names
// is loaded once per process and shared.
type Workflows struct {
	// LoadModel loads a tokenizer by name or path; nil means budget.LoadModel.
	LoadModel func(spec string) (*budget.Model, error)

	mu     sync.Mutex
	models map[string]*budget.Model
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

func (f *Workflows) model(spec string) (*budget.Model, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m, ok := f.models[spec]; ok {
		return m, nil
	}
	load := f.LoadModel
	if load == nil {
		load = budget.LoadModel
	}
	m, err := load(spec)
	if err != nil {
		return nil, err
	}
	if f.models == nil {
		f.models = map[string]*budget.Model{}
	}
	f.models[spec] = m
	return m, nil
}

// Night is the night workflow: one child host workflow per host, on the
// task queue of the host's zone, ParallelHosts at a time, in inventory
// order. Lessons of the hosts that finished reach the hosts started after.
// A cancelled night stops starting hosts, lets the running ones stop after
// their current step, and completes with what was done.
func (f *Workflows) Night(ctx workflow.Context, n Night) (NightResult, error) {
	n = n.withDefaults()
	if err := n.Validate(); err != nil {
		return NightResult{}, temporal.NewNonRetryableApplicationError(err.Error(), "InvalidNight", err)
	}
	rs, _ := n.Rules()
	res := NightResult{Name: n.Name, Model: n.Model.Name, Started: workflow.Now(ctx)}
	for _, r := range rs {
		res.Rules = append(res.Rules, RuleRef{ID: r.ID, Title: r.Title})
	}
	st := NightStatus{Name: n.Name, Total: len(rs) * len(n.Hosts), Hosts: map[string]HostState{}, Outcomes: map[nightshift.RuleStatus]int{}}
	for _, h := range n.Hosts {
		res.Hosts = append(res.Hosts, h.Name)
		st.Hosts[h.Name] = HostWaiting
	}
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
	if err := workflow.SetQueryHandler(ctx, StatusQuery, func() (NightStatus, error) { return st, nil }); err != nil {
		return res, err
	}
	if err := workflow.SetQueryHandler(ctx, ResultQuery, func() (NightResult, error) {
		r := res
		r.HostRuns = ordered()
		return r, nil
	}); err != nil {
		return res, err
	}

	learned := append([]lessons.Lesson(nil), n.Lessons...)
	child := n
	child.Hosts, child.Lessons = nil, nil
	sel := workflow.NewSelector(ctx)
	next, running := 0, 0
	start := func(h inventory.Host) {
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:          workflow.GetInfo(ctx).WorkflowExecution.ID + "/" + h.Name,
			TaskQueue:           ZoneQueue(ZoneOf(h)),
			WaitForCancellation: true,
		})
		in := HostInput{Night: child, Host: h}
		if !n.NoLessons {
			in.Lessons = newest(learned, maxLessonsPerRule)
		}
		st.Hosts[h.Name] = HostRunning
		fut := workflow.ExecuteChildWorkflow(cctx, HostWorkflowName, in)
		sel.AddFuture(fut, func(fu workflow.Future) {
			running--
			var hr HostResult
			if err := fu.Get(ctx, &hr); err != nil {
				hr = HostResult{Host: h.Name, Zone: ZoneOf(h), Stopped: err.Error()}
				for _, r := range rs {
					hr.Tasks = append(hr.Tasks, Task{Rule: r.ID, Title: r.Title, Host: h.Name})
				}
			}
			byHost[h.Name] = hr
			learned = append(learned, hr.Lessons...)
			st.Hosts[h.Name] = stateOf(hr)
			for _, t := range hr.Tasks {
				if t.Finished {
					st.Finished++
					st.Outcomes[t.Outcome.Status]++
				}
			}
		})
	}
	for {
		for running < n.ParallelHosts && next < len(n.Hosts) && ctx.Err() == nil {
			start(n.Hosts[next])
			next++
			running++
		}
		if running == 0 {
			break
		}
		sel.Select(ctx)
	}
	res.HostRuns = ordered()
	res.Ended = workflow.Now(ctx)
	return res, nil
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
