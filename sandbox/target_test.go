package sandbox_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/internal/debtarget"
	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/sandbox"
	"github.com/nightshift-dev/nightshift/sshexec"
)

// target is one disposable Debian 12 host (internal/debtarget, with the
// capabilities a real host's root has) shared by the tests of this
// package, and an SSH client to it as root.
type target struct {
	tg *debtarget.Target
	c  *sshexec.Client
}

var (
	sharedOnce sync.Once
	shared     *target
	sharedErr  error
)

// debian returns the shared target, started on first use and stopped by
// TestMain.
func debian(t testing.TB) *target {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.NeedRoot(t, "the sandbox tests start a Debian 12 target in namespaces")
	}
	keys := hostKeys(t)
	sharedOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		tg, err := debtarget.Start(ctx, debtarget.Options{Sandbox: true, HostKeys: keys})
		if err != nil {
			sharedErr = err
			return
		}
		cfg := tg.SSHConfig()
		cfg.CommandTimeout = 5 * time.Minute
		c, err := sshexec.New(cfg)
		if err != nil {
			tg.Close()
			sharedErr = err
			return
		}
		shared = &target{tg: tg, c: c}
	})
	if sharedErr != nil {
		t.Fatalf("start the Debian 12 target: %v", sharedErr)
	}
	return shared
}

// sudoTarget starts a Debian 12 target of its own with sudo installed
// and debtarget.LoginUser, its worker login through sudo
// (debtarget.Options.SudoLogin), closed when tb ends.
func sudoTarget(ctx context.Context, tb testing.TB) *debtarget.Target {
	tb.Helper()
	testenv.NeedRoot(tb, "the sandbox tests start a Debian 12 target in namespaces")
	tg, err := debtarget.Start(ctx, debtarget.Options{Sandbox: true, SudoLogin: true, HostKeys: hostKeys(tb)})
	if err != nil {
		tb.Fatalf("start the Debian 12 target: %v", err)
	}
	tb.Cleanup(func() {
		if err := tg.Close(); err != nil {
			tb.Errorf("tear down the target: %v", err)
		}
	})
	return tg
}

// One set of host keys (debtarget.NewHostKeys) for every Debian target
// this test binary starts: an RSA host key costs more than half a second
// of CPU per start, and these tests prove nothing about the keys.
var (
	hostKeysOnce sync.Once
	hostKeysSet  *debtarget.HostKeys
	hostKeysErr  error
)

func hostKeys(t testing.TB) *debtarget.HostKeys {
	t.Helper()
	hostKeysOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		hostKeysSet, hostKeysErr = debtarget.NewHostKeys(ctx)
	})
	if hostKeysErr != nil {
		t.Fatalf("host keys for the Debian targets: %v", hostKeysErr)
	}
	return hostKeysSet
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.c.Close()
		shared.tg.Close()
	}
	os.Exit(code)
}

// host runs a command on the target outside any sandbox (the test's own
// view of the host, never the code under test).
func (h *target) host(t testing.TB, cmd string) string {
	t.Helper()
	ex, err := h.c.Run(context.Background(), cmd)
	if err != nil || ex.ExitCode != 0 {
		t.Fatalf("%s: %v exit %d: %s", cmd, err, ex.ExitCode, ex.Stderr)
	}
	return ex.Stdout
}

func TestProbe(t *testing.T) {
	h := debian(t)
	sb := sandbox.New(h.c, sandbox.Config{})
	if err := sb.Probe(context.Background()); err != nil {
		t.Fatalf("Probe: %v", err)
	}
}

func find(e nightshift.Effects, p string) (nightshift.FileChange, bool) {
	for _, c := range e.Changes {
		if c.Path == p {
			return c, true
		}
	}
	return nightshift.FileChange{}, false
}

func TestTryCommitUndo(t *testing.T) {
	h := debian(t)
	ctx := context.Background()
	sb := sandbox.New(h.c, sandbox.Config{})
	h.host(t, "mkdir -p /srv/sbt/olddir && echo keep > /srv/sbt/olddir/a && printf 'PermitRootLogin yes\\nX 1\\n' > /srv/sbt/conf && echo bye > /srv/sbt/gone && chmod 0644 /srv/sbt/conf")
	before := h.host(t, "cd /srv/sbt && find . -printf '%p %m %u %s\\n' | sort && sha256sum conf olddir/a gone")

	tr, err := sb.Try(ctx, `sed -i 's/^PermitRootLogin yes/PermitRootLogin no/' /srv/sbt/conf && echo new > /srv/sbt/new && rm /srv/sbt/gone && rm -rf /srv/sbt/olddir && mkdir /srv/sbt/d2 && chmod 0600 /srv/sbt/conf && systemctl reload ssh && echo done`)
	if err != nil {
		t.Fatalf("Try: %v", err)
	}
	if tr.Exec.ExitCode != 0 || strings.TrimSpace(tr.Exec.Stdout) != "done" {
		t.Fatalf("exec = %+v", tr.Exec)
	}
	// Nothing reached the host yet.
	if got := h.host(t, "cd /srv/sbt && find . -printf '%p %m %u %s\\n' | sort && sha256sum conf olddir/a gone"); got != before {
		t.Fatalf("the host changed before the commit:\n%s\nwant\n%s", got, before)
	}
	want := map[string]nightshift.Change{
		"/srv/sbt/conf": nightshift.ChangeModified, "/srv/sbt/new": nightshift.ChangeCreated,
		"/srv/sbt/gone": nightshift.ChangeDeleted, "/srv/sbt/olddir": nightshift.ChangeDeleted, "/srv/sbt/d2": nightshift.ChangeCreated,
	}
	for p, ch := range want {
		c, ok := find(tr.Effects, p)
		if !ok || c.Change != ch {
			t.Errorf("%s: got %+v (found %v), want %s", p, c, ok, ch)
		}
	}
	if c, _ := find(tr.Effects, "/srv/sbt/conf"); !strings.Contains(c.Diff, "-PermitRootLogin yes") || !strings.Contains(c.Diff, "+PermitRootLogin no") || c.After.Mode != 0o600 {
		t.Errorf("conf change = %+v", c)
	}
	if c, _ := find(tr.Effects, "/srv/sbt/olddir"); c.Entries != 1 {
		t.Errorf("olddir entries = %d, want 1", c.Entries)
	}
	if len(tr.Effects.Actions) != 1 || tr.Effects.Actions[0].String() != "systemctl reload ssh" {
		t.Errorf("actions = %+v", tr.Effects.Actions)
	}
	if err := sb.Commit(ctx, tr); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if got := h.host(t, "cat /srv/sbt/conf /srv/sbt/new; stat -c %a /srv/sbt/conf; ls /srv/sbt | sort | tr '\\n' ' '"); got != "PermitRootLogin no\nX 1\nnew\n600\nconf d2 new " {
		t.Errorf("after commit: %q", got)
	}
	if err := sb.Undo(ctx, tr.ID); err != nil {
		t.Fatalf("Undo: %v", err)
	}
	if got := h.host(t, "cd /srv/sbt && find . -printf '%p %m %u %s\\n' | sort && sha256sum conf olddir/a gone"); got != before {
		t.Fatalf("undo did not restore the tree:\n%s\nwant\n%s", got, before)
	}
}

// TestDeviceNodesArePrivate: chmod and chown of the sandbox's device nodes
// reach neither the host's (the target's) nor this machine's: the sandbox
// makes its own nodes instead of binding the host's (a bind mount shares
// the inode), and where the host refuses mknod (a host in a user
// namespace, as the Debian target is) it binds the host's read-only, so
// the chmod and chown fail there. Seen before the fix: a hostile command
// left this machine's /dev/null mode 000 and owned by nobody.
func TestDeviceNodesArePrivate(t *testing.T) {
	h := debian(t)
	sb := sandbox.New(h.c, sandbox.Config{})
	before, err := os.Stat("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	targetBefore := h.host(t, "stat -c '%a %u %g' /dev/null /dev/zero /dev/tty")
	tr, err := sb.Try(context.Background(), "chmod 000 /dev/null /dev/zero /dev/tty; chown 65534:65534 /dev/null /dev/zero /dev/tty; stat -c '%a %u' /dev/null")
	if err != nil {
		t.Fatalf("Try: %v", err)
	}
	// The host's uid_map: all 2^32-1 IDs in this machine's own user
	// namespace, fewer in another one.
	if own := strings.Fields(h.host(t, "cat /proc/self/uid_map")); len(own) == 3 && own[2] == "4294967295" {
		if got := strings.TrimSpace(tr.Exec.Stdout); got != "0 65534" {
			t.Fatalf("inside the sandbox: %q (stderr %q); want the change made there", got, tr.Exec.Stderr)
		}
	} else if got := strings.TrimSpace(tr.Exec.Stdout); got != "666 0" || strings.Count(tr.Exec.Stderr, "Read-only file system") != 6 {
		t.Fatalf("inside the sandbox on a host in a user namespace: %q (stderr %q); want the nodes unchanged and each chmod and chown refused", got, tr.Exec.Stderr)
	}
	if err := sb.Discard(context.Background(), tr); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	if after.Mode() != before.Mode() || after.Sys().(*syscall.Stat_t).Uid != before.Sys().(*syscall.Stat_t).Uid {
		t.Errorf("this machine's /dev/null changed: %v -> %v", before.Mode(), after.Mode())
	}
	if got := h.host(t, "stat -c '%a %u %g' /dev/null /dev/zero /dev/tty"); got != targetBefore {
		t.Errorf("the target's device nodes changed:\n%s\nwant\n%s", got, targetBefore)
	}
}
