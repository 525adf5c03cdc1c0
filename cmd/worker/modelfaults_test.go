package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/internal/faultserver"
	"github.com/nightshift-dev/nightshift/internal/simhost"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"
	"github.com/nightshift-dev/nightshift/worker"
)

// hugeNight is a night of one rule on one simulated host (it executes
// nothing on this machine) whose model server answers the first `huge`
// chat completions with a 50 MiB reply, chunked, then as vLLM does; the
// simulator fixes the rule at the first attempt. It returns `worker run`'s
// arguments and the journal's path.
func hugeNight(tb testing.TB, huge int) ([]string, string) {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	key := filepath.Join(dir, "id_ed25519")
	require.NoError(tb, simhost.WriteKey(key, "huge client"))
	h, err := simhost.Start(ctx, simhost.Config{Name: "web1", AuthorizedKey: simhost.KeyFromSeed("huge client").PublicKey()})
	require.NoError(tb, err)
	tb.Cleanup(func() { h.Close() })
	files := map[string]string{
		"hosts.yaml":  fmt.Sprintf("hosts:\n  - host: web1\n    address: 127.0.0.1\n    port: %d\n    user: root\n", h.Port),
		"known_hosts": h.KnownHostsLine() + "\n",
		"rules.yaml":  "rules:\n  - id: a\n    title: Rule a\n    check: \"test a = yes\"\n",
	}
	for name, data := range files {
		require.NoError(tb, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600))
	}
	m, err := served.Offline(served.Config{Tokenizer: "qwen3"})
	require.NoError(tb, err)
	counter := vllmsim.NewModelCounter(m)
	sim, err := vllmsim.New(vllmsim.Config{Counter: counter,
		Policy: vllmsim.Eventual(vllmsim.EventualConfig{FixAt: 1, Fixes: map[string]string{"a": "set a yes"}})})
	require.NoError(tb, err)
	var faults []faultserver.Fault
	if huge > 0 {
		faults = []faultserver.Fault{{Kind: faultserver.Huge, Times: huge}}
	}
	s, err := faultserver.New(faultserver.Config{Next: sim.Handler(), Faults: faults, HugeBytes: 50 << 20})
	require.NoError(tb, err)
	url, err := s.Start(ctx)
	require.NoError(tb, err)
	tb.Cleanup(func() { s.Close() })
	j := filepath.Join(dir, "night.db")
	return []string{"run", "--rules", filepath.Join(dir, "rules.yaml"), "--inventory", filepath.Join(dir, "hosts.yaml"),
		"--journal", j, "--identity", key, "--known-hosts", filepath.Join(dir, "known_hosts"), "--base-url", url + "/v1",
		"--no-progress", "--sandbox", "off"}, j
}

// TestHugeReplyNotStored: a 50 MiB reply is refused at the cap (4 MiB),
// retried as a server fault, and not stored in the journal: the journal's
// files stay smaller than the cap; the rule is fixed by the next answer.
// (Before: the reply was read whole and stored, 52 MB in the journal.)
func TestHugeReplyNotStored(t *testing.T) {
	t.Parallel()
	args, j := hugeNight(t, 2)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, nil, &stdout, &stderr)
	require.NoError(t, err, "stderr:\n%s", stderr.String())
	assert.Contains(t, stdout.String(), "fixed  1")
	assert.Equal(t, 2, strings.Count(stderr.String(), "reply too large: the body runs past the cap of 4194304 bytes; retrying in"), "%s", stderr.String())
	var size int64
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(j + suffix); err == nil {
			size += fi.Size()
		}
	}
	assert.Less(t, size, int64(worker.DefaultMaxReplyBytes), "journal files")

	// The journal has both failed calls, then the call that was answered.
	jr, err := journal.Open(context.Background(), j, journal.Config{ReadOnly: true})
	require.NoError(t, err)
	defer jr.Close()
	tasks, err := jr.Tasks(context.Background(), 1)
	require.NoError(t, err)
	require.Len(t, tasks, 1)
	steps, err := jr.Steps(context.Background(), tasks[0].ID)
	require.NoError(t, err)
	var calls []string
	for _, s := range steps {
		if s.ModelCall != nil {
			calls = append(calls, s.ModelCall.Error)
		}
	}
	want := "reply too large: the body runs past the cap of 4194304 bytes"
	assert.Equal(t, []string{want, want, ""}, calls)
}

// BenchmarkHugeReply reports the peak RSS of a `worker run` process (the
// test binary as the CLI, in a child process) whose model server answers
// its first call with a 50 MiB reply, beside the same night without it.
// Recorded in docs/benchmarks.md.
func BenchmarkHugeReply(b *testing.B) {
	for _, tt := range []struct {
		name string
		huge int
	}{{"normal", 0}, {"50MiB", 1}} {
		b.Run(tt.name, func(b *testing.B) {
			var peak int64
			for range b.N {
				args, _ := hugeNight(b, tt.huge)
				cmd, out := startCLI(b, args)
				if err := cmd.Wait(); err != nil {
					b.Fatalf("worker run: %v\n%s", err, out)
				}
				if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
					peak = max(peak, ru.Maxrss) // KiB on Linux
				}
			}
			b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
		})
	}
}
