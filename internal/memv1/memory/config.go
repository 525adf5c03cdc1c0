package memory

import (
	"context"
	"errors"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/internal/memv1/distill"
)

// PromptCounter counts a chat prompt exactly as the model server does.
// *budget.ChatCounter satisfies it.
type PromptCounter interface {
	Count(messages []openai.ChatCompletionMessage, tools []openai.Tool) (budget.PromptCount, error)
}

// TextCounter counts the tokens of a text. Every budget.Tokenizer satisfies it.
type TextCounter interface {
	Count(text string) int
}

// LineDistiller writes the one-line summary of a turn. When Config.Distiller
// is nil the deterministic distiller of package distill is used; a
// model-backed distiller (distill.ModelDistiller) can be plugged in here and must fall
// back to the deterministic line itself.
type LineDistiller interface {
	Line(ctx context.Context, t distill.Turn) (string, error)
}

// Observer receives the memory's events: one per prompt prepared and one per
// distillation, merge or degradation step. Observe is called synchronously
// from Prompt and must not call back into the Memory.
type Observer interface {
	Observe(Event)
}

// Defaults applied by New to zero Config fields.
const (
	DefaultKeepTurns      = 3
	DefaultHistoryPercent = 6
	DefaultMaxGroups      = 4
	DefaultGroupSpan      = 25
	// DefaultLowWaterPercent is where compaction brings the prompt, as a
	// share of the soft limit's prompt tokens (soft limit − reserve); see
	// docs/benchmarks.md for the measurements it was chosen from.
	DefaultLowWaterPercent = 50
	// DefaultOutputTokens is the cap, in tokens, to which compaction cuts
	// an older verbatim turn's tool output; see docs/benchmarks.md.
	DefaultOutputTokens = 512
)

// ErrConfig is wrapped by every configuration error New returns.
var ErrConfig = errors.New("invalid memory configuration")

// Config configures a Memory. The zero value of every optional field selects
// its default.
type Config struct {
	// Budget sizes the prompt (window, reserve, soft limit, margin). Required.
	Budget *budget.Budget
	// Prompt counts rendered prompts as the server does (e.g. a
	// *budget.ChatCounter). Required.
	Prompt PromptCounter
	// Text counts plain text, for abbreviation and elision (the tokenizer
	// the ChatCounter uses). Required.
	Text TextCounter
	// Tools are the tool definitions sent with every request; they are part
	// of the prompt and counted with the system part.
	Tools []openai.Tool
	// KeepTurns is K, the number of newest turns kept verbatim once the
	// conversation is over the soft limit. Zero means DefaultKeepTurns (3);
	// a negative value is refused.
	KeepTurns int
	// HistoryTokens is the share of the prompt the history block of
	// distilled lines may take before its oldest lines are merged into group
	// lines. Zero means DefaultHistoryPercent (6%) of the prompt limit.
	HistoryTokens int
	// MaxGroups bounds the number of group lines; beyond it the two oldest
	// groups are merged. Zero means DefaultMaxGroups (4).
	MaxGroups int
	// GroupSpan is the number of turns a group line covers before a new
	// group is started. Zero means DefaultGroupSpan (25).
	GroupSpan int
	// LowWaterPercent is where a compaction brings the prompt, as a share
	// of the soft limit's prompt tokens: the lower, the more calls append
	// to a cached prefix before the next compaction, the less the model
	// sees. Zero means DefaultLowWaterPercent; at most 100.
	LowWaterPercent int
	// LowWaterTokens, when positive, sets the low-water mark in prompt
	// tokens instead of LowWaterPercent.
	LowWaterTokens int
	// OutputTokens is the cap to which compaction cuts the tool outputs of
	// verbatim turns older than the current one (head, tail and every
	// error line). Zero means DefaultOutputTokens.
	OutputTokens int
	// CurrentTokens is the cap to which a new turn's tool outputs are cut
	// when it is first shown. Zero means twice OutputTokens; it must not
	// be below OutputTokens.
	CurrentTokens int
	// Distiller writes the one-line summaries. Nil means the deterministic
	// distiller of package distill, configured with Text.
	Distiller LineDistiller
	// Observer receives events. Nil discards them.
	Observer Observer
}

func (c *Config) setDefaults() error {
	switch {
	case c.Budget == nil:
		return fmt.Errorf("%w: Budget is required", ErrConfig)
	case c.Prompt == nil:
		return fmt.Errorf("%w: Prompt counter is required", ErrConfig)
	case c.Text == nil:
		return fmt.Errorf("%w: Text counter is required", ErrConfig)
	case c.KeepTurns < 0:
		return fmt.Errorf("%w: KeepTurns (K) is %d; it must be at least 1", ErrConfig, c.KeepTurns)
	case c.HistoryTokens < 0:
		return fmt.Errorf("%w: HistoryTokens is %d; it must not be negative", ErrConfig, c.HistoryTokens)
	case c.MaxGroups < 0 || c.GroupSpan < 0:
		return fmt.Errorf("%w: MaxGroups and GroupSpan must not be negative", ErrConfig)
	case c.LowWaterPercent < 0 || c.LowWaterPercent > 100:
		return fmt.Errorf("%w: LowWaterPercent is %d; it must be within 0..100", ErrConfig, c.LowWaterPercent)
	case c.LowWaterTokens < 0 || c.OutputTokens < 0 || c.CurrentTokens < 0:
		return fmt.Errorf("%w: LowWaterTokens, OutputTokens and CurrentTokens must not be negative", ErrConfig)
	}
	if c.LowWaterPercent == 0 {
		c.LowWaterPercent = DefaultLowWaterPercent
	}
	if c.OutputTokens == 0 {
		c.OutputTokens = DefaultOutputTokens
	}
	if c.CurrentTokens == 0 {
		c.CurrentTokens = 2 * c.OutputTokens
	}
	if c.CurrentTokens < c.OutputTokens {
		return fmt.Errorf("%w: CurrentTokens %d is below OutputTokens %d", ErrConfig, c.CurrentTokens, c.OutputTokens)
	}
	if c.KeepTurns == 0 {
		c.KeepTurns = DefaultKeepTurns
	}
	if c.HistoryTokens == 0 {
		c.HistoryTokens = c.Budget.PromptLimit() * DefaultHistoryPercent / 100
	}
	if c.HistoryTokens >= c.Budget.PromptLimit() {
		return fmt.Errorf("%w: HistoryTokens %d leaves no room in a prompt limit of %d", ErrConfig, c.HistoryTokens, c.Budget.PromptLimit())
	}
	if c.MaxGroups == 0 {
		c.MaxGroups = DefaultMaxGroups
	}
	if c.GroupSpan == 0 {
		c.GroupSpan = DefaultGroupSpan
	}
	if c.Distiller == nil {
		c.Distiller = deterministic{distill.New(distill.Config{Counter: c.Text})}
	}
	return nil
}

// deterministic adapts the deterministic distiller to LineDistiller.
type deterministic struct{ d *distill.Distiller }

func (d deterministic) Line(_ context.Context, t distill.Turn) (string, error) {
	return d.d.Summarize(t).Line(), nil
}
