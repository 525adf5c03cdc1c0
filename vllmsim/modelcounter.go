package vllmsim

import (
	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/served"
)

// modelCounter is the Counter backed by package served: the model's real
// tokenizer and its chat template rendered as vLLM renders it.
type modelCounter struct {
	chat *served.ChatCounter
	tok  served.Tokenizer
}

// NewModelCounter returns a Counter that counts exactly as vLLM would for
// the given model (for example one from served.Offline).
func NewModelCounter(m *served.Model) Counter {
	return modelCounter{chat: m.Chat(), tok: m.Tokenizer()}
}

func (b modelCounter) CountChat(req openai.ChatCompletionRequest) (int, error) {
	return b.chat.CountRequest(req)
}

func (b modelCounter) EncodeChat(req openai.ChatCompletionRequest, addGenerationPrompt bool) ([]int, error) {
	return b.chat.EncodeChat(req, addGenerationPrompt)
}

func (b modelCounter) Encode(text string) []int { return b.tok.Encode(text) }

func (b modelCounter) Count(text string) int { return b.tok.Count(text) }
