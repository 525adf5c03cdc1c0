package budget_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/internal/vllmref"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// TestVLLMClientAgainstSimulator reads max_model_len and compares local
// counts with /tokenize over real HTTP, served by the vLLM simulator whose
// /tokenize counts with the independent reference (internal/vllmref: Python
// Jinja2 renders, the HF tokenizers count), not with this package.
func TestVLLMClientAgainstSimulator(t *testing.T) {
	t.Parallel()
	m, err := budget.LoadModel("qwen3")
	require.NoError(t, err)
	counter, err := vllmsim.NewBudgetCounter(m)
	require.NoError(t, err)
	ref, err := vllmref.Start(context.Background(), vllmref.Config{Family: "qwen3"})
	if errors.Is(err, vllmref.ErrUnavailable) {
		testenv.Unavailable(t, "the reference counter: %v", err)
	}
	require.NoError(t, err)
	defer ref.Close()
	srv, err := vllmsim.New(vllmsim.Config{Model: "Qwen/Qwen3-8B", MaxModelLen: 16384, Counter: counter, Prompts: ref, Policy: vllmsim.GiveUp(1, "")})
	require.NoError(t, err)
	url, stop, err := srv.Start(context.Background())
	require.NoError(t, err)
	defer stop()
	c, err := budget.NewVLLMClient(budget.VLLMConfig{BaseURL: url + "/v1"})
	require.NoError(t, err)
	ctx := context.Background()
	served, err := c.Model(ctx, "")
	require.NoError(t, err)
	assert.Equal(t, "Qwen/Qwen3-8B", served.ID)
	assert.Equal(t, 16384, served.MaxModelLen)
	_, err = c.Model(ctx, "nope")
	assert.ErrorIs(t, err, budget.ErrNoModel)

	cc, err := budget.NewModelChatCounter(m)
	require.NoError(t, err)
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
			req.Model = served.ID
			res, err := c.TokenizeChat(ctx, req)
			require.NoError(t, err)
			local, err := cc.CountRequest(req)
			require.NoError(t, err)
			assert.Equal(t, res.Count, local, "/tokenize (the reference) and the local count")
			assert.Len(t, res.Tokens, res.Count)
			assert.Equal(t, 16384, res.MaxModelLen)
		})
	}
	assert.Equal(t, len(requests), ref.Prompts(), "chat requests the reference counted")
	text, err := c.TokenizeText(ctx, served.ID, "sshd -t && systemctl reload ssh — ünïcödé")
	require.NoError(t, err)
	assert.Equal(t, text.Count, m.Tokenizer.Count("sshd -t && systemctl reload ssh — ünïcödé"), "/tokenize prompt form and the local count")
	assert.Equal(t, 1, ref.Texts(), "texts the reference tokenized")
}

func TestVLLMClientErrors(t *testing.T) {
	t.Parallel()
	if _, err := budget.NewVLLMClient(budget.VLLMConfig{BaseURL: "localhost:8000"}); err == nil {
		t.Fatal("a relative base URL was accepted")
	}
	c, err := budget.NewVLLMClient(budget.VLLMConfig{BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Models(context.Background()); err == nil {
		t.Fatal("no error from a closed port")
	}
}

// TestVerifyChat: the local qwen3 count agrees with a simulator serving
// qwen3 and disagrees with one whose tokenizer has one added token more
// ("ssh_apply", which the prompt's tool definition holds): a worker started
// with a tokenizer that is not the served model's. A model the server does
// not serve is its HTTP error, not a mismatch.
func TestVerifyChat(t *testing.T) {
	t.Parallel()
	local, err := budget.LoadModel("qwen3")
	if err != nil {
		t.Fatal(err)
	}
	cc, err := budget.NewModelChatCounter(local)
	if err != nil {
		t.Fatal(err)
	}
	req := openai.ChatCompletionRequest{Model: "Qwen/Qwen3-8B", Messages: []openai.ChatCompletionMessage{
		{Role: "system", Content: "Rule: accounts_tmout"},
		{Role: "user", Content: "Set TMOUT=900 in /etc/profile.d/tmout.sh"},
	}, Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "ssh_apply",
		Description: "Run a shell command", Parameters: map[string]any{"type": "object",
			"properties": map[string]any{"command": map[string]any{"type": "string"}}, "required": []string{"command"}}}}}}
	want, err := cc.CountRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	for _, served := range []string{"qwen3", qwen3WithAddedToken(t, "ssh_apply")} {
		t.Run(filepath.Base(served), func(t *testing.T) {
			m, err := budget.LoadModel(served)
			if err != nil {
				t.Fatal(err)
			}
			counter, err := vllmsim.NewBudgetCounter(m)
			if err != nil {
				t.Fatal(err)
			}
			srv, err := vllmsim.New(vllmsim.Config{Model: "Qwen/Qwen3-8B", Counter: counter, Policy: vllmsim.GiveUp(1, "")})
			if err != nil {
				t.Fatal(err)
			}
			url, stop, err := srv.Start(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			c, err := budget.NewVLLMClient(budget.VLLMConfig{BaseURL: url + "/v1"})
			if err != nil {
				t.Fatal(err)
			}
			n, err := c.VerifyChat(context.Background(), cc, req)
			var mm *budget.CountMismatchError
			switch served {
			case "qwen3":
				if err != nil || n != want {
					t.Fatalf("VerifyChat = %d, %v; want %d, nil", n, err, want)
				}
			default:
				if !errors.As(err, &mm) || mm.Local != want || mm.Server == want || mm.Model != "Qwen/Qwen3-8B" {
					t.Fatalf("VerifyChat = %d, %v; want a mismatch with local %d", n, err, want)
				}
				t.Log(err)
			}
			other := req
			other.Model = "nope"
			var he *budget.HTTPError
			if _, err := c.VerifyChat(context.Background(), cc, other); !errors.As(err, &he) || he.Status != 404 || errors.As(err, &mm) {
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
