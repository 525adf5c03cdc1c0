package worker

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// errorFromBody serves body with status 400 and returns the error go-openai
// makes of it, as the worker would see it.
func errorFromBody(t *testing.T, body []byte) error {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(body)
	}))
	defer srv.Close()
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = srv.URL + "/v1"
	_, err := openai.NewClientWithConfig(cfg).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}})
	if err == nil {
		t.Fatal("no error")
	}
	return err
}

// TestParseContextLengthGoldenBodies parses every length-error body the vLLM
// simulator reproduces (testdata/vllm, both JSON shapes, every message form)
// through go-openai's real error types.
func TestParseContextLengthGoldenBodies(t *testing.T) {
	paths, err := filepath.Glob("../testdata/vllm/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden bodies in testdata/vllm: %v", err)
	}
	n := 0
	for _, p := range paths {
		name := filepath.Base(p)
		if !strings.HasPrefix(name, "error-") && !strings.HasPrefix(name, "shape-") {
			continue
		}
		body, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			cl := parseContextLength(errorFromBody(t, body))
			if strings.Contains(string(body), "must be at least 1") {
				// "max_tokens must be at least 1, got 0": max_tokens was 0
				// or, absent, defaulted to the 0 tokens left. The worker
				// always sends max_tokens ≥ 1, and the message names no
				// length, so it is not read as a length error.
				if cl != nil {
					t.Fatalf("parsed %q as a length error", body)
				}
				return
			}
			if cl == nil {
				t.Fatalf("not recognised: %s", body)
			}
			if cl.MaxModelLen == 0 || cl.Kind == 0 || cl.Message == "" {
				t.Fatalf("incomplete: %+v", cl)
			}
			var apiErr *openai.APIError
			var reqErr *openai.RequestError
			if !errors.As(cl, &apiErr) && !errors.As(cl, &reqErr) {
				t.Fatalf("the go-openai error is not kept: %v", cl.Err)
			}
		})
		n++
	}
	if n < 30 {
		t.Fatalf("only %d golden bodies", n)
	}
}

func TestParseContextLengthForms(t *testing.T) {
	tests := []struct {
		msg     string
		kind    ContextKind
		l, p, m int
	}{
		{"This model's maximum context length is 16384 tokens. However, you requested 17000 tokens (15976 in the messages, 1024 in the completion). Please reduce the length of the messages or completion.", ContextInput, 16384, 15976, 1024},
		{"This model's maximum context length is 16384 tokens. However, you requested 1024 output tokens and your prompt contains at least 15361 input tokens, for a total of at least 16385 tokens. Please reduce the length of the input prompt or the number of requested output tokens.", ContextInput, 16384, 15361, 1024},
		{"You passed 15361 input tokens and requested 1024 output tokens. However, the model's context length is only 16384 tokens, resulting in a maximum input length of 15360 tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=15361)", ContextInput, 16384, 15361, 1024},
		{"'max_tokens' or 'max_completion_tokens' is too large: 4096. This model's maximum context length is 16384 tokens and your request has 13000 input tokens (4096 > 16384 - 13000). None", ContextOutput, 16384, 13000, 4096},
		{"max_tokens=20000 cannot be greater than max_model_len=16384. Please request fewer output tokens.", ContextOutput, 16384, 0, 20000},
	}
	for _, tt := range tests {
		cl := parseContextLength(errors.New(tt.msg))
		if cl == nil || cl.Kind != tt.kind || cl.MaxModelLen != tt.l || cl.PromptTokens != tt.p || cl.MaxTokens != tt.m {
			t.Errorf("%q: got %+v", tt.msg, cl)
		}
	}
	for _, msg := range []string{"model not found", "Unauthorized", "max_tokens must be at least 1, got 0."} {
		if cl := parseContextLength(errors.New(msg)); cl != nil {
			t.Errorf("%q parsed as a length error: %+v", msg, cl)
		}
	}
}
