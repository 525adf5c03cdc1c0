package debtarget

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/sshexec"

	"github.com/nightshift-dev/nightshift"
)

// start starts a target for the test (building the cached root on first
// use, which the test command does as root) and tears it down after it.
func start(t *testing.T) *Target {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	tg, err := Start(ctx, Options{Log: testLog{t}})
	if err != nil {
		t.Fatalf("start the Debian 12 target (the test command runs as root with debootstrap available): %v", err)
	}
	t.Cleanup(func() {
		if err := tg.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return tg
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func dial(t *testing.T, tg *Target) *sshexec.Client {
	t.Helper()
	cfg := tg.SSHConfig()
	cfg.CommandTimeout = time.Minute
	c, err := sshexec.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func run(t *testing.T, c *sshexec.Client, cmd string) nightshift.Exec {
	t.Helper()
	r, err := c.Run(context.Background(), cmd)
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return r
}

// TestTargetIsolation starts a real target and checks what the package
// promises: sshd is PID 1 of its own PID namespace, the hostname is its
// own, /proc/sys and /sys are read-only and cannot be remounted, the
// dangerous capabilities are gone, SSG's datastream and oscap are there,
// breaking /etc/ssh/sshd_config does not lock the control connection out,
// and Close leaves no mounts and no files.
func TestTargetIsolation(t *testing.T) {
	testenv.NeedRoot(t, "the target's namespaces, chroot and mounts")
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	tg := start(t)
	c := dial(t, tg)
	// Without Options.HostKeys the root gets its own host keys, as a
	// Debian install does (ssh-keygen -A).
	for _, typ := range []string{"rsa", "ecdsa", "ed25519"} {
		if _, err := os.Stat(tg.Root + "/etc/ssh/ssh_host_" + typ + "_key"); err != nil {
			t.Errorf("no %s host key in the root: %v", typ, err)
		}
	}
	tests := []struct {
		name, cmd string
		exit      int
		want      string
	}{
		{"sshd is pid 1", "cat /proc/1/cmdline | tr '\\0' ' '", 0, "/usr/sbin/sshd -D -e -f /etc/nightshift/sshd_config"},
		{"own hostname", "hostname", 0, "nightshift-target"},
		// Writes the current value back: a no-op even if the protection
		// were missing.
		{"proc/sys read-only", "v=$(cat /proc/sys/vm/swappiness) && echo $v > /proc/sys/vm/swappiness", 1, "Read-only file system"},
		{"sys read-only", "touch /sys/kernel/x", 1, "Read-only file system"},
		{"no remount", "mount -o remount,rw /proc/sys", 32, ""},
		{"no mknod", "mknod /tmp/vda b 254 0", 1, "Operation not permitted"},
		{"no host disks", "ls /dev", 0, "null"},
		{"datastream", "test -s " + DatastreamPath + " && dpkg-query -W -f '${Version}' ssg-debian openscap-scanner linux-base", 0, "0.1.76-1"},
		{"debian 12", "cat /etc/debian_version", 0, "12."},
		// Without Options.SudoLogin: no second login, no sudo.
		{"no sudo login", "id " + LoginUser + "; command -v sudo", 1, "no such user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, c, tt.cmd)
			if r.ExitCode != tt.exit || !strings.Contains(r.Stdout+r.Stderr, tt.want) {
				t.Errorf("%s: exit %d, output %q; want exit %d and %q", tt.cmd, r.ExitCode, r.Stdout+r.Stderr, tt.exit, tt.want)
			}
		})
	}
	r := run(t, c, "ls /dev")
	if strings.Contains(r.Stdout, "vda") || strings.Contains(r.Stdout, "sda") {
		t.Errorf("host disks visible in /dev: %s", r.Stdout)
	}
	bnd := run(t, c, "grep CapBnd /proc/self/status").Stdout
	mask, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(bnd, "CapBnd:")), 16, 64)
	if err != nil {
		t.Fatalf("CapBnd %q: %v", bnd, err)
	}
	for name, bit := range map[string]uint{"sys_admin": 21, "sys_module": 16, "sys_boot": 22, "sys_time": 25, "sys_rawio": 17, "mknod": 27, "net_admin": 12, "sys_ptrace": 19} {
		if mask&(1<<bit) != 0 {
			t.Errorf("CAP_%s is in the bounding set %s", strings.ToUpper(name), bnd)
		}
	}
	if h, err := os.Hostname(); err != nil || h != hostname {
		t.Errorf("the host's hostname changed from %q to %q (%v)", hostname, h, err)
	}
	// The target's device nodes are its own: a chmod of them inside (as a
	// find / … -exec chmod 000 does) leaves this machine's alone.
	hostDev := devModes(t)
	if r := run(t, c, "chmod 000 /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty && stat -c %a /dev/null"); strings.TrimSpace(r.Stdout) != "0" {
		t.Errorf("chmod 000 of the target's /dev/null: %q %q", r.Stdout, r.Stderr)
	}
	if got := devModes(t); got != hostDev {
		t.Errorf("a chmod inside the target changed this machine's device nodes: %s, was %s", got, hostDev)
	}

	// A remediation gone wrong on the target's own sshd configuration does
	// not reach the control sshd.
	run(t, c, "printf 'PermitRootLogin no\\nAllowUsers nobody\\nPort 1\\n' > /etc/ssh/sshd_config")
	c2 := dial(t, tg)
	if r := run(t, c2, "echo alive"); strings.TrimSpace(r.Stdout) != "alive" {
		t.Errorf("control connection after breaking sshd_config: %q", r.Stdout)
	}

	dir := tg.Dir
	c.Close()
	c2.Close()
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	if m := mountsUnder(dir); len(m) != 0 {
		t.Errorf("mounts left: %q", m)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists after Close (%v)", dir, err)
	}
	if err := tg.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestStartFailureTearsDown: when the target cannot start (here the
// hostname is longer than the kernel accepts, so PID 1's setup fails after
// its mounts), Start returns ErrStart, kills what it started and removes
// the directory it made, leaving no mount behind.
func TestStartFailureTearsDown(t *testing.T) {
	testenv.NeedRoot(t, "the target's namespaces, chroot and mounts")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	tg, err := Start(ctx, Options{Hostname: strings.Repeat("h", 100), Log: testLog{t}, HostKeys: testHostKeys(t)})
	if err == nil {
		tg.Close()
		t.Fatal("Start with a 100-character hostname succeeded")
	}
	if !errors.Is(err, ErrStart) {
		t.Fatalf("Start: %v; want ErrStart", err)
	}
	if m := mountsUnder(tmp); len(m) != 0 {
		t.Errorf("mounts left: %q", m)
	}
	if left, err := os.ReadDir(tmp); err != nil || len(left) != 0 {
		t.Errorf("files left in %s after a failed Start: %v (%v)", tmp, left, err)
	}
}

// TestSudoLogin: with Options.SudoLogin the control sshd lets LoginUser in
// with the control key, as itself (uid not 0, its own home), LoginConfig's
// sudo makes its commands root's, the target's own sshd would find the key
// where it looks for it (sshd -T for the login), and root's control login
// still works.
func TestSudoLogin(t *testing.T) {
	testenv.NeedRoot(t, "the target's namespaces, chroot and mounts")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	tg, err := Start(ctx, Options{SudoLogin: true, Log: testLog{t}, HostKeys: testHostKeys(t)})
	if err != nil {
		t.Fatalf("start the Debian 12 target: %v", err)
	}
	t.Cleanup(func() {
		if err := tg.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if tg.Login != LoginUser || tg.User != "root" {
		t.Fatalf("Login %q, User %q; want %q and root", tg.Login, tg.User, LoginUser)
	}
	client := func(cfg sshexec.Config) *sshexec.Client {
		cfg.CommandTimeout = time.Minute
		c, err := sshexec.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	plain := tg.LoginConfig()
	plain.Sudo = false
	tests := []struct {
		name string
		cfg  sshexec.Config
		cmd  string
		want string
	}{
		{"the login itself", plain, "echo $(id -un) $(id -u) $HOME", LoginUser + " 1000 /home/" + LoginUser},
		{"through sudo", tg.LoginConfig(), "echo $(id -un) $SUDO_USER", "root " + LoginUser},
		{"the root control login", tg.SSHConfig(), "id -un", "root"},
		{"the target's sshd finds the key", tg.SSHConfig(), "sshd -T -C user=" + LoginUser + ",host=127.0.0.1,addr=127.0.0.1 | grep -i '^authorizedkeysfile'", "authorizedkeysfile .ssh/authorized_keys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, client(tt.cfg), tt.cmd)
			// Nothing on stderr: sudo resolves the target's hostname.
			if r.ExitCode != 0 || !strings.Contains(r.Stdout, tt.want) || r.Stderr != "" {
				t.Errorf("%s: exit %d, %q %q; want %q and no stderr", tt.cmd, r.ExitCode, r.Stdout, r.Stderr, tt.want)
			}
		})
	}
}

func TestStartNeedsRoot(t *testing.T) {
	if !testenv.Unprivileged(t) {
		return // it ran as nobody
	}
	if _, err := Start(context.Background(), Options{}); !errors.Is(err, ErrNotRoot) {
		t.Errorf("Start as non-root: %v; want ErrNotRoot", err)
	}
	if _, err := StartSystem(context.Background(), Options{}); !errors.Is(err, ErrNotRoot) {
		t.Errorf("StartSystem as non-root: %v; want ErrNotRoot", err)
	}
}

// devModes lists the modes of this machine's device nodes that a target
// has too.
func devModes(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, d := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		fi, err := os.Stat("/dev/" + d)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(d + "=" + fi.Mode().Perm().String() + " ")
	}
	return b.String()
}
