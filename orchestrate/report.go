package orchestrate

import (
	"time"

	"github.com/nightshift-dev/nightshift/report"

	"github.com/nightshift-dev/nightshift"
)

// Grid is a night as its report sees it: the rules and hosts it planned, in
// order, and the tasks that started.
type Grid struct {
	Name, Model    string
	Started, Ended time.Time // Ended zero: still running (the report ends now)
	Rules          []RuleRef
	Hosts          []string
	Tasks          []Task // in any order
}

// Report builds the report of g through a report.Collector, in the order of
// its rules then its hosts (not the order tasks happened to run), so that
// the journal of a run resumed any number of times and a fleet night of the
// same inputs give the same report. A rule × host whose task started and
// did not finish is reported as interrupted; one that never started is
// only counted (report.Run.NotStarted).
func Report(g Grid) *report.Run {
	c := report.NewCollector(g.Name, g.Model, g.Started)
	tasks := make(map[[2]string]Task, len(g.Tasks))
	for _, t := range g.Tasks {
		tasks[[2]string{t.Rule, t.Host}] = t
	}
	notStarted := 0
	for _, rule := range g.Rules {
		for _, host := range g.Hosts {
			t, ok := tasks[[2]string{rule.ID, host}]
			if !ok {
				notStarted++
				continue
			}
			c.Start(rule.ID, rule.Title, host)
			collect(c, t)
		}
	}
	c.NotStarted(notStarted)
	end := g.Ended
	if end.IsZero() {
		end = time.Now()
	}
	return c.Run(end)
}

// collect feeds one task to c: its commands, each attempt's end after the
// commands of that attempt, its usage and how it ended.
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
	c.End(t.Rule, t.Host, t.Outcome.Status, t.Outcome.Reason, t.Outcome.Duration)
	if t.Outcome.Fallback != "" {
		c.Fallback(t.Rule, t.Host, t.Outcome.Fallback)
	}
}
