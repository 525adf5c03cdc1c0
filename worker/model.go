package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// ChatModel is the one call the worker makes to the model server.
// *openai.Client satisfies it.
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

// retrier calls a ChatModel, retrying 5xx, 429, timeouts and refused or
// dropped connections with capped, jittered exponential backoff until the
// deadline. Retries are not attempts.
type retrier struct {
	model          ChatModel
	deadline       time.Duration
	baseDelay      time.Duration
	maxDelay       time.Duration
	requestTimeout time.Duration
	onRetry        func(try int, delay time.Duration, err error, giveUpAt time.Time)
	sleep          func(ctx context.Context, d time.Duration) error
}

func (r *retrier) complete(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	start := time.Now()
	delay := r.baseDelay
	for try := 1; ; try++ {
		rctx, cancel := context.WithTimeout(ctx, r.requestTimeout)
		resp, err := r.model.CreateChatCompletion(rctx, req)
		timedOut := rctx.Err() != nil && ctx.Err() == nil
		cancel()
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return resp, ctx.Err()
		}
		if cl := parseContextLength(err); cl != nil {
			return resp, cl
		}
		if !timedOut && !retryable(err) {
			return resp, err
		}
		if time.Since(start)+delay > r.deadline {
			return resp, &UnreachableError{Tries: try, Since: time.Since(start), Err: err}
		}
		d := delay/2 + rand.N(delay/2+1) // jitter in [delay/2, delay]
		if r.onRetry != nil {
			r.onRetry(try, d, err, start.Add(r.deadline))
		}
		if err := r.sleep(ctx, d); err != nil {
			return resp, err
		}
		delay = min(delay*2, r.maxDelay)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryable reports whether err is worth retrying: a 5xx or 429 answer, a
// refused, reset or dropped connection, or a network timeout.
func retryable(err error) bool {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return apiErr.HTTPStatusCode >= 500 || apiErr.HTTPStatusCode == 429
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		if reqErr.HTTPStatusCode != 0 {
			return reqErr.HTTPStatusCode >= 500 || reqErr.HTTPStatusCode == 429
		}
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr)
}
