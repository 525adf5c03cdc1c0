package vllmsim

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("vllmsim: invalid config")

// Counter measures prompts exactly as the simulated vLLM does: it renders a
// chat request with the model's chat template and tokenizes the render
// without adding special tokens. Package served provides the real
// implementation (the Qwen3 tokenizer and chat template); implementations
// must be safe for concurrent use.
type Counter interface {
	// CountChat returns the prompt tokens of req's messages and tools with
	// add_generation_prompt=true. It must equal len(EncodeChat(req, true)).
	CountChat(req openai.ChatCompletionRequest) (int, error)
	// EncodeChat returns the token IDs of req's rendered messages and tools.
	EncodeChat(req openai.ChatCompletionRequest, addGenerationPrompt bool) ([]int, error)
	// Encode returns the token IDs of text.
	Encode(text string) []int
	// Count returns len(Encode(text)).
	Count(text string) int
}

// PromptCounter renders and tokenizes what a request asks vLLM to
// tokenize: the prompt of a chat completion, the chat form of /tokenize
// (both from the request body as received) and the text form of /tokenize.
// It replaces Counter for prompts only (generations are still measured with
// Counter), so that a test can count prompts with a reference that shares
// nothing with the code under test. Implementations must be safe for
// concurrent use.
type PromptCounter interface {
	// EncodeChatRequest returns the token IDs of the prompt vLLM renders
	// from body, a chat completion or /tokenize request, with the given
	// add_generation_prompt. An error wrapping ErrTemplate means vLLM would
	// answer 400; any other is the counter's own failure (answered 500).
	EncodeChatRequest(ctx context.Context, body []byte, addGenerationPrompt bool) ([]int, error)
	// EncodeText returns the token IDs of text, without special tokens.
	EncodeText(ctx context.Context, text string) ([]int, error)
}

// ErrTemplate is wrapped by a PromptCounter's errors for requests the chat
// template cannot render (vLLM answers them with 400).
var ErrTemplate = errors.New("vllmsim: the chat template cannot render the request")

// Config configures a Server. Zero values are defaulted by New as
// documented.
type Config struct {
	// Model is the served model name; "" means "Qwen/Qwen3-8B".
	Model string
	// MaxModelLen is the context window; 0 means 16384.
	MaxModelLen int
	// Counter measures prompts and generations. Required.
	Counter Counter
	// Prompts, when set, measures prompts (chat completions and /tokenize)
	// instead of Counter; nil means Counter.
	Prompts PromptCounter
	// Policy generates the answers. Required.
	Policy Policy
	// APIKey, when non-empty, is required as "Authorization: Bearer KEY" on
	// /v1 paths, as vLLM's --api-key does (other paths stay open).
	APIKey string
	// ErrorStyle selects the vLLM release whose length validation is
	// reproduced; the zero value is StyleAtLeast (the newest).
	ErrorStyle ErrorStyle
	// ErrorShape selects the error body shape; ShapeAuto (zero) follows
	// ErrorStyle.
	ErrorShape ErrorShape
	// Faults are injected into the first chat completion requests, in order
	// (see Fault). More can be queued with InjectFaults.
	Faults []Fault
	// BlockSize is the KV cache block size in tokens (vLLM's --block-size);
	// 0 means DefaultBlockSize (16).
	BlockSize int
	// CacheBlocks is the KV cache's capacity in blocks, shared by all
	// requests; 0 means DefaultCacheBlocks. It must hold one request of
	// MaxModelLen tokens, as vLLM requires at startup. A negative value
	// disables automatic prefix caching (--no-enable-prefix-caching).
	CacheBlocks int
	// PromptTokensDetails makes responses carry
	// usage.prompt_tokens_details.cached_tokens, as vLLM does when started
	// with --enable-prompt-tokens-details: only when some prompt tokens came
	// from the cache (the field is null otherwise). Records always hold
	// CachedTokens.
	PromptTokensDetails bool
	// Seed makes response IDs reproducible.
	Seed uint64
	// Created is the "created" timestamp of responses; zero means the time
	// of the request.
	Created time.Time
}

// Server is a simulated vLLM OpenAI-compatible server. It is safe for
// concurrent use.
type Server struct {
	cfg   Config
	shape ErrorShape
	mux   *http.ServeMux

	mu     sync.Mutex
	rng    *rand.Rand
	faults []Fault
	stats  Stats
	cache  *prefixCache // nil: prefix caching disabled
}

// New validates cfg and returns a server.
func New(cfg Config) (*Server, error) {
	if cfg.Counter == nil {
		return nil, fmt.Errorf("%w: Counter is required", ErrConfig)
	}
	if cfg.Policy == nil {
		return nil, fmt.Errorf("%w: Policy is required", ErrConfig)
	}
	if cfg.Model == "" {
		cfg.Model = "Qwen/Qwen3-8B"
	}
	if cfg.MaxModelLen == 0 {
		cfg.MaxModelLen = 16384
	}
	if cfg.MaxModelLen < 0 {
		return nil, fmt.Errorf("%w: MaxModelLen %d is negative", ErrConfig, cfg.MaxModelLen)
	}
	if _, ok := styleNames[cfg.ErrorStyle]; !ok {
		return nil, fmt.Errorf("%w: unknown ErrorStyle %d", ErrConfig, int(cfg.ErrorStyle))
	}
	if cfg.ErrorShape < ShapeAuto || cfg.ErrorShape > ShapeNested {
		return nil, fmt.Errorf("%w: unknown ErrorShape %d", ErrConfig, int(cfg.ErrorShape))
	}
	if cfg.BlockSize == 0 {
		cfg.BlockSize = DefaultBlockSize
	}
	if cfg.BlockSize < 1 {
		return nil, fmt.Errorf("%w: BlockSize %d must be at least 1", ErrConfig, cfg.BlockSize)
	}
	if cfg.CacheBlocks == 0 {
		cfg.CacheBlocks = DefaultCacheBlocks
	}
	if need := (cfg.MaxModelLen + cfg.BlockSize - 1) / cfg.BlockSize; cfg.CacheBlocks > 0 && cfg.CacheBlocks < need {
		return nil, fmt.Errorf("%w: CacheBlocks %d of %d tokens cannot hold one request of MaxModelLen %d tokens (%d blocks)",
			ErrConfig, cfg.CacheBlocks, cfg.BlockSize, cfg.MaxModelLen, need)
	}
	for i, f := range cfg.Faults {
		if err := f.validate(); err != nil {
			return nil, fmt.Errorf("%w: fault %d: %w", ErrConfig, i, err)
		}
	}
	s := &Server{
		cfg:    cfg,
		shape:  cfg.ErrorShape.resolve(cfg.ErrorStyle),
		rng:    rand.New(rand.NewPCG(cfg.Seed, 0x766c6c6d)),
		faults: expandFaults(cfg.Faults),
	}
	if cfg.CacheBlocks > 0 {
		s.cache = newPrefixCache(cfg.BlockSize, cfg.CacheBlocks)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /version", s.handleVersion)
	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("POST /tokenize", s.handleTokenize)
	mux.HandleFunc("POST /v1/chat/completions", s.handleChat)
	mux.HandleFunc("/", s.handleNotFound)
	s.mux = mux
	return s, nil
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// Model returns the served model name.
func (s *Server) Model() string { return s.cfg.Model }

// ResetPrefixCache empties the prefix cache, as vLLM's POST
// /reset_prefix_cache does.
func (s *Server) ResetPrefixCache() {
	if s.cache != nil {
		s.cache.reset()
	}
}

// CachedBlocks returns the number of blocks the prefix cache holds.
func (s *Server) CachedBlocks() int {
	if s.cache == nil {
		return 0
	}
	return s.cache.len()
}

// MaxModelLen returns the context window.
func (s *Server) MaxModelLen() int { return s.cfg.MaxModelLen }

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if s.cfg.APIKey != "" && strings.HasPrefix(r.URL.Path, "/v1") && r.Method != http.MethodOptions {
		want := "Bearer " + s.cfg.APIKey
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(want)) != 1 {
			// vLLM's AuthenticationMiddleware answers exactly this.
			writeJSON(w, http.StatusUnauthorized, []byte(`{"error":"Unauthorized"}`))
			s.record(Record{Endpoint: r.URL.Path, Status: http.StatusUnauthorized, Error: "Unauthorized"})
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// Start serves on a new 127.0.0.1 port until ctx is done or stop is called.
// It returns the base URL ("http://127.0.0.1:PORT"; the OpenAI base URL is
// that plus "/v1"). stop waits for the server to shut down.
func (s *Server) Start(ctx context.Context) (url string, stop func(), err error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("vllmsim: listen: %w", err)
	}
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = hs.Serve(ln) // returns http.ErrServerClosed after Shutdown
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if hs.Shutdown(sctx) != nil {
				_ = hs.Close()
			}
			<-done
		})
	}
	go func() {
		select {
		case <-ctx.Done():
			stop()
		case <-done:
		}
	}()
	return "http://" + ln.Addr().String(), stop, nil
}

func (s *Server) handleVersion(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, []byte(`{"version":"`+s.cfg.ErrorStyle.version()+`"}`))
}

func (s *Server) handleNotFound(w http.ResponseWriter, r *http.Request) {
	// Starlette's default 404 body.
	writeJSON(w, http.StatusNotFound, []byte(`{"detail":"Not Found"}`))
}

func (s *Server) writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.Status, e.body(s.shape))
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// randomHex returns 32 hex digits (a uuid4().hex in vLLM), reproducible
// from Config.Seed.
func (s *Server) randomHex() string {
	s.mu.Lock()
	a, b := s.rng.Uint64(), s.rng.Uint64()
	s.mu.Unlock()
	return fmt.Sprintf("%016x%016x", a, b)
}

func (s *Server) created() int64 {
	if !s.cfg.Created.IsZero() {
		return s.cfg.Created.Unix()
	}
	return time.Now().Unix()
}

// handleModels answers GET /v1/models with vLLM's ModelList.
func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	type permission struct {
		ID                 string  `json:"id"`
		Object             string  `json:"object"`
		Created            int64   `json:"created"`
		AllowCreateEngine  bool    `json:"allow_create_engine"`
		AllowSampling      bool    `json:"allow_sampling"`
		AllowLogprobs      bool    `json:"allow_logprobs"`
		AllowSearchIndices bool    `json:"allow_search_indices"`
		AllowView          bool    `json:"allow_view"`
		AllowFineTuning    bool    `json:"allow_fine_tuning"`
		Organization       string  `json:"organization"`
		Group              *string `json:"group"`
		IsBlocking         bool    `json:"is_blocking"`
	}
	type card struct {
		ID          string       `json:"id"`
		Object      string       `json:"object"`
		Created     int64        `json:"created"`
		OwnedBy     string       `json:"owned_by"`
		Root        string       `json:"root"`
		Parent      *string      `json:"parent"`
		MaxModelLen int          `json:"max_model_len"`
		Permission  []permission `json:"permission"`
	}
	now := s.created()
	list := struct {
		Object string `json:"object"`
		Data   []card `json:"data"`
	}{"list", []card{{
		ID: s.cfg.Model, Object: "model", Created: now, OwnedBy: "vllm", Root: s.cfg.Model,
		MaxModelLen: s.cfg.MaxModelLen,
		Permission: []permission{{
			ID: "modelperm-" + s.randomHex(), Object: "model_permission", Created: now,
			AllowSampling: true, AllowLogprobs: true, AllowView: true, Organization: "*",
		}},
	}}}
	b, err := marshalNoEscape(list)
	if err != nil {
		s.writeError(w, &apiError{Status: 500, Type: "InternalServerError", Message: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, b)
	s.record(Record{Endpoint: "/v1/models", Status: http.StatusOK})
}
