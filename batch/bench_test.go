package batch_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/journal"
)

var (
	benchRules    = flag.Int("night.rules", 200, "rules of BenchmarkNight")
	benchHosts    = flag.Int("night.hosts", 50, "hosts of BenchmarkNight")
	benchParallel = flag.Int("night.parallel", 16, "parallel hosts of BenchmarkNight")
	benchModels   = flag.Int("night.models", 8, "model concurrency of BenchmarkNight")
	benchNoSync   = flag.Bool("night.nosync", false, "journal with synchronous=NORMAL")
)

// BenchmarkNight is the simulated night of issue 7: 200 rules × 50 hosts
// (in-process SSH hosts, the vLLM simulator over HTTP on loopback), every
// step committed to a journal, in one process. Run it once:
//
//	go test ./batch -run '^$' -bench BenchmarkNight -benchtime 1x
//
// It reports tasks/s, model calls/s, journal steps/s, the process's peak
// RSS (VmHWM) and the share of prompt tokens the simulator's prefix cache
// served.
func BenchmarkNight(b *testing.B) {
	for range b.N {
		n := startNight(b, nightOptions{rules: *benchRules, hosts: *benchHosts})
		j, err := journal.Open(context.Background(), filepath.Join(b.TempDir(), "night.db"), journal.Config{NoSync: *benchNoSync})
		if err != nil {
			b.Fatal(err)
		}
		r := n.runner(b, j, *benchParallel, *benchModels, nil)
		runtime.GC()
		start := time.Now()
		res, err := r.Run(context.Background(), n.spec())
		took := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if res.Finished != res.Total {
			b.Fatalf("%d of %d finished", res.Finished, res.Total)
		}
		var steps int
		if err := j.Close(); err != nil {
			b.Fatal(err)
		}
		j2, err := journal.Open(context.Background(), j.Path(), journal.Config{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		tasks, err := j2.Tasks(context.Background(), res.Run)
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range tasks {
			s, err := j2.Steps(context.Background(), t.ID)
			if err != nil {
				b.Fatal(err)
			}
			steps += len(s)
		}
		j2.Close()
		b.ReportMetric(float64(res.Total)/took.Seconds(), "tasks/s")
		b.ReportMetric(float64(n.calls.calls.Load())/took.Seconds(), "model-calls/s")
		b.ReportMetric(float64(steps)/took.Seconds(), "steps/s")
		b.ReportMetric(took.Seconds(), "run-s")
		b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MB")
		prompt, cached := n.Sim.Stats().PromptTokens()
		b.ReportMetric(100*float64(cached)/float64(max(prompt, 1)), "%prompt-cached")
		b.ReportMetric(float64(prompt)/float64(max(len(n.Sim.Stats().Completions()), 1)), "prompt-tokens/call")
	}
}

// peakRSS is the process's peak resident set size in bytes (Linux).
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return -1
}
