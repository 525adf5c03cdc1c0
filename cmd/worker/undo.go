package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/orchestrate"
	"github.com/nightshift-dev/nightshift/sandbox"
)

const undoUsage = `Usage:
  worker undo JOURNAL --run ID [--host NAME] [--rule ID] [flags]

Restores, byte for byte, the files that a run's commands changed on its
hosts. Every command the recording sandbox committed kept the pre-images of
what it changed on its host (under /var/lib/nightshift/undo); undo puts them
back, the last change first, after checking that every path still holds what
the night left there. A host where a file changed after the night is
refused, naming the file, and nothing is restored there. Undo restores files
only: services the night restarted are not restarted again (reload them if
their configuration came back).

Rules that end not fixed keep their changes: undo them with --rule.
The hosts are reached with the inventory and SSH settings the run recorded.
`

const undoExamples = `
Examples:
  worker undo night.db --run 3
  worker undo night.db --run 3 --host db1 --rule sshd_set_idle_timeout
  worker undo night.db --run 3 --dry-run
`

// errUndoRefused: some trial was not undone (a conflict or a failure).
var errUndoRefused = errors.New("undo refused on some hosts")

func runUndo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var runID int64
	var hosts, ruleIDs stringList
	var dryRun bool
	fs := newFlags(cmdUndo, stderr)
	fs.bind("run", &runID)
	fs.bind("host", &hosts)
	fs.bind("rule", &ruleIDs)
	fs.bind("dry-run", &dryRun)
	setUsage(fs.FlagSet, undoUsage, undoExamples)
	path, err := parseJournalRun(fs, args, &runID, "worker undo JOURNAL --run ID", "the run whose changes to restore")
	if err != nil {
		return err
	}
	// A writer's open locks the journal file itself: a run or resume of it
	// cannot go on meanwhile.
	j, err := openExisting(ctx, path, false)
	if err != nil {
		return err
	}
	defer j.Close()
	id := journal.RunID(runID)
	trials, err := j.Trials(ctx, id)
	if err != nil {
		return &usageError{err}
	}
	trials = slices.DeleteFunc(trials, func(t journal.Trial) bool {
		return t.Undone || (len(hosts) > 0 && !slices.Contains(hosts, t.Host)) || (len(ruleIDs) > 0 && !slices.Contains(ruleIDs, t.Rule))
	})
	if len(trials) == 0 {
		fmt.Fprintf(stdout, "run %d: nothing to undo\n", id)
		return nil
	}
	rec, err := batch.RecordedSpec(ctx, j, id)
	if err != nil {
		return &usageError{err}
	}
	m, err := decodeMeta(rec.Meta)
	if err != nil {
		return err
	}
	inv, err := inventory.Load(m.Inventory)
	if err != nil {
		return usagef("run %d's inventory: %v", id, err)
	}
	all, err := inv.Select()
	if err != nil {
		return &usageError{err}
	}
	byName := map[string]inventory.Host{}
	for _, h := range all {
		byName[h.Name] = h
	}
	// The last change first, host by host.
	perHost := map[string][]journal.Trial{}
	var order []string
	for i := len(trials) - 1; i >= 0; i-- {
		t := trials[i]
		if _, seen := perHost[t.Host]; !seen {
			order = append(order, t.Host)
		}
		perHost[t.Host] = append(perHost[t.Host], t)
	}
	conn := orchestrate.SSHConnector{Base: sshBase(m, nil)}
	refused := false
	for _, name := range order {
		h, ok := byName[name]
		if !ok {
			fmt.Fprintf(stdout, "refused  %s: the host is no longer in %s\n", name, m.Inventory)
			refused = true
			continue
		}
		if dryRun {
			for _, t := range perHost[name] {
				fmt.Fprintf(stdout, "would undo  %s %s attempt %d (trial %s)\n", name, t.Rule, t.Attempt, t.ID)
			}
			continue
		}
		if !undoHost(ctx, j, id, conn, h, perHost[name], stdout) {
			refused = true
		}
	}
	if refused {
		return errUndoRefused
	}
	return nil
}

// undoHost undoes one host's trials in order (the last first); at the
// first refusal it stops, so that no earlier change is restored under a
// later one.
func undoHost(ctx context.Context, j *journal.Journal, run journal.RunID, conn nightshift.Connector, h inventory.Host, trials []journal.Trial, out io.Writer) bool {
	t, err := conn.Connect(ctx, h)
	if err != nil {
		fmt.Fprintf(out, "refused  %s: %v\n", h.Name, err)
		return false
	}
	defer t.Close()
	sb := sandbox.New(t, sandbox.Config{})
	for i, tr := range trials {
		if err := sb.Undo(ctx, tr.ID); err != nil && !errors.Is(err, sandbox.ErrUndone) {
			fmt.Fprintf(out, "refused  %s %s attempt %d (trial %s): %v\n", h.Name, tr.Rule, tr.Attempt, tr.ID, err)
			if left := len(trials) - i - 1; left > 0 {
				fmt.Fprintf(out, "         %d earlier change(s) on %s left as they are\n", left, h.Name)
			}
			return false
		}
		// A run-level event: the task itself is finished.
		if err := j.RecordEvent(ctx, run, 0, 0, journal.EventUndone, map[string]any{"trial": tr.ID, "command": tr.Command, "task": tr.Task, "host": h.Name, "rule": tr.Rule}); err != nil {
			fmt.Fprintf(out, "undone   %s %s attempt %d (trial %s), but the journal did not record it: %v\n", h.Name, tr.Rule, tr.Attempt, tr.ID, err)
			return false
		}
		fmt.Fprintf(out, "undone   %s %s attempt %d (trial %s)\n", h.Name, tr.Rule, tr.Attempt, tr.ID)
	}
	return true
}
