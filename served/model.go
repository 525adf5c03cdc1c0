package served

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/retry"
)

// Defaults applied to zero Config fields.
const (
	// DefaultBaseURL is the OpenAI base URL Connect asks when
	// Config.BaseURL is empty: vLLM's own default.
	DefaultBaseURL = "http://localhost:8000/v1"
	// DefaultTokenizer is the built-in tokenizer used when
	// Config.Tokenizer is empty.
	DefaultTokenizer = "qwen3"
)

// modelsTimeout bounds one GET /v1/models.
const modelsTimeout = 30 * time.Second

// ErrNoWindow is returned by Connect when Config.Budget.ContextWindow is
// zero and the server does not report the model's max_model_len.
var ErrNoWindow = errors.New("the server does not report max_model_len")

// ErrOffline is returned by Verify for a Model built by Offline: there is
// no server to ask.
var ErrOffline = errors.New("no model server (an offline model)")

// Config chooses the served model, its tokenizer and the budget of its
// context window. The zero value of every field selects its default, as
// documented per field.
type Config struct {
	// BaseURL is the server's OpenAI base URL, such as
	// "http://gpu1:8000/v1"; /tokenize is read at its root (BaseURL
	// without "/v1"). Empty means DefaultBaseURL. Offline does not read it.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none.
	APIKey string
	// Name is the served model, as GET /v1/models lists it. Empty: Connect
	// takes the one model the server lists (several are an error wrapping
	// ErrNoModel) and Offline names the Model after its tokenizer.
	Name string
	// Tokenizer is a built-in tokenizer (Builtins: "qwen3", "qwen2.5") or a
	// tokenizer.json, or a directory holding it with its
	// tokenizer_config.json (whose chat template is used). It must be the
	// served model's: Verify tells. Empty means DefaultTokenizer.
	Tokenizer string
	// Backend implements the tokenizer; the zero value is BackendGo.
	Backend Backend
	// Budget sizes the prompts (see budget.Config for each zero value). A
	// zero ContextWindow means the server's max_model_len for Connect (an
	// error wrapping ErrNoWindow when the server does not report it) and
	// budget.DefaultContextWindow for Offline.
	Budget budget.Config
	// Wait is how long Connect keeps asking a server that is unreachable,
	// busy (a 5xx or 429, whose Retry-After is honoured) or silent (each
	// try has 30 s at most, less when Wait ends sooner). Zero means one
	// try and no waiting.
	Wait time.Duration
	// OnRetry, when set, is called before each wait of Connect with the
	// try that failed.
	OnRetry func(retry.Retry)
	// HTTPClient makes the /v1/models and /tokenize requests. Nil means a
	// client whose transport is a retry.Transport (so that a server's
	// Retry-After is honoured).
	HTTPClient *http.Client
}

// Model is one served model: its name, its tokenizer and chat template
// (prompts counted exactly as vLLM counts them), the budget of its context
// window and, when it came from Connect, the server's /tokenize. A Model is
// immutable and safe for concurrent use.
type Model struct {
	name   string
	files  *files
	chat   *ChatCounter
	budget *budget.Budget
	vllm   *vllmClient // nil for an offline model
}

// Connect loads cfg's tokenizer, asks the server for its model (GET
// /v1/models, retried as Config.Wait says) and sizes the budget to the
// model's window unless cfg.Budget gives one. Its errors: the tokenizer's
// (ErrUnknownTokenizer, ErrBackendNotBuilt, chattemplate.ErrUnknownTemplate,
// ErrNoChatTemplate…) and the budget's (budget.ErrConfig) before anything
// is asked; an *UnreachableError when the server stayed unreachable or
// busy; ErrNoModel, an *HTTPError (an answer that is no use, such as a
// 404) or ErrNoWindow; ctx.Err() when ctx ends first.
func Connect(ctx context.Context, cfg Config) (_ *Model, err error) {
	m, err := load(cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			m.files.close() // the native backend's memory
		}
	}()
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Transport: &retry.Transport{}}
	}
	if m.vllm, err = newVLLMClient(cfg.BaseURL, cfg.APIKey, cfg.HTTPClient); err != nil {
		return nil, err
	}
	sm, err := m.vllm.serverModel(ctx, cfg)
	if err != nil {
		return nil, err
	}
	m.name = sm.ID
	bc := cfg.Budget
	if bc.ContextWindow == 0 {
		bc.ContextWindow = sm.MaxModelLen
	}
	if bc.ContextWindow == 0 {
		return nil, fmt.Errorf("%w for %s", ErrNoWindow, sm.ID)
	}
	if m.budget, err = budget.New(bc); err != nil {
		return nil, err
	}
	return m, nil
}

// Offline builds the Model of cfg's tokenizer without a server: nothing is
// asked of any (BaseURL, APIKey, Wait, OnRetry and HTTPClient are not
// read), Verify fails with ErrOffline, and a zero window is
// budget.DefaultContextWindow. For tests, demos and tools that only count.
func Offline(cfg Config) (*Model, error) {
	m, err := load(cfg)
	if err != nil {
		return nil, err
	}
	if m.budget, err = budget.New(cfg.Budget); err != nil {
		m.files.close()
		return nil, err
	}
	if cfg.Name == "" {
		m.name = m.files.Name
	}
	return m, nil
}

// load loads the tokenizer and chat template of cfg and checks its budget
// where it can before a server is asked.
func load(cfg Config) (*Model, error) {
	if cfg.Tokenizer == "" {
		cfg.Tokenizer = DefaultTokenizer
	}
	if cfg.Budget.ContextWindow != 0 {
		// Refuse a bad budget before anything is loaded or asked; one
		// whose window comes from the server is checked once it is known.
		if _, err := budget.New(cfg.Budget); err != nil {
			return nil, err
		}
	}
	f, err := loadFiles(cfg.Tokenizer, cfg.Backend)
	if err != nil {
		return nil, err
	}
	chat, err := NewChatCounter(f.Tokenizer, f.ChatTemplate)
	if err != nil {
		f.close()
		return nil, fmt.Errorf("chat counter for %s: %w", f.Name, err)
	}
	return &Model{name: cfg.Name, files: f, chat: chat}, nil
}

// With returns a Model that shares m's tokenizer, chat template, count
// cache and server but is named name and sized by b: for callers that load
// a tokenizer once and use it for several models or windows. An empty name
// or a nil b keeps m's.
func (m *Model) With(name string, b *budget.Budget) *Model {
	c := *m
	if name != "" {
		c.name = name
	}
	if b != nil {
		c.budget = b
	}
	return &c
}

// Name returns the served model's name: the one to put in requests.
func (m *Model) Name() string { return m.name }

// Tokenizer returns the model's tokenizer.
func (m *Model) Tokenizer() Tokenizer { return m.files.Tokenizer }

// Budget returns the budget of the model's context window.
func (m *Model) Budget() *budget.Budget { return m.budget }

// Chat returns the model's prompt counter.
func (m *Model) Chat() *ChatCounter { return m.chat }

// Count renders messages and tools with the model's chat template and
// counts the render as vLLM does (see ChatCounter.Count). It makes Model a
// budget.Counter.
func (m *Model) Count(messages []openai.ChatCompletionMessage, tools []openai.Tool) (budget.PromptCount, error) {
	return m.chat.Count(messages, tools)
}

// CountText returns the number of tokens of text.
func (m *Model) CountText(text string) int { return m.files.Tokenizer.Count(text) }

// Close releases what the tokenizer holds outside Go's heap (the native
// backend's); for the pure-Go backend it does nothing. Neither m nor a
// Model made from it by With may be used afterwards.
func (m *Model) Close() error { return m.files.close() }

// Verify counts req's prompt here and with the server's /tokenize and
// returns the count when both agree: a *CountMismatchError when they
// differ (the tokenizer or chat template is not the served model's), an
// *HTTPError for an answer other than 2xx, ErrOffline for a Model built by
// Offline, the local counting error or the request's otherwise.
func (m *Model) Verify(ctx context.Context, req openai.ChatCompletionRequest) (int, error) {
	if m.vllm == nil {
		return 0, ErrOffline
	}
	if req.Model == "" {
		req.Model = m.name
	}
	return m.vllm.verifyChat(ctx, m.chat, req)
}

// UnreachableError is Connect's error when the server stayed unreachable,
// busy or silent for as long as Config.Wait allowed.
type UnreachableError struct {
	URL string // the base URL
	Err error  // the last try's error
}

func (e *UnreachableError) Error() string { return "model server " + e.URL + ": " + e.Err.Error() }

func (e *UnreachableError) Unwrap() error { return e.Err }

// serverModel reads the served model from /v1/models under cfg's wait.
func (c *vllmClient) serverModel(ctx context.Context, cfg Config) (servedModel, error) {
	p := retry.Policy{
		BaseDelay: 500 * time.Millisecond, MaxDelay: 15 * time.Second, Deadline: cfg.Wait,
		CheckRetry: func(err error) bool {
			var he *HTTPError
			return !errors.Is(err, ErrNoModel) && !(errors.As(err, &he) && !retry.RetryableStatus(he.Status))
		},
		OnRetry: cfg.OnRetry,
	}
	if cfg.Wait <= 0 {
		p.MaxTries = 1
	}
	var m servedModel
	start := time.Now()
	err := p.Do(ctx, func(ctx context.Context) error {
		// A server that accepts and never answers is bounded too.
		timeout := modelsTimeout
		if cfg.Wait > 0 {
			timeout = max(min(timeout, time.Until(start.Add(cfg.Wait))), time.Millisecond)
		}
		tctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		var err error
		m, err = c.model(tctx, cfg.Name)
		return err
	})
	var gu *retry.GiveUpError
	switch {
	case err == nil:
		return m, nil
	case errors.As(err, &gu):
		return m, &UnreachableError{URL: cfg.BaseURL, Err: gu.Err}
	}
	return m, err
}
