package sandbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/safety"
	"github.com/nightshift-dev/nightshift/sandbox"
)

// TestFIFOsAreEffectsNotReads is the regression of fresh/ssh-fifo-dropin
// (`mkfifo /etc/ssh/sshd_config.d/z.conf`), which made a trial hang past
// every timeout: the helper ran sshd -t on the trial's configuration, and
// sshd blocked opening the FIFO its Include names. Now a FIFO where sshd
// or PAM reads is never opened: it is reported as an effect (a path of
// kind other), sshd's check says why it fails, and Try returns within the
// sandbox's own bound. The last case is a FIFO the helper cannot see
// coming (an Include of one outside /etc/ssh): the bounded sshd -t ends
// it.
func TestFIFOsAreEffectsNotReads(t *testing.T) {
	h := debian(t)
	const timeout = 5 * time.Second
	sb := sandbox.New(h.c, sandbox.Config{Timeout: timeout})
	for _, tc := range []struct {
		name, command, fifo, sshd string
	}{
		{"ssh-dropin", "mkfifo /etc/ssh/sshd_config.d/z.conf", "/etc/ssh/sshd_config.d/z.conf", "not a regular file"},
		{"ssh-config", "rm /etc/ssh/sshd_config && mkfifo -m 0644 /etc/ssh/sshd_config", "/etc/ssh/sshd_config", "not a regular file"},
		{"pam-access", "mkfifo /etc/security/access.conf.new && mv /etc/security/access.conf.new /etc/security/access.conf", "/etc/security/access.conf", ""},
		{"ssh-include-elsewhere", "mkfifo /srv/fifo.conf && echo 'Include /srv/fifo.conf' > /etc/ssh/sshd_config.d/y.conf", "/srv/fifo.conf", "did not finish"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The test's own bound, past Try's: a hang fails here instead
			// of stalling the package.
			ctx, cancel := context.WithTimeout(context.Background(), sb.TryBound()+30*time.Second)
			defer cancel()
			start := time.Now()
			tr, err := sb.Try(ctx, tc.command)
			took := time.Since(start)
			if err != nil {
				t.Fatalf("Try: %v (after %v)", err, took)
			}
			defer sb.Discard(context.Background(), tr)
			t.Logf("Try took %v; exit %d %q", took, tr.Exec.ExitCode, tr.Exec.Stderr)
			if took > sb.TryBound() {
				t.Errorf("Try took %v, past its bound %v", took, sb.TryBound())
			}
			if tr.Exec.ExitCode != 0 {
				t.Fatalf("the command failed in the sandbox: %+v", tr.Exec)
			}
			c, ok := find(tr.Effects, tc.fifo)
			if !ok {
				t.Fatalf("no effect on %s in %+v", tc.fifo, tr.Effects.Changes)
			}
			if c.After.Kind != nightshift.FileOther {
				t.Errorf("%s: kind %v, want other (a FIFO)", tc.fifo, c.After.Kind)
			}
			if tc.sshd != "" {
				s := tr.Effects.SSHD
				if s == nil || s.TestOK || !strings.Contains(s.TestOutput, tc.sshd) {
					t.Errorf("sshd check = %+v; want sshd -t failed with %q", s, tc.sshd)
				}
			}
			// The judge refuses it (sshd would not start, or PAM's
			// configuration is not a file); nothing reaches the host.
			r := sandbox.NewRunner(sb, safety.EffectsPolicy{Login: "root", SSHPort: 22}, sandbox.RunnerConfig{})
			ex, err := r.Run(ctx, tc.command)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			t.Logf("verdict %v: %s", ex.Evidence.Verdict, strings.Join(ex.Evidence.Reasons, "; "))
			if tc.sshd != "" && ex.Evidence.Verdict != nightshift.VerdictRefused {
				t.Errorf("verdict %v, want refused", ex.Evidence.Verdict)
			}
			if ex.Evidence.Verdict == nightshift.VerdictCommitted && ex.Evidence.Trial != "" {
				if err := sb.Undo(ctx, ex.Evidence.Trial); err != nil {
					t.Fatalf("Undo: %v", err)
				}
			}
		})
	}
	if got := h.host(t, "ls -la /etc/ssh/sshd_config.d/; test -f /etc/ssh/sshd_config && echo regular"); !strings.Contains(got, "regular") || strings.Contains(got, "z.conf") {
		t.Errorf("the host's /etc/ssh changed:\n%s", got)
	}
}
