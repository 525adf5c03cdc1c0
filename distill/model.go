package distill

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift"
)

// ChatClient is the part of an OpenAI-compatible client the model distiller
// uses; *openai.Client satisfies it.
type ChatClient interface {
	CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)
}

// DefaultModelTimeout bounds one model request.
const DefaultModelTimeout = 30 * time.Second

// Errors explaining why the model distiller fell back to the deterministic
// line. Client and timeout errors are wrapped in ErrModelRequest.
var (
	ErrModelConfig   = errors.New("invalid model distiller configuration")
	ErrModelRequest  = errors.New("model distiller request failed")
	ErrModelEmpty    = errors.New("model distiller returned no line")
	ErrModelOversize = errors.New("model distiller line over the line budget")
	ErrModelClaim    = errors.New("model distiller line claims success the re-check did not confirm")
)

// ModelDistillerConfig configures a ModelDistiller.
type ModelDistillerConfig struct {
	// Client sends chat completions. Required.
	Client ChatClient
	// Model is the served model name. Required.
	Model string
	// Timeout bounds each request. Zero means DefaultModelTimeout (30 s).
	Timeout time.Duration
	// Fallback writes the deterministic line used whenever the model's line
	// is refused, and sets the line budget (its MaxLineTokens and Counter).
	// Nil means New(Config{}).
	Fallback *Distiller
}

// ModelDistiller asks a model for each turn's line and falls back to the
// deterministic line on a request error or timeout, on an empty, multi-line
// or oversized reply, and on a reply that claims success when the rule's
// re-check did not pass. It is off unless the caller builds one; it is safe
// for concurrent use when its client and counter are.
type ModelDistiller struct {
	client   ChatClient
	model    string
	timeout  time.Duration
	fallback *Distiller
}

// NewModelDistiller validates cfg and returns a Model distiller.
func NewModelDistiller(cfg ModelDistillerConfig) (*ModelDistiller, error) {
	switch {
	case cfg.Client == nil:
		return nil, fmt.Errorf("%w: Client is required", ErrModelConfig)
	case strings.TrimSpace(cfg.Model) == "":
		return nil, fmt.Errorf("%w: Model is required", ErrModelConfig)
	case cfg.Timeout < 0:
		return nil, fmt.Errorf("%w: Timeout %s is negative", ErrModelConfig, cfg.Timeout)
	}
	m := &ModelDistiller{client: cfg.Client, model: cfg.Model, timeout: cfg.Timeout, fallback: cfg.Fallback}
	if m.timeout == 0 {
		m.timeout = DefaultModelTimeout
	}
	if m.fallback == nil {
		m.fallback = New(Config{})
	}
	return m, nil
}

// FallbackReason says in one word why the model distiller used the
// deterministic line; it labels metrics and events.
type FallbackReason uint8

// The reasons, one per Err* value above.
const (
	FallbackNone     FallbackReason = iota // the model's line was used
	FallbackRequest                        // ErrModelRequest: the request failed or timed out
	FallbackEmpty                          // ErrModelEmpty: no line
	FallbackOversize                       // ErrModelOversize: several lines, or over the line budget
	FallbackClaim                          // ErrModelClaim: success the re-check did not confirm
)

var fallbackNames = [...]string{FallbackNone: "", FallbackRequest: "request", FallbackEmpty: "empty",
	FallbackOversize: "oversize", FallbackClaim: "claim"}

// String returns the reason's label ("request", "empty", "oversize",
// "claim"; "" for FallbackNone).
func (r FallbackReason) String() string {
	if int(r) < len(fallbackNames) {
		return fallbackNames[r]
	}
	return fmt.Sprintf("FallbackReason(%d)", uint8(r))
}

// FallbackReasons lists the reasons a fallback can have (every one but
// FallbackNone), in order.
func FallbackReasons() []FallbackReason {
	return []FallbackReason{FallbackRequest, FallbackEmpty, FallbackOversize, FallbackClaim}
}

// reasonOf maps a fallback error to its reason.
func reasonOf(err error) FallbackReason {
	switch {
	case err == nil:
		return FallbackNone
	case errors.Is(err, ErrModelClaim):
		return FallbackClaim
	case errors.Is(err, ErrModelOversize):
		return FallbackOversize
	case errors.Is(err, ErrModelEmpty):
		return FallbackEmpty
	}
	return FallbackRequest
}

// ModelLine is what a ModelDistiller gives for a turn: the line, and why the model's own line
// was not used (Fallback nil and Reason FallbackNone when it was).
type ModelLine struct {
	Line     string
	Fallback error
	Reason   FallbackReason
}

// Line returns the turn's line. It never fails: every failure of the model
// falls back to the deterministic line. It satisfies memory.LineDistiller.
func (m *ModelDistiller) Line(ctx context.Context, t Turn) (string, error) {
	return m.Distill(ctx, t).Line, nil
}

// Distill returns the turn's line and, when the deterministic line was
// used, the reason (matched with errors.Is against the Err* values).
func (m *ModelDistiller) Distill(ctx context.Context, t Turn) ModelLine {
	s := m.fallback.Summarize(t)
	det := s.Line()
	line, err := m.ask(ctx, t, det)
	if err != nil {
		return ModelLine{Line: det, Fallback: err, Reason: reasonOf(err)}
	}
	return ModelLine{Line: line}
}

func (m *ModelDistiller) ask(ctx context.Context, t Turn, det string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	resp, err := m.client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model:       m.model,
		Temperature: 0,
		//lint:ignore SA1019 vLLM and other OpenAI-compatible servers read max_tokens; max_completion_tokens is newer.
		MaxTokens: m.fallback.maxLineTokens + 16,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: modelPrompt},
			{Role: openai.ChatMessageRoleUser, Content: m.facts(t, det)},
		},
	})
	if err != nil {
		return "", fmt.Errorf("%w: turn %d: %w", ErrModelRequest, t.Number, err)
	}
	if len(resp.Choices) == 0 {
		return "", fmt.Errorf("%w: turn %d: no choices", ErrModelEmpty, t.Number)
	}
	text := strings.TrimSpace(resp.Choices[0].Message.Content)
	text = strings.Trim(text, "\"`")
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return "", fmt.Errorf("%w: turn %d", ErrModelEmpty, t.Number)
	case strings.ContainsAny(text, "\r\n"):
		return "", fmt.Errorf("%w: turn %d: reply has several lines", ErrModelOversize, t.Number)
	}
	prefix := "[Turn " + strconv.Itoa(t.Number) + ":"
	line := text
	if !strings.HasPrefix(line, prefix) {
		line = prefix + " " + strings.TrimSuffix(strings.TrimPrefix(text, "["), "]") + "]"
	}
	if !strings.HasSuffix(line, "]") {
		line += "]"
	}
	if n := m.fallback.count(line); n > m.fallback.maxLineTokens {
		return "", fmt.Errorf("%w: turn %d: %d tokens, budget %d", ErrModelOversize, t.Number, n, m.fallback.maxLineTokens)
	}
	if t.Check != nightshift.CheckPass && claimsSuccess.MatchString(line) {
		return "", fmt.Errorf("%w: turn %d: re-check %s", ErrModelClaim, t.Number, checkWord(t.Check))
	}
	return line, nil
}

// claimsSuccess matches words that call a step done. Lines of turns whose
// re-check did not pass may not use them, even negated: a wrong refusal
// only costs the model's wording.
var claimsSuccess = regexp.MustCompile(`(?i)\b(pass(ed|es)?|succeed(ed|s)?|success(ful|fully)?|fixed|resolved|solved|remediated|compliant|done|complete[ds]?|works|working|ok|okay|accomplished)\b`)

const modelPrompt = `You write one line of a log of attempts to fix a compliance rule on a Linux host.
Rules:
- Output exactly one line, nothing else, in the form "[Turn N: ...]".
- Past tense only. Report what was run and what happened; never give advice or instructions.
- Name the command briefly, the files, units or packages it touched, the exit status and the error.
- Never say a step worked, passed, succeeded, fixed or completed anything unless the facts say "re-check: passed".
- Keep it shorter than the reference line you are given.`

// facts renders the turn for the model: the reference line, then each step
// with its command and the tail of its output, clipped.
func (m *ModelDistiller) facts(t Turn, det string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Turn %d. Reference line: %s\n", t.Number, det)
	for i, st := range t.Steps {
		fmt.Fprintf(&b, "Step %d: tool %s, %s", i+1, orDefault(st.Tool, nightshift.ToolApply), actionWord(st.Action))
		if st.Action == nightshift.ActionRan {
			fmt.Fprintf(&b, ", exit %d", st.ExitCode)
		}
		if st.Signal != "" {
			fmt.Fprintf(&b, ", signal %s", st.Signal)
		}
		b.WriteByte('\n')
		if st.Command != "" {
			fmt.Fprintf(&b, "command: %s\n", m.fallback.clip(st.Command, 200))
		}
		if st.Note != "" {
			fmt.Fprintf(&b, "note: %s\n", m.fallback.clip(st.Note, 60))
		}
		if out := joinOutput(st.Stderr, st.Stdout); out != "" {
			fmt.Fprintf(&b, "output (last lines):\n%s\n", tail(out, 12, 1500))
		}
	}
	fmt.Fprintf(&b, "re-check: %s\n", checkWord(t.Check))
	return b.String()
}

// tail returns the last n lines of s, at most maxBytes long.
func tail(s string, n, maxBytes int) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := strings.Join(lines, "\n")
	if len(out) > maxBytes {
		out = strings.ToValidUTF8(out[len(out)-maxBytes:], "")
	}
	return out
}
