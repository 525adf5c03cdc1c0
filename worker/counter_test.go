package worker_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/memory"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// countingCounter is a prompt counter other than *budget.ChatCounter: it
// counts with inner and remembers how often it was asked.
type countingCounter struct {
	inner memory.PromptCounter
	calls atomic.Int64
}

func (c *countingCounter) Count(messages []openai.ChatCompletionMessage, tools []openai.Tool) (budget.PromptCount, error) {
	c.calls.Add(1)
	return c.inner.Count(messages, tools)
}

// TestAnyPromptCounter: Config.Counter takes any memory.PromptCounter, and
// the worker counts its prompts with the one it is given.
func TestAnyPromptCounter(t *testing.T) {
	e := newEnv(t, envOptions{policy: func(string) vllmsim.Policy { return vllmsim.GiveUp(2, "cannot fix this in a test") }})
	c := &countingCounter{inner: e.counter}
	r := e.rule(fmt.Sprintf("rules:\n  - id: accounts_tmout\n    check: \"test -f %s/never\"\n", e.dir), "accounts_tmout")
	out, err := e.worker(workerOptions{counter: c}).Fix(context.Background(), r)
	if err != nil || out.Status != nightshift.RuleGaveUp {
		t.Fatalf("outcome %+v, err %v; want gave_up", out, err)
	}
	if n := c.calls.Load(); n < int64(out.ModelCalls) {
		t.Errorf("the plugged-in counter counted %d prompts for %d model calls", n, out.ModelCalls)
	}
}
