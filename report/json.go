package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/nightshift-dev/nightshift"
)

// SummaryVersion is the version of the JSON summary format.
const SummaryVersion = 1

// Summary is the JSON summary, version 1. Field names are stable.
//
//	{
//	  "version": 1,
//	  "name": "profile or run name",          // omitted when empty
//	  "model": "served model name",           // omitted when empty
//	  "started": "2026-01-02T03:04:05Z",      // RFC 3339
//	  "finished": "2026-01-02T04:00:00Z",
//	  "duration_seconds": 3355,
//	  "totals": {"results": 4, "rules": 2, "hosts": 2, "attempts": 7,
//	             "commands": 9, "passed": 3,
//	             "outcomes": {"fixed": 2, "compliant": 1, "not_fixed": 1}},
//	  "hosts": [{"host": "web01", "results": 2, "passed": 2,
//	             "outcomes": {"fixed": 2}}],
//	  "results": [{"rule": "…", "title": "…", "host": "web01",
//	               "outcome": "fixed", "reason": "…",
//	               "duration_seconds": 12.5, "attempts": 2, "commands": 3,
//	               "max_prompt_tokens": 9120, "limit": 14336,
//	               "attempt_details": [{"number": 1, "prompt_tokens": 5000,
//	                 "limit": 14336, "check": "fail",
//	                 "commands": [{"command": "…", "action": "ran",
//	                   "exit_code": 0, "check": "fail",
//	                   "output": "…", "detail": "…"}]}]}]
//	}
//
// "outcomes" maps each outcome that occurred to its count (outcomes that
// did not occur are absent). "limit" is the largest limit of any attempt,
// 0 without attempts.
type Summary struct {
	Version         int             `json:"version"`
	Name            string          `json:"name,omitempty"`
	Model           string          `json:"model,omitempty"`
	Started         time.Time       `json:"started"`
	Finished        time.Time       `json:"finished"`
	DurationSeconds float64         `json:"duration_seconds"`
	Totals          Totals          `json:"totals"`
	Hosts           []HostSummary   `json:"hosts"`
	Results         []ResultSummary `json:"results"`
}

// Totals counts the results of a run.
type Totals struct {
	Results  int `json:"results"`
	Rules    int `json:"rules"`
	Hosts    int `json:"hosts"`
	Attempts int `json:"attempts"` // the model's
	// RecipeAttempts counts recipe replays; FixedByRecipe the results a
	// replay fixed with no model call.
	RecipeAttempts int `json:"recipe_attempts,omitempty"`
	FixedByRecipe  int `json:"fixed_by_recipe,omitempty"`
	Commands       int `json:"commands"`
	Passed         int `json:"passed"` // fixed or compliant
	// NotStarted counts the rules × hosts planned and never started (a
	// run stopped early); they are not among the results.
	NotStarted int                           `json:"not_started,omitempty"`
	Outcomes   map[nightshift.RuleStatus]int `json:"outcomes"`
	// PromptTokens and CachedPromptTokens sum the model server's usage
	// over the run; CacheShare is their ratio, the share of prompt tokens
	// its prefix cache served. Absent when the server reported no usage.
	PromptTokens       int     `json:"prompt_tokens,omitempty"`
	CachedPromptTokens int     `json:"cached_prompt_tokens,omitempty"`
	CacheShare         float64 `json:"cache_share,omitempty"`
}

// HostSummary counts one host's results.
type HostSummary struct {
	Host     string                        `json:"host"`
	Results  int                           `json:"results"`
	Passed   int                           `json:"passed"`
	Outcomes map[nightshift.RuleStatus]int `json:"outcomes"`
}

// ResultSummary is one rule × host in the summary.
type ResultSummary struct {
	Rule            string                `json:"rule"`
	Title           string                `json:"title,omitempty"`
	Host            string                `json:"host"`
	Outcome         nightshift.RuleStatus `json:"outcome"`
	Reason          string                `json:"reason,omitempty"`
	DurationSeconds float64               `json:"duration_seconds"`
	Attempts        int                   `json:"attempts"` // the model's
	// RecipeAttempts counts the recipe replays (attempt 0), apart from the
	// model's attempts.
	RecipeAttempts  int       `json:"recipe_attempts,omitempty"`
	Commands        int       `json:"commands"`
	MaxPromptTokens int       `json:"max_prompt_tokens"`
	Limit           int       `json:"limit"`
	AttemptDetails  []Attempt `json:"attempt_details"`
}

// NewSummary computes the summary of a run.
func NewSummary(run *Run) Summary {
	s := Summary{
		Version:         SummaryVersion,
		Name:            run.Name,
		Model:           run.Model,
		Started:         run.Started.UTC(),
		Finished:        run.Finished.UTC(),
		DurationSeconds: seconds(run.Finished.Sub(run.Started)),
		Totals:          Totals{Outcomes: map[nightshift.RuleStatus]int{}},
		Hosts:           []HostSummary{},
		Results:         make([]ResultSummary, 0, len(run.Results)),
	}
	hostIndex := map[string]int{}
	for _, h := range hostsOf(run.Results) {
		hostIndex[h] = len(s.Hosts)
		s.Hosts = append(s.Hosts, HostSummary{Host: h, Outcomes: map[nightshift.RuleStatus]int{}})
	}
	s.Totals.NotStarted = run.NotStarted
	s.Totals.Rules = len(byRule(run.Results))
	s.Totals.Hosts = len(s.Hosts)
	for _, r := range run.Results {
		rs := ResultSummary{
			Rule: r.Rule, Title: r.Title, Host: r.Host, Outcome: r.Outcome, Reason: r.Reason,
			DurationSeconds: seconds(r.Duration),
			AttemptDetails:  r.Attempts,
		}
		for _, a := range r.Attempts {
			if a.Number == 0 {
				rs.RecipeAttempts++
				if a.Check == "pass" && len(r.Attempts) == 1 {
					s.Totals.FixedByRecipe++
				}
			} else {
				rs.Attempts++
			}
		}
		if rs.AttemptDetails == nil {
			rs.AttemptDetails = []Attempt{}
		}
		for _, a := range r.Attempts {
			rs.Commands += len(a.Commands)
			rs.MaxPromptTokens = max(rs.MaxPromptTokens, a.PromptTokens)
			rs.Limit = max(rs.Limit, a.Limit)
		}
		s.Results = append(s.Results, rs)
		s.Totals.Results++
		s.Totals.Attempts += rs.Attempts
		s.Totals.RecipeAttempts += rs.RecipeAttempts
		s.Totals.Commands += rs.Commands
		s.Totals.Outcomes[r.Outcome]++
		s.Totals.PromptTokens += r.UsagePromptTokens
		s.Totals.CachedPromptTokens += r.CachedTokens
		h := &s.Hosts[hostIndex[r.Host]]
		h.Results++
		h.Outcomes[r.Outcome]++
		if r.Outcome.Passed() {
			s.Totals.Passed++
			h.Passed++
		}
	}
	if s.Totals.PromptTokens > 0 {
		s.Totals.CacheShare = math.Round(float64(s.Totals.CachedPromptTokens)/float64(s.Totals.PromptTokens)*1000) / 1000
	}
	return s
}

// WriteJSON writes the run's Summary as indented JSON. It rejects a run
// that fails Validate.
func WriteJSON(w io.Writer, run *Run) error {
	if err := run.Validate(); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(NewSummary(run)); err != nil {
		return fmt.Errorf("write json summary: %w", err)
	}
	return nil
}

func seconds(d time.Duration) float64 {
	if d < 0 {
		return 0
	}
	return float64(d.Milliseconds()) / 1000
}
