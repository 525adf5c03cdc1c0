package faultserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"
)

// Kind is one fault of a chat completion answer.
type Kind int

const (
	// Huge answers 200 with a well-formed chat completion whose content is
	// Config.HugeBytes long, chunked (no Content-Length), so only a reader
	// that counts what it reads can refuse it.
	Huge Kind = iota + 1
	// HTML answers 200 with a proxy's HTML error page (text/html).
	HTML
	// WrongShape answers 200 with Next's completion whose "choices" is an
	// object instead of a list.
	WrongShape
	// Truncated answers 200 with the first half of Next's completion, its
	// Content-Length that of the half: a complete HTTP answer whose JSON
	// ends early.
	Truncated
	// Hang accepts the request and never answers, until the client gives
	// up or the server is closed.
	Hang
	// Drip answers 200 and writes Next's completion one byte per
	// Config.DripEvery, until it is written, the client gives up or the
	// server is closed.
	Drip
	// EmptyChoices answers 200 with Next's completion whose "choices" is
	// an empty list.
	EmptyChoices
)

// String names the kind as ParseKind reads it.
func (k Kind) String() string {
	switch k {
	case Huge:
		return "huge"
	case HTML:
		return "html"
	case WrongShape:
		return "wrong-shape"
	case Truncated:
		return "truncated"
	case Hang:
		return "hang"
	case Drip:
		return "drip"
	case EmptyChoices:
		return "empty-choices"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// ErrConfig is wrapped by every error New and ParseKind return.
var ErrConfig = errors.New("faultserver: invalid configuration")

// ParseKind reads a kind's name (see Kind.String).
func ParseKind(s string) (Kind, error) {
	for k := Huge; k <= EmptyChoices; k++ {
		if k.String() == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("%w: unknown fault %q (want huge, html, wrong-shape, truncated, hang, drip or empty-choices)", ErrConfig, s)
}

// Fault is a fault and how many consecutive chat completions it answers
// (Times; 0 means 1).
type Fault struct {
	Kind  Kind
	Times int
}

// Defaults applied by New to zero Config fields.
const (
	DefaultHugeBytes = 50 << 20
	DefaultDripEvery = 100 * time.Millisecond
)

// Config configures a Server.
type Config struct {
	// Next answers every request that is not a fault (required), e.g. a
	// vllmsim.Server's Handler.
	Next http.Handler
	// Faults are the answers of the first chat completions, in order;
	// then Next answers.
	Faults []Fault
	// HugeBytes is the length of a Huge answer's content. Zero means
	// DefaultHugeBytes (50 MiB).
	HugeBytes int64
	// DripEvery is the pause between two bytes of a Drip answer. Zero
	// means DefaultDripEvery (100ms).
	DripEvery time.Duration
}

// Stats counts the chat completions a Server answered.
type Stats struct {
	Faults int // answered with a fault (or left hanging)
	Normal int // answered by Next
}

// Server is the fault server.
type Server struct {
	cfg    Config
	mu     sync.Mutex
	queue  []Kind
	stats  Stats
	closed chan struct{}
	once   sync.Once
	hs     *http.Server
	done   chan struct{}
}

// New validates cfg and returns a Server; Start serves it.
func New(cfg Config) (*Server, error) {
	if cfg.Next == nil {
		return nil, fmt.Errorf("%w: Next is required", ErrConfig)
	}
	if cfg.HugeBytes < 0 || cfg.DripEvery < 0 {
		return nil, fmt.Errorf("%w: HugeBytes and DripEvery must not be negative", ErrConfig)
	}
	if cfg.HugeBytes == 0 {
		cfg.HugeBytes = DefaultHugeBytes
	}
	if cfg.DripEvery == 0 {
		cfg.DripEvery = DefaultDripEvery
	}
	s := &Server{cfg: cfg, closed: make(chan struct{})}
	for i, f := range cfg.Faults {
		if f.Kind < Huge || f.Kind > EmptyChoices {
			return nil, fmt.Errorf("%w: fault %d: unknown kind %d", ErrConfig, i, int(f.Kind))
		}
		if f.Times < 0 {
			return nil, fmt.Errorf("%w: fault %d: Times %d is negative", ErrConfig, i, f.Times)
		}
		for range max(f.Times, 1) {
			s.queue = append(s.queue, f.Kind)
		}
	}
	return s, nil
}

// Stats returns the counts so far.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Handler returns the server's handler, for a caller's own http.Server.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// Start serves on a new 127.0.0.1 port until Close; it returns the base
// URL ("http://127.0.0.1:PORT"; the OpenAI base URL is that plus "/v1").
func (s *Server) Start(ctx context.Context) (string, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("faultserver: listen: %w", err)
	}
	s.hs = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		_ = s.hs.Serve(ln) // http.ErrServerClosed after Close
	}()
	return "http://" + ln.Addr().String(), nil
}

// Close ends every pending answer and, after Start, stops serving and waits
// for the server to stop. It is idempotent.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		close(s.closed)
		if s.hs != nil {
			err = s.hs.Close()
			<-s.done
		}
	})
	return err
}

// next takes the next fault, if any, and counts the answer.
func (s *Server) next() (Kind, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		s.stats.Normal++
		return 0, false
	}
	k := s.queue[0]
	s.queue = s.queue[1:]
	s.stats.Faults++
	return k, true
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		s.cfg.Next.ServeHTTP(w, r)
		return
	}
	k, ok := s.next()
	if !ok {
		s.cfg.Next.ServeHTTP(w, r)
		return
	}
	switch k {
	case Huge:
		s.huge(w, r)
	case HTML:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(htmlPage))
	case Hang:
		select {
		case <-r.Context().Done():
		case <-s.closed:
			// Never answered: the connection is dropped, not closed with
			// an empty 200.
			panic(http.ErrAbortHandler)
		}
	case WrongShape, Truncated, Drip, EmptyChoices:
		body, err := s.completion(r)
		if err != nil {
			http.Error(w, "faultserver: "+err.Error(), http.StatusInternalServerError)
			return
		}
		s.answer(w, r, k, body)
	default:
		http.Error(w, "faultserver: unknown fault "+k.String(), http.StatusInternalServerError)
	}
}

// completion is Next's answer to r, which must be a 200.
func (s *Server) completion(r *http.Request) ([]byte, error) {
	rec := httptest.NewRecorder()
	s.cfg.Next.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("next answered %d: %s", rec.Code, bytes.TrimSpace(rec.Body.Bytes()))
	}
	return rec.Body.Bytes(), nil
}

// answer writes the fault k made of Next's completion body.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, k Kind, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	switch k {
	case WrongShape, EmptyChoices:
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			http.Error(w, "faultserver: next's completion: "+err.Error(), http.StatusInternalServerError)
			return
		}
		m["choices"] = json.RawMessage(`[]`)
		if k == WrongShape {
			m["choices"] = json.RawMessage(`{"message":"choices is an object here"}`)
		}
		body, _ = json.Marshal(m) // a map of raw messages always marshals
		_, _ = w.Write(body)
	case Truncated:
		half := body[:len(body)/2]
		w.Header().Set("Content-Length", strconv.Itoa(len(half)))
		_, _ = w.Write(half)
	case Drip:
		w.WriteHeader(http.StatusOK)
		t := time.NewTicker(s.cfg.DripEvery)
		defer t.Stop()
		for _, b := range body {
			if _, err := w.Write([]byte{b}); err != nil {
				return
			}
			http.NewResponseController(w).Flush() //nolint:errcheck // a client gone fails the next Write
			select {
			case <-t.C:
			case <-r.Context().Done():
				return
			case <-s.closed:
				return
			}
		}
	case Huge, HTML, Hang:
		// Not made of Next's answer: serveHTTP writes them.
	}
}

// huge writes a well-formed completion whose content is HugeBytes of "a",
// in 64 KiB chunks, until written or the client stops reading.
func (s *Server) huge(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	head := `{"id":"chatcmpl-huge","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"`
	tail := `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
	if _, err := w.Write([]byte(head)); err != nil {
		return
	}
	chunk := bytes.Repeat([]byte("a"), 64<<10)
	for left := s.cfg.HugeBytes; left > 0; left -= int64(len(chunk)) {
		select {
		case <-r.Context().Done():
			return
		case <-s.closed:
			return
		default:
		}
		if _, err := w.Write(chunk[:min(int64(len(chunk)), left)]); err != nil {
			return
		}
	}
	_, _ = w.Write([]byte(tail))
}

// htmlPage is what a reverse proxy answers when its upstream is down, here
// with the status 200 some proxies give their error pages.
const htmlPage = `<html>
<head><title>502 Bad Gateway</title></head>
<body>
<center><h1>502 Bad Gateway</h1></center>
<hr><center>nginx</center>
</body>
</html>
`
