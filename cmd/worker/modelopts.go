package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/distill"
	"github.com/nightshift-dev/nightshift/memory"
	"github.com/nightshift-dev/nightshift/retry"
	"github.com/nightshift-dev/nightshift/worker"
)

// The --distiller values.
const (
	distillerDeterministic = "deterministic"
	distillerModel         = "model"
)

// checkModelOptions validates --tokenizer-backend and --distiller.
func checkModelOptions(backend, distiller string) (budget.Backend, error) {
	b, err := budget.ParseBackend(backend)
	if err != nil {
		return 0, usagef("--tokenizer-backend: %v", err)
	}
	if !b.Available() {
		return 0, usagef("--tokenizer-backend %s: %v (build with -tags hf_native and libtokenizers.a on the linker path)", b, budget.ErrBackendNotBuilt)
	}
	switch distiller {
	case distillerDeterministic, distillerModel:
		return b, nil
	}
	return 0, usagef("--distiller %q: want %s or %s", distiller, distillerDeterministic, distillerModel)
}

// newDistiller returns the distiller --distiller names: nil (the worker's
// deterministic one), or the model distiller on the run's model server,
// under its own timeout and a line's token cap, falling back to the
// deterministic line (the one the memory would write) on any failure.
func newDistiller(kind string, ms *modelServer) (memory.LineDistiller, error) {
	if kind != distillerModel {
		return nil, nil
	}
	d, err := distill.NewModelDistiller(distill.ModelDistillerConfig{Client: ms.client, Model: ms.served.ID,
		Fallback: distill.New(distill.Config{Counter: ms.model.Tokenizer})})
	if err != nil {
		return nil, &usageError{err}
	}
	return d, nil
}

// countVerifier is the model client of a run with --verify-count: before
// the run's first model call it counts the prompt with the server's
// /tokenize and compares with the local count. When they differ, or the
// server cannot count it (no /tokenize, a 4xx answer), it stops the run
// (stop) and this and every later call fail with that error, which failure
// returns for the run's exit (2). A network failure or a 5xx is returned
// for the worker to retry, and the check is made again at the next call.
type countVerifier struct {
	next worker.ChatModel
	ms   *modelServer
	stop context.CancelFunc

	mu      sync.Mutex
	checked bool
	err     error
}

func newCountVerifier(next worker.ChatModel, ms *modelServer, stop context.CancelFunc) *countVerifier {
	return &countVerifier{next: next, ms: ms, stop: stop}
}

func (v *countVerifier) CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	if err := v.verify(ctx, req); err != nil {
		return openai.ChatCompletionResponse{}, err
	}
	return v.next.CreateChatCompletion(ctx, req)
}

func (v *countVerifier) verify(ctx context.Context, req openai.ChatCompletionRequest) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.checked {
		return v.err
	}
	_, err := v.ms.vllm.VerifyChat(ctx, v.ms.counter, req)
	var he *budget.HTTPError
	switch {
	case err == nil:
		v.checked = true
		return nil
	case errors.As(err, &he) && retry.RetryableStatus(he.Status):
		// The worker retries API errors by their status.
		return &openai.APIError{HTTPStatusCode: he.Status, Message: err.Error()}
	case errors.As(err, &he), errors.As(err, new(*budget.CountMismatchError)):
		v.checked, v.err = true, fmt.Errorf("--verify-count: %w", err)
		v.stop()
		return v.err
	}
	return err
}

// failure returns the check's failure as a usage error (exit 2), nil when
// it passed, did not run, or v is nil (no --verify-count).
func (v *countVerifier) failure() error {
	if v == nil {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.err == nil {
		return nil
	}
	return &usageError{v.err}
}
