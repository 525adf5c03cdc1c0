package memory

import (
	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
)

// EventKind names a memory event.
type EventKind string

// The events a Memory emits.
const (
	// EventPrompt: a prompt was prepared for a model call.
	EventPrompt EventKind = "prompt"
	// EventDistill: turns were replaced by summary lines.
	EventDistill EventKind = "distill"
	// EventMerge: summary lines were merged into group lines.
	EventMerge EventKind = "merge"
	// EventDegrade: compaction cut tool outputs, or kept fewer than K
	// turns verbatim because the last K could not fit.
	EventDegrade EventKind = "degrade"
)

// Event is one memory event. Which fields are set depends on Kind.
type Event struct {
	Kind EventKind `json:"kind"`
	// Turn is the number of the newest turn when the event happened.
	Turn int `json:"turn"`
	// Assessment is the prompt's token breakdown (EventPrompt, EventDegrade).
	Assessment *budget.Assessment `json:"assessment,omitempty"`
	// Messages is the number of messages in the prompt (EventPrompt).
	Messages int `json:"messages,omitempty"`
	// Distilled and Verbatim count the turns shown as lines and as messages.
	Distilled int `json:"distilled"`
	Verbatim  int `json:"verbatim"`
	// Groups is the number of group lines.
	Groups int `json:"groups,omitempty"`
	// KeepTurns is the K used for this prompt; OutputCap the per-result
	// token cap applied to older turns' tool outputs and CurrentCap to the
	// current turn's (0: none).
	KeepTurns  int `json:"keep_turns,omitempty"`
	OutputCap  int `json:"output_cap,omitempty"`
	CurrentCap int `json:"current_cap,omitempty"`
	// Cut counts the verbatim turns' tool outputs shown cut to head, tail
	// and error lines (EventPrompt, EventDegrade).
	Cut int `json:"cut,omitempty"`
	// TokensBefore and TokensAfter measure a distillation (prompt tokens) or
	// a merge (history block tokens).
	TokensBefore int `json:"tokens_before,omitempty"`
	TokensAfter  int `json:"tokens_after,omitempty"`
	// FromTurn and ToTurn bound the turns distilled (EventDistill).
	FromTurn int `json:"from_turn,omitempty"`
	ToTurn   int `json:"to_turn,omitempty"`
	// Lines are the summary lines written (EventDistill).
	Lines []string `json:"lines,omitempty"`
	// Before is the exact prompt the distilled turns were part of, as
	// it was just before they were replaced by Lines (EventDistill), for
	// audit records. Observers must not modify it.
	Before []openai.ChatCompletionMessage `json:"-"`
}

func (m *Memory) emit(e Event) {
	if m.cfg.Observer != nil {
		m.cfg.Observer.Observe(e)
	}
}
