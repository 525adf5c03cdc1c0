package vllmref_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/internal/vllmref"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// start starts the reference, failing under CI and skipping elsewhere when
// its tools are missing.
func start(t *testing.T) *vllmref.Reference {
	t.Helper()
	r, err := vllmref.Start(context.Background(), vllmref.Config{})
	if errors.Is(err, vllmref.ErrUnavailable) {
		testenv.Unavailable(t, "%v", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	return r
}

// TestServeMatchesTheGoldens: the long-lived processes count every golden
// conversation (testdata/chat, written by the same scripts run as a batch)
// as the golden file says, sent as a request body would carry it.
func TestServeMatchesTheGoldens(t *testing.T) {
	r := start(t)
	dir := filepath.Join("..", "..", "testdata", "chat")
	convs := readLines(t, filepath.Join(dir, "conversations.jsonl"))
	golden := readLines(t, filepath.Join(dir, "qwen3.golden.jsonl"))
	require.Len(t, golden, len(convs))
	ctx := context.Background()
	for i, line := range convs {
		var c struct {
			Messages json.RawMessage `json:"messages"`
			Tools    json.RawMessage `json:"tools,omitempty"`
			Options  struct {
				AddGenerationPrompt bool  `json:"add_generation_prompt"`
				EnableThinking      *bool `json:"enable_thinking"`
			} `json:"options"`
		}
		require.NoError(t, json.Unmarshal(line, &c), "conversation %d", i)
		body := map[string]any{"model": "Qwen/Qwen3-8B", "messages": c.Messages}
		if c.Tools != nil {
			body["tools"] = c.Tools
		}
		if c.Options.EnableThinking != nil {
			body["chat_template_kwargs"] = map[string]any{"enable_thinking": *c.Options.EnableThinking}
		}
		b, err := json.Marshal(body)
		require.NoError(t, err)
		var g struct {
			Tokens int `json:"tokens"`
		}
		require.NoError(t, json.Unmarshal(golden[i], &g), "golden %d", i)
		ids, err := r.EncodeChatRequest(ctx, b, c.Options.AddGenerationPrompt)
		require.NoError(t, err, "conversation %d", i)
		assert.Len(t, ids, g.Tokens, "conversation %d", i)
	}
	assert.Equal(t, len(convs), r.Prompts())
}

// TestRejectsAndText: a request vLLM refuses is a template error; plain
// text is tokenized without special tokens.
func TestRejectsAndText(t *testing.T) {
	r := start(t)
	ctx := context.Background()
	_, err := r.EncodeChatRequest(ctx, []byte(`{"messages":[]}`), true)
	assert.ErrorIs(t, err, vllmsim.ErrTemplate)
	// Qwen's "<|im_start|>" is one special token; "hi" one more.
	ids, err := r.EncodeText(ctx, "<|im_start|>hi")
	require.NoError(t, err)
	assert.Equal(t, []int{151644, 6023}, ids)
	assert.Equal(t, 0, r.Prompts())
	assert.Equal(t, 1, r.Texts())
	r.Close()
	_, err = r.EncodeText(ctx, "x")
	assert.ErrorIs(t, err, vllmref.ErrBroken)
}

// TestCanceledCallKeepsStep: a call whose context ends first returns its
// error (or its answer, if that came first), and the next call gets its own
// answer, not the late one.
func TestCanceledCallKeepsStep(t *testing.T) {
	r := start(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := 0; i < 3; i++ {
		if _, err := r.EncodeChatRequest(ctx, []byte(`{"messages":[{"role":"user","content":"a long one, `+strings.Repeat("x ", 5000)+`"}]}`), true); err != nil {
			require.ErrorIs(t, err, context.Canceled)
		}
	}
	ids, err := r.EncodeText(context.Background(), "<|im_start|>hi")
	require.NoError(t, err)
	assert.Equal(t, []int{151644, 6023}, ids)
	ids, err = r.EncodeChatRequest(context.Background(), []byte(`{"messages":[{"role":"user","content":"hi café"}]}`), true)
	require.NoError(t, err)
	assert.Equal(t, []int{151644, 872, 198, 6023, 51950, 151645, 198, 151644, 77091, 198}, ids)
}

func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	require.NoError(t, sc.Err())
	return out
}
