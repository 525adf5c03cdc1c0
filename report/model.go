package report

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nightshift-dev/nightshift"
)

// ErrInvalid is wrapped by the errors that reject a Run.
var ErrInvalid = errors.New("invalid run")

// Run is the input: every rule × host result of one batch run.
type Run struct {
	Name     string       `json:"name,omitempty"`  // e.g. the profile; the JUnit testsuites name
	Model    string       `json:"model,omitempty"` // the served model name
	Started  time.Time    `json:"started"`
	Finished time.Time    `json:"finished"`
	Results  []TaskResult `json:"results"`
	// NotStarted counts the rules × hosts the run planned but never
	// started (it was stopped first): they have no result, so that a
	// night of millions of pairs stopped early costs memory for what it
	// did, not for what it planned.
	NotStarted int `json:"not_started,omitempty"`
}

// TaskResult is one rule on one host (a task).
type TaskResult struct {
	Rule     string                `json:"rule"`
	Title    string                `json:"title,omitempty"`
	Host     string                `json:"host"`
	Outcome  nightshift.RuleStatus `json:"outcome"`
	Reason   string                `json:"reason,omitempty"` // why it ended so (worker Outcome.Reason)
	Duration time.Duration         `json:"duration_ns"`
	Attempts []Attempt             `json:"attempts,omitempty"`
	// UsagePromptTokens and CachedTokens sum the model server's usage over
	// the result's model calls: prompt tokens and those its prefix cache
	// served (0 when the server does not report them).
	UsagePromptTokens int `json:"usage_prompt_tokens,omitempty"`
	CachedTokens      int `json:"cached_tokens,omitempty"`
	// Fallback is set when no recording sandbox judged this host's
	// commands: why, and what judged them instead.
	Fallback string `json:"fallback,omitempty"`
}

// Attempt is one model call and what came of it, or (Number 0) the replay
// of a recipe proven on another host, before any model call.
type Attempt struct {
	Number       int       `json:"number"`           // 1-based; 0 is the recipe replay
	Recipe       bool      `json:"recipe,omitempty"` // Number 0: a recipe's commands, not the model's
	PromptTokens int       `json:"prompt_tokens"`    // the prompt's tokens (worker EventAttempt)
	Limit        int       `json:"limit"`            // the prompt limit for this call
	Check        string    `json:"check,omitempty"`
	Commands     []Command `json:"commands,omitempty"`
}

// Command is one command the model proposed.
type Command struct {
	Command  string `json:"command"`
	Action   string `json:"action"`              // ran, blocked, refused, malformed, timed_out, unknown, give_up
	ExitCode *int   `json:"exit_code,omitempty"` // nil when it did not run to an exit
	Check    string `json:"check,omitempty"`     // the rule's check after the command: pass, fail, error, notapplicable
	Output   string `json:"output,omitempty"`    // capped output, as recorded
	Detail   string `json:"detail,omitempty"`    // why it was blocked, or an error
	// Evidence is what the command did in the recording sandbox and what
	// became of it (committed, refused with reasons, …); nil without one.
	Evidence *nightshift.Evidence `json:"evidence,omitempty"`
}

// Validate reports the first problem that would make a report wrong: a
// result without rule or host, an unknown outcome, a duplicate rule × host,
// negative tokens or limits.
func (r *Run) Validate() error {
	seen := map[[2]string]int{}
	for i, res := range r.Results {
		switch {
		case res.Rule == "":
			return fmt.Errorf("%w: result %d has no rule", ErrInvalid, i)
		case res.Host == "":
			return fmt.Errorf("%w: result %d (%s) has no host", ErrInvalid, i, res.Rule)
		case !slices.Contains(nightshift.RuleStatuses(), res.Outcome):
			return fmt.Errorf("%w: result %d (%s on %s): unknown outcome %q", ErrInvalid, i, res.Rule, res.Host, res.Outcome)
		}
		key := [2]string{res.Rule, res.Host}
		if j, dup := seen[key]; dup {
			return fmt.Errorf("%w: results %d and %d are both %s on %s", ErrInvalid, j, i, res.Rule, res.Host)
		}
		seen[key] = i
		for _, a := range res.Attempts {
			if a.PromptTokens < 0 || a.Limit < 0 || res.UsagePromptTokens < 0 || res.CachedTokens < 0 || res.CachedTokens > res.UsagePromptTokens {
				return fmt.Errorf("%w: %s on %s attempt %d: negative tokens or limit, or more cached tokens than prompt tokens", ErrInvalid, res.Rule, res.Host, a.Number)
			}
		}
	}
	return nil
}

// ruleGroup is one rule's results, in input order.
type ruleGroup struct {
	Rule    string
	Title   string
	Results []TaskResult
}

// byRule groups results by rule in order of first appearance.
func byRule(results []TaskResult) []ruleGroup {
	var groups []ruleGroup
	index := map[string]int{}
	for _, r := range results {
		i, ok := index[r.Rule]
		if !ok {
			i = len(groups)
			index[r.Rule] = i
			groups = append(groups, ruleGroup{Rule: r.Rule})
		}
		if groups[i].Title == "" {
			groups[i].Title = r.Title
		}
		groups[i].Results = append(groups[i].Results, r)
	}
	return groups
}

// hostsOf returns the hosts in order of first appearance.
func hostsOf(results []TaskResult) []string {
	var hosts []string
	seen := map[string]bool{}
	for _, r := range results {
		if !seen[r.Host] {
			seen[r.Host] = true
			hosts = append(hosts, r.Host)
		}
	}
	return hosts
}
