package report

import (
	"slices"
	"sync"
	"time"

	"github.com/nightshift-dev/nightshift"
)

// Collector builds a Run from what a batch run reports as it goes, in the
// worker's order: a rule starts on a host, commands run during an attempt,
// the attempt ends with its prompt tokens and limit, the rule ends with its
// outcome. Facts may arrive for many rule × host pairs at once; a pair's
// result is created by the first fact that names it, so a host that was
// never reached needs only End. A Collector is safe for concurrent use.
type Collector struct {
	mu    sync.Mutex
	run   Run
	index map[[2]string]int
}

// NewCollector returns a Collector for a run with that name and model,
// started at started.
func NewCollector(name, model string, started time.Time) *Collector {
	return &Collector{run: Run{Name: name, Model: model, Started: started}, index: map[[2]string]int{}}
}

// result returns the result of rule on host, creating it. c.mu is held.
func (c *Collector) result(rule, host string) *TaskResult {
	key := [2]string{rule, host}
	i, ok := c.index[key]
	if !ok {
		i = len(c.run.Results)
		c.index[key] = i
		c.run.Results = append(c.run.Results, TaskResult{Rule: rule, Host: host})
	}
	return &c.run.Results[i]
}

// attempt returns attempt number n of r, creating it in order. c.mu is held.
func attempt(r *TaskResult, n int) *Attempt {
	n = max(n, 0)
	for i := range r.Attempts {
		if r.Attempts[i].Number == n {
			return &r.Attempts[i]
		}
	}
	r.Attempts = append(r.Attempts, Attempt{Number: n, Recipe: n == 0})
	slices.SortStableFunc(r.Attempts, func(a, b Attempt) int { return a.Number - b.Number })
	for i := range r.Attempts {
		if r.Attempts[i].Number == n {
			return &r.Attempts[i]
		}
	}
	return nil // unreachable: the attempt was just added
}

// Start records that rule (with its title) begins on host.
func (c *Collector) Start(rule, title, host string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.result(rule, host)
	if title != "" {
		r.Title = title
	}
}

// Command records a command of attempt number n (1-based; 0 counts as 1).
func (c *Collector) Command(rule, host string, n int, cmd Command) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cmd.ExitCode != nil {
		code := *cmd.ExitCode
		cmd.ExitCode = &code
	}
	a := attempt(c.result(rule, host), n)
	a.Commands = append(a.Commands, cmd)
}

// Attempt records the end of attempt number n: the prompt's tokens, the
// limit, and the check result after it.
func (c *Collector) Attempt(rule, host string, n, promptTokens, limit int, check string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := attempt(c.result(rule, host), n)
	a.PromptTokens, a.Limit, a.Check = promptTokens, limit, check
}

// Usage adds a model call's usage to rule on host: its prompt tokens, as
// the server counted them, and how many its prefix cache served.
func (c *Collector) Usage(rule, host string, promptTokens, cachedTokens int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.result(rule, host)
	r.UsagePromptTokens += promptTokens
	r.CachedTokens += cachedTokens
}

// End records how rule ended on host.
func (c *Collector) End(rule, host string, outcome nightshift.RuleStatus, reason string, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.result(rule, host)
	r.Outcome, r.Reason, r.Duration = outcome, reason, d
}

// Fallback records that no recording sandbox judged rule's commands on
// host, and why.
func (c *Collector) Fallback(rule, host, why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.result(rule, host).Fallback = why
}

// NotStarted adds n rules × hosts that were planned and never started.
func (c *Collector) NotStarted(n int) {
	c.mu.Lock()
	c.run.NotStarted += n
	c.mu.Unlock()
}

// Run returns a copy of the run so far, finished at finished. A result
// that has not ended has no outcome (RuleNone), which Validate rejects: mark
// it (End with nightshift.RuleInterrupted) before writing reports of a stopped run.
func (c *Collector) Run(finished time.Time) *Run {
	c.mu.Lock()
	defer c.mu.Unlock()
	run := c.run
	run.Finished = finished
	run.Results = make([]TaskResult, len(c.run.Results))
	for i, r := range c.run.Results {
		r.Attempts = slices.Clone(r.Attempts)
		for j := range r.Attempts {
			cmds := slices.Clone(r.Attempts[j].Commands)
			for k := range cmds {
				if cmds[k].ExitCode != nil {
					code := *cmds[k].ExitCode
					cmds[k].ExitCode = &code
				}
			}
			r.Attempts[j].Commands = cmds
		}
		run.Results[i] = r
	}
	return &run
}

// Unfinished returns the rule × host pairs that have not ended, in order.
func (c *Collector) Unfinished() [][2]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out [][2]string
	for _, r := range c.run.Results {
		if r.Outcome == nightshift.RuleNone {
			out = append(out, [2]string{r.Rule, r.Host})
		}
	}
	return out
}
