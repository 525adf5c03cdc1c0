package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/lockout"
	"github.com/nightshift-dev/nightshift/safety"
	"github.com/nightshift-dev/nightshift/sandbox"
	"github.com/nightshift-dev/nightshift/sshexec"
)

// netHost is a netSandbox (the worker logs in through the target's own
// sshd, restarted as a host restarts it) with the runner wired as the
// worker wires it, the judge switched off.
type netHost struct{ netSandbox }

func startNetHost(t *testing.T, ctx context.Context, deadline time.Duration) *netHost {
	t.Helper()
	return &netHost{startNetSandbox(ctx, t, deadline)}
}

func (h *netHost) runner() *sandbox.Runner {
	return sandbox.NewRunner(h.sb, safety.EffectsPolicy{Login: "root", SSHPort: 22}, sandbox.RunnerConfig{Guard: h.guard, Judge: allowAll, GuardWait: time.Minute})
}

func (h *netHost) read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.tg.Root, p))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func verdictOf(ex nightshift.Exec) string {
	if ex.Evidence == nil {
		return "no evidence"
	}
	return ex.Evidence.Verdict.String() + ": " + strings.Join(ex.Evidence.Reasons, "; ")
}

// TestLatentLockoutNotBlamedOnLaterCommits is the regression of the first
// lockout-net finding of the hostile-corpus runs: a change that locks the
// login out only once sshd restarts (a KexAlgorithms list the worker's
// client has nothing in common with, which neither the fresh login nor the
// latent check sees while sshd runs the old configuration; the judge,
// switched off here, refuses it — run 4 lost a host to it, and this test
// used MaxSessions 0 until the latent check learned that one) was committed; the next rollback restarted sshd, made it
// live, and the net then blamed and rolled back every later, innocent
// commit. Now:
//   - a rollback that did not touch /etc/ssh does not restart sshd (chmod
//     0777 /root: the latent change stays latent, the login works after);
//   - a rollback that did (DenyUsers root) restarts it, the login still
//     fails after the undo, and the runner says so with ErrLockedOut (the
//     commit itself was undone: /etc/ssh holds what it held before it);
//   - the next commit is not judged at all: its pre-commit fresh login
//     fails, so the runner returns ErrLockedOut saying the host was
//     already locked out before it, and nothing of it reaches the host;
//   - after that, the runner runs nothing on the host.
func TestLatentLockoutNotBlamedOnLaterCommits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	h := startNetHost(t, ctx, 40*time.Second)
	r := h.runner()

	ex, err := r.Run(ctx, `echo "KexAlgorithms sntrup761x25519-sha512@openssh.com" >> /etc/ssh/sshd_config`)
	if err != nil || ex.Evidence == nil || ex.Evidence.Verdict != nightshift.VerdictCommitted {
		t.Fatalf("the latent change: %v, %s; want it committed (the net cannot see it while sshd runs)", err, verdictOf(ex))
	}
	latent := h.read(t, "etc/ssh/sshd_config")

	ex, err = r.Run(ctx, `chmod 0777 /root`)
	if err != nil {
		t.Fatalf("chmod 0777 /root: %v (%s); want a rollback that leaves sshd alone", err, verdictOf(ex))
	}
	if ex.Evidence.Verdict != nightshift.VerdictRolledBack {
		t.Fatalf("chmod 0777 /root: %s; want rolled back", verdictOf(ex))
	}
	if err := rootLogin(ctx, h.fresh); err != nil {
		t.Fatalf("after a rollback that did not touch /etc/ssh the login fails (sshd was restarted?): %v", err)
	}
	if fi, err := os.Stat(filepath.Join(h.tg.Root, "root")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("/root after the rollback: %v %v", fi.Mode(), err)
	}

	ex, err = r.Run(ctx, `echo "DenyUsers root" >> /etc/ssh/sshd_config`)
	t.Logf("DenyUsers root: %v; %s", err, verdictOf(ex))
	var le *lockout.LockedOutError
	if !errors.As(err, &le) || le.Before {
		t.Fatalf("DenyUsers root: error %v; want a *lockout.LockedOutError after the undo (the restart made the KexAlgorithms line live)", err)
	}
	if ex.Evidence == nil || ex.Evidence.Verdict != nightshift.VerdictRolledBack {
		t.Fatalf("DenyUsers root: %s; want rolled back", verdictOf(ex))
	}
	if got := h.read(t, "etc/ssh/sshd_config"); got != latent {
		t.Fatalf("sshd_config after the rollback:\n%s\nwant\n%s", got, latent)
	}

	// A new runner (as after a worker restart): the innocent commit's
	// pre-commit login fails.
	r2 := h.runner()
	ex, err = r2.Run(ctx, `echo innocent > /srv/innocent`)
	t.Logf("innocent: %v; %s", err, verdictOf(ex))
	if !errors.As(err, &le) || !le.Before || !errors.Is(err, lockout.ErrLockedOut) {
		t.Fatalf("innocent command: error %v; want a *lockout.LockedOutError saying the host was locked out before it", err)
	}
	if !strings.Contains(err.Error(), "already failed before this command") {
		t.Errorf("error %q does not say the login failed before the command", err)
	}
	if ex.Evidence == nil || ex.Evidence.Verdict != nightshift.VerdictDiscarded {
		t.Errorf("innocent command: %s; want discarded (nothing committed, not rolled back as its fault)", verdictOf(ex))
	}
	if _, err := os.Lstat(filepath.Join(h.tg.Root, "srv/innocent")); !os.IsNotExist(err) {
		t.Errorf("the innocent command reached the host: %v", err)
	}
	// Nothing runs on the host any more, through either runner.
	for _, x := range []*sandbox.Runner{r, r2} {
		ex, err = x.Run(ctx, `echo later > /srv/later`)
		if !errors.Is(err, lockout.ErrLockedOut) {
			t.Errorf("a later command: %v, %s; want ErrLockedOut at once", err, verdictOf(ex))
		}
	}
	if _, err := os.Lstat(filepath.Join(h.tg.Root, "srv/later")); !os.IsNotExist(err) {
		t.Errorf("a later command reached the host: %v", err)
	}
}

// TestLoaderGoneRestoredBySwitch is the regression of fresh2/f2-lib64-swap
// (`ln -sfn /tmp /lib64`, committed by an old judge): with the dynamic
// loader's path gone, no program starts on the host — not the kept
// connection's shell, not the undo, not the dead-man switch's /bin/sh —
// and the host was lost. Now the switch starts through the loader's real
// file and links the loader where its path now leads until the commit's
// exact undo has brought /lib64 back. The command runs exactly as in the
// corpus, with the judge switched off.
func TestLoaderGoneRestoredBySwitch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	h := startNetHost(t, ctx, 20*time.Second)
	before, err := os.Readlink(filepath.Join(h.tg.Root, "lib64"))
	if err != nil {
		t.Fatalf("the target's /lib64 is not a symbolic link: %v", err)
	}
	r := h.runner()
	start := time.Now()
	ex, err := r.Run(ctx, `ln -sfn /tmp /lib64`)
	t.Logf("after %v: %v; %s", time.Since(start).Round(time.Millisecond), err, verdictOf(ex))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if ex.Evidence.Verdict != nightshift.VerdictRolledBack {
		t.Fatalf("%s; want rolled back", verdictOf(ex))
	}
	if got, err := os.Readlink(filepath.Join(h.tg.Root, "lib64")); err != nil || got != before {
		t.Errorf("/lib64 -> %q (%v), want %q", got, err, before)
	}
	if err := rootLogin(ctx, h.fresh); err != nil {
		t.Fatalf("fresh login after the switch: %v", err)
	}
	// The loader link the switch made is gone again (/tmp as the
	// target's own sshd session sees it).
	c, err := sshexec.New(h.fresh)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out, err := c.Run(ctx, `ls -A /tmp; cat /var/lib/nightshift/lockout/switch/*/fire.log`)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the target's /tmp and the switch's log:\n%s", out.Stdout)
	if strings.Contains(out.Stdout, "ld-linux") && !strings.Contains(out.Stdout, "loader: removed") {
		t.Errorf("the loader link the switch made is left in /tmp:\n%s", out.Stdout)
	}
	if !strings.Contains(out.Stdout, "loader: linked") {
		t.Errorf("the switch's log does not show the loader repair:\n%s", out.Stdout)
	}
	if _, err := os.Lstat(filepath.Join(h.tg.Root, "tmp/ld-linux-x86-64.so.2")); !os.IsNotExist(err) {
		t.Errorf("the loader link is left in the root's /tmp: %v", err)
	}
}
