package vllmsim_test

import (
	"sync"
	"testing"

	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

var (
	qwen3Once    sync.Once
	qwen3Counter vllmsim.Counter
	qwen3Err     error
)

// newCounter returns the Counter the tests run with: the real Qwen3
// tokenizer and chat template (served.Offline, "qwen3"), loaded once. The
// golden error bodies hold its counts.
func newCounter(t testing.TB) vllmsim.Counter {
	t.Helper()
	qwen3Once.Do(func() {
		m, err := served.Offline(served.Config{Tokenizer: "qwen3"})
		if err != nil {
			qwen3Err = err
			return
		}
		qwen3Counter = vllmsim.NewModelCounter(m)
	})
	if qwen3Err != nil {
		t.Fatal(qwen3Err)
	}
	return qwen3Counter
}
