package budget

import (
	"errors"
	"fmt"

	openai "github.com/sashabaranov/go-openai"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultContextWindow = 16384
	DefaultReserve       = 1024
	DefaultSoftPercent   = 75
	DefaultMargin        = 32
)

// ErrConfig is wrapped by every configuration error New returns.
var ErrConfig = errors.New("invalid budget configuration")

// Config sizes a prompt budget. The zero value of every field selects its
// default, as documented per field.
type Config struct {
	// ContextWindow is the model's context length (vLLM's max_model_len).
	// Zero means DefaultContextWindow (16,384).
	ContextWindow int
	// Reserve is the completion reserve: the max_tokens sent with each
	// request. Zero means DefaultReserve (1,024).
	Reserve int
	// SoftLimit is the total (prompt + reserve) at which compression starts.
	// Zero means DefaultSoftPercent (75%) of ContextWindow.
	SoftLimit int
	// Margin is kept free below the context window as a safety margin.
	// Zero means DefaultMargin (32); a negative value means no margin.
	Margin int
}

// Budget holds a validated Config. It is immutable and safe for concurrent
// use.
type Budget struct {
	window, reserve, soft, margin int
}

// New validates cfg, applies its defaults and returns a Budget. It refuses a
// reserve that leaves no room for a prompt, and a soft limit above the hard
// limit.
func New(cfg Config) (*Budget, error) {
	b := &Budget{window: cfg.ContextWindow, reserve: cfg.Reserve, soft: cfg.SoftLimit, margin: cfg.Margin}
	if b.window == 0 {
		b.window = DefaultContextWindow
	}
	if b.reserve == 0 {
		b.reserve = DefaultReserve
	}
	if b.soft == 0 {
		b.soft = b.window * DefaultSoftPercent / 100
	}
	switch {
	case b.margin == 0:
		b.margin = DefaultMargin
	case b.margin < 0:
		b.margin = 0
	}
	switch {
	case b.window < 0:
		return nil, fmt.Errorf("%w: context window %d is negative", ErrConfig, b.window)
	case b.reserve < 0:
		return nil, fmt.Errorf("%w: reserve %d is negative", ErrConfig, b.reserve)
	case b.reserve+b.margin >= b.window:
		return nil, fmt.Errorf("%w: reserve %d + margin %d leave no room for a prompt in a context window of %d", ErrConfig, b.reserve, b.margin, b.window)
	case b.soft < 0 || b.soft > b.window-b.margin:
		return nil, fmt.Errorf("%w: soft limit %d must lie between 0 and the hard limit %d (window %d − margin %d)", ErrConfig, b.soft, b.window-b.margin, b.window, b.margin)
	}
	return b, nil
}

// ContextWindow returns the context window in tokens.
func (b *Budget) ContextWindow() int { return b.window }

// Reserve returns the completion reserve (max_tokens).
func (b *Budget) Reserve() int { return b.reserve }

// SoftLimit returns the total (prompt + reserve) at which compression starts.
func (b *Budget) SoftLimit() int { return b.soft }

// Limit returns the hard limit on prompt + reserve: the window less the margin.
func (b *Budget) Limit() int { return b.window - b.margin }

// PromptLimit returns the most prompt tokens a request may carry:
// window − reserve − margin.
func (b *Budget) PromptLimit() int { return b.window - b.reserve - b.margin }

// Split tells Assess which messages are the pinned system part, which the
// history and which the current turn: messages[:SystemEnd] are system,
// messages[SystemEnd:CurrentStart] history, messages[CurrentStart:] current.
type Split struct {
	SystemEnd    int
	CurrentStart int
}

// Assessment is the token breakdown of one prompt against a Budget.
type Assessment struct {
	System   int `json:"system"`   // pinned messages and the tools preamble
	History  int `json:"history"`  // everything between system and current
	Current  int `json:"current"`  // the current turn and the generation prompt
	Prompt   int `json:"prompt"`   // System + History + Current: what vLLM counts
	Reserve  int `json:"reserve"`  // max_tokens
	Total    int `json:"total"`    // Prompt + Reserve
	Limit    int `json:"limit"`    // hard limit on Total (window − margin)
	Soft     int `json:"soft"`     // compression starts at this Total
	Window   int `json:"window"`   // the context window
	Messages int `json:"messages"` // number of messages
}

// OverSoft reports whether the prompt has reached the soft limit.
func (a Assessment) OverSoft() bool { return a.Total > a.Soft }

// Over reports whether the prompt breaks the hard limit.
func (a Assessment) Over() bool { return a.Total > a.Limit }

// String renders the breakdown for logs and errors.
func (a Assessment) String() string {
	return fmt.Sprintf("system %d + history %d + current %d + reserve %d = %d tokens (limit %d, soft %d, window %d, %d messages)",
		a.System, a.History, a.Current, a.Reserve, a.Total, a.Limit, a.Soft, a.Window, a.Messages)
}

// PromptCount is the token count of one rendered prompt.
type PromptCount struct {
	// Total is the number of prompt tokens vLLM computes.
	Total int
	// PerMessage[i] is the number of tokens attributed to message i. The
	// tools preamble is attributed to message 0 and the generation prompt to
	// the last message. Where the template joins several messages into one
	// block (consecutive tool results), the block is attributed to the first
	// of them. The entries sum to Total.
	PerMessage []int
}

// Counter counts a chat prompt as the model server does; *served.Model and
// *served.ChatCounter satisfy it.
type Counter interface {
	Count(messages []openai.ChatCompletionMessage, tools []openai.Tool) (PromptCount, error)
}

// Assess counts messages and tools with c and breaks the count down by split.
func (b *Budget) Assess(c Counter, messages []openai.ChatCompletionMessage, tools []openai.Tool, split Split) (Assessment, error) {
	if split.SystemEnd < 0 || split.SystemEnd > split.CurrentStart || split.CurrentStart > len(messages) {
		return Assessment{}, fmt.Errorf("assess: split %+v does not fit %d messages", split, len(messages))
	}
	pc, err := c.Count(messages, tools)
	if err != nil {
		return Assessment{}, fmt.Errorf("assess: %w", err)
	}
	return b.AssessCount(pc, split), nil
}

// AssessCount breaks an existing PromptCount down by split.
func (b *Budget) AssessCount(pc PromptCount, split Split) Assessment {
	a := Assessment{Reserve: b.reserve, Limit: b.Limit(), Soft: b.soft, Window: b.window, Messages: len(pc.PerMessage)}
	for i, n := range pc.PerMessage {
		switch {
		case i < split.SystemEnd:
			a.System += n
		case i < split.CurrentStart:
			a.History += n
		default:
			a.Current += n
		}
	}
	a.Prompt = pc.Total
	a.Total = a.Prompt + a.Reserve
	return a
}
