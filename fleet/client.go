package fleet

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/nightshift-dev/nightshift"
)

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
	}, NightWorkflowName, n)
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
		Action: &client.ScheduleWorkflowAction{ID: id, Workflow: NightWorkflowName, Args: []any{n},
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
		v, err := c.QueryWorkflow(ctx, id, "", StatusQuery)
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
// Result query's answer while it runs.
func Fetch(ctx context.Context, c client.Client, id string) (NightResult, error) {
	var r NightResult
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return r, fmt.Errorf("%w: %s: %w", ErrNotFound, id, err)
	}
	switch d.WorkflowExecutionInfo.GetStatus() {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		v, err := c.QueryWorkflow(ctx, id, "", ResultQuery)
		if err != nil {
			return r, fmt.Errorf("fleet: query night %s: %w", id, err)
		}
		return r, v.Get(&r)
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return r, c.GetWorkflow(ctx, id, "").Get(ctx, &r)
	default:
		// other states: the night ended without a result
	}
	return r, fmt.Errorf("fleet: night %s ended %s without a result", id, d.WorkflowExecutionInfo.GetStatus())
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
