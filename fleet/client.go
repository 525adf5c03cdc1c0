package fleet

import (
	"context"
	"errors"
	"fmt"
	"sync"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/nightshift-dev/nightshift"
)

// DataConverter is the data converter for the clients of a fleet's
// processes (client.Options.DataConverter of ServeConfig.Client and of the
// CLI's clients): the SDK's default JSON encoding, with the time spent
// encoding and decoding left out of the workflow deadlock detector's budget
// (one second without a yield by default). A recipe book decodes every
// publication pending when its workflow task starts, each up to a few MB;
// counted against that budget, a busy process's book task panicked and was
// retried forever (TMPRL1101). The encoding is the default's, so clients
// without it interoperate with those that have it.
func DataConverter() converter.DataConverter {
	return workflow.DataConverterWithoutDeadlockDetection(converter.GetDefaultDataConverter())
}

// ErrNotFound is wrapped when a night (or schedule) does not exist.
var ErrNotFound = errors.New("no such night")

// Start validates n and starts its night workflow with workflow id id on
// the night queue. A night already running under id is an error.
func Start(ctx context.Context, c client.Client, id string, n Night) (client.WorkflowRun, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: NightQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
	}, nightWorkflowName, n)
	if err != nil {
		return nil, fmt.Errorf("fleet: start night %s: %w", id, err)
	}
	return run, nil
}

// Schedule creates a Temporal schedule id that starts night n on each time
// cron matches (standard five-field cron, UTC). Each night's workflow id
// is id followed by the time it was started.
func Schedule(ctx context.Context, c client.Client, id, cron string, n Night) error {
	if err := n.Validate(); err != nil {
		return err
	}
	_, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID:   id,
		Spec: client.ScheduleSpec{CronExpressions: []string{cron}},
		Action: &client.ScheduleWorkflowAction{ID: id, Workflow: nightWorkflowName, Args: []any{n},
			TaskQueue: NightQueue},
	})
	if err != nil {
		return fmt.Errorf("fleet: schedule %s (%q): %w", id, cron, err)
	}
	return nil
}

// Unschedule deletes schedule id; nights it started are not touched.
func Unschedule(ctx context.Context, c client.Client, id string) error {
	if err := c.ScheduleClient().GetHandle(ctx, id).Delete(ctx); err != nil {
		return fmt.Errorf("fleet: delete schedule %s: %w", id, err)
	}
	return nil
}

// Describe says whether night id is still running and how far it got: its
// Status query while it runs, else a status computed from its result.
func Describe(ctx context.Context, c client.Client, id string) (st NightStatus, running bool, err error) {
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return st, false, fmt.Errorf("%w: %s: %w", ErrNotFound, id, err)
	}
	if d.WorkflowExecutionInfo.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		v, err := c.QueryWorkflow(ctx, id, "", statusQuery)
		if err != nil {
			return st, true, fmt.Errorf("fleet: query night %s: %w", id, err)
		}
		return st, true, v.Get(&st)
	}
	r, err := Fetch(ctx, c, id)
	if err != nil {
		return st, false, err
	}
	return StatusOf(r), false, nil
}

// Fetch returns night id's result: the final one once it has ended, the
// Result query's answer while it runs. Hosts whose results stay in their
// own workflows (NightResult.InChildren) are read from those, the ended
// ones only while the night runs.
func Fetch(ctx context.Context, c client.Client, id string) (NightResult, error) {
	var r NightResult
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return r, fmt.Errorf("%w: %s: %w", ErrNotFound, id, err)
	}
	switch d.WorkflowExecutionInfo.GetStatus() {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		v, err := c.QueryWorkflow(ctx, id, "", resultQuery)
		if err != nil {
			return r, fmt.Errorf("fleet: query night %s: %w", id, err)
		}
		if err := v.Get(&r); err != nil {
			return r, err
		}
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		if err := c.GetWorkflow(ctx, id, "").Get(ctx, &r); err != nil {
			return r, err
		}
	default:
		return r, fmt.Errorf("fleet: night %s ended %s without a result", id, d.WorkflowExecutionInfo.GetStatus())
	}
	return r, fetchHosts(ctx, c, id, &r)
}

// fetchParallel is how many host workflows Fetch reads at once.
const fetchParallel = 16

// fetchHosts fills r.HostRuns from the host workflows of night id when r
// leaves them there: the hosts whose workflow completed, in r.Hosts order.
func fetchHosts(ctx context.Context, c client.Client, id string, r *NightResult) error {
	if !r.InChildren {
		return nil
	}
	have := map[string]HostResult{}
	for _, hr := range r.HostRuns {
		have[hr.Host] = hr
	}
	got := make([]*HostResult, len(r.Hosts))
	errs := make([]error, len(r.Hosts))
	sem := make(chan struct{}, fetchParallel)
	var wg sync.WaitGroup
	for i, h := range r.Hosts {
		if _, ok := have[h]; ok {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			hid := hostWorkflowID(id, h)
			d, err := c.DescribeWorkflowExecution(ctx, hid, "")
			if err != nil {
				var nf *serviceerror.NotFound
				if !errors.As(err, &nf) {
					errs[i] = fmt.Errorf("fleet: host workflow %s: %w", hid, err)
				}
				return // not started yet
			}
			if d.WorkflowExecutionInfo.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
				return // running, or failed (the night's result has those)
			}
			var hr HostResult
			if err := c.GetWorkflow(ctx, hid, "").Get(ctx, &hr); err != nil {
				errs[i] = fmt.Errorf("fleet: host workflow %s: %w", hid, err)
				return
			}
			got[i] = &hr
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	r.HostRuns = r.HostRuns[:0:0]
	for i, h := range r.Hosts {
		if hr, ok := have[h]; ok {
			r.HostRuns = append(r.HostRuns, hr)
		} else if got[i] != nil {
			r.HostRuns = append(r.HostRuns, *got[i])
		}
	}
	return nil
}

// StatusOf summarises a result.
func StatusOf(r NightResult) NightStatus {
	st := NightStatus{Name: r.Name, Total: len(r.Rules) * len(r.Hosts), Hosts: map[string]HostState{}, Outcomes: map[nightshift.RuleStatus]int{}}
	for _, h := range r.Hosts {
		st.Hosts[h] = HostNotStarted
	}
	for _, hr := range r.HostRuns {
		st.Hosts[hr.Host] = stateOf(hr)
		for _, t := range hr.Tasks {
			if t.Finished {
				st.Finished++
				st.Outcomes[t.Outcome.Status]++
			}
		}
	}
	return st
}

// Cancel asks night id to stop: no host starts, each running host stops
// after its current step (a command in flight is cancelled and reported
// as such), and the night completes with what was done.
func Cancel(ctx context.Context, c client.Client, id string) error {
	if err := c.CancelWorkflow(ctx, id, ""); err != nil {
		return fmt.Errorf("fleet: cancel night %s: %w", id, err)
	}
	return nil
}
