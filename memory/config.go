package memory

import (
	"context"
	"errors"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/distill"
)

// Model is what the memory needs of the served model: the budget of its
// context window, and counts of prompts and texts exactly as the model
// server makes them. *served.Model satisfies it. Its methods must be safe
// for use from the goroutine that uses the Memory.
type Model interface {
	// Budget sizes the prompt: window, reserve, soft limit, margin.
	Budget() *budget.Budget
	// Count renders messages and tools with the chat template and counts
	// the render as the server does.
	Count(messages []openai.ChatCompletionMessage, tools []openai.Tool) (budget.PromptCount, error)
	// CountText counts the tokens of a text, for abbreviation and elision.
	CountText(text string) int
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
	DefaultHistoryPercent = 25
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
	// Model is the served model (a *served.Model): its budget sizes the
	// prompt, its tokenizer and chat template count it. Required.
	Model Model
	// Tools are the tool definitions sent with every request; they are part
	// of the prompt and counted with the system part.
	Tools []openai.Tool
	// KeepTurns is K, the number of newest turns kept verbatim once the
	// conversation is over the soft limit. Zero means DefaultKeepTurns (3);
	// a negative value is refused.
	KeepTurns int
	// HistoryTokens is the share of the prompt the history block of
	// distilled lines may take before lines give way (plain successes
	// first, then the oldest distinct failures, each counted on one line).
	// Zero means DefaultHistoryPercent (25%) of the prompt limit.
	HistoryTokens int
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
	// (head, tail and every error line) when it is first shown and the
	// prompt with them whole would pass the low-water mark; outputs that
	// fit under it are shown whole. Zero means twice OutputTokens; it must
	// not be below OutputTokens.
	CurrentTokens int
	// Distiller writes the one-line summaries. Nil means the deterministic
	// distiller of package distill, counting with Model.
	Distiller LineDistiller
	// HistoryHeader begins the history block, the message that holds the
	// distilled turns' lines; it should end with a newline. Empty means
	// DefaultHistoryHeader.
	HistoryHeader string
	// ErrorLine reports whether a line of a tool's output names an error:
	// when an output is cut, such lines are kept from its middle. Nil
	// means the built-in classifier (IsErrorLine: the error words and
	// message prefixes of the usual remediation tools).
	ErrorLine func(line string) bool
	// Observer receives events. Nil discards them.
	Observer Observer
}

func (c *Config) setDefaults() error {
	switch {
	case c.Model == nil:
		return fmt.Errorf("%w: Model is required", ErrConfig)
	case c.Model.Budget() == nil:
		return fmt.Errorf("%w: Model has no budget", ErrConfig)
	case c.KeepTurns < 0:
		return fmt.Errorf("%w: KeepTurns (K) is %d; it must be at least 1", ErrConfig, c.KeepTurns)
	case c.HistoryTokens < 0:
		return fmt.Errorf("%w: HistoryTokens is %d; it must not be negative", ErrConfig, c.HistoryTokens)
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
	b := c.Model.Budget()
	if c.HistoryTokens == 0 {
		c.HistoryTokens = b.PromptLimit() * DefaultHistoryPercent / 100
	}
	if c.HistoryTokens >= b.PromptLimit() {
		return fmt.Errorf("%w: HistoryTokens %d leaves no room in a prompt limit of %d", ErrConfig, c.HistoryTokens, b.PromptLimit())
	}
	if c.Distiller == nil {
		c.Distiller = deterministic{distill.New(distill.Config{Counter: textCounter{c.Model}})}
	}
	if c.HistoryHeader == "" {
		c.HistoryHeader = DefaultHistoryHeader
	}
	if c.ErrorLine == nil {
		c.ErrorLine = IsErrorLine
	}
	return nil
}

// textCounter makes a Model's CountText a distill.Counter.
type textCounter struct{ m Model }

func (t textCounter) Count(text string) int { return t.m.CountText(text) }

// deterministic adapts the deterministic distiller to LineDistiller.
type deterministic struct{ d *distill.Distiller }

func (d deterministic) Line(_ context.Context, t distill.Turn) (string, error) {
	return d.d.Summarize(t).Line(), nil
}
