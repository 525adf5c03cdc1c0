package vllmsim

import (
	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
)

// budgetCounter is the Counter backed by package budget: the model's real
// tokenizer and its chat template rendered as vLLM renders it.
type budgetCounter struct {
	chat *budget.ChatCounter
	tok  budget.Tokenizer
}

// NewBudgetCounter returns a Counter that counts exactly as vLLM would for
// the given model (for example budget.LoadModel("qwen3")).
func NewBudgetCounter(m *budget.Model) (Counter, error) {
	c, err := budget.NewModelChatCounter(m)
	if err != nil {
		return nil, err
	}
	return budgetCounter{chat: c, tok: m.Tokenizer}, nil
}

func (b budgetCounter) CountChat(req openai.ChatCompletionRequest) (int, error) {
	return b.chat.CountRequest(req)
}

func (b budgetCounter) EncodeChat(req openai.ChatCompletionRequest, addGenerationPrompt bool) ([]int, error) {
	return b.chat.EncodeChat(req, addGenerationPrompt)
}

func (b budgetCounter) Encode(text string) []int { return b.tok.Encode(text) }

func (b budgetCounter) Count(text string) int { return b.tok.Count(text) }
