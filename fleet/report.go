package fleet

import (
	"time"

	"github.com/nightshift-dev/nightshift/report"

	"github.com/nightshift-dev/nightshift"
)

// outputCap bounds each command's output in tasks and reports, in bytes,
// as batch.Report does by default.
const outputCap = 2000

// Report builds the report of a night from its result, through a
// report.Collector, in the order of the night's rules then hosts, exactly
// as batch.Report orders a journal's run: the same report a `worker run` of
// the same inputs gives. A rule × host without a finished task is reported
// as interrupted. A night still running ends now in the report.
func Report(r NightResult) *report.Run {
	c := report.NewCollector(r.Name, r.Model, r.Started)
	tasks := map[[2]string]Task{}
	for _, hr := range r.HostRuns {
		for _, t := range hr.Tasks {
			tasks[[2]string{t.Rule, t.Host}] = t
		}
	}
	for _, rule := range r.Rules {
		for _, host := range r.Hosts {
			c.Start(rule.ID, rule.Title, host)
			t, ok := tasks[[2]string{rule.ID, host}]
			if !ok {
				c.End(rule.ID, host, nightshift.RuleInterrupted, "not started", 0)
				continue
			}
			collect(c, t)
		}
	}
	end := r.Ended
	if end.IsZero() {
		end = time.Now()
	}
	return c.Run(end)
}

func collect(c *report.Collector, t Task) {
	if t.UsagePromptTokens > 0 {
		c.Usage(t.Rule, t.Host, t.UsagePromptTokens, t.CachedTokens)
	}
	used := 0
	for _, a := range t.Attempts {
		for used < len(t.Commands) && t.Commands[used].Attempt <= a.N {
			c.Command(t.Rule, t.Host, t.Commands[used].Attempt, t.Commands[used].Command)
			used++
		}
		c.Attempt(t.Rule, t.Host, a.N, a.PromptTokens, a.Limit, a.Check)
	}
	for ; used < len(t.Commands); used++ {
		c.Command(t.Rule, t.Host, t.Commands[used].Attempt, t.Commands[used].Command)
	}
	if !t.Finished {
		c.End(t.Rule, t.Host, nightshift.RuleInterrupted, "not finished", 0)
		return
	}
	// A finished task has an outcome (decoding refuses an unknown one); if
	// it had none, the report's Validate would refuse the result.
	c.End(t.Rule, t.Host, t.Outcome.Status, t.Outcome.Reason, t.Outcome.Duration)
}
