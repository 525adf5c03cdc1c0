package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/journal"
)

const historyUsage = `Usage:
  worker history JOURNAL [--run ID] [--json]
  worker history JOURNAL --prune AGE

Lists the runs a journal holds (status, resumes, rules × hosts finished of
those the run planned), or with --run
the rule × host tasks of one run (status, attempts, reason). --prune deletes
the runs that ended more than AGE ago (e.g. 720h) with all their steps; runs
that have not ended are kept.

The journal is an SQLite file with plain-SQL views (run_summary, task_summary,
command_log, pending_commands); see the examples.
`

const historyExamples = `
Examples:
  worker history night.db
  worker history night.db --run 3
  worker history night.db --run 3 --json > tasks.json
  worker history night.db --prune 720h
  sqlite3 night.db 'select * from task_summary'
`

func runHistory(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var runID int64
	var jsonOut bool
	var prune time.Duration
	fs := newFlags(cmdHistory, stderr)
	fs.bind("run", &runID)
	fs.bind("json", &jsonOut)
	fs.bind("prune", &prune)
	setUsage(fs.FlagSet, historyUsage, historyExamples)
	rest, err := fs.parse(args)
	if err != nil {
		return err
	}
	path, err := journalArg(rest)
	if err != nil {
		return err
	}
	switch {
	case path == "":
		return usagef("the journal file is required: worker history JOURNAL")
	case prune < 0:
		return usagef("--prune must not be negative")
	case prune > 0 && runID != 0:
		return usagef("--prune and --run do not go together")
	}
	j, err := openExisting(ctx, path, prune == 0)
	if err != nil {
		return err
	}
	defer j.Close()
	if prune > 0 {
		n, err := j.Prune(ctx, prune)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "pruned %d runs that ended more than %s ago\n", n, prune)
		return nil
	}
	if runID != 0 {
		tasks, err := j.Tasks(ctx, journal.RunID(runID))
		if err != nil {
			return err
		}
		if _, err := j.Run(ctx, journal.RunID(runID)); err != nil {
			return &usageError{err}
		}
		if jsonOut {
			// An unfinished task's status is "running", as the journal
			// stores it.
			type taskRow struct {
				journal.Task
				Status string
			}
			rows := make([]taskRow, len(tasks))
			for i, t := range tasks {
				rows[i] = taskRow{t, t.StatusText()}
			}
			return json.NewEncoder(stdout).Encode(rows)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "RULE\tHOST\tSTATUS\tATTEMPTS\tREASON")
		for _, t := range tasks {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", t.Rule, t.Host, t.StatusText(), t.Attempts, oneLine(t.Reason, 80))
		}
		return tw.Flush()
	}
	runs, err := j.Runs(ctx)
	if err != nil {
		return err
	}
	// Planned is rules × hosts of a batch run (its recorded spec): a run
	// stopped early has started fewer tasks than it planned, and FINISHED
	// says so ("15860/2000000", as the stop message does), not
	// "15860/15860".
	type row struct {
		journal.Run
		Tasks    int `json:"tasks"`
		Finished int `json:"finished"`
		Planned  int `json:"planned"`
	}
	var rows []row
	for _, r := range runs {
		tasks, err := j.Tasks(ctx, r.ID)
		if err != nil {
			return err
		}
		x := row{Run: r, Tasks: len(tasks), Planned: len(tasks)}
		if rec, err := batch.RecordedSpec(ctx, j, r.ID); err == nil {
			x.Planned = len(rec.Rules) * len(rec.Hosts)
		}
		for _, t := range tasks {
			if t.Finished {
				x.Finished++
			}
		}
		rows = append(rows, x)
	}
	if jsonOut {
		return json.NewEncoder(stdout).Encode(rows)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTARTED\tSTATUS\tRESUMES\tFINISHED\tNAME")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d/%d\t%s\n", r.ID, r.Started.UTC().Format(time.RFC3339), r.Status, r.Resumes, r.Finished, r.Planned, oneLine(r.Name, 60))
	}
	return tw.Flush()
}

func oneLine(s string, n int) string {
	r := []rune(s)
	for i, c := range r {
		if c == '\n' || c == '\t' {
			r[i] = ' '
		}
	}
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return string(r)
}

func statFile(path string) (os.FileInfo, error) { return os.Stat(path) }
