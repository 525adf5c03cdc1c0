package batch

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/orchestrate"
	"github.com/nightshift-dev/nightshift/report"
)

// Report builds the report of run from the journal alone (orchestrate.Report),
// so a run resumed after a crash reports everything it did, whichever
// process did it. Results are in the recorded order (rules, then hosts),
// not in the order tasks happened to start; a rule × host that started and
// has not finished is reported as interrupted, one that never started is
// only counted (report.Run.NotStarted). Each command's output (stdout then
// stderr) longer than outputCap bytes (0: orchestrate.DefaultOutputCap) keeps its
// head and tail around the cut marker (textcut.Middle).
func Report(ctx context.Context, j *journal.Journal, run journal.RunID, outputCap int) (*report.Run, error) {
	rec, err := RecordedSpec(ctx, j, run)
	if err != nil {
		return nil, err
	}
	r, err := j.Run(ctx, run)
	if err != nil {
		return nil, err
	}
	tasks, err := j.Tasks(ctx, run)
	if err != nil {
		return nil, err
	}
	g := orchestrate.Grid{Name: rec.Name, Model: rec.Model, Started: r.Started, Ended: r.Ended, Rules: rec.Rules, Hosts: rec.Hosts}
	for _, t := range tasks {
		nt, err := taskOf(ctx, j, t, outputCap)
		if err != nil {
			return nil, err
		}
		g.Tasks = append(g.Tasks, nt)
	}
	return orchestrate.Report(g), nil
}

// taskOf rebuilds a task from its recorded steps.
func taskOf(ctx context.Context, j *journal.Journal, t journal.Task, outputCap int) (orchestrate.Task, error) {
	nt := orchestrate.Task{Rule: t.Rule, Host: t.Host, Finished: t.Finished}
	steps, err := j.Steps(ctx, t.ID)
	if err != nil {
		return nt, fmt.Errorf("batch: report: %w", err)
	}
	for _, st := range steps {
		switch {
		case st.ModelCall != nil:
			if m := st.ModelCall; m.UsagePrompt > 0 {
				nt.Usage(m.UsagePrompt, m.CachedTokens)
			}
		case st.Command != nil:
			nt.AddCommand(st.Attempt, reportCommand(*st.Command, outputCap))
		case st.Check != nil:
			nt.Checked(st.Check.Attempt, st.Check.Status)
		case st.AttemptEnd != nil:
			a := st.AttemptEnd
			nt.EndAttempt(a.Attempt, a.PromptTokens, a.Limit, a.Check, a.GaveUp)
		}
	}
	if !t.Finished {
		return nt, nil
	}
	// The journal refuses to read back a status it does not know, so a
	// finished task's status is a rule outcome.
	if err := json.Unmarshal(t.Outcome, &nt.Outcome); err != nil {
		return nt, fmt.Errorf("batch: report: task %d (%s on %s): recorded outcome: %w", t.ID, t.Rule, t.Host, err)
	}
	nt.Outcome.Status, nt.Outcome.Reason = t.Status, t.Reason
	return nt, nil
}

func reportCommand(cmd journal.Command, outputCap int) report.Command {
	switch cmd.State {
	case journal.CommandFinished:
		rc := orchestrate.CommandEntry(cmd.Command, cmd.Result.Action, cmd.Result.Exec, cmd.Result.Error, outputCap)
		if rc.Detail == "" {
			rc.Detail = cmd.Detail
		}
		return rc
	case journal.CommandStarted, journal.CommandUnknown:
		return orchestrate.UnknownEntry(report.Command{Command: cmd.Command, Detail: cmd.Detail, Evidence: cmd.Result.Evidence})
	default:
		// other states (skipped) keep the recorded action
		return report.Command{Command: cmd.Command, Action: cmd.Result.Action.String(), Detail: cmd.Detail, Evidence: cmd.Result.Evidence}
	}
}
