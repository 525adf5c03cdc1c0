package main

import (
	"context"
	"fmt"
	"io"

	"github.com/nightshift-dev/nightshift/fleet"
	"github.com/nightshift-dev/nightshift/inventory"
)

const fleetUndoUsage = `Usage:
  worker fleet undo --temporal ADDR --inventory FILE RUN [--host NAME] [--rule ID] [--dry-run]

Restores, byte for byte, the files night RUN's committed commands changed
on its hosts, as 'worker undo' does for a journal: the last change first on
each host, refusing (and naming the file) where one changed after the night.
The undo runs as a workflow whose activities run on each host's zone, so the
hosts are reached with the serve processes' SSH settings; --inventory names
the hosts' addresses (the night's inventory).
`

const fleetUndoExamples = `
Examples:
  worker fleet undo --inventory hosts.ini tonight
  worker fleet undo --inventory hosts.ini tonight --host db1 --rule sshd_set_idle_timeout --dry-run
`

func runFleetUndo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var tf temporalFlags
	var invPath string
	var hosts, ruleIDs stringList
	var dryRun bool
	fs := newFlags(cmdFleetUndo, stderr)
	bindTemporalFlags(fs, &tf)
	fs.bind("inventory", &invPath)
	fs.bind("host", &hosts)
	fs.bind("rule", &ruleIDs)
	fs.bind("dry-run", &dryRun)
	id, err := oneRun(fs, fleetUndoUsage, fleetUndoExamples, args)
	if err != nil {
		return err
	}
	if invPath == "" {
		return usagef("fleet undo: --inventory is required (the night's hosts' addresses)")
	}
	inv, err := inventory.Load(invPath)
	if err != nil {
		return &usageError{err}
	}
	all, err := inv.Select()
	if err != nil {
		return &usageError{err}
	}
	c, err := tf.dial(ctx, stderr)
	if err != nil {
		return err
	}
	defer c.Close()
	res, err := fleet.Fetch(ctx, c, id)
	if err != nil {
		return err
	}
	todo, err := fleet.UndoTrials(res, all, hosts, ruleIDs)
	if err != nil {
		return &usageError{err}
	}
	if len(todo) == 0 {
		fmt.Fprintf(stdout, "night %s: nothing to undo\n", id)
		return nil
	}
	if dryRun {
		for _, h := range todo {
			for _, t := range h.Trials {
				fmt.Fprintf(stdout, "would undo  %s %s attempt %d (trial %s)\n", h.Host.Name, t.Rule, t.Attempt, t.Trial)
			}
		}
		return nil
	}
	run, err := fleet.StartUndo(ctx, c, fleet.UndoInput{Night: id, Hosts: todo})
	if err != nil {
		return fmt.Errorf("fleet undo: %w", err)
	}
	var out fleet.UndoResult
	if err := run.Get(ctx, &out); err != nil {
		return fmt.Errorf("fleet undo: %w", err)
	}
	refused := false
	for _, h := range out.Hosts {
		for _, t := range h.Undone {
			fmt.Fprintf(stdout, "undone   %s %s attempt %d (trial %s)\n", h.Host, t.Rule, t.Attempt, t.Trial)
		}
		if h.Refused != "" {
			fmt.Fprintf(stdout, "refused  %s: %s\n", h.Host, h.Refused)
			refused = true
		}
	}
	if refused {
		return errUndoRefused
	}
	return nil
}
