package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/retry"
	"github.com/nightshift-dev/nightshift/served"
)

// ChatModel is the one call the worker makes to the model server.
// *openai.Client satisfies it; give its HTTP client a retry.Transport so that
// retries wait as long as the server's Retry-After asks.
type ChatModel interface {
	CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)
}

// UnreachableError reports that the model server stayed unreachable, or
// answered only with retryable errors (5xx, 429, answers that cannot be
// used: see ReplyError), past the retry deadline.
type UnreachableError struct {
	Tries int
	Since time.Duration
	Err   error // the last error
	// Fault is the last unusable answer of an earlier try when the last
	// try itself ended otherwise (typically cut short by the retry
	// deadline while a huge or dripping answer was still arriving); nil
	// when Err says it all.
	Fault *ReplyError
}

func (e *UnreachableError) Error() string {
	var re *ReplyError
	switch {
	case e.Fault != nil:
		return fmt.Sprintf("model server gave no usable reply after %d tries over %s: %v (last try: %v)", e.Tries, e.Since.Round(time.Millisecond), e.Fault, e.Err)
	case errors.As(e.Err, &re):
		return fmt.Sprintf("model server gave no usable reply after %d tries over %s: %v", e.Tries, e.Since.Round(time.Millisecond), e.Err)
	}
	return fmt.Sprintf("model server unreachable after %d tries over %s: %v", e.Tries, e.Since.Round(time.Millisecond), e.Err)
}

// Unwrap returns the last error and, when set, the earlier unusable answer,
// so that errors.As finds a *ReplyError either way.
func (e *UnreachableError) Unwrap() []error {
	if e.Fault != nil {
		return []error{e.Err, e.Fault}
	}
	return []error{e.Err}
}

// complete calls the model under the worker's retry policy: 5xx, 429,
// timeouts, refused or dropped connections and answers that cannot be used
// (a *ReplyError: too large, truncated, not JSON, not a chat completion, no
// choices) are retried with capped, jittered exponential backoff (or the
// server's Retry-After, when the client's transport is a retry.Transport)
// until the deadline. Each try has its own timeout: the request timeout,
// or what is left of the retry deadline when that is less, so that a server
// that accepts and never answers, or drips its answer, is bounded by both.
// Retries are not attempts. A context-length rejection is returned at once
// as a *served.ContextLengthError.
func complete(ctx context.Context, model ChatModel, req openai.ChatCompletionRequest, requestTimeout time.Duration, p retry.Policy) (openai.ChatCompletionResponse, error) {
	start := time.Now()
	p.CheckRetry = func(err error) bool {
		var to *tryTimeout
		return errors.As(err, &to) || retryable(err)
	}
	var resp openai.ChatCompletionResponse
	var fault *ReplyError // the last unusable answer of any try
	err := p.Do(ctx, func(ctx context.Context) error {
		timeout, bound := requestTimeout, "the request timeout"
		if p.Deadline > 0 {
			if left := time.Until(start.Add(p.Deadline)); left < timeout {
				timeout, bound = max(left, time.Millisecond), "the retry deadline"
			}
		}
		rctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		var err error
		resp, err = model.CreateChatCompletion(rctx, req)
		if err == nil {
			err = CheckReply(resp)
		}
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return err
		}
		err = classify(err, nil)
		if cl := served.ParseContextLength(err); cl != nil {
			return cl
		}
		if rctx.Err() != nil {
			// What the client made of the cut (a truncated body) is not
			// the server's fault: the time ran out.
			return &tryTimeout{err: err, after: timeout, bound: bound}
		}
		var re *ReplyError
		if errors.As(err, &re) {
			fault = re
		}
		return err
	})
	var gu *retry.GiveUpError
	if errors.As(err, &gu) {
		ue := &UnreachableError{Tries: gu.Tries, Since: time.Since(start), Err: gu.Err}
		var re *ReplyError
		if to := (*tryTimeout)(nil); errors.As(gu.Err, &to) || !errors.As(gu.Err, &re) {
			ue.Fault = fault
		}
		return resp, ue
	}
	return resp, err // nil, ctx.Err(), or an error not worth retrying
}

// tryTimeout marks a try that ran out of its time, whatever error the
// client made of it: always worth another try.
type tryTimeout struct {
	err   error
	after time.Duration
	bound string // what ended it: the request timeout or the retry deadline
}

func (e *tryTimeout) Error() string {
	return fmt.Sprintf("no complete answer in %s (%s)", e.after.Round(time.Millisecond), e.bound)
}
func (e *tryTimeout) Unwrap() error { return e.err }

// retryable reports whether err is worth retrying: a 5xx or 429 answer, an
// answer that cannot be used (*ReplyError), a refused, reset or dropped
// connection, or a network timeout.
func retryable(err error) bool {
	var re *ReplyError
	if errors.As(err, &re) {
		return true
	}
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
