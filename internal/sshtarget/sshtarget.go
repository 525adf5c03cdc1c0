package sshtarget

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// ErrNotInstalled is wrapped by Start's error when sshd or ssh-keygen is
// missing.
var ErrNotInstalled = errors.New("openssh is not installed (install the Debian packages openssh-server and openssh-client)")

// Options configures Start. The zero value is a ready target: an ed25519
// client key without passphrase, authorized for the current user.
type Options struct {
	// User is the login user. Default: the current user. When Start is not
	// run as root it must be the current user, because an unprivileged
	// sshd can only authenticate the user it runs as.
	User string
	// ClientKeyType is the client key's type: "ed25519" (default), "rsa"
	// or "ecdsa".
	ClientKeyType string
	// ClientKeyPassphrase, when non-empty, encrypts the client private key
	// with this passphrase (a test fixture, passed to ssh-keygen's -N).
	ClientKeyPassphrase string
	// UserCA makes a user certificate authority, signs the client key with
	// it (Target.CertificateFile) and trusts only the CA: authorized_keys is
	// disabled, so the plain key alone cannot log in.
	UserCA bool
	// AllowTCPForwarding enables direct-tcpip channels, as a ProxyJump host
	// needs. Default: off.
	AllowTCPForwarding bool
	// ExtraConfig lines are appended to the generated sshd_config.
	ExtraConfig []string
	// SSHD is the sshd binary. Default: /usr/sbin/sshd, else sshd on PATH.
	SSHD string
	// Dir is where the files go; it must exist. Default: a new temporary
	// directory that Close removes.
	Dir string
	// Sandbox runs sshd, and so every command run through the target, in a
	// disposable sandbox (see sandbox.go): new mount, PID, IPC and UTS
	// namespaces where the whole file system is read-only except a private
	// /tmp, /var/tmp, Dir and the Writable paths, with a minimal /dev and a
	// capability bounding set without CAP_SYS_ADMIN, CAP_NET_ADMIN,
	// CAP_SYS_BOOT, CAP_SYS_MODULE, CAP_SYS_TIME, CAP_MKNOD or CAP_SYS_RAWIO.
	// Needs root and bubblewrap (Debian package bubblewrap). Use it
	// whenever commands not written by the test itself (a model's, a
	// policy's) run through the target.
	Sandbox bool
	// Writable are host paths the sandbox may write to (bind-mounted
	// read-write at the same place), such as a test's temporary directory.
	Writable []string
}

// When Start runs as root, sshd runs in its own mount namespace where the
// login user's home directory is an empty directory (Dir/home): bash reads
// ~/.bashrc for every command sshd starts, and a development machine's
// (pyenv's init, for one) took a second per command and could change what
// commands see. The machine's home directory itself is never touched.

// Target is a running sshd. Its fields are read-only.
type Target struct {
	// Addr is "127.0.0.1:PORT"; Host and Port are its parts.
	Addr string
	Host string
	Port int
	// User is the login user.
	User string
	// Dir holds every generated file.
	Dir string
	// IdentityFile is the client private key (OpenSSH format); its public
	// key is IdentityFile + ".pub".
	IdentityFile string
	// CertificateFile is the client's user certificate when Options.UserCA
	// is set, else "".
	CertificateFile string
	// KnownHostsFile lists the target's host key under "[127.0.0.1]:PORT".
	KnownHostsFile string
	// HostKey is the target's public host key.
	HostKey ssh.PublicKey
	// ConfigFile is the sshd_config sshd runs with.
	ConfigFile string

	sshd      string     // the binary, for Restart
	opts      Options    // for Restart
	mu        sync.Mutex // guards cmd, log and exited across Stop and Restart
	cmd       *exec.Cmd
	log       *logBuffer
	exited    chan struct{}
	removeDir bool
	closeOnce sync.Once
	closeErr  error
}

// Start generates keys and configuration and starts sshd on 127.0.0.1. It
// returns once sshd logs that it is listening, or with an error that
// includes sshd's own output.
func Start(ctx context.Context, opts Options) (*Target, error) {
	sshd, keygen, err := findBinaries(opts.SSHD)
	if err != nil {
		return nil, err
	}
	login, err := loginUser(opts.User)
	if err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		// sshd refuses to start as root without its privilege separation
		// directory; Debian's package normally has systemd create it.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			return nil, fmt.Errorf("sshtarget: create privilege separation directory: %w", err)
		}
	}
	t := &Target{User: login, Host: "127.0.0.1", Dir: opts.Dir}
	if t.Dir == "" {
		d, err := os.MkdirTemp("", "sshtarget-")
		if err != nil {
			return nil, fmt.Errorf("sshtarget: create directory: %w", err)
		}
		t.Dir, t.removeDir = d, true
	}
	ok := false
	defer func() {
		if !ok && t.removeDir {
			os.RemoveAll(t.Dir)
		}
	}()
	if err := t.generateKeys(ctx, keygen, opts); err != nil {
		return nil, err
	}
	// A port picked by binding :0 can be taken before sshd binds it; retry
	// a few times when sshd says so.
	for attempt := 0; ; attempt++ {
		err := t.start(ctx, sshd, opts)
		if err == nil {
			break
		}
		if !errors.Is(err, errAddrInUse) || attempt == 4 {
			return nil, err
		}
	}
	ok = true
	return t, nil
}

var errAddrInUse = errors.New("address already in use")

func findBinaries(sshd string) (string, string, error) {
	if sshd == "" {
		sshd = "/usr/sbin/sshd"
		if _, err := os.Stat(sshd); err != nil {
			p, err := exec.LookPath("sshd")
			if err != nil {
				return "", "", fmt.Errorf("sshtarget: sshd not found: %w", ErrNotInstalled)
			}
			sshd = p
		}
	}
	// sshd re-executes itself and insists on an absolute path.
	abs, err := filepath.Abs(sshd)
	if err != nil {
		return "", "", fmt.Errorf("sshtarget: sshd path %q: %w", sshd, err)
	}
	if _, err := os.Stat(abs); err != nil {
		return "", "", fmt.Errorf("sshtarget: sshd %s: %w: %w", abs, ErrNotInstalled, err)
	}
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		return "", "", fmt.Errorf("sshtarget: ssh-keygen not found: %w", ErrNotInstalled)
	}
	return abs, keygen, nil
}

func loginUser(want string) (string, error) {
	cur, err := user.Current()
	if err != nil {
		return "", fmt.Errorf("sshtarget: current user: %w", err)
	}
	if want == "" {
		return cur.Username, nil
	}
	if os.Geteuid() != 0 && want != cur.Username {
		return "", fmt.Errorf("sshtarget: user %q: an unprivileged sshd (running as %q) can only log in its own user", want, cur.Username)
	}
	if _, err := user.Lookup(want); err != nil {
		return "", fmt.Errorf("sshtarget: user %q: %w", want, err)
	}
	return want, nil
}

func (t *Target) generateKeys(ctx context.Context, keygen string, opts Options) error {
	keyType := opts.ClientKeyType
	if keyType == "" {
		keyType = "ed25519"
	}
	switch keyType {
	case "ed25519", "rsa", "ecdsa":
	default:
		return fmt.Errorf("sshtarget: client key type %q: want ed25519, rsa or ecdsa", keyType)
	}
	hostKey := filepath.Join(t.Dir, "ssh_host_ed25519_key")
	t.IdentityFile = filepath.Join(t.Dir, "id_"+keyType)
	run := func(what string, args ...string) error {
		out, err := exec.CommandContext(ctx, keygen, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("sshtarget: ssh-keygen %s: %w: %s", what, err, bytes.TrimSpace(out))
		}
		return nil
	}
	if err := run("host key", "-q", "-t", "ed25519", "-N", "", "-C", "sshtarget-host", "-f", hostKey); err != nil {
		return err
	}
	clientArgs := []string{"-q", "-t", keyType, "-N", opts.ClientKeyPassphrase, "-C", "sshtarget-client", "-f", t.IdentityFile}
	if keyType == "rsa" {
		clientArgs = append(clientArgs, "-b", "3072")
	}
	if err := run("client key", clientArgs...); err != nil {
		return err
	}
	pub, err := os.ReadFile(t.IdentityFile + ".pub")
	if err != nil {
		return fmt.Errorf("sshtarget: read client public key: %w", err)
	}
	authorized := pub
	if opts.UserCA {
		ca := filepath.Join(t.Dir, "user_ca")
		if err := run("user CA", "-q", "-t", "ed25519", "-N", "", "-C", "sshtarget-user-ca", "-f", ca); err != nil {
			return err
		}
		if err := run("sign client key", "-q", "-s", ca, "-I", "sshtarget-client", "-n", t.User, t.IdentityFile+".pub"); err != nil {
			return err
		}
		t.CertificateFile = t.IdentityFile + "-cert.pub"
		authorized = nil
	}
	if err := os.WriteFile(filepath.Join(t.Dir, "authorized_keys"), authorized, 0o600); err != nil {
		return fmt.Errorf("sshtarget: write authorized_keys: %w", err)
	}
	hostPub, err := os.ReadFile(hostKey + ".pub")
	if err != nil {
		return fmt.Errorf("sshtarget: read host public key: %w", err)
	}
	t.HostKey, _, _, _, err = ssh.ParseAuthorizedKey(hostPub)
	if err != nil {
		return fmt.Errorf("sshtarget: parse host public key: %w", err)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (t *Target) start(ctx context.Context, sshd string, opts Options) error {
	port, err := freePort()
	if err != nil {
		return fmt.Errorf("sshtarget: find a free port: %w", err)
	}
	t.sshd, t.opts = sshd, opts
	t.Port = port
	t.Addr = net.JoinHostPort(t.Host, strconv.Itoa(port))
	t.ConfigFile = filepath.Join(t.Dir, "sshd_config")
	if err := os.WriteFile(t.ConfigFile, []byte(t.config(opts)), 0o600); err != nil {
		return fmt.Errorf("sshtarget: write sshd_config: %w", err)
	}
	line := knownhosts.Line([]string{knownhosts.Normalize(t.Addr)}, t.HostKey)
	t.KnownHostsFile = filepath.Join(t.Dir, "known_hosts")
	if err := os.WriteFile(t.KnownHostsFile, []byte(line+"\n"), 0o600); err != nil {
		return fmt.Errorf("sshtarget: write known_hosts: %w", err)
	}

	return t.launch(ctx)
}

// launch starts sshd with the target's configuration and waits until it
// listens.
func (t *Target) launch(ctx context.Context) error {
	sshd, opts, port := t.sshd, t.opts, t.Port
	t.mu.Lock()
	defer t.mu.Unlock()
	t.log = newLogBuffer("Server listening on " + t.Host + " port " + strconv.Itoa(port))
	t.exited = make(chan struct{})
	args := []string{"-D", "-e", "-f", t.ConfigFile}
	cmd := exec.Command(sshd, args...)
	home, err := t.cleanHome()
	if err != nil {
		return err
	}
	switch {
	case opts.Sandbox:
		if cmd, err = sandboxed(sshd, args, t.Dir, opts.Writable, home); err != nil {
			return err
		}
	case home.dir != "":
		cmd = withHome(sshd, args, home)
	}
	cmd.Stdout = t.log
	cmd.Stderr = t.log
	cmd.Dir = t.Dir
	// Own process group, so a terminal's Ctrl-C aimed at the test binary
	// is not what stops it; Close does.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("sshtarget: start %s: %w", sshd, err)
	}
	t.cmd = cmd
	exited := t.exited
	go func() {
		cmd.Wait()
		close(exited)
	}()
	select {
	case <-t.log.ready:
		return nil
	case <-exited:
		out := t.log.String()
		if strings.Contains(out, "Address already in use") {
			return fmt.Errorf("sshtarget: sshd on port %d: %w", port, errAddrInUse)
		}
		return fmt.Errorf("sshtarget: sshd exited before listening (%s): %s", cmd.ProcessState, strings.TrimSpace(out))
	case <-ctx.Done():
		t.killLocked()
		return fmt.Errorf("sshtarget: waiting for sshd to listen: %w; sshd said: %s", ctx.Err(), strings.TrimSpace(t.log.String()))
	}
}

func (t *Target) config(opts Options) string {
	forwarding := "no"
	if opts.AllowTCPForwarding {
		forwarding = "yes"
	}
	lines := []string{
		"# Generated by internal/sshtarget for a disposable test server.",
		"ListenAddress " + t.Addr,
		"HostKey " + filepath.Join(t.Dir, "ssh_host_ed25519_key"),
		"PidFile none",
		"AuthorizedKeysFile " + filepath.Join(t.Dir, "authorized_keys"),
		"AllowUsers " + t.User,
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"HostbasedAuthentication no",
		"PermitRootLogin prohibit-password",
		"UsePAM no",
		"StrictModes no",
		"AllowTcpForwarding " + forwarding,
		"AllowAgentForwarding no",
		"AllowStreamLocalForwarding no",
		"X11Forwarding no",
		"PermitTunnel no",
		"PermitUserEnvironment no",
		"PrintMotd no",
		"PrintLastLog no",
		"MaxStartups 64:30:128",
		"MaxSessions 64",
		"LogLevel INFO",
	}
	if opts.UserCA {
		lines = append(lines, "TrustedUserCAKeys "+filepath.Join(t.Dir, "user_ca.pub"))
	}
	lines = append(lines, opts.ExtraConfig...)
	return strings.Join(lines, "\n") + "\n"
}

// Log returns what sshd has written to its standard error so far (the last
// 1 MiB) since it last started, for test failure messages.
func (t *Target) Log() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.log.String()
}

// Stop kills sshd and every connection it serves, as a crash of the host's
// sshd would: the listener is gone (dials are refused) and each session's
// processes are killed. The files and the port are kept for Restart.
func (t *Target) Stop() { t.kill() }

// Restart starts sshd again after Stop, on the same port with the same
// keys and configuration, and returns once it listens.
func (t *Target) Restart(ctx context.Context) error {
	return t.launch(ctx)
}

// SSHArgs returns OpenSSH client options that reach this target with its own
// key and known_hosts and nothing from the user's configuration, followed by
// the destination: append a command to run one.
func (t *Target) SSHArgs() []string {
	args := []string{
		"-F", "/dev/null",
		"-o", "BatchMode=yes",
		"-o", "IdentitiesOnly=yes",
		"-o", "IdentityAgent=none",
		"-o", "StrictHostKeyChecking=yes",
		"-o", "UserKnownHostsFile=" + t.KnownHostsFile,
		"-o", "GlobalKnownHostsFile=/dev/null",
		"-i", t.IdentityFile,
	}
	if t.CertificateFile != "" {
		args = append(args, "-o", "CertificateFile="+t.CertificateFile)
	}
	return append(args, "-p", strconv.Itoa(t.Port), "-l", t.User, t.Host)
}

// Close stops sshd and every connection it is serving, then removes the
// directory if Start created it. It is idempotent.
func (t *Target) Close() error {
	t.closeOnce.Do(func() {
		t.kill()
		if t.removeDir {
			if err := os.RemoveAll(t.Dir); err != nil {
				t.closeErr = fmt.Errorf("sshtarget: remove %s: %w", t.Dir, err)
			}
		}
	})
	return t.closeErr
}

// kill stops the listener and its per-connection children. sshd's
// connection processes call setsid, so they are found through /proc rather
// than the process group.
func (t *Target) kill() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.killLocked()
}

func (t *Target) killLocked() {
	if t.cmd == nil || t.cmd.Process == nil {
		return
	}
	pid := t.cmd.Process.Pid
	for _, child := range descendants(pid) {
		syscall.Kill(child, syscall.SIGKILL)
	}
	t.cmd.Process.Signal(syscall.SIGTERM)
	<-t.exited
}

// descendants lists the processes below pid, read from /proc.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the parenthesised command name: state ppid ...
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 2 {
			continue
		}
		ppid, err := strconv.Atoi(fields[1])
		if err != nil {
			continue
		}
		children[ppid] = append(children[ppid], p)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// logBuffer keeps the last logCap bytes sshd wrote and closes ready when
// the marker line first appears.
type logBuffer struct {
	mu     sync.Mutex
	buf    []byte
	marker string
	ready  chan struct{}
	seen   bool
}

const logCap = 1 << 20

func newLogBuffer(marker string) *logBuffer {
	return &logBuffer{marker: marker, ready: make(chan struct{})}
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if !l.seen && bytes.Contains(l.buf, []byte(l.marker)) {
		l.seen = true
		close(l.ready)
	}
	if len(l.buf) > logCap {
		l.buf = append(l.buf[:0], l.buf[len(l.buf)-logCap:]...)
	}
	return len(p), nil
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.buf)
}
