package debtarget

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nightshift-dev/nightshift/sshexec"
)

// LoginUser is the unprivileged login (passwordless sudo) that a
// SystemTarget creates next to root.
const LoginUser = "ops"

// SystemTarget is a disposable Debian 12 host whose worker logs in through
// the sshd that the root's own /etc/ssh/sshd_config configures, on port 22
// of the target's own network namespace, and that the target restarts the
// way a Debian host would: see StartSystem.
//
// It is safe for concurrent use; Close is idempotent.
type SystemTarget struct {
	// Root is the target's root directory on this machine; Dir holds it and
	// the client's key files.
	Root, Dir string
	// Host and Port are the loopback forwarder on this machine: each TCP
	// connection to it is a new TCP connection to 127.0.0.1:22 inside the
	// target's network namespace.
	Host string
	Port int
	// IdentityFile is the client key, authorized for root and LoginUser;
	// KnownHostsFile lists the target's own ed25519 host key for Host:Port.
	IdentityFile, KnownHostsFile string
	// HasNft says whether nft was copied into the root (from this
	// machine's /usr/sbin/nft and the libraries it links).
	HasNft bool

	cmd   *exec.Cmd
	rfs   *rootFS
	log   *lockedBuffer
	done  chan struct{}
	netns *os.File
	pid1  string // the namespaces' PID 1, as this machine sees it
	ln    net.Listener
	wg    sync.WaitGroup
	once  sync.Once
	err   error

	mu     sync.Mutex
	conns  map[net.Conn]struct{} // the forwarder's open connections, both sides
	closed bool
}

// track records c so Close can close it; false when Close has begun.
func (t *SystemTarget) track(c net.Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	if t.conns == nil {
		t.conns = map[net.Conn]struct{}{}
	}
	t.conns[c] = struct{}{}
	return true
}

func (t *SystemTarget) untrack(c net.Conn) {
	t.mu.Lock()
	delete(t.conns, c)
	t.mu.Unlock()
	c.Close()
}

// systemctlShim is /usr/local/sbin/systemctl in the root: ssh.service as
// Debian's unit runs it (ExecStartPre and ExecReload run sshd -t; restart
// is a stop then a start, so a configuration sshd -t refuses leaves the
// service down, as systemd does), on the pid file /run/sshd.pid.
const systemctlShim = `#!/bin/sh
# Nightshift test shim of systemctl for ssh.service (no systemd in the target).
verb=
unit=
for a in "$@"; do
	case $a in -*) ;; *) if [ -z "$verb" ]; then verb=$a; elif [ -z "$unit" ]; then unit=$a; fi ;; esac
done
case ${unit%.service} in ssh | sshd) ;; *) echo "systemctl shim: unit $unit unknown" >&2; exit 5 ;; esac
opts=
[ -r /etc/default/ssh ] && . /etc/default/ssh && opts=${SSHD_OPTS:-}
mkdir -p -m 0755 /run/sshd
pid=$(cat /run/sshd.pid 2>/dev/null)
running() { [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }
stop() { if running; then kill "$pid"; while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done; fi; rm -f /run/sshd.pid; }
# start returns once sshd listens, as systemd's start of the Type=notify
# unit does (sshd forks before it binds).
start() {
	/usr/sbin/sshd -t || { echo "ssh.service: ExecStartPre failed" >&2; return 1; }
	/usr/sbin/sshd $opts || return 1
	sshd=/usr/sbin/sshd
	# Wait until it listens (it forks before it binds): a LISTEN socket on
	# each of its ports in /proc/net/tcp or tcp6.
	for port in $("$sshd" -T 2>/dev/null | sed -n 's/^port //p'); do
		hex=$(printf '%04X' "$port")
		n=0
		until grep -q "^ *[0-9]*: [0-9A-F]*:$hex [0-9A-F]*:0000 0A" /proc/net/tcp /proc/net/tcp6 2>/dev/null || [ $n -ge 100 ]; do
			sleep 0.05
			n=$((n + 1))
		done
	done
}
case $verb in
start) running || start ;;
stop) stop ;;
restart) stop; start ;;
try-restart) ! running || { stop; start; } ;;
reload) running || { echo "ssh.service is not active, cannot reload" >&2; exit 1; }; /usr/sbin/sshd -t && kill -HUP "$pid" ;;
reload-or-restart | force-reload) if running; then /usr/sbin/sshd -t && kill -HUP "$pid"; else start; fi ;;
is-active | status) running && echo active || { echo inactive; exit 3; } ;;
enable | disable | unmask | daemon-reload) ;;
*) echo "systemctl shim: verb $verb not supported" >&2; exit 1 ;;
esac
`

// systemInit is PID 1 inside the root: it starts sshd as a daemon (as
// ssh.service would at boot) and stays.
const systemInit = `#!/bin/sh
mkdir -p -m 0755 /run/sshd
if /usr/local/sbin/systemctl start ssh; then echo "nightshift-init: sshd started"; else echo "nightshift-init: sshd failed"; fi
while :; do sleep 3600 & wait; done
`

// systemSetup is the end of StartSystem's PID 1 script (userSetup's $S2,
// in the target's own network namespace): the root's init, with the
// bounding set $CAPS.
const systemSetup = `exec setpriv --bounding-set "$CAPS" /bin/sh /etc/nightshift/init.sh
`

// StartSystem starts a target whose worker logs in through the root's own
// sshd: the one /etc/ssh/sshd_config configures, listening on port 22 of
// the target's own network namespace (reached through a loopback forwarder
// on this machine), started at boot and restarted, reloaded or stopped by
// `systemctl … ssh` (a shim with ssh.service's semantics, see
// systemctlShim) or /etc/init.d/ssh, as on a Debian host. So a change to
// sshd_config, PAM, the accounts or the firewall can lock the worker out,
// now or at sshd's next restart. Besides root it has LoginUser, an
// unprivileged login with passwordless sudo; the client key is authorized
// for both. The namespaces are those of Start plus a network namespace
// that belongs to the target's user namespace, and CAP_NET_ADMIN (the
// firewall it changes is that namespace's own) and CAP_AUDIT_CONTROL
// (pam_loginuid) stay in the bounding set. When this machine has /usr/sbin/nft, it is copied
// into the root with the libraries it links (HasNft).
func StartSystem(ctx context.Context, opts Options) (_ *SystemTarget, err error) {
	if os.Geteuid() != 0 {
		return nil, ErrNotRoot
	}
	tarball, err := Tarball(ctx, opts)
	if err != nil {
		return nil, err
	}
	t := &SystemTarget{Host: "127.0.0.1", log: &lockedBuffer{}, done: make(chan struct{})}
	if t.Dir, err = os.MkdirTemp("", "nightshift-debian-sys-"); err != nil {
		return nil, fmt.Errorf("debtarget: %w", err)
	}
	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	t.rfs, err = mountRoot(ctx, tarball, t.Dir)
	if err != nil {
		return nil, err
	}
	t.Root = t.rfs.root
	if err := t.prepare(ctx, opts.HostKeys); err != nil {
		return nil, err
	}
	hostname := opts.Hostname
	if hostname == "" {
		hostname = "nightshift-target"
	}
	// As a Debian installer leaves it, so sudo resolves the host's name.
	if err := addHost(t.Root, hostname); err != nil {
		return nil, err
	}
	if err := t.start(ctx, hostname, opts.Sandbox); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *SystemTarget) prepare(ctx context.Context, hk *HostKeys) error {
	run := func(name string, args ...string) error {
		if out, err := exec.CommandContext(ctx, name, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("debtarget: %s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
		}
		return nil
	}
	t.IdentityFile = filepath.Join(t.Dir, "id_ed25519")
	if err := run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "nightshift-worker", "-f", t.IdentityFile); err != nil {
		return err
	}
	if err := hostKeys(ctx, t.Root, hk); err != nil {
		return err
	}
	if err := installSudo(ctx, t.Root); err != nil {
		return err
	}
	if err := run("chroot", t.Root, "useradd", "-m", "-s", "/bin/bash", LoginUser); err != nil {
		return err
	}
	pub, err := os.ReadFile(t.IdentityFile + ".pub")
	if err != nil {
		return fmt.Errorf("debtarget: %w", err)
	}
	for _, home := range []string{"root", "home/" + LoginUser} {
		dir := filepath.Join(t.Root, home, ".ssh")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("debtarget: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600); err != nil {
			return fmt.Errorf("debtarget: %w", err)
		}
	}
	if err := run("chroot", t.Root, "chown", "-R", LoginUser+":"+LoginUser, "/home/"+LoginUser+"/.ssh"); err != nil {
		return err
	}
	files := map[string]struct {
		body string
		mode os.FileMode
	}{
		"etc/sudoers.d/" + LoginUser: {LoginUser + " ALL=(ALL) NOPASSWD:ALL\n", 0o440},
		"usr/local/sbin/systemctl":   {systemctlShim, 0o755},
		"etc/nightshift/init.sh":     {systemInit, 0o755},
	}
	for name, f := range files {
		p := filepath.Join(t.Root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("debtarget: %w", err)
		}
		if err := os.WriteFile(p, []byte(f.body), f.mode); err != nil {
			return fmt.Errorf("debtarget: %w", err)
		}
	}
	if err := t.copyNft(ctx); err != nil {
		return err
	}
	hostPub, err := os.ReadFile(filepath.Join(t.Root, "etc/ssh/ssh_host_ed25519_key.pub"))
	if err != nil {
		return fmt.Errorf("debtarget: %w", err)
	}
	if t.ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		return fmt.Errorf("debtarget: forwarder: %w", err)
	}
	t.Port = t.ln.Addr().(*net.TCPAddr).Port
	t.KnownHostsFile = filepath.Join(t.Dir, "known_hosts")
	fields := strings.Fields(string(hostPub))
	if len(fields) < 2 {
		return fmt.Errorf("debtarget: host key %q: %w", hostPub, ErrBuild)
	}
	known := "[" + t.Host + "]:" + strconv.Itoa(t.Port) + " " + fields[0] + " " + fields[1] + "\n"
	return os.WriteFile(t.KnownHostsFile, []byte(known), 0o600)
}

// copyNft copies this machine's nft and the libraries it links into the
// root (the same Debian release), when nft is here.
func (t *SystemTarget) copyNft(ctx context.Context) error {
	const nft = "/usr/sbin/nft"
	if _, err := os.Stat(nft); err != nil {
		return nil
	}
	out, err := exec.CommandContext(ctx, "ldd", nft).Output()
	if err != nil {
		return fmt.Errorf("debtarget: ldd %s: %w", nft, err)
	}
	paths := []string{nft}
	for _, l := range strings.Split(string(out), "\n") {
		for _, f := range strings.Fields(l) {
			if strings.HasPrefix(f, "/") {
				paths = append(paths, f)
			}
		}
	}
	for _, p := range paths {
		dst := filepath.Join(t.Root, p)
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		if out, err := exec.CommandContext(ctx, "cp", "-L", "--preserve=mode", p, dst).CombinedOutput(); err != nil {
			return fmt.Errorf("debtarget: copy %s into the root: %w: %s", p, err, bytes.TrimSpace(out))
		}
	}
	t.HasNft = true
	return nil
}

// systemDroppedCaps are droppedCaps but CAP_NET_ADMIN, which the target
// keeps for its own network namespace's firewall, and CAP_AUDIT_CONTROL,
// without which pam_loginuid refuses every non-root login to an sshd that
// was restarted from a root session (it inherits that session's loginuid),
// where a real host's sshd, started by systemd or with full capabilities,
// lets them in. (In the target's user namespace pam_loginuid leaves the
// loginuid alone, as in a container, so the capability no longer
// matters there; it is kept as before.)
func systemDroppedCaps(sandbox bool) []string {
	var caps []string
	for _, c := range droppedCaps {
		if sandbox && (c == "sys_admin" || c == "mknod") {
			continue // Options.Sandbox: a recording sandbox runs inside
		}
		if c != "net_admin" && c != "audit_control" {
			caps = append(caps, "-"+c)
		}
	}
	return caps
}

func (t *SystemTarget) start(ctx context.Context, hostname string, sandbox bool) error {
	userns, err := userNamespace()
	if err != nil {
		return err
	}
	defer userns.Close()
	t.cmd = exec.Command("unshare", append([]string{"--mount", "--pid", "--fork", "--propagation", "private", "--kill-child", "--"},
		setupArgs(t.Root, hostname, systemDroppedCaps(sandbox), true, systemSetup)...)...)
	t.cmd.ExtraFiles = []*os.File{userns}
	t.cmd.Stdout = t.log
	t.cmd.Stderr = t.log
	t.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// The parent-death signal follows the thread that started unshare, not
	// the process: start it from a thread locked for the target's lifetime,
	// since DialInside may end the threads it used (which killed targets).
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := t.cmd.Start(); err != nil {
			started <- err
			close(t.done)
			return
		}
		started <- nil
		t.cmd.Wait()
		close(t.done)
	}()
	if err := <-started; err != nil {
		t.cmd = nil
		return fmt.Errorf("debtarget: %w: unshare: %v", ErrStart, err)
	}
	for {
		l := t.log.String()
		if strings.Contains(l, "nightshift-init: sshd started") {
			break
		}
		if strings.Contains(l, "nightshift-init: sshd failed") {
			return fmt.Errorf("debtarget: %w: sshd did not start: %s", ErrStart, tail(l, 2000))
		}
		select {
		case <-t.done:
			return fmt.Errorf("debtarget: %w: exited: %s", ErrStart, tail(t.log.String(), 2000))
		case <-ctx.Done():
			return fmt.Errorf("debtarget: %w: %v: %s", ErrStart, ctx.Err(), tail(t.log.String(), 2000))
		case <-time.After(20 * time.Millisecond):
		}
	}
	children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", t.cmd.Process.Pid, t.cmd.Process.Pid))
	if err != nil || len(strings.Fields(string(children))) != 1 {
		return fmt.Errorf("debtarget: %w: the namespaces' PID 1 not found: %v %q", ErrStart, err, children)
	}
	t.pid1 = strings.Fields(string(children))[0]
	if t.netns, err = os.Open("/proc/" + t.pid1 + "/ns/net"); err != nil {
		return fmt.Errorf("debtarget: %w: %v", ErrStart, err)
	}
	t.wg.Add(1)
	go t.forward()
	return nil
}

// forward accepts connections on the loopback forwarder and connects each
// to 127.0.0.1:22 in the target's network namespace.
func (t *SystemTarget) forward() {
	defer t.wg.Done()
	for {
		c, err := t.ln.Accept()
		if err != nil {
			return
		}
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			if !t.track(c) {
				c.Close()
				return
			}
			defer t.untrack(c)
			in, err := t.DialInside("127.0.0.1:22", 5*time.Second)
			if err != nil || !t.track(in) {
				if in != nil {
					in.Close()
				}
				return
			}
			defer t.untrack(in)
			done := make(chan struct{}, 2)
			go func() { io.Copy(in, c); done <- struct{}{} }()
			go func() { io.Copy(c, in); done <- struct{}{} }()
			<-done // either side ended: end both (SSH needs no half-close)
			c.Close()
			in.Close()
			<-done
		}()
	}
}

// DialInside opens a TCP connection to addr from inside the target's
// network namespace (its socket is made on a thread that joined the
// namespace and is discarded afterwards).
func (t *SystemTarget) DialInside(addr string, timeout time.Duration) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		own, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, fmt.Errorf("debtarget: this thread's network namespace: %w", err)}
			return
		}
		defer own.Close()
		if err := unix.Setns(int(t.netns.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{nil, fmt.Errorf("debtarget: join the target's network namespace: %w", err)}
			return
		}
		c, err := net.DialTimeout("tcp", addr, timeout)
		// Back to this machine's namespace before the thread serves other
		// goroutines; if that fails the thread stays locked and ends with
		// this goroutine.
		if unix.Setns(int(own.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

// SSHConfig is the sshexec configuration of a login as user (root or
// LoginUser) through the forwarder, with the client key and the target's
// host key; no agent. Callers add sudo, timeouts and the like.
func (t *SystemTarget) SSHConfig(user string) sshexec.Config {
	return sshexec.Config{Host: t.Host, Port: t.Port, User: user, NoAgent: true,
		IdentityFiles: []string{t.IdentityFile}, KnownHostsFiles: []string{t.KnownHostsFile}}
}

// Exec runs command with /bin/sh inside the target (its namespaces and
// root, through nsenter) as root with this machine's full capabilities,
// not over SSH: for tests that must reach a target whose SSH is locked.
// It returns the combined output.
func (t *SystemTarget) Exec(ctx context.Context, command string) (string, error) {
	out, err := exec.CommandContext(ctx, "nsenter", "-t", t.pid1, "-m", "-u", "-i", "-n", "-p", "-r", "-w",
		"--", "/bin/sh", "-c", command).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("debtarget: exec in the target: %w: %s", err, bytes.TrimSpace(out))
	}
	return string(out), nil
}

// Close stops the forwarder and the target (as Target.Close), unmounts the
// root's overlay, checks that no mount is left under Dir and removes Dir.
func (t *SystemTarget) Close() error {
	t.once.Do(func() {
		if t.ln != nil {
			t.ln.Close()
		}
		t.mu.Lock()
		t.closed = true
		for c := range t.conns {
			c.Close()
		}
		t.mu.Unlock()
		if t.cmd != nil && t.cmd.Process != nil {
			syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
			<-t.done
		}
		t.wg.Wait()
		if t.netns != nil {
			t.netns.Close()
		}
		if err := t.rfs.unmount(); err != nil {
			t.err = fmt.Errorf("%w: %w", ErrMountsLeft, err)
			return
		}
		if m := mountsUnder(t.Dir); len(m) > 0 {
			t.err = fmt.Errorf("debtarget: %w: %s", ErrMountsLeft, strings.Join(m, ", "))
			return
		}
		if err := os.RemoveAll(t.Dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.err = fmt.Errorf("debtarget: remove %s: %w", t.Dir, err)
		}
	})
	return t.err
}
