package vllmsim

import (
	"net/http"
	"sync"
)

// Record is what the server saw and did for one request.
type Record struct {
	// Endpoint is the request path.
	Endpoint string
	// Status is the HTTP status answered (0 when the connection was dropped).
	Status int
	// PromptTokens is the prompt's token count (chat completions and
	// tokenize).
	PromptTokens int
	// MaxTokens is max_completion_tokens or max_tokens as sent, -1 when
	// absent.
	MaxTokens int
	// CompletionTokens is the generation's token count.
	CompletionTokens int
	// CachedTokens is the number of prompt tokens served from the prefix
	// cache (chat completions answered 200).
	CachedTokens int
	// FinishReason is "stop", "tool_calls" or "length".
	FinishReason string
	// ToolCalls are the names of the tool calls returned.
	ToolCalls []string
	// Rejected is set when the request was refused for its length.
	Rejected bool
	// Error is the error message answered, if any.
	Error string
	// Fault names the injected fault, if any.
	Fault string
	// RuleID and Attempt are what the policy read from the conversation.
	RuleID  string
	Attempt int
}

// Stats is the record of every request, in arrival order.
type Stats struct {
	Records []Record
}

// Completions returns the records of chat completion requests that reached
// validation (faults excluded).
func (st Stats) Completions() []Record {
	var out []Record
	for _, r := range st.Records {
		if r.Endpoint == "/v1/chat/completions" && r.Fault == "" {
			out = append(out, r)
		}
	}
	return out
}

// Rejections returns the records of requests refused for their length.
func (st Stats) Rejections() []Record {
	var out []Record
	for _, r := range st.Records {
		if r.Rejected {
			out = append(out, r)
		}
	}
	return out
}

// MaxPromptTokens returns the largest prompt seen by chat completions.
func (st Stats) MaxPromptTokens() int {
	m := 0
	for _, r := range st.Completions() {
		m = max(m, r.PromptTokens)
	}
	return m
}

// PromptTokens returns the prompt tokens of the chat completions answered
// and how many of them came from the prefix cache.
func (st Stats) PromptTokens() (prompt, cached int) {
	for _, r := range st.Completions() {
		if r.Status == http.StatusOK {
			prompt += r.PromptTokens
			cached += r.CachedTokens
		}
	}
	return prompt, cached
}

// Stats returns a copy of the request records.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Record, len(s.stats.Records))
	for i, r := range s.stats.Records {
		r.ToolCalls = append([]string(nil), r.ToolCalls...)
		out[i] = r
	}
	return Stats{Records: out}
}

// ResetStats forgets the records.
func (s *Server) ResetStats() {
	s.mu.Lock()
	s.stats.Records = nil
	s.mu.Unlock()
}

func (s *Server) record(r Record) {
	s.mu.Lock()
	s.stats.Records = append(s.stats.Records, r)
	s.mu.Unlock()
}

// recordBeforeReply wraps w so that *rec is recorded just before the first
// byte of the reply is written: a client that has its answer always finds
// its request in Stats. The returned func records it if nothing was
// written; call it deferred. rec must be complete before the reply.
func (s *Server) recordBeforeReply(w http.ResponseWriter, rec *Record) (http.ResponseWriter, func()) {
	rw := &recordingWriter{ResponseWriter: w}
	rw.record = func() { s.record(*rec) }
	return rw, func() { rw.once.Do(rw.record) }
}

type recordingWriter struct {
	http.ResponseWriter
	once   sync.Once
	record func()
}

func (w *recordingWriter) WriteHeader(code int) {
	w.once.Do(w.record)
	w.ResponseWriter.WriteHeader(code)
}

func (w *recordingWriter) Write(b []byte) (int, error) {
	w.once.Do(w.record)
	return w.ResponseWriter.Write(b)
}
