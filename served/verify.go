package served

import (
	"context"
	"errors"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/retry"
)

// ChatCompleter makes chat completion calls; go-openai's *openai.Client and
// the worker's model client satisfy it.
type ChatCompleter interface {
	CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)
}

// CountCheck is a ChatCompleter that, before the first call it passes on,
// counts that call's prompt here and with the server's /tokenize (Verify).
// When the counts differ, or the server cannot count (no /tokenize, a 4xx
// answer), the check has failed: onFail is called once, and this and every
// later call fail with that error (Err returns it). A network failure or a
// 5xx is returned as an *openai.APIError with the answer's status, for the
// caller's retry policy, and the check is made again at the next call.
// Safe for concurrent use: calls wait for one check.
type CountCheck struct {
	next   ChatCompleter
	m      *Model
	onFail func(error)

	mu      sync.Mutex
	checked bool
	err     error
}

// CheckFirstCount returns a CountCheck in front of next. onFail may be nil.
func (m *Model) CheckFirstCount(next ChatCompleter, onFail func(error)) *CountCheck {
	return &CountCheck{next: next, m: m, onFail: onFail}
}

// CreateChatCompletion checks the first prompt's count, then calls next.
func (v *CountCheck) CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	if err := v.verify(ctx, req); err != nil {
		return openai.ChatCompletionResponse{}, err
	}
	return v.next.CreateChatCompletion(ctx, req)
}

func (v *CountCheck) verify(ctx context.Context, req openai.ChatCompletionRequest) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.checked {
		return v.err
	}
	_, err := v.m.Verify(ctx, req)
	var he *HTTPError
	switch {
	case err == nil:
		v.checked = true
		return nil
	case errors.As(err, &he) && retry.RetryableStatus(he.Status):
		// Callers retry API errors by their status.
		return &openai.APIError{HTTPStatusCode: he.Status, Message: err.Error()}
	case errors.As(err, &he), errors.As(err, new(*CountMismatchError)), errors.Is(err, ErrOffline):
		v.checked, v.err = true, err
		if v.onFail != nil {
			v.onFail(err)
		}
		return err
	}
	return err
}

// Err returns the check's failure: nil when it passed, has not been made,
// or could not be made yet.
func (v *CountCheck) Err() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.err
}
