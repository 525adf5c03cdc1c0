package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/temporaltest"
)

var (
	fleetBenchHosts    = flag.Int("fleet.hosts", 1000, "hosts of BenchmarkFleetNight")
	fleetBenchRules    = flag.Int("fleet.rules", 20, "rules of BenchmarkFleetNight")
	fleetBenchProcs    = flag.Int("fleet.procs", 1, "worker fleet serve processes of BenchmarkFleetNight")
	fleetBenchSlots    = flag.Int("fleet.slots", 4, "--model-slots of each serve process (the cap is procs × slots)")
	fleetBenchParallel = flag.Int("fleet.parallel", 64, "--parallel-hosts of BenchmarkFleetNight's night")
	fleetBenchPerRun   = flag.Int("fleet.perrun", 500, "--hosts-per-run of BenchmarkFleetNight's night")
	fleetBenchServe    = flag.String("fleet.serveflags", "", "extra flags of each `worker fleet serve` (space-separated), e.g. \"--host-conns 100000 --host-idle 24h\"")
	fleetBenchDelay    = flag.Duration("fleet.delay", 50*time.Millisecond, "time each model call takes at the simulator")
	fleetBenchRecipes  = flag.Bool("fleet.recipes", false, "let the night replay recipes (default: --no-recipes, every host asks the model, as the recorded runs)")
)

// BenchmarkFleetNight runs a simulated night on a Temporal dev server with
// -fleet.procs `worker fleet serve` processes (the worker binary, built
// first) on one zone, each with -fleet.slots model slots: -fleet.hosts
// simulated hosts (in this process, over SSH) × -fleet.rules rules of the
// five kinds of the integration test's night, the vLLM simulator behind a
// gauge that makes each call take -fleet.delay and records the most in
// flight. It reports tasks/s, model calls/s, the most model calls in
// flight and each serve process's peak RSS (VmHWM), and fails when a task
// is missing or the cap was exceeded. Recipes are off (--no-recipes: every
// host asks the model, the load the recorded runs measured) unless
// -fleet.recipes. Run it once: -benchtime 1x.
func BenchmarkFleetNight(b *testing.B) {
	nHosts, nRules, procs, slots := *fleetBenchHosts, *fleetBenchRules, *fleetBenchProcs, *fleetBenchSlots
	dir := b.TempDir()
	bin := filepath.Join(dir, "worker")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	addr := temporaltest.Start(b)
	key := writeFleetKey(b, dir)
	rulesFile := writeFleetRules(b, dir, nRules)
	invFile, hosts := fleetHosts(b, dir, nHosts, nRules, nil, false)
	kh := writeKnownHosts(b, filepath.Join(dir, "known_hosts"), hosts)
	g, baseURL := startFleetModel(b, *fleetBenchDelay)

	var serves []*exec.Cmd
	for range procs {
		args := []string{"fleet", "serve", "--temporal", addr, "--zone", "default", "--model-slots", strconv.Itoa(slots),
			"--base-url", baseURL, "--identity", key, "--known-hosts", kh, "--command-timeout", "60s"}
		cmd := exec.Command(bin, append(args, strings.Fields(*fleetBenchServe)...)...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		serves = append(serves, cmd)
		b.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			if b.Failed() {
				b.Logf("serve pid %d:\n%s", cmd.Process.Pid, out.String())
			}
		})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		report := filepath.Join(dir, fmt.Sprintf("night%d.json", i))
		began := time.Now()
		calls0 := g.total.Load()
		args := []string{"fleet", "start", "--temporal", addr, "--sandbox", "off", "--rules", rulesFile, "--inventory", invFile,
			"--id", fmt.Sprintf("bench%d", i), "--base-url", baseURL, "--parallel-hosts", strconv.Itoa(*fleetBenchParallel),
			"--hosts-per-run", strconv.Itoa(*fleetBenchPerRun), "--no-lessons", "--retry-deadline", "5m", "--wait", "--json-report", report}
		if !*fleetBenchRecipes {
			args = append(args, "--no-recipes")
		}
		cmd := exec.Command(bin, args...)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == exitNotFixed) {
			b.Fatalf("fleet start --wait: %v\n%s", err, out)
		}
		wall := time.Since(began)
		var s jsonSummary
		data, err := os.ReadFile(report)
		if err != nil {
			b.Fatal(err)
		}
		if err := json.Unmarshal(data, &s); err != nil {
			b.Fatal(err)
		}
		if len(s.Results) != nHosts*nRules {
			b.Fatalf("%d results, want %d", len(s.Results), nHosts*nRules)
		}
		for _, r := range s.Results {
			if r.Outcome == "interrupted" || r.Outcome == "failed" || r.Outcome == "unreachable" {
				b.Fatalf("%s on %s: %s (%s)", r.Rule, r.Host, r.Outcome, r.Reason)
			}
		}
		calls := g.total.Load() - calls0
		b.ReportMetric(float64(nHosts*nRules)/wall.Seconds(), "tasks/s")
		b.ReportMetric(float64(calls)/wall.Seconds(), "calls/s")
		b.ReportMetric(wall.Seconds(), "s/night")
		b.Logf("night of %d hosts × %d rules on %d serve processes × %d model slots: %s, %d model calls, at most %d in flight (cap %d), cache share %.3f",
			nHosts, nRules, procs, slots, wall.Round(time.Millisecond), calls, g.most.Load(), procs*slots,
			float64(s.Totals.CachedPromptTokens)/float64(max(1, s.Totals.PromptTokens)))
	}
	b.StopTimer()
	if most := g.most.Load(); most > int64(procs*slots) {
		b.Errorf("%d model calls in flight, above the cap %d", most, procs*slots)
	}
	b.ReportMetric(float64(g.most.Load()), "max-in-flight")
	for i, cmd := range serves {
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)); err == nil {
			for _, l := range strings.Split(string(st), "\n") {
				if strings.HasPrefix(l, "VmHWM:") {
					b.Logf("serve %d (pid %d) peak RSS %s", i, cmd.Process.Pid, strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:")))
				}
			}
		}
	}
}
