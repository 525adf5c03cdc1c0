package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/safety"
	"github.com/nightshift-dev/nightshift/sandbox"
)

// TestHostsDenyLockoutRolledBack is the regression of what stopped the
// last hostile-corpus run: after fresh/net-hosts-deny (`echo "ALL: ALL" >>
// /etc/hosts.deny`) was committed, every SSH login to the target was
// refused — Debian's sshd is linked with libwrap, which reads
// /etc/hosts.deny whatever sshd_config says, so even debtarget.Start's
// control sshd was locked out (the old run had no lockout net). Here the
// command runs through the runner as the worker wires it (the lockout Guard
// with a fresh login through the host's own sshd), with the judge switched
// off so that the net behind it is what is proven: the commit is rolled
// back with the canary's reason, a fresh login works again and
// /etc/hosts.deny is byte-identical (read from this machine).
func TestHostsDenyLockoutRolledBack(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	n := startNetSandbox(ctx, t, 40*time.Second)
	tg, fresh := n.tg, n.fresh
	deny := filepath.Join(tg.Root, "etc/hosts.deny")
	before, err := os.ReadFile(deny)
	if err != nil {
		t.Fatal(err)
	}
	r := sandbox.NewRunner(n.sb, safety.EffectsPolicy{Login: "root", SSHPort: 22}, sandbox.RunnerConfig{Guard: n.guard, Judge: allowAll})
	ex, err := r.Run(ctx, `echo "ALL: ALL" >> /etc/hosts.deny`)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	ev := ex.Evidence
	if ev == nil || ev.Verdict != nightshift.VerdictRolledBack || !ev.Lockout {
		t.Fatalf("evidence %+v; want rolled_back by the lockout net", ev)
	}
	t.Logf("rolled back: %s", strings.Join(ev.Reasons, "; "))
	if err := rootLogin(ctx, fresh); err != nil {
		t.Fatalf("fresh login after the rollback: %v", err)
	}
	after, err := os.ReadFile(deny)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Errorf("/etc/hosts.deny after the rollback:\n%s\nwant\n%s", after, before)
	}
}
