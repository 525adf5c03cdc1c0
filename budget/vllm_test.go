package budget_test

import (
	"context"
	"encoding/json"
	"errors"
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
