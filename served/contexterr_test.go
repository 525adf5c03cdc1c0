package served

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// errorFromBody serves body with status 400 and returns the error go-openai
// makes of it, as the worker would see it.
func errorFromBody(t *testing.T, body []byte) error {
	t.Helper()
	return errorFromResponse(t, http.StatusBadRequest, body)
}

// errorFromResponse serves body with the status and returns the error
// go-openai makes of it.
func errorFromResponse(t *testing.T, status int, body []byte) error {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	}))
	defer srv.Close()
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = srv.URL + "/v1"
	_, err := openai.NewClientWithConfig(cfg).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}})
	require.Error(t, err)
	return err
}

// TestParseContextLengthGoldenBodies reads every error body the vLLM
// simulator reproduces (testdata/vllm: each release's message forms, both
// JSON shapes) through go-openai's real error types: which are length
// rejections, of which kind, with which numbers. "max_tokens must be at
// least 1, got 0" (max_tokens 0 or, absent, defaulted to the 0 tokens left)
// names no length and is not one: the worker always sends max_tokens ≥ 1.
func TestParseContextLengthGoldenBodies(t *testing.T) {
	tests := []struct {
		file    string
		kind    ContextKind // 0: not a length rejection
		l, p, m int
	}{
		{"error-at-least-absent-prompt-fills-window.json", 0, 0, 0, 0},
		{"error-at-least-absent-prompt-over-window.json", ContextInput, 244, 245, 0},
		{"error-at-least-max-over-window.json", ContextOutput, 261, 0, 301},
		{"error-at-least-max-zero.json", 0, 0, 0, 0},
		{"error-at-least-one-over.json", ContextInput, 271, 251, 21},
		{"error-at-least-over-completion-field.json", ContextOutput, 261, 0, 500},
		{"error-at-least-over.json", ContextOutput, 261, 0, 500},
		{"error-messages-absent-prompt-fills-window.json", ContextInput, 251, 0, 0},
		{"error-messages-absent-prompt-over-window.json", ContextInput, 244, 0, 0},
		{"error-messages-max-over-window.json", ContextInput, 261, 251, 301},
		{"error-messages-max-zero.json", 0, 0, 0, 0},
		{"error-messages-one-over.json", ContextInput, 271, 251, 21},
		{"error-messages-over-completion-field.json", ContextInput, 261, 251, 500},
		{"error-messages-over.json", ContextInput, 261, 251, 500},
		{"error-passed-absent-prompt-fills-window.json", 0, 0, 0, 0},
		{"error-passed-absent-prompt-over-window.json", ContextInput, 244, 245, 0},
		{"error-passed-max-over-window.json", ContextOutput, 261, 0, 301},
		{"error-passed-max-zero.json", 0, 0, 0, 0},
		{"error-passed-one-over.json", ContextInput, 271, 251, 21},
		{"error-passed-over-completion-field.json", ContextOutput, 261, 0, 500},
		{"error-passed-over.json", ContextOutput, 261, 0, 500},
		{"error-too-large-absent-prompt-fills-window.json", ContextInput, 251, 0, 0},
		{"error-too-large-absent-prompt-over-window.json", ContextInput, 244, 0, 0},
		{"error-too-large-max-over-window.json", ContextOutput, 261, 251, 301},
		{"error-too-large-max-zero.json", 0, 0, 0, 0},
		{"error-too-large-one-over.json", ContextOutput, 271, 251, 21},
		{"error-too-large-over-completion-field.json", ContextOutput, 261, 251, 500},
		{"error-too-large-over.json", ContextOutput, 261, 251, 500},
		{"shape-at-least-flat.json", ContextInput, 261, 242, 20},
		{"shape-at-least-nested.json", ContextInput, 261, 242, 20},
		{"shape-messages-flat.json", ContextInput, 261, 251, 20},
		{"shape-messages-nested.json", ContextInput, 261, 251, 20},
		{"shape-passed-flat.json", ContextInput, 261, 242, 20},
		{"shape-passed-nested.json", ContextInput, 261, 242, 20},
		{"shape-too-large-flat.json", ContextOutput, 261, 251, 20},
		{"shape-too-large-nested.json", ContextOutput, 261, 251, 20},
	}
	paths, err := filepath.Glob("../testdata/vllm/*.json")
	require.NoError(t, err)
	var golden []string
	for _, p := range paths {
		if name := filepath.Base(p); strings.HasPrefix(name, "error-") || strings.HasPrefix(name, "shape-") {
			golden = append(golden, name)
		}
	}
	var listed []string
	for _, tt := range tests {
		listed = append(listed, tt.file)
	}
	require.ElementsMatch(t, golden, listed, "every golden body in testdata/vllm has a row")
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("../testdata/vllm", tt.file))
			require.NoError(t, err)
			cl := ParseContextLength(errorFromBody(t, body))
			if tt.kind == 0 {
				assert.Nil(t, cl)
				return
			}
			require.NotNil(t, cl, "not recognised: %s", body)
			assert.Equal(t, tt.kind, cl.Kind, "kind")
			assert.Equal(t, [3]int{tt.l, tt.p, tt.m}, [3]int{cl.MaxModelLen, cl.PromptTokens, cl.MaxTokens}, "L, P, M")
			assert.NotEmpty(t, cl.Message)
			var apiErr *openai.APIError
			var reqErr *openai.RequestError
			assert.True(t, errors.As(cl, &apiErr) || errors.As(cl, &reqErr), "the go-openai error is kept: %v", cl.Err)
		})
	}
}

func strp(s string) *string { return &s }

// TestParseContextLengthTyped: only the server's answer, as go-openai types
// it, is read — whatever another error's text says.
func TestParseContextLengthTyped(t *testing.T) {
	const (
		atLeast  = "This model's maximum context length is 16384 tokens. However, you requested 1024 output tokens and your prompt contains at least 15361 input tokens, for a total of at least 16385 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=15361)"
		messages = "This model's maximum context length is 16384 tokens. However, you requested 17000 tokens (15976 in the messages, 1024 in the completion). Please reduce the length of the messages or completion."
		passed   = "You passed 15361 input tokens and requested 1024 output tokens. However, the model's context length is only 16384 tokens, resulting in a maximum input length of 15360 tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=15361)"
		tooLarge = "'max_tokens' or 'max_completion_tokens' is too large: 4096. This model's maximum context length is 16384 tokens and your request has 13000 input tokens (4096 > 16384 - 13000). None"
		greater  = "max_tokens=20000 cannot be greater than max_model_len=16384. Please request fewer output tokens. (parameter=max_tokens, value=20000)"
	)
	apiErr := func(status int, msg string, param *string) error {
		return &openai.APIError{HTTPStatusCode: status, Message: msg, Type: "BadRequestError", Param: param, Code: status}
	}
	flat := func(status int, msg string) error {
		body := fmt.Sprintf(`{"object":"error","message":%q,"type":"BadRequestError","param":null,"code":%d}`, msg, status)
		return &openai.RequestError{HTTPStatusCode: status, Body: []byte(body)}
	}
	tests := []struct {
		name    string
		err     error
		kind    ContextKind // 0: not a length rejection
		l, p, m int
	}{
		{"at least, nested", apiErr(400, atLeast, strp("input_tokens")), ContextInput, 16384, 15361, 1024},
		{"messages, flat", flat(400, messages), ContextInput, 16384, 15976, 1024},
		{"passed, nested", apiErr(400, passed, strp("input_tokens")), ContextInput, 16384, 15361, 1024},
		{"too large, param null", apiErr(400, tooLarge, nil), ContextOutput, 16384, 13000, 4096},
		{"too large, flat", flat(400, tooLarge), ContextOutput, 16384, 13000, 4096},
		{"greater, param max_tokens", apiErr(400, greater, strp("max_tokens")), ContextOutput, 16384, 0, 20000},
		{"greater, param max_completion_tokens", apiErr(400, strings.ReplaceAll(greater, "max_tokens", "max_completion_tokens"), strp("max_completion_tokens")), ContextOutput, 16384, 0, 20000},
		{"wrapped", fmt.Errorf("model call: %w", apiErr(400, atLeast, strp("input_tokens"))), ContextInput, 16384, 15361, 1024},
		// A replayed rejection whose status was not kept (package fleet's
		// histories) is read by its message.
		{"status unknown", apiErr(0, passed, strp("input_tokens")), ContextInput, 16384, 15361, 1024},
		// The param vLLM names decides the kind over the message's form.
		{"param input_tokens", apiErr(400, tooLarge, strp("input_tokens")), ContextInput, 16384, 13000, 4096},

		{"plain error with a length message", errors.New(atLeast), 0, 0, 0, 0},
		{"wrapped plain error", fmt.Errorf("proxy said: %s", passed), 0, 0, 0, 0},
		{"not a 400", apiErr(500, atLeast, strp("input_tokens")), 0, 0, 0, 0},
		{"flat, not a 400", flat(503, messages), 0, 0, 0, 0},
		{"request error without a JSON body", &openai.RequestError{HTTPStatusCode: 400, Body: []byte(messages)}, 0, 0, 0, 0},
		{"request error with a transport error", &openai.RequestError{HTTPStatusCode: 400, Err: errors.New(messages)}, 0, 0, 0, 0},
		{"model not found", apiErr(404, "The model `m` does not exist.", nil), 0, 0, 0, 0},
		{"max_tokens at least 1", apiErr(400, "max_tokens must be at least 1, got 0. (parameter=max_tokens, value=0)", strp("max_tokens")), 0, 0, 0, 0},
		{"nil", nil, 0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := ParseContextLength(tt.err)
			if tt.kind == 0 {
				assert.Nil(t, cl)
				return
			}
			require.NotNil(t, cl)
			assert.Equal(t, tt.kind, cl.Kind, "kind")
			assert.Equal(t, [3]int{tt.l, tt.p, tt.m}, [3]int{cl.MaxModelLen, cl.PromptTokens, cl.MaxTokens}, "L, P, M")
			assert.ErrorIs(t, cl, tt.err)
		})
	}
}

// TestServerError: both of go-openai's error types give the server's
// fields and status; nothing else is a server error.
func TestServerError(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		ok     bool
		msg    string
		param  *string
	}{
		{"nested", 400, `{"error":{"message":"too long","type":"BadRequestError","param":"input_tokens","code":400}}`, true, "too long", strp("input_tokens")},
		{"flat", 400, `{"object":"error","message":"too long","type":"BadRequestError","param":null,"code":400}`, true, "too long", nil},
		{"error string", 401, `{"error":"Unauthorized"}`, true, "Unauthorized", nil},
		{"not JSON", 502, `<html>Bad Gateway</html>`, false, "", nil},
		{"JSON without a message", 400, `{"detail":"no"}`, false, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			se, ok := ServerError(errorFromResponse(t, tt.status, []byte(tt.body)))
			require.Equal(t, tt.ok, ok)
			if !ok {
				return
			}
			assert.Equal(t, tt.status, se.HTTPStatusCode)
			assert.Equal(t, tt.msg, se.Message)
			assert.Equal(t, tt.param, se.Param)
		})
	}
	_, ok := ServerError(errors.New("error, status code: 400, message: too long"))
	assert.False(t, ok, "a plain error is not the server's answer")
}
