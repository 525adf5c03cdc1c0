package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/simhost"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

var (
	stopBenchHosts = flag.Int("stop.hosts", 100000, "hosts of BenchmarkStopLargeNight's inventory")
	stopBenchRules = flag.Int("stop.rules", 20, "rules of BenchmarkStopLargeNight")
	stopBenchAfter = flag.Duration("stop.after", 20*time.Second, "how long BenchmarkStopLargeNight's night runs before its SIGINT")
)

// BenchmarkStopLargeNight stops a very large night (issue 21 item 14):
// `worker run` in a child process over an inventory of -stop.hosts hosts
// (every one an alias of one in-process simulated host) × -stop.rules
// rules, the vLLM simulator in this process, SIGINT after -stop.after.
// Run it once:
//
//	go test ./cmd/worker -run '^$' -bench BenchmarkStopLargeNight -benchtime 1x
//
// It reports the child's RSS just before the signal (rss-before-MB, from
// /proc), its peak RSS over its life (peak-rss-MB, getrusage), how long the
// stop took to the exit (stop-s), and the rules × hosts finished.
func BenchmarkStopLargeNight(b *testing.B) {
	for range b.N {
		stopLargeNight(b)
	}
}

func stopLargeNight(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	key := filepath.Join(dir, "id_ed25519")
	if err := simhost.WriteKey(key, "stop bench"); err != nil {
		b.Fatal(err)
	}
	h, err := simhost.Start(ctx, simhost.Config{Name: "sim", AuthorizedKey: simhost.KeyFromSeed("stop bench").PublicKey(),
		State: map[string]string{}})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	var rulesYAML strings.Builder
	rulesYAML.WriteString("rules:\n")
	for i := range *stopBenchRules {
		fmt.Fprintf(&rulesYAML, "  - {id: r%02d, title: Rule %d, check: \"test r%02d = ok\", max_attempts: 3}\n", i, i, i)
	}
	files := map[string]string{
		"rules.yaml":  rulesYAML.String(),
		"hosts.ini":   fmt.Sprintf("web[%06d:%06d] ansible_host=127.0.0.1 ansible_port=%d ansible_user=root\n", 0, *stopBenchHosts-1, h.Port),
		"known_hosts": h.KnownHostsLine() + "\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	m, err := served.Offline(served.Config{Tokenizer: "qwen3"})
	if err != nil {
		b.Fatal(err)
	}
	counter := vllmsim.NewModelCounter(m)
	srv, err := vllmsim.New(vllmsim.Config{Counter: counter, Policy: vllmsim.Eventual(vllmsim.EventualConfig{FixAt: 2, WrongFixes: []string{"echo attempt %d"}})})
	if err != nil {
		b.Fatal(err)
	}
	url, stop, err := srv.Start(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	j := filepath.Join(dir, "night.db")
	args := []string{"run", "--rules", filepath.Join(dir, "rules.yaml"), "--inventory", filepath.Join(dir, "hosts.ini"), "--journal", j,
		"--identity", key, "--known-hosts", filepath.Join(dir, "known_hosts"), "--base-url", url + "/v1", "--no-progress", "--no-lessons",
		"--parallel-hosts", "8", "--model-concurrency", "4", "--json-report", filepath.Join(dir, "night.json"), "--sandbox", "off"}
	b.ResetTimer()
	cmd, out := startWrapped(b, nil, args)
	time.Sleep(*stopBenchAfter)
	before := vmRSS(cmd.Process.Pid)
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		b.Fatal(err)
	}
	cmd.Wait()
	took := time.Since(start)
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if ru == nil {
		b.Fatal("no rusage")
	}
	b.ReportMetric(float64(before)/1024, "rss-before-MB")
	b.ReportMetric(float64(ru.Maxrss)/1024, "peak-rss-MB")
	b.ReportMetric(took.Seconds(), "stop-s")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	b.Logf("exit %d; last lines:\n%s", cmd.ProcessState.ExitCode(), strings.Join(lines[max(0, len(lines)-4):], "\n"))
}

// vmRSS is a process's resident set in KiB (/proc/PID/status VmRSS).
func vmRSS(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}
