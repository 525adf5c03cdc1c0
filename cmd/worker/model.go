package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/retry"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/worker"
)

// modelFlags choose the model server, its tokenizer and the budget.
type modelFlags struct {
	tokenizer, baseURL, model, apiKeyEnv string
	backend                              served.Backend // --tokenizer-backend
	contextWindow, maxTokens             int
	retryDeadline                        time.Duration
	maxReplyBytes                        int64 // --max-reply-bytes
	// notices receives one line per failed try while the server is
	// waited for (nil: none).
	notices io.Writer
}

// modelServer is the served model a run talks to and the client its
// worker calls it with.
type modelServer struct {
	model  *served.Model
	client *worker.Client
}

// connectModel connects to the served model (retrying while the server is
// unreachable, up to the retry deadline; see connect), sized to its window
// unless --context-window gives it, and makes the worker's client. The API
// key is read from the environment variable f.apiKeyEnv names.
func connectModel(ctx context.Context, f modelFlags) (*modelServer, error) {
	apiKey := os.Getenv(f.apiKeyEnv)
	m, err := connect(ctx, served.Config{BaseURL: f.baseURL, APIKey: apiKey, Name: f.model, Tokenizer: f.tokenizer, Backend: f.backend,
		Budget: budget.Config{ContextWindow: f.contextWindow, Reserve: f.maxTokens}, Wait: f.retryDeadline}, f.notices)
	if err != nil {
		return nil, err
	}
	client, err := worker.NewClient(worker.ClientConfig{BaseURL: f.baseURL, APIKey: apiKey, MaxReplyBytes: f.maxReplyBytes})
	if err != nil {
		return nil, &usageError{err}
	}
	return &modelServer{model: m, client: client}, nil
}

// connect is served.Connect with a line on notices per failed try of
// /v1/models (the wait is cfg.Wait; 0: no retries) and the CLI's errors:
// a server still unreachable or busy at the end is unreachable (exit 3);
// a bad tokenizer, budget or base URL, a server that does not list the
// model or answers with an error are usage errors (exit 2).
func connect(ctx context.Context, cfg served.Config, notices io.Writer) (*served.Model, error) {
	cfg.BaseURL = cmp.Or(cfg.BaseURL, served.DefaultBaseURL)
	cfg.OnRetry = func(r retry.Retry) {
		waitNotice(notices, "model server "+cfg.BaseURL, r.Err.Error(), r.Wait, r.GiveUpAt)
	}
	m, err := served.Connect(ctx, cfg)
	var ue *served.UnreachableError
	switch {
	case err == nil:
		return m, nil
	case errors.As(err, &ue):
		return nil, &unreachable{err}
	case errors.Is(err, served.ErrNoWindow):
		return nil, usagef("%v; pass --context-window", err)
	case ctx.Err() != nil:
		return nil, err
	}
	return nil, &usageError{err}
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
