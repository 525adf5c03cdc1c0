package batch_test

import (
	"context"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/internal/nighttest"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/vllmsim"
	"github.com/nightshift-dev/nightshift/worker"
)

// night is the simulated night of internal/nighttest with the worker
// configuration `worker run` would use for it.
type night struct {
	*nighttest.Night
	Worker worker.Config
	calls  *nighttest.Model
}

// nightOptions shapes a night.
type nightOptions struct {
	rules, hosts int
	dir          string         // hosts keep their state and exec logs under dir/hosts/NAME
	dieAfter     map[string]int // host name → commands before it stops answering
	policy       vllmsim.Policy // the model's answers; nil means nighttest.Policy
	outputCap    int            // sshexec's cap on each stream; 0 means its default
}

func startNight(t testing.TB, o nightOptions) *night {
	t.Helper()
	n := nighttest.Start(t, nighttest.Options{Rules: o.rules, Hosts: o.hosts, Dir: o.dir, DieAfter: o.dieAfter, Policy: o.policy, OutputCap: o.outputCap})
	// Each call takes at least 2ms, so calls of parallel hosts overlap
	// unless capped.
	n.Client.Delay = 2 * time.Millisecond
	return &night{Night: n, Worker: n.WorkerConfig(t), calls: n.Client}
}

// runner returns a Runner on j for the night.
func (n *night) runner(t testing.TB, j *journal.Journal, parallel, models int, stop <-chan struct{}) *batch.Runner {
	t.Helper()
	r, err := batch.New(batch.Config{Journal: j, Connector: n.Conn, Worker: n.Worker, ParallelHosts: parallel,
		ModelConcurrency: models, Stop: stop})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (n *night) spec() batch.Spec {
	return batch.Spec{Name: "simulated night", Rules: n.Rules, Hosts: n.Inv}
}

func openJournal(t testing.TB, path string) *journal.Journal {
	t.Helper()
	j, err := journal.Open(context.Background(), path, journal.Config{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}
