package nightshift

import "time"

// Outcome is how one rule ended on one host: what package worker's Fix
// returns, what the journal stores as a task's detail and what a fleet's
// host workflow returns for each task.
type Outcome struct {
	Rule              string        `json:"rule"`
	Status            RuleStatus    `json:"status"`
	Attempts          int           `json:"attempts"`
	ModelCalls        int           `json:"model_calls"`
	Retries           int           `json:"retries"`
	ContextRejections int           `json:"context_rejections"`
	Commands          int           `json:"commands"`
	Blocked           int           `json:"blocked"`
	Reason            string        `json:"reason,omitempty"`
	Duration          time.Duration `json:"duration_ns"`
	MaxPromptTokens   int           `json:"max_prompt_tokens"`
	// PromptTokens and CachedTokens sum the server's usage over the rule's
	// answered model calls: prompt tokens, and those its prefix cache
	// served.
	PromptTokens int `json:"prompt_tokens"`
	CachedTokens int `json:"cached_tokens"`
	// Fallback is set when no recording sandbox ran on the host: why.
	Fallback string `json:"fallback,omitempty"`
	// RecipeAttempts counts the recipe replays (0 or 1), apart from the
	// model's Attempts; Recipe is the ID of the recipe replayed, or of the
	// recipe the fix was proved as.
	RecipeAttempts int    `json:"recipe_attempts,omitempty"`
	Recipe         string `json:"recipe,omitempty"`
}

// CacheShare returns the share of prompt tokens the server's prefix cache
// served, 0 without any.
func (o Outcome) CacheShare() float64 {
	if o.PromptTokens == 0 {
		return 0
	}
	return float64(o.CachedTokens) / float64(o.PromptTokens)
}

// Fixed reports whether the rule is compliant at the end.
func (o Outcome) Fixed() bool { return o.Status.Passed() }

// AttemptCheck is how a report shows an attempt's end: the re-check's
// status, "give_up" when the model gave up, "" when nothing ran.
func AttemptCheck(check CheckStatus, gaveUp bool) string {
	if gaveUp {
		return ActionGiveUp.String()
	}
	return check.String()
}
