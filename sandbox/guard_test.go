package sandbox_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/internal/debtarget"
	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/lockout"
	"github.com/nightshift-dev/nightshift/safety"
	"github.com/nightshift-dev/nightshift/sandbox"
	"github.com/nightshift-dev/nightshift/sshexec"
)

// allowAll is the test-only judge that lets every effect through, so that
// the lockout net behind the judge is what is proven.
func allowAll(nightshift.Effects, safety.EffectsPolicy) []safety.Refusal { return nil }

// netSandbox is a Debian 12 target whose worker logs in as root through
// the target's own sshd (debtarget.StartSystem), with the sandbox on a kept
// connection and the lockout net's guard (a fresh login through that sshd,
// a 40 s switch), as the worker wires them.
type netSandbox struct {
	tg    *debtarget.SystemTarget
	kept  *sshexec.Client
	fresh sshexec.Config
	guard *lockout.Guard
	sb    *sandbox.Sandbox
}

// startNetSandbox starts a netSandbox, stopped at the test's end, whose
// lockout net restores access within deadline.
func startNetSandbox(ctx context.Context, t *testing.T, deadline time.Duration) netSandbox {
	t.Helper()
	testenv.NeedRoot(t, "a Debian 12 target in namespaces")
	tg, err := debtarget.StartSystem(ctx, debtarget.Options{Sandbox: true, HostKeys: hostKeys(t)})
	if err != nil {
		t.Fatalf("start the Debian 12 target: %v", err)
	}
	t.Cleanup(func() { tg.Close() })
	cfg := tg.SSHConfig("root")
	cfg.CommandTimeout = time.Minute
	kept, err := sshexec.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kept.Close() })
	fresh := tg.SSHConfig("root")
	fresh.DialTimeout = 5 * time.Second
	guard, err := lockout.New(lockout.Config{User: "root", FreshLogin: lockout.SSHLogin(fresh), Deadline: deadline})
	if err != nil {
		t.Fatal(err)
	}
	sb := sandbox.New(kept, sandbox.Config{Timeout: 30 * time.Second})
	if err := sb.Probe(ctx); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	return netSandbox{tg: tg, kept: kept, fresh: fresh, guard: guard, sb: sb}
}

// TestLockoutNetBehindTheSandbox runs lockouts through the sandbox on a
// Debian 12 target whose worker logs in through the target's own sshd
// (restarted and reloaded as a host would), with the judge switched off:
// the lockout net's canary finds each, the change is undone, a fresh login
// works again and /etc/ssh and root's ~/.ssh are byte-identical (read from
// this machine, not through the code under test). A legitimate
// sshd_config change is committed and kept. With the judge on, the same
// lockouts are refused before anything is applied.
func TestLockoutNetBehindTheSandbox(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	n := startNetSandbox(ctx, t, 40*time.Second)
	tg, c, fresh, guard, sb := n.tg, n.kept, n.fresh, n.guard, n.sb
	pol := safety.EffectsPolicy{Login: "root"}
	netOnly := sandbox.NewRunner(sb, pol, sandbox.RunnerConfig{Guard: guard, Judge: allowAll})
	judged := sandbox.NewRunner(sb, pol, sandbox.RunnerConfig{Guard: guard})
	protected := func() string {
		return fmt.Sprint(manifest(t, tg.Root, []string{"/etc/ssh", "/root/.ssh", "/etc/pam.d", "/etc/passwd", "/etc/shadow"}, func(string) bool { return true }))
	}
	for _, tc := range []struct{ name, command, reason string }{
		{"DenyUsers root and reload", `echo "DenyUsers root" >> /etc/ssh/sshd_config && systemctl reload ssh`, "DenyUsers"},
		{"PermitRootLogin no and restart", `sed -i "s/^#*PermitRootLogin.*/PermitRootLogin no/" /etc/ssh/sshd_config && systemctl restart ssh`, "PermitRootLogin"},
		{"authorized_keys removed", `rm /root/.ssh/authorized_keys`, "authorized"},
		{"account pam_deny", `echo "account requisite pam_deny.so" >> /etc/pam.d/sshd`, "pam_deny"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := protected()
			ex, err := netOnly.Run(ctx, tc.command)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			ev := ex.Evidence
			if ev == nil || ev.Verdict != nightshift.VerdictRolledBack || !strings.Contains(strings.ToLower(strings.Join(ev.Reasons, " ")), strings.ToLower(tc.reason)) {
				t.Fatalf("evidence %+v; want rolled_back naming %q", ev, tc.reason)
			}
			if nightshift.ActionOf(ex, nil) != nightshift.ActionBlocked {
				t.Errorf("action %s, want blocked", nightshift.ActionOf(ex, nil))
			}
			if err := rootLogin(ctx, fresh); err != nil {
				t.Fatalf("fresh login after the rollback: %v", err)
			}
			if after := protected(); after != before {
				t.Errorf("protected files differ after the rollback")
			}
			ex, err = judged.Run(ctx, tc.command)
			if err != nil || ex.Evidence == nil || ex.Evidence.Verdict != nightshift.VerdictRefused {
				t.Errorf("with the judge: %v, evidence %+v; want refused before anything is applied", err, ex.Evidence)
			}
		})
	}
	t.Run("a legitimate change is kept", func(t *testing.T) {
		ex, err := judged.Run(ctx, `echo "ClientAliveInterval 300" >> /etc/ssh/sshd_config && systemctl reload ssh`)
		if err != nil || ex.Evidence == nil || ex.Evidence.Verdict != nightshift.VerdictCommitted {
			t.Fatalf("%v, evidence %+v; want committed", err, ex.Evidence)
		}
		if err := rootLogin(ctx, fresh); err != nil {
			t.Fatalf("fresh login: %v", err)
		}
		out, err := c.Run(ctx, "sshd -T -C user=root,host=127.0.0.1,addr=127.0.0.1 | grep -i '^clientaliveinterval'")
		if err != nil || strings.TrimSpace(out.Stdout) != "clientaliveinterval 300" {
			t.Errorf("sshd -T after the change: %q %v", out.Stdout, err)
		}
	})
}

// rootLogin makes a new SSH login and runs a command.
func rootLogin(ctx context.Context, cfg sshexec.Config) error {
	cfg.Redial.MaxTries = 1
	c, err := sshexec.New(cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	ex, err := c.Run(ctx, "true")
	if err != nil {
		return err
	}
	if ex.ExitCode != 0 {
		return fmt.Errorf("exit %d: %s", ex.ExitCode, ex.Stderr)
	}
	return nil
}
