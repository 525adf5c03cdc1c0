package sandbox_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/sandbox"
	"github.com/nightshift-dev/nightshift/sshexec"
)

// BenchmarkConfigParse measures, on a Debian 12 target with sudo, what the
// configuration parse checks add to a trial: Sandbox.Try of a command that
// writes one file where no check applies (/srv: "none"), in apt.conf.d
// (apt-config dump on both sides: "apt") and in sudoers.d (visudo -c on
// both sides: "sudoers"). Each iteration writes a new value. It reports
// try-ms/op and target-cpu-ms/op (the CPU the target's processes spent,
// which a busy machine inflates less than the wall time); the difference
// from "none" is the checks' cost per command.
func BenchmarkConfigParse(b *testing.B) {
	ctx := context.Background()
	tg := sudoTarget(ctx, b)
	cfg := tg.SSHConfig()
	cfg.CommandTimeout = 5 * time.Minute
	c, err := sshexec.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	sb := sandbox.New(c, sandbox.Config{Timeout: time.Minute})
	if err := sb.Probe(ctx); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, program, format string }{
		{"none", "", "mkdir -p /srv/bench && echo 'X %d' >/srv/bench/conf"},
		{"apt", "apt-config dump", `echo 'APT::Bench "%d";' >/etc/apt/apt.conf.d/99bench`},
		{"sudoers", "visudo -c", "echo 'Defaults passwd_tries=%d' >/etc/sudoers.d/bench && chmod 0440 /etc/sudoers.d/bench"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var try time.Duration
			n := 0
			cpu0 := cpu(b)
			for i := 0; b.Loop(); i++ {
				t0 := time.Now()
				tr, err := sb.Try(ctx, fmt.Sprintf(bc.format, i%9+1))
				try += time.Since(t0)
				if err != nil || tr.Exec.ExitCode != 0 || len(tr.Effects.Changes) == 0 {
					b.Fatalf("Try: %v, exec %+v, %d changes", err, tr.Exec, len(tr.Effects.Changes))
				}
				ran := ""
				for _, p := range tr.Effects.Parses {
					ran = p.Program
					if !p.BeforeOK || !p.AfterOK {
						b.Fatalf("the check failed: %+v", p)
					}
				}
				if ran != bc.program {
					b.Fatalf("checks %+v, want %q", tr.Effects.Parses, bc.program)
				}
				if err := sb.Discard(ctx, tr); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64((cpu(b)-cpu0).Milliseconds())/float64(n), "target-cpu-ms/op")
			b.ReportMetric(float64(try.Milliseconds())/float64(n), "try-ms/op")
		})
	}
}
