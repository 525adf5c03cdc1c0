package fleet_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/fleet"
	"github.com/nightshift-dev/nightshift/internal/nighttest"
	"github.com/nightshift-dev/nightshift/internal/temporaltest"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/rules"

	"github.com/nightshift-dev/nightshift"
)

// neverRules are rules the simulated model never fixes: every night makes
// the same 5 attempts per rule × host (model call, command, re-check).
func neverRules(n int) []byte {
	var b strings.Builder
	b.WriteString("rules:\n")
	for i := range n {
		id := fmt.Sprintf("r%03d", i*nighttest.Kinds+nighttest.KindNever)
		fmt.Fprintf(&b, "  - {id: %s, title: Never %d, check: \"test %s = ok\", max_attempts: 5}\n", id, i, id)
	}
	return []byte(b.String())
}

const benchHosts, benchRules, benchAttempts = 2, 4, 5

// BenchmarkAttempt measures the wall time per attempt of a night of 2
// hosts × 4 rules × 5 attempts (each: model call to the simulator, one
// command and one re-check over SSH on simulated hosts): "sqlite" is
// `worker run`'s path (package batch, every step committed to a SQLite
// journal), "temporal" the fleet's (a Temporal dev server, one in-process
// worker serving every queue). The difference is the overhead Temporal adds.
func BenchmarkAttempt(b *testing.B) {
	perNight := float64(benchHosts * benchRules * benchAttempts)
	b.Run("sqlite", func(b *testing.B) {
		n := startNight(b, nightOptions{rules: 0, hosts: benchHosts})
		set, err := rules.Parse("never.yaml", neverRules(benchRules))
		if err != nil {
			b.Fatal(err)
		}
		j, err := journal.Open(context.Background(), filepath.Join(b.TempDir(), "j.db"), journal.Config{})
		if err != nil {
			b.Fatal(err)
		}
		defer j.Close()
		r, err := batch.New(batch.Config{Journal: j, Connector: n.Conn, Worker: n.workerConfig(b), ParallelHosts: benchHosts})
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		start := time.Now()
		for b.Loop() {
			if _, err := r.Run(context.Background(), batch.Spec{Name: "bench", Rules: set.Rules(), Hosts: n.Night.Hosts}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(time.Since(start).Nanoseconds())/(float64(b.N)*perNight), "ns/attempt")
	})
	b.Run("temporal", func(b *testing.B) {
		addr := temporaltest.Start(b)
		n := startNight(b, nightOptions{rules: 0, hosts: benchHosts})
		n.Night.RuleFiles = []fleet.RuleFile{{Name: "never.yaml", Data: neverRules(benchRules)}}
		c, err := client.Dial(client.Options{HostPort: addr, Logger: temporaltest.Quiet{}})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- fleet.Serve(ctx, fleet.ServeConfig{Client: c, Activities: n.activities(), ModelSlots: 4,
				Workflows: &fleet.Workflows{LoadModel: func(string) (*servedModel, error) { return n.Model, nil }}})
		}()
		defer func() { cancel(); <-done }()
		i := 0
		b.ResetTimer()
		start := time.Now()
		for b.Loop() {
			i++
			run, err := fleet.Start(context.Background(), c, fmt.Sprintf("bench-%d", i), n.Night)
			if err != nil {
				b.Fatal(err)
			}
			if err := run.Get(context.Background(), nil); err != nil {
				b.Fatal(err)
			}
			res, err := fleet.Fetch(context.Background(), c, fmt.Sprintf("bench-%d", i))
			if err != nil {
				b.Fatal(err)
			}
			if st := fleet.StatusOf(res); st.Finished != benchHosts*benchRules || st.Outcomes[nightshift.RuleNotFixed] != st.Finished {
				b.Fatalf("night %d: %+v", i, st)
			}
		}
		b.ReportMetric(float64(time.Since(start).Nanoseconds())/(float64(b.N)*perNight), "ns/attempt")
	})
}
