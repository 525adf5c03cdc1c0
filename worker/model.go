package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/retry"
)

// ChatModel is the one call the worker makes to the model server.
// *openai.Client satisfies it; give its HTTP client a retry.Transport so that
// retries wait as long as the server's Retry-After asks.
type ChatModel interface {
	CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)
}

// UnreachableError reports that the model server stayed unreachable, or
// answered only with retryable errors, past the retry deadline.
type UnreachableError struct {
	Tries int
	Since time.Duration
	Err   error // the last error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("model server unreachable after %d tries over %s: %v", e.Tries, e.Since.Round(time.Millisecond), e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// complete calls the model under the worker's retry policy: 5xx, 429,
// timeouts and refused or dropped connections are retried with capped,
// jittered exponential backoff (or the server's Retry-After, when the
// client's transport is a retry.Transport) until the deadline; each try has
// its own request timeout. Retries are not attempts. A context-length
// rejection is returned at once as a *ContextLengthError.
func complete(ctx context.Context, model ChatModel, req openai.ChatCompletionRequest, requestTimeout time.Duration, p retry.Policy) (openai.ChatCompletionResponse, error) {
	start := time.Now()
	p.CheckRetry = func(err error) bool {
		var to *tryTimeout
		return errors.As(err, &to) || retryable(err)
	}
	var resp openai.ChatCompletionResponse
	err := p.Do(ctx, func(ctx context.Context) error {
		rctx, cancel := context.WithTimeout(ctx, requestTimeout)
		defer cancel()
		var err error
		resp, err = model.CreateChatCompletion(rctx, req)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return err
		}
		if cl := parseContextLength(err); cl != nil {
			return cl
		}
		if rctx.Err() != nil {
			return &tryTimeout{err}
		}
		return err
	})
	var gu *retry.GiveUpError
	if errors.As(err, &gu) {
		last := gu.Err
		if to, ok := last.(*tryTimeout); ok {
			last = to.err
		}
		return resp, &UnreachableError{Tries: gu.Tries, Since: time.Since(start), Err: last}
	}
	return resp, err // nil, ctx.Err(), or an error not worth retrying
}

// tryTimeout marks a try that ran out of its request timeout, whatever
// error the client made of it: always worth another try.
type tryTimeout struct{ err error }

func (e *tryTimeout) Error() string { return e.err.Error() }
func (e *tryTimeout) Unwrap() error { return e.err }

// retryable reports whether err is worth retrying: a 5xx or 429 answer, a
// refused, reset or dropped connection, or a network timeout.
func retryable(err error) bool {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return retry.RetryableStatus(apiErr.HTTPStatusCode)
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		if reqErr.HTTPStatusCode != 0 {
			return retry.RetryableStatus(reqErr.HTTPStatusCode)
		}
	}
	return retry.NetworkError(err)
}
