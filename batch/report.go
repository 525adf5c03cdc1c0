package batch

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nightshift-dev/nightshift/internal/textcut"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/report"
	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

// Report builds the report of run from the journal alone, through a
// report.Collector, so a run resumed after a crash reports everything it
// did, whichever process did it. Results are in the recorded order (rules,
// then hosts), not in the order tasks happened to start; a rule × host that
// started and has not finished is reported as interrupted, one that never
// started is only counted (report.Run.NotStarted). Each command's output (stdout
// then stderr) longer than outputCap bytes (0: 2000) keeps its head and tail
// around the cut marker (textcut.Middle).
func Report(ctx context.Context, j *journal.Journal, run journal.RunID, outputCap int) (*report.Run, error) {
	if outputCap <= 0 {
		outputCap = 2000
	}
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
	byKey := map[[2]string]journal.Task{}
	for _, t := range tasks {
		byKey[[2]string{t.Rule, t.Host}] = t
	}
	c := report.NewCollector(rec.Name, rec.Model, r.Started)
	c.NotStarted(len(rec.Rules)*len(rec.Hosts) - len(tasks))
	for _, rule := range rec.Rules {
		for _, host := range rec.Hosts {
			t, ok := byKey[[2]string{rule.ID, host}]
			if !ok {
				continue
			}
			c.Start(rule.ID, rule.Title, host)
			if err := collectTask(ctx, j, c, t, outputCap); err != nil {
				return nil, err
			}
		}
	}
	end := r.Ended
	if end.IsZero() {
		end = time.Now()
	}
	return c.Run(end), nil
}

// collectTask feeds one task's steps to c.
func collectTask(ctx context.Context, j *journal.Journal, c *report.Collector, t journal.Task, outputCap int) error {
	steps, err := j.Steps(ctx, t.ID)
	if err != nil {
		return fmt.Errorf("batch: report: %w", err)
	}
	var pending []report.Command // the current attempt's commands, until its check
	attempt := 1
	flush := func(check string) {
		for i, cmd := range pending {
			if i == len(pending)-1 {
				cmd.Check = check
			}
			c.Command(t.Rule, t.Host, attempt, cmd)
		}
		pending = nil
	}
	for _, st := range steps {
		if st.Attempt > attempt && len(pending) > 0 {
			flush("")
		}
		switch {
		case st.ModelCall != nil:
			if m := st.ModelCall; m.UsagePrompt > 0 {
				c.Usage(t.Rule, t.Host, m.UsagePrompt, m.CachedTokens)
			}
		case st.Command != nil:
			// Attempt 0 is a recipe's replay, before any model call.
			attempt = st.Attempt
			pending = append(pending, reportCommand(*st.Command, outputCap))
		case st.Check != nil && (st.Check.Attempt > 0 || len(pending) > 0):
			attempt = st.Check.Attempt
			flush(st.Check.Status.String())
		case st.AttemptEnd != nil:
			a := st.AttemptEnd
			attempt = a.Attempt
			flush("")
			c.Attempt(t.Rule, t.Host, a.Attempt, a.PromptTokens, a.Limit, AttemptCheck(a.Check, a.GaveUp))
		}
	}
	flush("")
	if !t.Finished {
		c.End(t.Rule, t.Host, nightshift.RuleInterrupted, "not finished", 0)
		return nil
	}
	// The journal refuses to read back a status it does not know, so a
	// finished task's status is a rule outcome.
	var out worker.Outcome
	if err := json.Unmarshal(t.Outcome, &out); err != nil {
		return fmt.Errorf("batch: report: task %d (%s on %s): recorded outcome: %w", t.ID, t.Rule, t.Host, err)
	}
	c.End(t.Rule, t.Host, t.Status, t.Reason, out.Duration)
	if out.Fallback != "" {
		c.Fallback(t.Rule, t.Host, out.Fallback)
	}
	return nil
}

func reportCommand(cmd journal.Command, outputCap int) report.Command {
	rc := report.Command{Command: cmd.Command, Action: cmd.Result.Action.String(), Detail: cmd.Detail, Evidence: cmd.Result.Evidence}
	switch cmd.State {
	case journal.CommandFinished:
		if !cmd.Result.TimedOut && cmd.Result.Error == "" {
			code := cmd.Result.ExitCode
			rc.ExitCode = &code
		}
		out := cmd.Result.Stdout
		if cmd.Result.Stderr != "" {
			if out != "" && !strings.HasSuffix(out, "\n") {
				out += "\n"
			}
			out += cmd.Result.Stderr
		}
		rc.Output, _ = textcut.Middle(out, outputCap)
		if cmd.Result.Error != "" {
			rc.Detail = cmd.Result.Error
		}
	case journal.CommandStarted, journal.CommandUnknown:
		rc.Action = nightshift.ActionUnknown.String()
		if rc.Detail == "" {
			rc.Detail = "outcome unknown: the worker stopped while the command ran"
		}
	default:
		// other states keep the recorded action
	}
	return rc
}

// AttemptCheck is how a report shows an attempt's end: the re-check's
// status, "give_up" when the model gave up, "" when nothing ran.
func AttemptCheck(check nightshift.CheckStatus, gaveUp bool) string {
	if gaveUp {
		return nightshift.ActionGiveUp.String()
	}
	return check.String()
}
