package vllmsim_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/vllmsim"
)

// promptTokens is the exact prompt count of the error tests' request.
func promptTokens(t *testing.T) int {
	t.Helper()
	p, err := newCounter(t).CountChat(openai.ChatCompletionRequest{Messages: baseMessages("sshd_disable_root_login"), Tools: workerTools()})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func intp(n int) *int { return &n }

// lengthCase is a request of P prompt tokens against a window of L(P) with
// max_tokens M(P) (nil: absent).
type lengthCase struct {
	name   string
	window func(p int) int
	max    func(p int) *int
	field  string // "max_tokens" (default) or "max_completion_tokens"
	accept bool
}

var lengthCases = []lengthCase{
	{name: "fits-exactly", window: func(p int) int { return p + 20 }, max: func(int) *int { return intp(20) }, accept: true},
	{name: "one-over", window: func(p int) int { return p + 20 }, max: func(int) *int { return intp(21) }},
	{name: "over", window: func(p int) int { return p + 10 }, max: func(int) *int { return intp(500) }},
	{name: "over-completion-field", window: func(p int) int { return p + 10 }, max: func(int) *int { return intp(500) }, field: "max_completion_tokens"},
	{name: "absent-fits", window: func(p int) int { return p + 1 }, max: func(int) *int { return nil }, accept: true},
	{name: "absent-prompt-fills-window", window: func(p int) int { return p }, max: func(int) *int { return nil }},
	{name: "absent-prompt-over-window", window: func(p int) int { return p - 7 }, max: func(int) *int { return nil }},
	{name: "max-over-window", window: func(p int) int { return p + 10 }, max: func(p int) *int { return intp(p + 50) }},
	{name: "max-zero", window: func(p int) int { return p + 10 }, max: func(int) *int { return intp(0) }},
}

// TestLengthErrors sends every case to every style, checks acceptance,
// compares the error body with its golden file and checks how go-openai
// surfaces it.
func TestLengthErrors(t *testing.T) {
	p := promptTokens(t)
	for _, style := range vllmsim.Styles() {
		for _, lc := range lengthCases {
			t.Run(style.String()+"/"+lc.name, func(t *testing.T) {
				ts := start(t, vllmsim.Config{MaxModelLen: lc.window(p), ErrorStyle: style, Policy: vllmsim.GiveUp(1, "")})
				body := map[string]any{"model": ts.sim.Model(), "messages": baseMessages("sshd_disable_root_login"), "tools": workerTools()}
				field := lc.field
				if field == "" {
					field = "max_tokens"
				}
				if m := lc.max(p); m != nil {
					body[field] = *m
				}
				status, raw := ts.post(t, "/v1/chat/completions", body)
				recs := ts.sim.Stats().Completions()
				if len(recs) != 1 || recs[0].PromptTokens != p {
					t.Fatalf("records %+v, want one with %d prompt tokens", recs, p)
				}
				if lc.accept {
					if status != http.StatusOK {
						t.Fatalf("status %d, body %s; want 200", status, raw)
					}
					var resp openai.ChatCompletionResponse
					if err := json.Unmarshal(raw, &resp); err != nil {
						t.Fatal(err)
					}
					if got := resp.Usage.PromptTokens + resp.Usage.CompletionTokens; got > lc.window(p) {
						t.Errorf("prompt+completion = %d, over the window %d", got, lc.window(p))
					}
					if recs[0].Rejected {
						t.Error("accepted request recorded as rejected")
					}
					return
				}
				if status != http.StatusBadRequest {
					t.Fatalf("status %d, body %s; want 400", status, raw)
				}
				if !recs[0].Rejected && lc.name != "max-zero" {
					t.Error("rejection not recorded")
				}
				golden(t, fmt.Sprintf("error-%s-%s.json", style, lc.name), raw)
			})
		}
	}
}

// TestErrorShapes checks both shapes for every style and how go-openai
// reports each: the flat body as *openai.RequestError carrying the body, the
// nested one as *openai.APIError.
func TestErrorShapes(t *testing.T) {
	p := promptTokens(t)
	for _, style := range vllmsim.Styles() {
		for _, shape := range []vllmsim.ErrorShape{vllmsim.ShapeFlat, vllmsim.ShapeNested} {
			name := map[vllmsim.ErrorShape]string{vllmsim.ShapeFlat: "flat", vllmsim.ShapeNested: "nested"}[shape]
			t.Run(style.String()+"/"+name, func(t *testing.T) {
				ts := start(t, vllmsim.Config{MaxModelLen: p + 10, ErrorStyle: style, ErrorShape: shape})
				_, err := ts.chat(t, openai.ChatCompletionRequest{Messages: baseMessages("sshd_disable_root_login"), Tools: workerTools(), MaxCompletionTokens: 20})
				if err == nil {
					t.Fatal("want an error")
				}
				status, raw := ts.post(t, "/v1/chat/completions", map[string]any{
					"model": ts.sim.Model(), "messages": baseMessages("sshd_disable_root_login"), "tools": workerTools(), "max_completion_tokens": 20})
				if status != http.StatusBadRequest {
					t.Fatalf("status %d", status)
				}
				golden(t, fmt.Sprintf("shape-%s-%s.json", style, name), raw)
				var generic map[string]any
				if err := json.Unmarshal(raw, &generic); err != nil {
					t.Fatal(err)
				}
				switch shape {
				case vllmsim.ShapeFlat:
					var re *openai.RequestError
					if !errors.As(err, &re) {
						t.Fatalf("flat shape: got %T (%v), want *openai.RequestError", err, err)
					}
					if re.HTTPStatusCode != 400 || string(re.Body) != string(raw) || re.Err != nil {
						t.Errorf("RequestError %+v", re)
					}
					if generic["object"] != "error" || generic["code"] != float64(400) || generic["type"] != "BadRequestError" {
						t.Errorf("flat body %s", raw)
					}
				case vllmsim.ShapeNested:
					var ae *openai.APIError
					if !errors.As(err, &ae) {
						t.Fatalf("nested shape: got %T (%v), want *openai.APIError", err, err)
					}
					inner, _ := generic["error"].(map[string]any)
					if ae.HTTPStatusCode != 400 || ae.Code != 400 || ae.Type != "BadRequestError" || ae.Message != inner["message"] {
						t.Errorf("APIError %+v, body %s", ae, raw)
					}
					if !strings.Contains(ae.Message, fmt.Sprint(p+10)) {
						t.Errorf("message %q does not name the window %d", ae.Message, p+10)
					}
				default:
					// vllmsim.ShapeAuto is resolved by the server
				}
			})
		}
	}
}

// TestAtLeastTruncatesCount checks the ≥0.20 wording reports at most
// L−M+1 input tokens, as vLLM's truncating tokenizer call does.
func TestAtLeastTruncatesCount(t *testing.T) {
	p := promptTokens(t)
	ts := start(t, vllmsim.Config{MaxModelLen: p - 20, ErrorStyle: vllmsim.StyleAtLeast})
	_, err := ts.chat(t, openai.ChatCompletionRequest{Messages: baseMessages("sshd_disable_root_login"), Tools: workerTools(), MaxCompletionTokens: 30})
	var ae *openai.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("got %v", err)
	}
	l, m := p-20, 30
	want := fmt.Sprintf("you requested %d output tokens and your prompt contains at least %d input tokens, for a total of at least %d tokens.", m, l-m+1, l+1)
	if !strings.Contains(ae.Message, want) || ae.Param == nil || *ae.Param != "input_tokens" {
		t.Errorf("message %q param %v, want it to contain %q and param input_tokens", ae.Message, ae.Param, want)
	}
}

func TestModelNotFound(t *testing.T) {
	ts := start(t, vllmsim.Config{})
	_, err := ts.chat(t, openai.ChatCompletionRequest{Model: "gpt-4", Messages: baseMessages("x")})
	var ae *openai.APIError
	if !errors.As(err, &ae) || ae.HTTPStatusCode != 404 || ae.Type != "NotFoundError" || ae.Message != "The model `gpt-4` does not exist." {
		t.Fatalf("got %#v", err)
	}
}

func TestBadRequests(t *testing.T) {
	ts := start(t, vllmsim.Config{})
	for _, tc := range []struct {
		name string
		body any
		want string
	}{
		{"stream", map[string]any{"model": ts.sim.Model(), "messages": baseMessages("x"), "stream": true}, "stream=true is not supported"},
		{"no-messages", map[string]any{"model": ts.sim.Model()}, "messages"},
		{"not-json", "}{", "invalid request body"},
		{"wrong-type", map[string]any{"model": ts.sim.Model(), "messages": "hello"}, "invalid request body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, raw := ts.post(t, "/v1/chat/completions", tc.body)
			if status != http.StatusBadRequest || !strings.Contains(string(raw), tc.want) {
				t.Errorf("status %d body %s, want 400 containing %q", status, raw, tc.want)
			}
		})
	}
}
