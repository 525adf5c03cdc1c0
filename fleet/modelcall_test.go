package fleet

import (
	"context"
	"errors"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"go.temporal.io/sdk/temporal"

	"github.com/nightshift-dev/nightshift/worker"
)

// answer is a model that answers resp, err.
type answer struct {
	resp openai.ChatCompletionResponse
	err  error
}

func (a answer) CreateChatCompletion(context.Context, openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	return a.resp, a.err
}

// TestModelCallRetriesUnusableAnswers: an answer without choices, or one
// worker.Client could not use, fails the model-call activity as retryable
// (Temporal retries it within the retry deadline), never reaching the
// workflow as a reply; a 400 is not retried.
func TestModelCallRetriesUnusableAnswers(t *testing.T) {
	tests := []struct {
		name      string
		model     answer
		retryable bool
	}{
		{"empty choices", answer{resp: openai.ChatCompletionResponse{ID: "c1", Object: "chat.completion"}}, true},
		{"not JSON", answer{err: &worker.ReplyError{Fault: worker.ReplyNotJSON}}, true},
		{"too large", answer{err: &worker.ReplyError{Fault: worker.ReplyTooLarge}}, true},
		{"bad request", answer{err: &openai.APIError{HTTPStatusCode: 400, Message: "bad"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &Activities{Model: tt.model}
			_, err := a.modelCall(context.Background(), modelRequest{})
			var ae *temporal.ApplicationError
			assert.Error(t, err)
			assert.Equal(t, !tt.retryable, errors.As(err, &ae) && ae.NonRetryable(), "%v", err)
		})
	}
}

// TestModelCallTimeout: a model call activity is bounded by the night's
// request timeout, and by its retry deadline when that is less.
func TestModelCallTimeout(t *testing.T) {
	for _, tt := range []struct {
		n    Night
		want time.Duration
	}{
		{Night{}, worker.DefaultRequestTimeout},
		{Night{RequestTimeout: 30 * time.Second, RetryDeadline: time.Hour}, 30 * time.Second},
		{Night{RequestTimeout: time.Hour, RetryDeadline: 20 * time.Second}, 20 * time.Second},
	} {
		assert.Equal(t, tt.want, modelOptions(tt.n).StartToCloseTimeout, "%+v", tt.n)
	}
}
