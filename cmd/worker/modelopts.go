package main

import (
	"context"
	"fmt"

	"github.com/nightshift-dev/nightshift/distill"
	"github.com/nightshift-dev/nightshift/memory"
	"github.com/nightshift-dev/nightshift/served"
)

// The --distiller values.
const (
	distillerDeterministic = "deterministic"
	distillerModel         = "model"
)

// checkModelOptions validates --tokenizer-backend and --distiller.
func checkModelOptions(backend, distiller string) (served.Backend, error) {
	b, err := served.ParseBackend(backend)
	if err != nil {
		return 0, usagef("--tokenizer-backend: %v", err)
	}
	if !b.Available() {
		return 0, usagef("--tokenizer-backend %s: %v (build with -tags hf_native and libtokenizers.a on the linker path)", b, served.ErrBackendNotBuilt)
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
	d, err := distill.NewModelDistiller(distill.ModelDistillerConfig{Client: ms.client, Model: ms.model.Name(),
		Fallback: distill.New(distill.Config{Counter: ms.model.Tokenizer()})})
	if err != nil {
		return nil, &usageError{err}
	}
	return d, nil
}

// countCheck is the model client of a run with --verify-count: before
// the run's first model call it counts the prompt with the server's
// /tokenize and compares with the local count (served.CountCheck). When
// they differ, or the server cannot count it, it stops the run (stop) and
// every call fails; verifyFailure returns the run's exit (2).
func countCheck(ms *modelServer, stop context.CancelFunc) *served.CountCheck {
	return ms.model.CheckFirstCount(ms.client, func(error) { stop() })
}

// verifyFailure returns the check's failure as a usage error (exit 2), nil
// when it passed, did not run, or c is nil (no --verify-count).
func verifyFailure(c *served.CountCheck) error {
	if c == nil {
		return nil
	}
	if err := c.Err(); err != nil {
		return &usageError{fmt.Errorf("--verify-count: %w", err)}
	}
	return nil
}
