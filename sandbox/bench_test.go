package sandbox_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/safety"
	"github.com/nightshift-dev/nightshift/sandbox"
)

// BenchmarkOneFileChange measures, on the disposable Debian 12 target, a
// command that changes one file (sed -i on a two-line file under /srv) run
// directly over the SSH connection ("direct") and through the sandbox:
// Try, JudgeEffects and Commit ("sandbox"), each iteration a new value so
// every commit changes the file. The difference is the sandbox's overhead
// per command. Besides the wall time it reports target-cpu-ms/op, the CPU
// the target's processes spent per command (subtreeCPU), which a busy
// machine does not inflate, and for the sandbox the Try and Commit round
// trips (JudgeEffects is a pure function, microseconds).
func BenchmarkOneFileChange(b *testing.B) {
	h := debian(b)
	ctx := context.Background()
	h.host(b, "mkdir -p /srv/bench && printf 'A 1\\nX 0\\n' > /srv/bench/conf")
	cmd := func(i int) string { return fmt.Sprintf("sed -i 's/^X .*/X %d/' /srv/bench/conf", i) }
	b.Run("direct", func(b *testing.B) {
		cpu0 := cpu(b)
		n := 0
		for i := 0; b.Loop(); i++ {
			ex, err := h.c.Run(ctx, cmd(i))
			if err != nil || ex.ExitCode != 0 {
				b.Fatalf("%v exit %d: %s", err, ex.ExitCode, ex.Stderr)
			}
			n++
		}
		b.ReportMetric(float64((cpu(b)-cpu0).Milliseconds())/float64(n), "target-cpu-ms/op")
	})
	sb := sandbox.New(h.c, sandbox.Config{Timeout: time.Minute})
	if err := sb.Probe(ctx); err != nil {
		b.Fatal(err)
	}
	b.Run("sandbox", func(b *testing.B) {
		var try, commit time.Duration
		n := 0
		cpu0 := cpu(b)
		for i := 0; b.Loop(); i++ {
			t0 := time.Now()
			tr, err := sb.Try(ctx, cmd(i+1_000_000))
			try += time.Since(t0)
			if err != nil || tr.Exec.ExitCode != 0 || len(tr.Effects.Changes) != 1 {
				b.Fatalf("Try: %v, exec %+v, %d changes", err, tr.Exec, len(tr.Effects.Changes))
			}
			if refs := safety.JudgeEffects(tr.Effects, policy); len(refs) > 0 {
				b.Fatalf("refused: %v", refs)
			}
			t1 := time.Now()
			if err := sb.Commit(ctx, tr); err != nil {
				b.Fatalf("Commit: %v", err)
			}
			commit += time.Since(t1)
			n++
		}
		b.ReportMetric(float64((cpu(b)-cpu0).Milliseconds())/float64(n), "target-cpu-ms/op")
		b.ReportMetric(float64(try.Milliseconds())/float64(n), "try-ms/op")
		b.ReportMetric(float64(commit.Milliseconds())/float64(n), "commit-ms/op")
	})
}

func cpu(b *testing.B) time.Duration {
	b.Helper()
	d, err := subtreeCPU()
	if err != nil {
		b.Fatal(err)
	}
	return d
}
