package vllmsim_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/vllmsim"
)

// BenchmarkChatCompletion measures one non-streaming chat completion served
// in-process (handler only, no network): decode, count, validate, policy,
// render, parse, encode. The conversation has 20 turns of stubborn output.
// "fits": a one-line command, max_tokens absent; "truncated": a 400-line
// heredoc cut at max_tokens 64.
func BenchmarkChatCompletion(b *testing.B) {
	b.Run("fits", func(b *testing.B) {
		benchChat(b, vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply("journalctl --no-pager -n 2000", "")}}, 0)
	})
	heredoc := vllmsim.Stubborn(vllmsim.StubbornConfig{}).Next(vllmsim.Conversation{Attempt: 1})
	for a := 1; len(heredoc.Text) == 0; a++ { // find the heredoc answer
		heredoc = vllmsim.Stubborn(vllmsim.StubbornConfig{}).Next(vllmsim.Conversation{Attempt: a})
	}
	b.Run("truncated", func(b *testing.B) { benchChat(b, heredoc, 64) })
	// The same with a counter that costs nothing: the simulator's own
	// overhead (JSON, policy, rendering, parsing, truncation search).
	b.Run("fits-freecounter", func(b *testing.B) {
		benchChatWith(b, freeCounter{}, vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply("journalctl --no-pager -n 2000", "")}}, 0)
	})
	b.Run("truncated-freecounter", func(b *testing.B) { benchChatWith(b, freeCounter{}, heredoc, 64) })
}

// freeCounter counts a token per 4 bytes without looking at the text.
type freeCounter struct{}

func (freeCounter) CountChat(req openai.ChatCompletionRequest) (int, error) { return 100, nil }
func (freeCounter) EncodeChat(openai.ChatCompletionRequest, bool) ([]int, error) {
	return make([]int, 100), nil
}
func (freeCounter) Encode(s string) []int { return make([]int, len(s)/4) }
func (freeCounter) Count(s string) int    { return len(s) / 4 }

func benchChat(b *testing.B, answer vllmsim.Generation, maxTokens int) {
	benchChatWith(b, newCounter(b), answer, maxTokens)
}

func benchChatWith(b *testing.B, c vllmsim.Counter, answer vllmsim.Generation, maxTokens int) {
	sim, err := vllmsim.New(vllmsim.Config{Counter: c, Policy: vllmsim.Script(answer)})
	if err != nil {
		b.Fatal(err)
	}
	msgs := baseMessages("sshd_disable_root_login")
	for i := range 20 {
		msgs = append(msgs,
			openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c", Type: "function", Function: openai.FunctionCall{Name: "ssh_apply", Arguments: `{"command": "journalctl --no-pager -n 2000"}`}}}},
			openai.ChatCompletionMessage{Role: "tool", ToolCallID: "c", Content: string(bytes.Repeat([]byte("Jun 01 12:00:00 host sshd[42]: log line\n"), 10+i))})
	}
	body, err := json.Marshal(openai.ChatCompletionRequest{Model: sim.Model(), Messages: msgs, Tools: workerTools(), MaxCompletionTokens: maxTokens})
	if err != nil {
		b.Fatal(err)
	}
	h := sim.Handler()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body)))
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
		sim.ResetStats()
	}
}
