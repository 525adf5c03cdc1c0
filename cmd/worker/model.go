package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/retry"
	"github.com/nightshift-dev/nightshift/worker"
)

// modelFlags choose the model server, its tokenizer and the budget.
type modelFlags struct {
	tokenizer, baseURL, model, apiKeyEnv string
	backend                              budget.Backend // --tokenizer-backend
	contextWindow, maxTokens             int
	retryDeadline                        time.Duration
	maxReplyBytes                        int64 // --max-reply-bytes
	// notices receives one line per failed try while the server is
	// waited for (nil: none).
	notices io.Writer
}

// modelServer is the served model a run talks to: its tokenizer, the
// prompt counter, the budget of its window and the client.
type modelServer struct {
	model   *budget.Model
	counter *budget.ChatCounter
	served  budget.ServedModel
	budget  *budget.Budget
	client  *worker.Client
	vllm    *budget.VLLMClient // /v1/models and /tokenize
}

// connectModel loads the tokenizer, asks the server for its model
// (retrying while it is unreachable, up to the deadline) and sizes the
// budget to the model's window unless --context-window gives it. The API
// key is read from the environment variable f.apiKeyEnv names.
func connectModel(ctx context.Context, f modelFlags) (*modelServer, error) {
	model, err := budget.LoadModelWith(f.tokenizer, f.backend)
	if err != nil {
		return nil, &usageError{err}
	}
	counter, err := budget.NewModelChatCounter(model)
	if err != nil {
		return nil, &usageError{err}
	}
	apiKey := os.Getenv(f.apiKeyEnv)
	vllm, err := budget.NewVLLMClient(budget.VLLMConfig{BaseURL: f.baseURL, APIKey: apiKey, HTTPClient: retryingClient()})
	if err != nil {
		return nil, &usageError{err}
	}
	served, err := serverModel(ctx, vllm, f.baseURL, f.model, f.retryDeadline, f.notices)
	if err != nil {
		return nil, err
	}
	window := f.contextWindow
	if window == 0 {
		window = served.MaxModelLen
	}
	if window == 0 {
		return nil, usagef("the server does not report max_model_len for %s; pass --context-window", served.ID)
	}
	b, err := budget.New(budget.Config{ContextWindow: window, Reserve: f.maxTokens})
	if err != nil {
		return nil, &usageError{err}
	}
	client, err := worker.NewClient(worker.ClientConfig{BaseURL: f.baseURL, APIKey: apiKey, MaxReplyBytes: f.maxReplyBytes})
	if err != nil {
		return nil, &usageError{err}
	}
	return &modelServer{model: model, counter: counter, served: served, budget: b, client: client, vllm: vllm}, nil
}

// checkReplyFlags refuses a request timeout or reply cap that is not
// positive.
func checkReplyFlags(requestTimeout time.Duration, maxReplyBytes int64) error {
	switch {
	case requestTimeout <= 0:
		return usagef("--request-timeout %s must be positive", requestTimeout)
	case maxReplyBytes <= 0:
		return usagef("--max-reply-bytes %d must be positive", maxReplyBytes)
	}
	return nil
}

// modelsTimeout bounds one GET /v1/models.
const modelsTimeout = 30 * time.Second

// serverModel reads the served model from /v1/models, retrying while the
// server is unreachable, busy (a 5xx or 429; its Retry-After is honoured
// when c's transport is a retry.Transport) or silent (each try has
// modelsTimeout, or what is left of the deadline when that is less), up to
// the deadline (0: no retries), with one line on notices per failed try.
func serverModel(ctx context.Context, c *budget.VLLMClient, baseURL, name string, deadline time.Duration, notices io.Writer) (budget.ServedModel, error) {
	p := retry.Policy{
		BaseDelay: 500 * time.Millisecond, MaxDelay: 15 * time.Second, Deadline: deadline,
		CheckRetry: func(err error) bool {
			var he *budget.HTTPError
			return !errors.Is(err, budget.ErrNoModel) && !(errors.As(err, &he) && !retry.RetryableStatus(he.Status))
		},
		OnRetry: func(r retry.Retry) { waitNotice(notices, "model server "+baseURL, r.Err.Error(), r.Wait, r.GiveUpAt) },
	}
	if deadline <= 0 {
		p.MaxTries = 1
	}
	var m budget.ServedModel
	start := time.Now()
	err := p.Do(ctx, func(ctx context.Context) error {
		// A server that accepts and never answers is bounded too.
		timeout := modelsTimeout
		if deadline > 0 {
			timeout = max(min(timeout, time.Until(start.Add(deadline))), time.Millisecond)
		}
		tctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		var err error
		m, err = c.Model(tctx, name)
		return err
	})
	var gu *retry.GiveUpError
	switch {
	case err == nil:
		return m, nil
	case errors.As(err, &gu):
		return m, &unreachable{fmt.Errorf("model server %s: %w", baseURL, gu.Err)}
	case ctx.Err() != nil:
		return m, err
	}
	return m, &usageError{err}
}

// retryingClient is the HTTP client of the model server's clients: its
// transport records Retry-After for the retry policy.
func retryingClient() *http.Client {
	return &http.Client{Transport: &retry.Transport{}}
}

// waitNotice prints what the worker waits for: "worker: WHAT: CAUSE;
// retrying in 8s, giving up at 02:14:07".
func waitNotice(w io.Writer, what, cause string, retryIn time.Duration, giveUpAt time.Time) {
	if w == nil {
		return
	}
	fmt.Fprintf(w, "worker: %s: %s; retrying in %s, giving up at %s\n", what, shortCause(cause),
		roundWait(retryIn), giveUpAt.Format(time.TimeOnly))
}

// roundWait rounds a wait for people: to 10 ms under a second (250ms stays
// 250ms), to 100 ms above (a jittered 8.234s is 8.2s).
func roundWait(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

// shortCause names the common network failures plainly; other errors are
// kept whole.
func shortCause(err string) string {
	for _, c := range []string{"connection refused", "connection reset by peer", "no such host", "network is unreachable",
		"no route to host", "i/o timeout", "context deadline exceeded", "EOF"} {
		if strings.Contains(err, c) {
			if c == "context deadline exceeded" || c == "i/o timeout" {
				return "no answer in time (" + c + ")"
			}
			return c
		}
	}
	return err
}

// retryNotices prints a waitNotice for each model call the worker retries.
type retryNotices struct {
	w       io.Writer
	baseURL string
	host    string // "" for the single-host mode
}

func (r retryNotices) Observe(e nightshift.Event) {
	if e.Kind != nightshift.EventRetry {
		return
	}
	what := fmt.Sprintf("rule %s attempt %d: model server %s", e.Rule, e.Attempt, r.baseURL)
	if r.host != "" {
		what = "host " + r.host + ": " + what
	}
	waitNotice(r.w, what, e.Error, e.RetryIn, e.GiveUpAt)
}
