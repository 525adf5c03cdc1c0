package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/sshexec"
	"github.com/nightshift-dev/nightshift/worker"
)

// runOneHost is `worker run` on a one-host inventory: the rules, one at a
// time, on the host conn reaches (connected already), through package
// batch and a journal in a temporary directory that is removed after. It
// returns the outcome of each rule that ended, in order, an interrupted
// rule as RuleInterrupted; the error wraps nightshift.ErrModelUnreachable
// when the model server stayed down.
func runOneHost(ctx, hardCtx context.Context, stop <-chan struct{}, wcfg worker.Config, name string, conn *sshexec.Client, sb batch.SandboxSetup,
	selected []rules.Rule) ([]nightshift.Outcome, error) {
	dir, err := os.MkdirTemp("", "worker-journal-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	j, err := journal.Open(ctx, filepath.Join(dir, "journal.db"), journal.Config{NoSync: true})
	if err != nil {
		return nil, err
	}
	defer j.Close()
	host := inventory.Host{Name: name}
	r, err := batch.New(batch.Config{Journal: j, Connector: oneHost{conn}, Worker: wcfg, ParallelHosts: 1, ModelConcurrency: 1, Stop: stop,
		Sandbox: func(context.Context, inventory.Host, nightshift.Runner) (batch.SandboxSetup, error) { return sb, nil }})
	if err != nil {
		return nil, &usageError{err}
	}
	res, runErr := r.Run(hardCtx, batch.Spec{Name: "worker " + host.Name, Rules: selected, Hosts: []inventory.Host{host}})
	if res.Run == 0 {
		return nil, runErr
	}
	tasks, err := j.Tasks(context.WithoutCancel(ctx), res.Run)
	if err != nil {
		return nil, errors.Join(runErr, err)
	}
	byRule := map[string]journal.Task{}
	for _, t := range tasks {
		byRule[t.Rule] = t
	}
	var outcomes []nightshift.Outcome
	for _, rule := range selected {
		t, ok := byRule[rule.ID]
		switch {
		case !ok:
			continue // never started
		case !t.Finished:
			outcomes = append(outcomes, nightshift.Outcome{Rule: rule.ID, Status: nightshift.RuleInterrupted, Reason: "stopped by signal"})
			continue
		}
		var o nightshift.Outcome
		if err := json.Unmarshal(t.Outcome, &o); err != nil {
			return outcomes, errors.Join(runErr, fmt.Errorf("rule %s: recorded outcome: %w", rule.ID, err))
		}
		outcomes = append(outcomes, o)
	}
	return outcomes, runErr
}

// oneHost connects to the host of a one-host inventory: the client the
// main mode connected already.
type oneHost struct{ c *sshexec.Client }

func (o oneHost) Connect(context.Context, inventory.Host) (nightshift.Target, error) { return o.c, nil }
