package sshexec

// Integration tests against a real OpenSSH sshd started on 127.0.0.1 by
// internal/sshtarget. They fail (never skip) when openssh-server is missing:
// the test command installs it. Commands are harmless and touch only
// t.TempDir().

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/sshtarget"
	"github.com/nightshift-dev/nightshift/retry"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/nightshift-dev/nightshift"
)

func startTarget(t testing.TB, opts sshtarget.Options) *sshtarget.Target {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tg, err := sshtarget.Start(ctx, opts)
	if err != nil {
		t.Fatalf("start real sshd: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sshd log:\n%s", tg.Log())
		}
		tg.Close()
	})
	return tg
}

func targetConfig(tg *sshtarget.Target, mods ...func(*Config)) Config {
	cfg := Config{
		Host:            tg.Host,
		Port:            tg.Port,
		User:            tg.User,
		IdentityFiles:   []string{tg.IdentityFile},
		NoAgent:         true,
		KnownHostsFiles: []string{tg.KnownHostsFile},
		Redial:          retry.Policy{BaseDelay: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond, MaxTries: 3},
	}
	for _, m := range mods {
		m(&cfg)
	}
	return cfg
}

func targetClient(t *testing.T, tg *sshtarget.Target, mods ...func(*Config)) *Client {
	t.Helper()
	c, err := New(targetConfig(tg, mods...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// processWith reports whether a process whose command line contains marker
// is alive on this machine.
func processWith(marker string) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(marker)) {
			return true
		}
	}
	return false
}

func TestOpenSSHRun(t *testing.T) {
	tg := startTarget(t, sshtarget.Options{})
	c := targetClient(t, tg)
	dir := t.TempDir()
	tests := []struct {
		name string
		cmd  string
		want nightshift.Exec
	}{
		{"stdout and stderr apart", "echo out; echo err >&2", nightshift.Exec{Stdout: "out\n", Stderr: "err\n"}},
		{"exit code", "echo failing >&2; exit 3", nightshift.Exec{Stderr: "failing\n", ExitCode: 3}},
		{"killed by signal", "kill -9 $$", nightshift.Exec{ExitCode: 137, Signal: "KILL"}},
		{"closes stdout early", "exec 1>&-; echo after >&2; exit 4", nightshift.Exec{Stderr: "after\n", ExitCode: 4}},
		{"pipeline head", "yes | head -c 6", nightshift.Exec{Stdout: "y\ny\ny\n"}},
		{"quoting", `printf '%s|' "a b" 'c'\''d'`, nightshift.Exec{Stdout: "a b|c'd|"}},
		{"writes only under TempDir", "cd " + dir + " && echo x > f && cat f", nightshift.Exec{Stdout: "x\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.Run(context.Background(), tc.cmd)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			got.Duration = 0
			if got != tc.want {
				t.Errorf("Run(%q) = %+v, want %+v", tc.cmd, got, tc.want)
			}
		})
	}
}

func TestOpenSSHLargeOutput(t *testing.T) {
	tg := startTarget(t, sshtarget.Options{})
	c := targetClient(t, tg)
	const total = 50 << 20
	res, err := c.Run(context.Background(), fmt.Sprintf("head -c %d /dev/zero | tr '\\0' a; echo end >&2", total))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Repeat("a", DefaultOutputCap/2) + fmt.Sprintf(CutMarker, total-DefaultOutputCap) + strings.Repeat("a", DefaultOutputCap/2)
	if res.Stdout != want || res.StdoutCut != total-DefaultOutputCap || res.Stderr != "end\n" || res.ExitCode != 0 {
		t.Fatalf("StdoutCut=%d len(Stdout)=%d Stderr=%q Exit=%d", res.StdoutCut, len(res.Stdout), res.Stderr, res.ExitCode)
	}
}

func TestOpenSSHTimeoutKillsProcessGroup(t *testing.T) {
	tg := startTarget(t, sshtarget.Options{})
	c := targetClient(t, tg, func(c *Config) { c.CommandTimeout = 300 * time.Millisecond })
	marker := fmt.Sprintf("1000.%d", time.Now().UnixNano()%1000000)
	res, err := c.Run(context.Background(), fmt.Sprintf("echo started; sleep %s & sleep %s1; wait", marker, marker))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !res.TimedOut || res.Stdout != "started\n" || res.Signal != "TERM" {
		t.Errorf("result %+v, want timed out, TERMinated, with output so far", res)
	}
	// sshd reports the signal only after reaping the shell; its children
	// got the same signal through killpg.
	if processWith("sleep\x00" + marker) {
		t.Errorf("a sleep %s survived the timeout", marker)
	}
	// The connection is still usable.
	if res, err := c.Run(context.Background(), "echo ok"); err != nil || res.Stdout != "ok\n" {
		t.Fatalf("Run after timeout = %+v, %v", res, err)
	}
}

func TestOpenSSHCancel(t *testing.T) {
	tg := startTarget(t, sshtarget.Options{})
	c := targetClient(t, tg)
	// The command announces itself through a FIFO; the test cancels once
	// it reads the announcement, so the command is surely running.
	fifo := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer cancel()
		b, err := os.ReadFile(fifo)
		if err != nil || string(b) != "go\n" {
			t.Errorf("read fifo: %q, %v", b, err)
		}
	}()
	res, err := c.Run(ctx, "echo go > "+fifo+"; sleep 30")
	if !errors.Is(err, context.Canceled) || !res.Canceled || res.Signal != "TERM" {
		t.Fatalf("Run = %+v, %v; want cancelled and TERMinated", res, err)
	}
}

func TestOpenSSHDisconnectMidCommand(t *testing.T) {
	tg := startTarget(t, sshtarget.Options{})
	c := targetClient(t, tg)
	dir := t.TempDir()
	counter := filepath.Join(dir, "runs")
	// The command records that it ran, then kills the sshd process serving
	// this connection: the TCP connection drops mid-command.
	cmd := fmt.Sprintf("echo ran >> %s; echo partial; kill -9 $PPID; sleep 5", counter)
	res, err := c.Run(context.Background(), cmd)
	if !errors.Is(err, nightshift.ErrOutcomeUnknown) {
		t.Fatalf("Run = %+v, %v; want nightshift.ErrOutcomeUnknown", res, err)
	}
	if res.ExitCode != -1 {
		t.Errorf("ExitCode = %d, want -1 (unknown)", res.ExitCode)
	}
	res, err = c.Run(context.Background(), "cat "+counter)
	if err != nil {
		t.Fatalf("Run after the drop: %v", err)
	}
	if res.Stdout != "ran\n" {
		t.Errorf("the dropped command ran %d times, want exactly once", strings.Count(res.Stdout, "ran"))
	}
}

func TestOpenSSHAuthAndHostKeys(t *testing.T) {
	tg := startTarget(t, sshtarget.Options{})
	other := startTarget(t, sshtarget.Options{})
	changed := filepath.Join(t.TempDir(), "known_hosts")
	// The target's address with the other server's key: a changed key.
	os.WriteFile(changed, []byte(knownhosts.Line([]string{knownhosts.Normalize(tg.Addr)}, other.HostKey)+"\n"), 0o600)

	t.Run("wrong key", func(t *testing.T) {
		c := targetClient(t, tg, func(c *Config) { c.IdentityFiles = []string{other.IdentityFile} })
		_, err := c.Run(context.Background(), "true")
		if !errors.Is(err, ErrAuthFailed) {
			t.Fatalf("error %v, want ErrAuthFailed", err)
		}
	})
	t.Run("unknown host key", func(t *testing.T) {
		c := targetClient(t, tg, func(c *Config) { c.KnownHostsFiles = []string{filepath.Join(t.TempDir(), "known_hosts")} })
		_, err := c.Run(context.Background(), "true")
		if herr := hostKeyErr(t, err); herr.Problem != HostKeyUnknown || herr.Fingerprint != ssh.FingerprintSHA256(tg.HostKey) {
			t.Fatalf("error %v, want unknown key %s", err, ssh.FingerprintSHA256(tg.HostKey))
		}
	})
	t.Run("changed host key", func(t *testing.T) {
		c := targetClient(t, tg, func(c *Config) {
			c.KnownHostsFiles = []string{changed}
			c.AcceptNewHostKey = true
		})
		_, err := c.Run(context.Background(), "true")
		herr := hostKeyErr(t, err)
		if herr.Problem != HostKeyChanged || len(herr.Known) != 1 || herr.Known[0].Line != 1 {
			t.Fatalf("error %v, want changed key at %s:1", err, changed)
		}
	})
	t.Run("accept new host key then verify", func(t *testing.T) {
		kh := filepath.Join(t.TempDir(), "known_hosts")
		c := targetClient(t, tg, func(c *Config) {
			c.KnownHostsFiles = []string{kh}
			c.AcceptNewHostKey = true
		})
		if _, err := c.Run(context.Background(), "true"); err != nil {
			t.Fatal(err)
		}
		// OpenSSH's own client accepts the file we wrote.
		b, want := mustRead(t, kh), mustRead(t, tg.KnownHostsFile)
		if string(b) != string(want) {
			t.Errorf("known_hosts written:\n%s\nwant:\n%s", b, want)
		}
	})
	t.Run("encrypted key from environment", func(t *testing.T) {
		enc := startTarget(t, sshtarget.Options{ClientKeyType: "ecdsa", ClientKeyPassphrase: "open sesame"})
		t.Setenv("NIGHTSHIFT_SSH_PASSPHRASE", "open sesame")
		c := targetClient(t, enc)
		if res, err := c.Run(context.Background(), "echo ok"); err != nil || res.Stdout != "ok\n" {
			t.Fatalf("Run = %+v, %v", res, err)
		}
	})
	t.Run("user certificate", func(t *testing.T) {
		ca := startTarget(t, sshtarget.Options{UserCA: true})
		c := targetClient(t, ca) // ID-cert.pub is found beside the key
		if res, err := c.Run(context.Background(), "echo ok"); err != nil || res.Stdout != "ok\n" {
			t.Fatalf("Run = %+v, %v", res, err)
		}
	})
	t.Run("rsa key", func(t *testing.T) {
		rs := startTarget(t, sshtarget.Options{ClientKeyType: "rsa"})
		c := targetClient(t, rs)
		if res, err := c.Run(context.Background(), "echo ok"); err != nil || res.Stdout != "ok\n" {
			t.Fatalf("Run = %+v, %v", res, err)
		}
	})
}

func TestOpenSSHProxyJump(t *testing.T) {
	jump := startTarget(t, sshtarget.Options{AllowTCPForwarding: true})
	tg := startTarget(t, sshtarget.Options{})
	known := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(known, append(mustRead(t, jump.KnownHostsFile), mustRead(t, tg.KnownHostsFile)...), 0o600); err != nil {
		t.Fatal(err)
	}
	// The same user and key are authorized on both (ssh -J semantics:
	// same credentials for the jump host).
	if err := os.WriteFile(filepath.Join(tg.Dir, "authorized_keys"), mustRead(t, jump.IdentityFile+".pub"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := targetClient(t, tg, func(c *Config) {
		c.IdentityFiles = []string{jump.IdentityFile}
		c.KnownHostsFiles = []string{known}
		c.ProxyJump = jump.User + "@" + jump.Addr
	})
	res, err := c.Run(context.Background(), "echo $SSH_CONNECTION")
	if err != nil {
		t.Fatal(err)
	}
	// The target sees the connection coming from the jump host's sshd.
	if !strings.Contains(res.Stdout, strconv.Itoa(tg.Port)) {
		t.Errorf("SSH_CONNECTION = %q, want the target port %d", res.Stdout, tg.Port)
	}
	if !strings.Contains(jump.Log(), "Accepted publickey") || !strings.Contains(tg.Log(), "Accepted publickey") {
		t.Errorf("both sshds should log a login")
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOpenSSHConcurrentRuns(t *testing.T) {
	tg := startTarget(t, sshtarget.Options{})
	c := targetClient(t, tg)
	var wg sync.WaitGroup
	errs := make(chan error, 25)
	for i := range 25 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.Run(context.Background(), fmt.Sprintf("echo %d; exit %d", i, i%5))
			if err != nil {
				errs <- err
			} else if res.Stdout != fmt.Sprintf("%d\n", i) || res.ExitCode != i%5 {
				errs <- fmt.Errorf("%d: %+v", i, res)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := strings.Count(tg.Log(), "Accepted publickey"); n != 1 {
		t.Errorf("sshd accepted %d logins for 25 concurrent commands, want 1 shared connection", n)
	}
}
