package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/sandbox"
)

// Names of the undo workflow and its activity (part of the contract with
// running workflows, like the night's).
const (
	undoWorkflowName = "nightshift.Undo"
	undoActivity     = "nightshift.UndoTrials"
)

// UndoTrial is one committed sandbox trial of a night.
type UndoTrial struct {
	Rule    string `json:"rule"`
	Attempt int    `json:"attempt"`
	Trial   string `json:"trial"`
}

// UndoHost is what to undo on one host: its trials, the last committed
// first.
type UndoHost struct {
	Host   inventory.Host `json:"host"`
	Trials []UndoTrial    `json:"trials"`
}

// UndoInput is the undo workflow's input.
type UndoInput struct {
	Night string     `json:"night"`
	Hosts []UndoHost `json:"hosts"`
}

// UndoHostResult is what was undone on a host: Refused says why the rest
// was not (a file changed after the night: nothing earlier is restored).
type UndoHostResult struct {
	Host    string      `json:"host"`
	Undone  []UndoTrial `json:"undone,omitempty"`
	Refused string      `json:"refused,omitempty"`
}

// UndoResult is the undo workflow's result.
type UndoResult struct {
	Hosts []UndoHostResult `json:"hosts"`
}

// UndoTrials lists, per host, the trials a night's results say were
// committed (a command's evidence with a trial and the verdict
// committed), the last first, keeping only the hosts and rules named (all
// when empty). hosts maps a host's name to its inventory entry; a host
// missing there is an error.
func UndoTrials(r NightResult, hosts []inventory.Host, onlyHosts, onlyRules []string) ([]UndoHost, error) {
	byName := map[string]inventory.Host{}
	for _, h := range hosts {
		byName[h.Name] = h
	}
	var out []UndoHost
	for _, hr := range r.HostRuns {
		if len(onlyHosts) > 0 && !slices.Contains(onlyHosts, hr.Host) {
			continue
		}
		var trials []UndoTrial
		for _, t := range hr.Tasks {
			if len(onlyRules) > 0 && !slices.Contains(onlyRules, t.Rule) {
				continue
			}
			for _, c := range t.Commands {
				if ev := c.Command.Evidence; ev != nil && ev.Verdict == nightshift.VerdictCommitted && ev.Trial != "" {
					trials = append(trials, UndoTrial{Rule: t.Rule, Attempt: c.Attempt, Trial: ev.Trial})
				}
			}
		}
		if len(trials) == 0 {
			continue
		}
		h, ok := byName[hr.Host]
		if !ok {
			return nil, fmt.Errorf("%w: host %s of the night is not in the inventory", ErrConfig, hr.Host)
		}
		slices.Reverse(trials)
		out = append(out, UndoHost{Host: h, Trials: trials})
	}
	return out, nil
}

// Undo is the undo workflow: each host's trials undone by the undo
// activity on the host's zone, hosts one after another.
func (f *Workflows) undo(ctx workflow.Context, in UndoInput) (UndoResult, error) {
	var res UndoResult
	for _, h := range in.Hosts {
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			TaskQueue:           ZoneQueue(ZoneOf(h.Host)),
			StartToCloseTimeout: 10 * time.Minute,
			RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 3},
		})
		var hr UndoHostResult
		if err := workflow.ExecuteActivity(actx, undoActivity, h).Get(actx, &hr); err != nil {
			hr = UndoHostResult{Host: h.Host.Name, Refused: rootMessage(err)}
		}
		res.Hosts = append(res.Hosts, hr)
	}
	return res, nil
}

// UndoTrials undoes one host's trials in order (the last committed first)
// and stops at the first refusal, so that no earlier change is restored
// under a later one. A trial undone already (by an earlier undo) counts as
// undone. A transport error fails the activity (retried).
func (a *Activities) undoTrials(ctx context.Context, in UndoHost) (UndoHostResult, error) {
	defer a.heartbeat(ctx)()
	res := UndoHostResult{Host: in.Host.Name}
	_, err := a.runWith(ctx, in.Host, func(t nightshift.Runner) (nightshift.Exec, error) {
		sb := sandbox.New(t, sandbox.Config{})
		for _, tr := range in.Trials {
			if slices.Contains(res.Undone, tr) {
				continue
			}
			err := sb.Undo(ctx, tr.Trial)
			switch {
			case err == nil, errors.Is(err, sandbox.ErrUndone):
				res.Undone = append(res.Undone, tr)
			case errors.Is(err, sandbox.ErrConflict) || errors.Is(err, sandbox.ErrHelper):
				res.Refused = fmt.Sprintf("%s attempt %d (trial %s): %v", tr.Rule, tr.Attempt, tr.Trial, err)
				return nightshift.Exec{}, nil
			default:
				return nightshift.Exec{}, err
			}
		}
		return nightshift.Exec{}, nil
	})
	return res, err
}

// StartUndo starts the undo workflow for night on the night queue, with
// the ID "undo-NIGHT-TIME".
func StartUndo(ctx context.Context, c client.Client, in UndoInput) (client.WorkflowRun, error) {
	id := "undo-" + in.Night + "-" + time.Now().UTC().Format("20060102T150405Z")
	return c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: NightQueue}, undoWorkflowName, in)
}
