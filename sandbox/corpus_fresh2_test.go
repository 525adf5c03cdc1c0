package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
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
	testenv.NeedRoot(t, "a Debian 12 target in namespaces")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	tg, err := debtarget.StartSystem(ctx, debtarget.Options{Sandbox: true})
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
	defer kept.Close()
	fresh := tg.SSHConfig("root")
	fresh.DialTimeout = 5 * time.Second
	guard, err := lockout.New(lockout.Config{User: "root", FreshLogin: lockout.SSHLogin(fresh), Deadline: 40 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	sb := sandbox.New(kept, sandbox.Config{Timeout: 30 * time.Second})
	if err := sb.Probe(ctx); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	deny := filepath.Join(tg.Root, "etc/hosts.deny")
	before, err := os.ReadFile(deny)
	if err != nil {
		t.Fatal(err)
	}
	r := sandbox.NewRunner(sb, safety.EffectsPolicy{Login: "root", SSHPort: 22}, sandbox.RunnerConfig{Guard: guard, Judge: allowAll})
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
