package served_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/internal/vllmref"
	"github.com/nightshift-dev/nightshift/retry"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// TestConnectAgainstSimulator reads the model and max_model_len and
// compares local counts with /tokenize over real HTTP, served by the vLLM
// simulator whose /tokenize counts with the independent reference
// (internal/vllmref: Python Jinja2 renders, the HF tokenizers count), not
// with this package.
func TestConnectAgainstSimulator(t *testing.T) {
	t.Parallel()
	local, err := served.Offline(served.Config{Tokenizer: "qwen3"})
	require.NoError(t, err)
	ref, err := vllmref.Start(context.Background(), vllmref.Config{Family: "qwen3"})
	if errors.Is(err, vllmref.ErrUnavailable) {
		testenv.Unavailable(t, "the reference counter: %v", err)
	}
	require.NoError(t, err)
	defer ref.Close()
	srv, err := vllmsim.New(vllmsim.Config{Model: "Qwen/Qwen3-8B", MaxModelLen: 16384, Counter: vllmsim.NewModelCounter(local), Prompts: ref, Policy: vllmsim.GiveUp(1, "")})
	require.NoError(t, err)
	url, stop, err := srv.Start(context.Background())
	require.NoError(t, err)
	defer stop()
	ctx := context.Background()
	m, err := served.Connect(ctx, served.Config{BaseURL: url + "/v1", Budget: budget.Config{Reserve: 2048}})
	require.NoError(t, err)
	assert.Equal(t, "Qwen/Qwen3-8B", m.Name())
	assert.Equal(t, 16384, m.Budget().ContextWindow(), "the window is the server's max_model_len")
	assert.Equal(t, 2048, m.Budget().Reserve())
	_, err = served.Connect(ctx, served.Config{BaseURL: url + "/v1", Name: "nope"})
	assert.ErrorIs(t, err, served.ErrNoModel)
	small, err := served.Connect(ctx, served.Config{BaseURL: url + "/v1", Budget: budget.Config{ContextWindow: 4096}})
	require.NoError(t, err)
	assert.Equal(t, 4096, small.Budget().ContextWindow(), "a window given wins over the server's")

	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "run_shell", Description: "Run a shell command on the host.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"},"reason":{"type":"string"}},"required":["cmd","reason"]}`)}}}
	call := []openai.ToolCall{{ID: "chatcmpl-tool-1", Type: openai.ToolTypeFunction,
		Function: openai.FunctionCall{Name: "run_shell", Arguments: `{"cmd": "grep -n TMOUT /etc/profile", "reason": "où est TMOUT? 1e-07"}`}}}
	requests := map[string]openai.ChatCompletionRequest{
		"system and user": {Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: "Rule: accounts_tmout"},
			{Role: "user", Content: "Set TMOUT=900 in /etc/profile.d/tmout.sh — naïve café 日本語 🚀"},
		}},
		"tools, a call and its result": {Tools: tools, Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: "You fix compliance rules.\n\nBanned: rm -rf /"},
			{Role: "user", Content: "Rule accounts_tmout fails."},
			{Role: "assistant", ToolCalls: call},
			{Role: "tool", ToolCallID: "chatcmpl-tool-1", Content: "exit 1\n\tno match <|im_end|>\r\n"},
			{Role: "assistant", Content: "<think>\nnothing there\n</think>\n\nAdding it."},
			{Role: "user", Content: "check: FAIL"},
		}},
	}
	for name, req := range requests {
		t.Run(name, func(t *testing.T) {
			n, err := m.Verify(ctx, req) // the request names no model: m's
			require.NoError(t, err, "/tokenize (the reference) and the local count")
			local, err := m.Chat().CountRequest(req)
			require.NoError(t, err)
			assert.Equal(t, local, n)
		})
	}
	assert.Equal(t, len(requests), ref.Prompts(), "chat requests the reference counted")
}

// TestConnectErrors: a base URL that is not absolute, a closed port (one
// try: Wait is zero), a server without max_model_len and an offline model's
// Verify each get their error.
func TestConnectErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if _, err := served.Connect(ctx, served.Config{BaseURL: "localhost:8000"}); err == nil || !strings.Contains(err.Error(), "not an absolute URL") {
		t.Fatalf("a relative base URL: %v", err)
	}
	_, err := served.Connect(ctx, served.Config{BaseURL: "http://127.0.0.1:1/v1"})
	var ue *served.UnreachableError
	if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "model server http://127.0.0.1:1/v1: vllm: GET http://127.0.0.1:1/v1/models: ") {
		t.Fatalf("a closed port: %v, want an *UnreachableError", err)
	}
	noLen := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"object": "list", "data": [{"id": "m", "object": "model"}]}`))
	}))
	defer noLen.Close()
	_, err = served.Connect(ctx, served.Config{BaseURL: noLen.URL + "/v1"})
	if !errors.Is(err, served.ErrNoWindow) || err.Error() != "the server does not report max_model_len for m" {
		t.Fatalf("no max_model_len: %v, want ErrNoWindow", err)
	}
	if _, err := served.Connect(ctx, served.Config{BaseURL: noLen.URL + "/v1", Tokenizer: "gpt9"}); !errors.Is(err, served.ErrUnknownTokenizer) {
		t.Fatalf("an unknown tokenizer: %v", err)
	}
	if _, err := served.Connect(ctx, served.Config{BaseURL: noLen.URL + "/v1", Budget: budget.Config{ContextWindow: 1024, Reserve: 1024}}); !errors.Is(err, budget.ErrConfig) {
		t.Fatalf("a reserve that fills the window: %v", err)
	}
	off, err := served.Offline(served.Config{})
	require.NoError(t, err)
	assert.Equal(t, "qwen3", off.Name(), "an offline model is named after its tokenizer")
	_, err = off.Verify(ctx, openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}}})
	assert.ErrorIs(t, err, served.ErrOffline)
}

// TestConnectRetries: /v1/models answered with 429 Retry-After: 1, then 503
// without it, then the list: the first wait is the server's 1 s (the
// backoff alone would say 500ms), the second the backoff's 1 s of a second
// failure; a 404 is returned at once, without retries.
func TestConnectRetries(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "1")
			http.Error(w, `{"error": "busy"}`, http.StatusTooManyRequests)
		case 2:
			http.Error(w, `{"error": "loading"}`, http.StatusServiceUnavailable)
		default:
			_, _ = w.Write([]byte(`{"object": "list", "data": [{"id": "qwen3", "object": "model", "max_model_len": 16384}]}`))
		}
	}))
	defer srv.Close()
	var waits []time.Duration
	cfg := served.Config{BaseURL: srv.URL + "/v1", Wait: time.Minute, OnRetry: func(r retry.Retry) { waits = append(waits, r.Wait.Round(100*time.Millisecond)) }}
	m, err := served.Connect(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, "qwen3", m.Name())
	assert.Equal(t, []time.Duration{time.Second, time.Second}, waits)

	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	waits = nil
	cfg.BaseURL = notFound.URL + "/v1"
	_, err = served.Connect(context.Background(), cfg)
	var he *served.HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusNotFound || len(waits) != 0 {
		t.Errorf("a 404: %v after %d retries, want the HTTP error at once", err, len(waits))
	}
}

// TestVerify: the local qwen3 count agrees with a simulator serving qwen3
// and disagrees with one whose tokenizer has one added token more
// ("ssh_apply", which the prompt's tool definition holds): a worker started
// with a tokenizer that is not the served model's. A model the server does
// not serve is its HTTP error, not a mismatch. CheckFirstCount checks the
// first call only, and stops at a mismatch.
func TestVerify(t *testing.T) {
	t.Parallel()
	req := openai.ChatCompletionRequest{Model: "Qwen/Qwen3-8B", Messages: []openai.ChatCompletionMessage{
		{Role: "system", Content: "Rule: accounts_tmout"},
		{Role: "user", Content: "Set TMOUT=900 in /etc/profile.d/tmout.sh"},
	}, Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "ssh_apply",
		Description: "Run a shell command", Parameters: map[string]any{"type": "object",
			"properties": map[string]any{"command": map[string]any{"type": "string"}}, "required": []string{"command"}}}}}}
	for _, tokenizer := range []string{"qwen3", qwen3WithAddedToken(t, "ssh_apply")} {
		t.Run(filepath.Base(tokenizer), func(t *testing.T) {
			servedModel, err := served.Offline(served.Config{Tokenizer: tokenizer})
			require.NoError(t, err)
			srv, err := vllmsim.New(vllmsim.Config{Model: "Qwen/Qwen3-8B", Counter: vllmsim.NewModelCounter(servedModel), Policy: vllmsim.GiveUp(3, "")})
			require.NoError(t, err)
			url, stop, err := srv.Start(context.Background())
			require.NoError(t, err)
			defer stop()
			m, err := served.Connect(context.Background(), served.Config{BaseURL: url + "/v1", Tokenizer: "qwen3"})
			require.NoError(t, err)
			want, err := m.Chat().CountRequest(req)
			require.NoError(t, err)
			n, err := m.Verify(context.Background(), req)
			var mm *served.CountMismatchError
			oc := openai.DefaultConfig("")
			oc.BaseURL = url + "/v1"
			var failed []error
			check := m.CheckFirstCount(openai.NewClientWithConfig(oc), func(err error) { failed = append(failed, err) })
			_, err1 := check.CreateChatCompletion(context.Background(), req)
			_, err2 := check.CreateChatCompletion(context.Background(), req)
			switch tokenizer {
			case "qwen3":
				if err != nil || n != want {
					t.Fatalf("Verify = %d, %v; want %d, nil", n, err, want)
				}
				assert.NoError(t, err1)
				assert.NoError(t, err2)
				assert.NoError(t, check.Err())
				assert.Empty(t, failed)
			default:
				if !errors.As(err, &mm) || mm.Local != want || mm.Server == want || mm.Model != "Qwen/Qwen3-8B" {
					t.Fatalf("Verify = %d, %v; want a mismatch with local %d", n, err, want)
				}
				t.Log(err)
				assert.ErrorAs(t, err1, &mm)
				assert.ErrorAs(t, err2, &mm, "every call after a failed check fails")
				assert.ErrorAs(t, check.Err(), &mm)
				assert.Len(t, failed, 1, "onFail is called once")
				assert.Empty(t, srv.Stats().Completions(), "no chat completion after the mismatch")
			}
			other := req
			other.Model = "nope"
			var he *served.HTTPError
			if _, err := m.Verify(context.Background(), other); !errors.As(err, &he) || he.Status != 404 || errors.As(err, &mm) {
				t.Fatalf("unknown model: %v, want an HTTP 404", err)
			}
		})
	}
}

// qwen3WithAddedToken writes the built-in Qwen3 tokenizer.json with one
// added token more (content, the next free id) and its tokenizer_config.json
// into a directory of its own and returns the directory.
func qwen3WithAddedToken(t *testing.T, content string) string {
	t.Helper()
	gz, err := os.ReadFile(filepath.Join("models", "qwen3", "tokenizer.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var tj map[string]any
	if err := json.Unmarshal(raw, &tj); err != nil {
		t.Fatal(err)
	}
	added := tj["added_tokens"].([]any)
	next := 0
	for _, a := range added {
		next = max(next, int(a.(map[string]any)["id"].(float64))+1)
	}
	tj["added_tokens"] = append(added, map[string]any{"id": next, "content": content, "single_word": false,
		"lstrip": false, "rstrip": false, "normalized": false, "special": false})
	out, err := json.Marshal(tj)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join("models", "qwen3", "tokenizer_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "qwen3-plus-"+content)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"tokenizer.json": out, "tokenizer_config.json": cfg} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
