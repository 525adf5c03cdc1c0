package nightshift

import (
	"time"

	"github.com/nightshift-dev/nightshift/budget"
)

// EventKind names an event of the attempt loop (package worker).
type EventKind string

// The worker's events.
const (
	EventRuleStart EventKind = "rule_start" // a rule begins
	EventCheck     EventKind = "check"      // the rule's check ran (before the first attempt, or after a command)
	// EventProbe: the read-only host probe ran (once per Worker, before
	// its first attempt), with its Command and Exec, and the Facts it
	// found, or the Error that stopped it.
	EventProbe     EventKind = "probe"
	EventModelCall EventKind = "model_call" // a model call with its budget breakdown
	// EventModelUsage follows each answered model call with the server's
	// usage: its prompt tokens and how many of them its prefix cache served.
	EventModelUsage EventKind = "model_usage"
	EventRetry      EventKind = "retry" // a model call failed and will be retried (not an attempt)
	EventRejected   EventKind = "context_rejected"
	EventCommand    EventKind = "command"  // a command ran, was blocked, or its call was malformed
	EventAttempt    EventKind = "attempt"  // an attempt ended
	EventRuleEnd    EventKind = "rule_end" // a rule ended, with its Outcome
	// EventDistillFallback: a FallbackDistiller (the model distiller) wrote
	// a turn's line deterministically; Attempt is the turn, Fallback why.
	EventDistillFallback EventKind = "distill_fallback"
)

// Event is one event of the attempt loop (package worker), observed by
// progress, metrics, lessons and the engines that record a night; which
// fields are set depends on Kind.
type Event struct {
	Kind    EventKind `json:"event"`
	Rule    string    `json:"rule"`
	Attempt int       `json:"attempt,omitempty"`
	// Recipe is set on the events of a recipe replay (attempt 0): the
	// recipe's ID.
	Recipe string `json:"recipe,omitempty"`

	// EventModelCall
	Assessment *budget.Assessment `json:"budget,omitempty"`
	MaxTokens  int                `json:"max_tokens,omitempty"`

	// EventModelUsage: usage.prompt_tokens and
	// usage.prompt_tokens_details.cached_tokens of the answer (0 when the
	// server does not report it: vLLM does with --enable-prompt-tokens-details,
	// and only when some tokens were cached). Also set on EventAttempt, for
	// the attempt's answered call.
	UsagePrompt  int `json:"usage_prompt_tokens,omitempty"`
	CachedTokens int `json:"cached_tokens,omitempty"`

	// EventCommand (and EventProbe: Command). Action is what became of
	// the command; on EventAttempt, ActionGiveUp when the model gave up in
	// the attempt.
	Command  string `json:"command,omitempty"`
	Action   Action `json:"action,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Detail   string `json:"detail,omitempty"`
	// Classes are the error classes distill.ClassifyError found in the
	// output of a command that ran (or timed out, or was lost).
	Classes []string `json:"classes,omitempty"`
	// Evidence is what the command did in the recording sandbox and what
	// became of it (committed, refused, …); nil without a sandbox.
	Evidence *Evidence `json:"evidence,omitempty"`

	// EventCheck and EventAttempt: the check's status; on EventAttempt the
	// re-check after its commands, CheckNotRun when none ran or the model
	// gave up.
	Check CheckStatus `json:"check,omitempty"`

	// EventProbe: what the probe command produced (nil when the runner
	// failed: Error says why).
	Exec *Exec `json:"exec,omitempty"`

	// EventAttempt: the prompt's tokens and the limit
	PromptTokens int `json:"prompt_tokens,omitempty"`
	Limit        int `json:"limit,omitempty"`

	// EventRetry: the failed try's number, the wait before the next one
	// and when the worker gives up if the server stays down (the retry
	// deadline after the first failure).
	Try      int           `json:"try,omitempty"`
	RetryIn  time.Duration `json:"retry_in_ns,omitempty"`
	GiveUpAt time.Time     `json:"give_up_at,omitzero"`

	// EventRejected: the server's count and ours
	ServerTokens int `json:"server_tokens,omitempty"`
	LocalTokens  int `json:"local_tokens,omitempty"`

	// EventDistillFallback: the reason (distill.FallbackReason: request,
	// empty, oversize, claim); Error holds the whole cause.
	Fallback string `json:"fallback,omitempty"`

	// EventRuleEnd
	Outcome *Outcome `json:"outcome,omitempty"`
	// Facts are the host facts the probe found (EventProbe, and
	// EventRuleEnd; nil when the rule ended before the probe).
	Facts *HostFacts `json:"facts,omitempty"`

	Error string `json:"error,omitempty"`
}

// HostFacts are what the attempt loop's one probe of a host learns.
type HostFacts struct {
	OS             string `json:"os"`                // PRETTY_NAME from os-release
	ID             string `json:"id,omitempty"`      // ID from os-release (debian, rhel, …): a recipe key's OS
	Version        string `json:"version,omitempty"` // VERSION_ID from os-release (12, 9.4, …)
	PackageManager string `json:"package_manager"`   // apt-get, dnf, yum, zypper, apk
	Init           string `json:"init"`              // the name of PID 1 (systemd, init, sshd, …)
}

// Observer receives the attempt loop's events. Observe is called from the
// goroutine running the loop (package worker's Fix), so concurrently when
// Fix is.
type Observer interface {
	Observe(Event)
}

// Observers is an Observer that passes each event to each of its observers
// in order, skipping nil ones, so a caller can combine optional observers
// without checking each for nil. It adds no locking of its own.
type Observers []Observer

// Observe passes e to each non-nil observer in order.
func (os Observers) Observe(e Event) {
	for _, o := range os {
		if o != nil {
			o.Observe(e)
		}
	}
}
