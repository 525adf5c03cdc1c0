package worker

import (
	"context"
	"sync"
	"testing"

	"github.com/nightshift-dev/nightshift"
)

// factsTarget answers the probe at once, without any synchronisation of its
// own, so that the race detector sees what the Worker itself guards.
type factsTarget struct{}

func (factsTarget) Run(context.Context, string) (nightshift.Exec, error) {
	return nightshift.Exec{Stdout: "os=Debian GNU/Linux 12 (bookworm)\npkg=apt-get\ninit=systemd\n"}, nil
}

// TestProbeOnceUnderConcurrentCalls: concurrent probes of one Worker share
// one probe — every caller gets the same facts — and, under -race, the
// Worker's state shows no data race.
func TestProbeOnceUnderConcurrentCalls(t *testing.T) {
	t.Parallel()
	w := &Worker{cfg: Config{Target: factsTarget{}, Probe: factsTarget{}}}
	const n = 8
	got := make([]*nightshift.HostFacts, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := w.probe(context.Background(), "r1")
			if err != nil {
				t.Error(err)
			}
			got[i] = f
		}()
	}
	wg.Wait()
	for i, f := range got {
		if f != got[0] {
			t.Fatalf("caller %d got facts %p, caller 0 %p: the host was probed more than once", i, f, got[0])
		}
	}
	if got[0] == nil || got[0].PackageManager != "apt-get" {
		t.Fatalf("facts %+v", got[0])
	}
}
