package batch

import (
	"context"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/worker"
)

// limiter caps the model calls in flight across every host's worker.
type limiter struct {
	model worker.ChatModel
	slots chan struct{}
}

func newLimiter(m worker.ChatModel, n int) *limiter {
	return &limiter{model: m, slots: make(chan struct{}, n)}
}

// CreateChatCompletion waits for a free slot (or for ctx), then calls the
// model.
func (l *limiter) CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	select {
	case l.slots <- struct{}{}:
	case <-ctx.Done():
		return openai.ChatCompletionResponse{}, ctx.Err()
	}
	defer func() { <-l.slots }()
	return l.model.CreateChatCompletion(ctx, req)
}
