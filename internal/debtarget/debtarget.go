package debtarget

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/nightshift-dev/nightshift/sshexec"
)

// Errors of Start and Close.
var (
	// ErrNotRoot: the target needs root (namespaces, chroot, mounts).
	ErrNotRoot = errors.New("debian target needs root")
	// ErrBuild: the root could not be built or restored.
	ErrBuild = errors.New("build the debian root")
	// ErrStart: the target's sshd did not come up.
	ErrStart = errors.New("start the debian target")
	// ErrMountsLeft: mounts under the target's directory are still visible
	// on the host; its files were not removed.
	ErrMountsLeft = errors.New("mounts left under the debian target")
)

// DatastreamPath is where the SSG Debian 12 datastream is inside the root.
const DatastreamPath = "/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml"

// Options configure Start. Zero values are defaulted.
type Options struct {
	// Script is scripts/debian-target.sh; empty means it is looked up in
	// the working directory and its parents (the module root).
	Script string
	// CacheDir holds the root's tarball and the tree unpacked from it
	// (shared by every target); empty means $NIGHTSHIFT_CACHE or
	// /var/cache/nightshift.
	CacheDir string
	// Dir holds the target's overlay (its root and its writes); empty
	// means a new temporary directory, removed by Close.
	Dir string
	// Hostname is the target's hostname (its own UTS namespace); default
	// "nightshift-target".
	Hostname string
	// Log receives the build script's progress; nil discards it.
	Log io.Writer
	// Sandbox keeps CAP_SYS_ADMIN and CAP_MKNOD in the target, so that a
	// recording sandbox (package sandbox) can make mount and PID namespaces
	// and overlays there, as it does on a real host. The target runs in a
	// user namespace of its own, so those capabilities cover only its own
	// namespaces: mounts of tmpfs, overlay, devpts and binds there, never
	// this machine's devices, superblocks, sysctls or /sys (see the package
	// documentation). False drops both, as before.
	Sandbox bool
	// SudoLogin gives Start's target LoginUser, an unprivileged login with
	// passwordless sudo that the control sshd accepts for the control key
	// (in ~LoginUser/.ssh/authorized_keys, as the target's own sshd would
	// read it), with sudo installed from the root's apt cache: the worker
	// then logs in as a hardened fleet's worker does and becomes root with
	// sudo (Target.LoginConfig). Root's control login is unchanged. False:
	// no such login and no sudo, as before. StartSystem's targets always
	// have LoginUser.
	SudoLogin bool
	// HostKeys are the root's own host keys in /etc/ssh (NewHostKeys),
	// shared by the targets given the same value; nil: new ones for each
	// target (ssh-keygen -A in the root, an RSA key among them).
	HostKeys *HostKeys
}

// Target is a running disposable Debian 12 host reachable over SSH as root
// on 127.0.0.1:Port with the key IdentityFile, verified against
// KnownHostsFile. It is safe for concurrent use; Close is idempotent.
type Target struct {
	// Root is the target's root directory on this machine.
	Root string
	// Dir holds Root and the client's key files.
	Dir  string
	Host string
	Port int
	Addr string
	User string
	// IdentityFile is the client's private key; KnownHostsFile lists the
	// control sshd's host key for Addr.
	IdentityFile   string
	KnownHostsFile string
	HostKey        ssh.PublicKey
	// ControlConfig is the control sshd's configuration inside the root.
	ControlConfig string
	// Login is LoginUser when Options.SudoLogin made it, else "".
	Login string

	cmd     *exec.Cmd
	rfs     *rootFS
	log     *lockedBuffer
	done    chan struct{}
	ownDir  bool
	once    sync.Once
	closeEr error
}

// Start builds or restores the root, prepares its control sshd and starts
// it in new namespaces. On error everything started is torn down.
func Start(ctx context.Context, opts Options) (_ *Target, err error) {
	if os.Geteuid() != 0 {
		return nil, ErrNotRoot
	}
	tarball, err := Tarball(ctx, opts)
	if err != nil {
		return nil, err
	}
	t := &Target{Host: "127.0.0.1", User: "root", log: &lockedBuffer{}, done: make(chan struct{})}
	if opts.Dir == "" {
		if t.Dir, err = os.MkdirTemp("", "nightshift-debian-"); err != nil {
			return nil, fmt.Errorf("debtarget: %w", err)
		}
		t.ownDir = true
	} else {
		t.Dir = opts.Dir
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
	if opts.SudoLogin {
		if err := t.addSudoLogin(ctx, hostname); err != nil {
			return nil, err
		}
	}
	if err := t.start(ctx, hostname, opts.Sandbox); err != nil {
		return nil, err
	}
	return t, nil
}

// Tarball returns the cached root tarball, building it with the script when
// absent (a minute or more: debootstrap from the machine's Debian mirror).
func Tarball(ctx context.Context, opts Options) (string, error) {
	script := opts.Script
	if script == "" {
		var err error
		if script, err = findScript(); err != nil {
			return "", err
		}
	}
	cmd := exec.CommandContext(ctx, script, "tarball")
	if opts.CacheDir != "" {
		cmd.Env = append(os.Environ(), "NIGHTSHIFT_CACHE="+opts.CacheDir)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if opts.Log != nil {
		cmd.Stderr = io.MultiWriter(&stderr, opts.Log)
	}
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("debtarget: %s tarball: %w: %v: %s", script, ErrBuild, err, tail(stderr.String(), 2000))
	}
	path := strings.TrimSpace(string(out))
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		return "", fmt.Errorf("debtarget: %s printed %q, not a tarball: %w", script, path, ErrBuild)
	}
	return path, nil
}

func findScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("debtarget: %w", err)
	}
	for {
		p := filepath.Join(dir, "scripts", "debian-target.sh")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("debtarget: scripts/debian-target.sh not found above the working directory: %w", ErrBuild)
		}
		dir = parent
	}
}

// prepare writes the control sshd's config, host key and authorized_keys
// under /etc/nightshift in the root, the client key outside it, and the
// target's own host keys.
func (t *Target) prepare(ctx context.Context, hk *HostKeys) error {
	etc := filepath.Join(t.Root, "etc", "nightshift")
	if err := os.MkdirAll(etc, 0o700); err != nil {
		return fmt.Errorf("debtarget: %w", err)
	}
	keygen := func(args ...string) error {
		if out, err := exec.CommandContext(ctx, "ssh-keygen", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("debtarget: ssh-keygen: %w: %s", err, bytes.TrimSpace(out))
		}
		return nil
	}
	t.IdentityFile = filepath.Join(t.Dir, "id_ed25519")
	if err := keygen("-q", "-t", "ed25519", "-N", "", "-C", "nightshift-control", "-f", t.IdentityFile); err != nil {
		return err
	}
	hostKey := filepath.Join(etc, "ssh_host_ed25519_key")
	if err := keygen("-q", "-t", "ed25519", "-N", "", "-C", "nightshift-target", "-f", hostKey); err != nil {
		return err
	}
	// The target's own host keys, as a Debian install has them.
	if err := hostKeys(ctx, t.Root, hk); err != nil {
		return err
	}
	pub, err := os.ReadFile(t.IdentityFile + ".pub")
	if err != nil {
		return fmt.Errorf("debtarget: %w", err)
	}
	if err := os.WriteFile(filepath.Join(etc, "authorized_keys"), pub, 0o600); err != nil {
		return fmt.Errorf("debtarget: %w", err)
	}
	hostPub, err := os.ReadFile(hostKey + ".pub")
	if err != nil {
		return fmt.Errorf("debtarget: %w", err)
	}
	if t.HostKey, _, _, _, err = ssh.ParseAuthorizedKey(hostPub); err != nil {
		return fmt.Errorf("debtarget: host key: %w", err)
	}
	if t.Port, err = freePort(); err != nil {
		return err
	}
	t.Addr = net.JoinHostPort(t.Host, strconv.Itoa(t.Port))
	t.KnownHostsFile = filepath.Join(t.Dir, "known_hosts")
	known := "[" + t.Host + "]:" + strconv.Itoa(t.Port) + " " + strings.TrimSpace(string(hostPub)) + "\n"
	if err := os.WriteFile(t.KnownHostsFile, []byte(known), 0o600); err != nil {
		return fmt.Errorf("debtarget: %w", err)
	}
	t.ControlConfig = "/etc/nightshift/sshd_config"
	return os.WriteFile(filepath.Join(t.Root, t.ControlConfig), []byte(controlConfig(t.Port, false)), 0o600)
}

// addSudoLogin makes LoginUser (Options.SudoLogin): sudo installed from
// the root's apt cache, the account with a home, a password field of "*"
// (no password, but not locked: the control sshd, without PAM, refuses
// accounts whose password is locked with "!", which useradd leaves), the
// control key in its ~/.ssh/authorized_keys, a sudoers.d entry, and the
// hostname in /etc/hosts, as a Debian installer leaves it, so sudo
// resolves it (else it warns on every command's stderr).
func (t *Target) addSudoLogin(ctx context.Context, hostname string) error {
	if err := installSudo(ctx, t.Root); err != nil {
		return err
	}
	if err := addHost(t.Root, hostname); err != nil {
		return err
	}
	if err := chroot(ctx, t.Root, "useradd", "-m", "-s", "/bin/bash", "-p", "*", LoginUser); err != nil {
		return err
	}
	pub, err := os.ReadFile(t.IdentityFile + ".pub")
	if err != nil {
		return fmt.Errorf("debtarget: %w", err)
	}
	dir := filepath.Join(t.Root, "home", LoginUser, ".ssh")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("debtarget: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600); err != nil {
		return fmt.Errorf("debtarget: %w", err)
	}
	if err := chroot(ctx, t.Root, "chown", "-R", LoginUser+":"+LoginUser, "/home/"+LoginUser+"/.ssh"); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(t.Root, "etc/sudoers.d", LoginUser), []byte(LoginUser+" ALL=(ALL) NOPASSWD:ALL\n"), 0o440); err != nil {
		return fmt.Errorf("debtarget: %w", err)
	}
	t.Login = LoginUser
	return os.WriteFile(filepath.Join(t.Root, t.ControlConfig), []byte(controlConfig(t.Port, true)), 0o600)
}

// addHost appends "127.0.1.1 HOSTNAME" to root's /etc/hosts.
func addHost(root, hostname string) error {
	f, err := os.OpenFile(filepath.Join(root, "etc/hosts"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("debtarget: %w", err)
	}
	_, err = fmt.Fprintf(f, "127.0.1.1\t%s\n", hostname)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("debtarget: /etc/hosts: %w", err)
	}
	return nil
}

// installSudo installs sudo in root from the .deb in its apt cache.
func installSudo(ctx context.Context, root string) error {
	debs, _ := filepath.Glob(filepath.Join(root, "var/cache/apt/archives/sudo_*.deb"))
	if len(debs) == 0 {
		return fmt.Errorf("debtarget: no sudo .deb in the root's apt cache: %w", ErrBuild)
	}
	return chroot(ctx, root, "dpkg", "-i", "/var/cache/apt/archives/"+filepath.Base(debs[0]))
}

// chroot runs a command in root (chroot ROOT NAME ARGS…).
func chroot(ctx context.Context, root string, args ...string) error {
	if out, err := exec.CommandContext(ctx, "chroot", append([]string{root}, args...)...).CombinedOutput(); err != nil {
		return fmt.Errorf("debtarget: chroot %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// LoginConfig is the sshexec configuration of the worker's login on a
// target started with Options.SudoLogin: LoginUser through the control
// sshd, every command through sudo. Without that option it is
// SSHConfig's root login.
func (t *Target) LoginConfig() sshexec.Config {
	cfg := t.SSHConfig()
	if t.Login != "" {
		cfg.User, cfg.Sudo = t.Login, true
	}
	return cfg
}

// controlConfig is the control sshd's configuration: its own port, host
// key and authorized_keys, key-only root login, nothing read from
// /etc/ssh, so remediations of /etc/ssh/sshd_config cannot lock the worker
// out. A login other than root (Options.SudoLogin) has its key in its own
// ~/.ssh/authorized_keys (/etc/nightshift is root's alone). It is not
// independent of everything: Debian's sshd is linked with libwrap, which
// reads /etc/hosts.allow and /etc/hosts.deny whatever the configuration
// says ("ALL: ALL" in hosts.deny refuses it too), and it needs root's
// passwd entry and shell.
func controlConfig(port int, userKeys bool) string {
	keys := "AuthorizedKeysFile /etc/nightshift/authorized_keys"
	if userKeys {
		keys += " .ssh/authorized_keys"
	}
	return strings.Join([]string{
		"# Nightshift control sshd: independent of the target's own sshd configuration.",
		"ListenAddress 127.0.0.1:" + strconv.Itoa(port),
		"HostKey /etc/nightshift/ssh_host_ed25519_key",
		keys,
		"PermitRootLogin prohibit-password",
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"UsePAM no",
		"StrictModes no",
		"PidFile none",
		"AllowTcpForwarding no",
		"X11Forwarding no",
		"PermitTunnel no",
		"LogLevel INFO",
		"",
	}, "\n")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("debtarget: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// droppedCaps leave the target unable to mount (and so to make /proc/sys or
// /sys writable), load modules, reboot, set the clock, reach raw devices,
// create device nodes, trace host processes, open files by handle or change
// the network.
var droppedCaps = []string{"sys_admin", "sys_module", "sys_boot", "sys_time", "sys_rawio", "mknod",
	"sys_ptrace", "net_admin", "mac_admin", "mac_override", "audit_control", "syslog", "sys_pacct",
	"wake_alarm", "block_suspend", "bpf", "perfmon", "linux_immutable",
	// open_by_handle_at reaches any inode of a file system the target
	// shares with this machine (its root's, devtmpfs behind /dev/null).
	"dac_read_search"}

// setupScript is the end of Start's PID 1 script (userSetup's $S2):
// sshd's own directories in /run, then the control sshd, with the
// bounding set $CAPS.
const setupScript = `mkdir -p /run/sshd /run/lock
exec setpriv --bounding-set "$CAPS" /usr/sbin/sshd -D -e -f /etc/nightshift/sshd_config
`

func (t *Target) start(ctx context.Context, hostname string, sandbox bool) error {
	var caps []string
	for _, c := range droppedCaps {
		if sandbox && (c == "sys_admin" || c == "mknod") {
			continue
		}
		caps = append(caps, "-"+c)
	}
	userns, err := userNamespace()
	if err != nil {
		return err
	}
	defer userns.Close()
	t.cmd = exec.Command("unshare", append([]string{"--mount", "--pid", "--fork", "--propagation", "private", "--kill-child", "--"},
		setupArgs(t.Root, hostname, caps, false, setupScript)...)...)
	t.cmd.ExtraFiles = []*os.File{userns}
	t.cmd.Stdout = t.log
	t.cmd.Stderr = t.log
	// Its own process group, so a Ctrl-C of the test run reaches it only
	// through Close; Pdeathsig tears it down if this process dies.
	t.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := t.cmd.Start(); err != nil {
		return fmt.Errorf("debtarget: %w: unshare: %v", ErrStart, err)
	}
	go func() {
		t.cmd.Wait()
		close(t.done)
	}()
	for {
		if strings.Contains(t.log.String(), "Server listening on") {
			return nil
		}
		select {
		case <-t.done:
			return fmt.Errorf("debtarget: %w: exited: %s", ErrStart, tail(t.log.String(), 2000))
		case <-ctx.Done():
			return fmt.Errorf("debtarget: %w: %v: %s", ErrStart, ctx.Err(), tail(t.log.String(), 2000))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// SSHConfig is the sshexec configuration of the control connection: the
// target's address, user, key and known_hosts, no ssh-agent. Callers add
// timeouts and the like.
func (t *Target) SSHConfig() sshexec.Config {
	return sshexec.Config{Host: t.Host, Port: t.Port, User: t.User, NoAgent: true,
		IdentityFiles: []string{t.IdentityFile}, KnownHostsFiles: []string{t.KnownHostsFile}}
}

// Close stops the target (SIGKILL to its PID 1 ends every process in its
// namespaces, and with them its mounts), unmounts the root's overlay,
// checks that no mount under Dir is left on the host and removes Dir if
// Start created it.
func (t *Target) Close() error {
	t.once.Do(func() {
		if t.cmd != nil && t.cmd.Process != nil {
			syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
			<-t.done
		}
		if t.Dir == "" {
			return
		}
		if err := t.rfs.unmount(); err != nil {
			t.closeEr = fmt.Errorf("%w: %w", ErrMountsLeft, err)
			return
		}
		if m := mountsUnder(t.Dir); len(m) > 0 {
			t.closeEr = fmt.Errorf("debtarget: %w: %s", ErrMountsLeft, strings.Join(m, ", "))
			return
		}
		if t.ownDir {
			if err := os.RemoveAll(t.Dir); err != nil {
				t.closeEr = fmt.Errorf("debtarget: remove %s: %w", t.Dir, err)
			}
		}
	})
	return t.closeEr
}

// mountsUnder lists the mount points at or under dir in this process's
// mount namespace.
func mountsUnder(dir string) []string {
	return MountsUnder("/proc/self/mountinfo", dir)
}

// MountsUnder reads a mountinfo file and returns the mount points at or
// under dir. An unreadable file is reported as one entry naming it, so a
// caller never deletes a tree it could not check.
func MountsUnder(mountinfo, dir string) []string {
	f, err := os.Open(mountinfo)
	if err != nil {
		return []string{mountinfo + ": " + err.Error()}
	}
	defer f.Close()
	dir = filepath.Clean(dir)
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMountinfo(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	return out
}

// unescapeMountinfo decodes the octal escapes (\040 for a space) of
// /proc/*/mountinfo.
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return s
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<20 {
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
