package sandbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/debtarget"
	"github.com/nightshift-dev/nightshift/safety"
	"github.com/nightshift-dev/nightshift/sandbox"
	"github.com/nightshift-dev/nightshift/sshexec"
)

// TestTryThroughSudo runs the sandbox as a hardened fleet's worker does:
// logged in as an unprivileged user (debtarget.LoginUser) that becomes
// root with sudo, whose env_reset drops SSH_CLIENT. A change to
// /etc/ssh/sshd_config (SSG's sshd_disable_root_login fix) is gathered
// with its diff and sshd's effective configuration for that login, judged
// acceptable for it (PermitRootLogin no locks out root, not this login),
// committed and undone. Seen before the fix: the helper stopped on the
// unset SSH_CLIENT after the command had run, and the trial reported the
// command without any effect, so the fix was silently never applied.
func TestTryThroughSudo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	tg := sudoTarget(ctx, t)
	client := func(cfg sshexec.Config) *sshexec.Client {
		cfg.CommandTimeout = 5 * time.Minute
		c, err := sshexec.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	login, root := client(tg.LoginConfig()), client(tg.SSHConfig())
	host := func(cmd string) string {
		t.Helper()
		r, err := root.Run(ctx, cmd)
		if err != nil || r.ExitCode != 0 {
			t.Fatalf("%s: %v (exit %d): %s", cmd, err, r.ExitCode, r.Stderr)
		}
		return r.Stdout
	}
	sb := sandbox.New(login, sandbox.Config{Timeout: time.Minute})
	if err := sb.Probe(ctx); err != nil {
		t.Fatalf("Probe through sudo: %v", err)
	}
	before := host("sha256sum /etc/ssh/sshd_config")
	tr, err := sb.Try(ctx, `sed -i '1i PermitRootLogin no' /etc/ssh/sshd_config && echo done`)
	if err != nil {
		t.Fatalf("Try through sudo: %v", err)
	}
	if tr.Exec.ExitCode != 0 || strings.TrimSpace(tr.Exec.Stdout) != "done" {
		t.Fatalf("exec = %+v", tr.Exec)
	}
	c, ok := find(tr.Effects, "/etc/ssh/sshd_config")
	if !ok || !strings.Contains(c.Diff, "+PermitRootLogin no") {
		t.Fatalf("sshd_config's change: %+v (found %v); effects %+v", c, ok, tr.Effects)
	}
	s := tr.Effects.SSHD
	if s == nil || !s.TestOK || s.Login != debtarget.LoginUser || s.Effective["permitrootlogin"] != "no" {
		t.Fatalf("sshd check = %+v; want sshd -t ok and sshd -T for %s with permitrootlogin no", s, debtarget.LoginUser)
	}
	pol := safety.EffectsPolicy{Login: debtarget.LoginUser, SSHPort: 22}
	if refs := safety.JudgeEffects(tr.Effects, pol); len(refs) > 0 {
		t.Fatalf("refused for %s: %+v", debtarget.LoginUser, refs)
	}
	if err := sb.Commit(ctx, tr); err != nil {
		t.Fatalf("Commit through sudo: %v", err)
	}
	if got := host("head -1 /etc/ssh/sshd_config"); got != "PermitRootLogin no\n" {
		t.Errorf("after the commit: %q", got)
	}
	if err := sb.Undo(ctx, tr.ID); err != nil {
		t.Fatalf("Undo through sudo: %v", err)
	}
	if got := host("sha256sum /etc/ssh/sshd_config"); got != before {
		t.Errorf("undo did not restore sshd_config: %s, want %s", got, before)
	}
}
