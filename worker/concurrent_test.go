package worker_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/vllmsim"
	"github.com/nightshift-dev/nightshift/worker"
)

// TestConcurrentFixOnOneWorker: the package doc promises that one Worker may
// fix several rules concurrently. Several Fix calls at once on one Worker
// each end as the model says (give_up), every rule end carries the host
// facts, and the host is probed once for all of them. Run under -race, it
// also shows that the shared state of the Worker is guarded.
func TestConcurrentFixOnOneWorker(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{policy: func(string) vllmsim.Policy { return vllmsim.GiveUp(1, "cannot fix this in a test") }})
	w := e.worker(workerOptions{})
	const n = 4
	var wg sync.WaitGroup
	outs := make([]nightshift.Outcome, n)
	errs := make([]error, n)
	for i := range n {
		id := fmt.Sprintf("concurrent_rule_%d", i)
		r := e.rule(fmt.Sprintf("rules:\n  - id: %s\n    check: \"test -f %s/never_%d\"\n", id, e.dir, i), id)
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = w.Fix(context.Background(), r)
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || outs[i].Status != nightshift.RuleGaveUp {
			t.Errorf("rule %d: outcome %+v, err %v; want gave_up", i, outs[i], errs[i])
		}
	}
	probes := 0
	e.mu.Lock()
	for _, r := range e.runs {
		if r.command == worker.ProbeCommand {
			probes++
		}
	}
	e.mu.Unlock()
	if probes != 1 {
		t.Errorf("the host was probed %d times by %d concurrent Fix calls, want once", probes, n)
	}
	ends := e.eventsOf(nightshift.EventRuleEnd)
	if len(ends) != n {
		t.Fatalf("%d rule ends, want %d", len(ends), n)
	}
	for _, ev := range ends {
		if ev.Facts == nil || ev.Facts.OS == "" {
			t.Errorf("rule %s ended without host facts: %+v", ev.Rule, ev.Facts)
		}
	}
}
