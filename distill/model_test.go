package distill

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift"
)

// chatServer speaks the OpenAI chat-completions wire format: it decodes the
// real JSON request body, records it, and answers with reply (a JSON body
// and status) or blocks until the request is cancelled.
type chatServer struct {
	mu       sync.Mutex
	requests []map[string]any
	reply
}

// reply is what a chatServer answers.
type reply struct {
	status  int
	content string
	raw     string // if set, sent as the body verbatim
	block   bool
}

func (s *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.Error(w, `{"object":"error","message":"not found","type":"NotFoundError","param":null,"code":404}`, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"object":"error","message":"bad json","type":"BadRequestError","param":null,"code":400}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	status, content, raw, block := s.status, s.content, s.raw, s.block
	s.mu.Unlock()
	if block {
		<-r.Context().Done()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if status != 0 && status != http.StatusOK {
		w.WriteHeader(status)
		io.WriteString(w, `{"object":"error","message":"The model `+"`nope`"+` does not exist.","type":"NotFoundError","param":null,"code":404}`)
		return
	}
	if raw != "" {
		io.WriteString(w, raw)
		return
	}
	resp := map[string]any{
		"id": "chatcmpl-5f2c", "object": "chat.completion", "created": 1763800000, "model": req["model"],
		"choices": []any{map[string]any{
			"index": 0, "message": map[string]any{"role": "assistant", "content": content, "tool_calls": []any{}},
			"logprobs": nil, "finish_reason": "stop", "stop_reason": nil,
		}},
		"usage": map[string]any{"prompt_tokens": 412, "total_tokens": 440, "completion_tokens": 28},
	}
	json.NewEncoder(w).Encode(resp)
}

func newModel(t *testing.T, s *chatServer, timeout time.Duration) *ModelDistiller {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cfg := openai.DefaultConfig("EMPTY")
	cfg.BaseURL = srv.URL + "/v1"
	m, err := NewModelDistiller(ModelDistillerConfig{Client: openai.NewClientWithConfig(cfg), Model: "Qwen/Qwen3-8B", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var lockTurn = Turn{Number: 4, Steps: []Step{{Action: nightshift.ActionRan, Tool: nightshift.ToolApply, Command: "apt-get install -y aide", ExitCode: 100,
	Stdout: "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 812 (unattended-upgr)\n"}}, Check: nightshift.CheckFail}

func TestModelDistiller(t *testing.T) {
	det := New(Config{}).Summarize(lockTurn).Line()
	tests := []struct {
		name     string
		server   reply
		turn     Turn
		want     string
		fallback error
	}{
		{"model line used", reply{content: "[Turn 4: ran apt-get install aide; dpkg lock held by unattended-upgr, exit 100; re-check failed]"},
			lockTurn, "[Turn 4: ran apt-get install aide; dpkg lock held by unattended-upgr, exit 100; re-check failed]", nil},
		{"bare text wrapped", reply{content: "ran apt-get install aide, exit 100 (dpkg lock)"},
			lockTurn, "[Turn 4: ran apt-get install aide, exit 100 (dpkg lock)]", nil},
		{"server error", reply{status: http.StatusNotFound}, lockTurn, det, ErrModelRequest},
		{"empty", reply{content: "   "}, lockTurn, det, ErrModelEmpty},
		{"no choices", reply{raw: `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1,"total_tokens":1,"completion_tokens":0}}`}, lockTurn, det, ErrModelEmpty},
		{"several lines", reply{content: "[Turn 4: ran apt-get]\n[Turn 5: more]"}, lockTurn, det, ErrModelOversize},
		{"oversized", reply{content: "[Turn 4: " + strings.Repeat("ran apt-get install aide again and again, ", 40) + "]"}, lockTurn, det, ErrModelOversize},
		{"claims success", reply{content: "[Turn 4: installed aide successfully]"}, lockTurn, det, ErrModelClaim},
		{"claims fixed", reply{content: "[Turn 4: fixed the dpkg lock]"}, lockTurn, det, ErrModelClaim},
		{"claims the re-check passed", reply{content: "[Turn 4: apt-get install aide, exit 100; re-check passed]"}, lockTurn, det, ErrModelClaim},
		{"claims ok", reply{content: "[Turn 4: apt-get install aide OK]"}, lockTurn, det, ErrModelClaim},
		{"claims success of a turn whose check errored", reply{content: "[Turn 4: aide database done]"},
			Turn{Number: 4, Steps: lockTurn.Steps, Check: nightshift.CheckError}, New(Config{}).Summarize(Turn{Number: 4, Steps: lockTurn.Steps, Check: nightshift.CheckError}).Line(), ErrModelClaim},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &chatServer{reply: tt.server}
			m := newModel(t, s, 0)
			r := m.Distill(context.Background(), tt.turn)
			if r.Line != tt.want {
				t.Errorf("line\n got %s\nwant %s", r.Line, tt.want)
			}
			if !errors.Is(r.Fallback, tt.fallback) || (tt.fallback == nil) != (r.Fallback == nil) {
				t.Errorf("fallback = %v, want %v", r.Fallback, tt.fallback)
			}
			if want := wantReason[tt.fallback]; r.Reason != want {
				t.Errorf("reason = %q, want %q", r.Reason, want)
			}
			if line, err := m.Line(context.Background(), tt.turn); err != nil || line != r.Line {
				t.Errorf("Line = %q, %v", line, err)
			}
		})
	}
}

var wantReason = map[error]FallbackReason{nil: FallbackNone, ErrModelRequest: FallbackRequest, ErrModelEmpty: FallbackEmpty,
	ErrModelOversize: FallbackOversize, ErrModelClaim: FallbackClaim}

func TestFallbackReasons(t *testing.T) {
	var names []string
	for _, r := range FallbackReasons() {
		names = append(names, r.String())
	}
	if got := strings.Join(names, ","); got != "request,empty,oversize,claim" {
		t.Errorf("FallbackReasons = %s", got)
	}
	if FallbackNone.String() != "" || FallbackReason(9).String() != "FallbackReason(9)" {
		t.Errorf("%q %q", FallbackNone, FallbackReason(9))
	}
}

func TestModelSuccessAllowedWhenPassed(t *testing.T) {
	s := &chatServer{reply: reply{content: "[Turn 9: ran sed on /etc/ssh/sshd_config and reloaded sshd; re-check passed]"}}
	m := newModel(t, s, 0)
	turn := Turn{Number: 9, Steps: []Step{{Action: nightshift.ActionRan, Tool: nightshift.ToolApply, Command: "sed -i s/a/b/ /etc/ssh/sshd_config"}}, Check: nightshift.CheckPass}
	r := m.Distill(context.Background(), turn)
	if r.Fallback != nil || r.Line != s.content {
		t.Errorf("got %q, %v", r.Line, r.Fallback)
	}
}

func TestModelRequest(t *testing.T) {
	s := &chatServer{reply: reply{content: "[Turn 4: ran apt-get install aide — exit 100, dpkg lock held]"}}
	m := newModel(t, s, 0)
	m.Distill(context.Background(), lockTurn)
	if len(s.requests) != 1 {
		t.Fatalf("%d requests", len(s.requests))
	}
	req := s.requests[0]
	if req["model"] != "Qwen/Qwen3-8B" {
		t.Errorf("model %v", req["model"])
	}
	if mt, _ := req["max_tokens"].(float64); mt <= 0 {
		t.Errorf("max_tokens %v", req["max_tokens"])
	}
	msgs, _ := req["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("messages %v", msgs)
	}
	sys := msgs[0].(map[string]any)["content"].(string)
	user := msgs[1].(map[string]any)["content"].(string)
	if !strings.Contains(sys, "Never say a step worked") || !strings.Contains(sys, "Past tense") {
		t.Errorf("system prompt lacks the rules: %s", sys)
	}
	for _, want := range []string{"apt-get install -y aide", "exit 100", "Could not get lock", "re-check: failed", "Reference line: [Turn 4:"} {
		if !strings.Contains(user, want) {
			t.Errorf("facts lack %q:\n%s", want, user)
		}
	}
}

// TestModelTimeout: a server that never answers makes the request end at
// the distiller's timeout and the deterministic line be used.
func TestModelTimeout(t *testing.T) {
	s := &chatServer{reply: reply{block: true}}
	m := newModel(t, s, 50*time.Millisecond)
	r := m.Distill(context.Background(), lockTurn)
	if !errors.Is(r.Fallback, ErrModelRequest) || !errors.Is(r.Fallback, context.DeadlineExceeded) {
		t.Errorf("fallback = %v, want a deadline", r.Fallback)
	}
	if r.Line != New(Config{}).Summarize(lockTurn).Line() {
		t.Errorf("line %q", r.Line)
	}
}

func TestNewModelConfig(t *testing.T) {
	client := openai.NewClient("x")
	for _, cfg := range []ModelDistillerConfig{
		{Model: "m"},
		{Client: client},
		{Client: client, Model: "m", Timeout: -time.Second},
	} {
		if _, err := NewModelDistiller(cfg); !errors.Is(err, ErrModelConfig) {
			t.Errorf("NewModelDistiller(%+v) = %v, want ErrModelConfig", cfg, err)
		}
	}
	m, err := NewModelDistiller(ModelDistillerConfig{Client: client, Model: "m"})
	if err != nil || m.timeout != DefaultModelTimeout {
		t.Errorf("defaults: %v %v", m, err)
	}
}
