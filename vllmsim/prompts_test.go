package vllmsim_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/vllmsim"
)

// fixedPrompts is a PromptCounter whose counts the test chooses: every chat
// prompt has the same length unless its body holds "refuse" (a template
// error) or "crash" (the counter's own failure). It keeps the bodies it saw.
type fixedPrompts struct {
	mu     sync.Mutex
	n      int
	bodies []string
	agps   []bool
}

func (f *fixedPrompts) EncodeChatRequest(ctx context.Context, body []byte, agp bool) ([]int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bodies, f.agps = append(f.bodies, string(body)), append(f.agps, agp)
	switch {
	case strings.Contains(string(body), "refuse"):
		return nil, fmt.Errorf("%w: refused", vllmsim.ErrTemplate)
	case strings.Contains(string(body), "crash"):
		return nil, errors.New("the reference process died")
	}
	return make([]int, f.n), nil
}

func (f *fixedPrompts) EncodeText(ctx context.Context, text string) ([]int, error) {
	return make([]int, 3*len(text)), nil
}

// TestPromptsReplaceTheCounter: with Config.Prompts the simulator counts,
// rejects and tokenizes prompts with it, from the body as sent.
func TestPromptsReplaceTheCounter(t *testing.T) {
	for _, cache := range []int{0, -1} { // with and without the prefix cache
		t.Run(fmt.Sprintf("cache %d", cache), func(t *testing.T) {
			fp := &fixedPrompts{n: 1000}
			ts := start(t, vllmsim.Config{MaxModelLen: 2048, Prompts: fp, CacheBlocks: cache})
			msgs := []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}
			resp, err := ts.chat(t, openai.ChatCompletionRequest{Model: ts.sim.Model(), Messages: msgs, MaxCompletionTokens: 1048})
			require.NoError(t, err)
			assert.Equal(t, 1000, resp.Usage.PromptTokens)
			require.Len(t, fp.bodies, 1)
			assert.Contains(t, fp.bodies[0], `"max_completion_tokens":1048`, "the body as sent")
			assert.True(t, fp.agps[0])

			// 1000 + 1049 > 2048: rejected by the PromptCounter's count.
			_, err = ts.chat(t, openai.ChatCompletionRequest{Model: ts.sim.Model(), Messages: msgs, MaxCompletionTokens: 1049})
			require.Error(t, err)
			rej := ts.sim.Stats().Rejections()
			require.Len(t, rej, 1)
			assert.Equal(t, 1000, rej[0].PromptTokens)

			status, _ := ts.post(t, "/v1/chat/completions", map[string]any{"model": ts.sim.Model(), "messages": []map[string]string{{"role": "user", "content": "refuse"}}})
			assert.Equal(t, http.StatusBadRequest, status, "a template error")
			status, _ = ts.post(t, "/v1/chat/completions", map[string]any{"model": ts.sim.Model(), "messages": []map[string]string{{"role": "user", "content": "crash"}}})
			assert.Equal(t, http.StatusInternalServerError, status, "the counter's own failure")

			agp := false
			status, body := ts.post(t, "/tokenize", map[string]any{"messages": msgs, "add_generation_prompt": agp})
			require.Equal(t, http.StatusOK, status, "%s", body)
			var tok struct{ Count int }
			require.NoError(t, json.Unmarshal(body, &tok))
			assert.Equal(t, 1000, tok.Count)
			assert.False(t, fp.agps[len(fp.agps)-1], "add_generation_prompt passed on")
			status, body = ts.post(t, "/tokenize", map[string]any{"prompt": "abcd"})
			require.Equal(t, http.StatusOK, status, "%s", body)
			require.NoError(t, json.Unmarshal(body, &tok))
			assert.Equal(t, 12, tok.Count, "the text form")
		})
	}
}
