package simhost

import (
	"bufio"
	"cmp"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
)

// ErrConfig is wrapped by the errors Start returns for a bad Config.
var ErrConfig = errors.New("simhost: invalid config")

// Config configures a simulated host.
type Config struct {
	// HostKey is the server's key. Nil means a key derived from Name, so a
	// host restarted with the same name keeps its known_hosts entry.
	HostKey ssh.Signer
	// Name identifies the host (log lines, derived keys). Default "sim".
	Name string
	// AuthorizedKey is the only client key accepted. Required.
	AuthorizedKey ssh.PublicKey
	// Dir, when set, keeps the state and the exec log in files there (see
	// the package comment). Default: memory only.
	Dir string
	// State is the initial state when there is none in Dir.
	State map[string]string
	// OS and Version are what the worker's probe reads as os-release's ID
	// and VERSION_ID (a recipe key's OS family and version). Default
	// "simlinux" and "1".
	OS, Version string
	// Locked are the keys plain `set` refuses ("KEY: read-only", exit 1):
	// only `set --force KEY VALUE` changes them, as a drifted host of an
	// OS family may need another fix than its siblings.
	Locked []string
	// DieAfter makes the host stop answering (as Close) when the command
	// after DieAfter commands arrives; that command does not run. Zero
	// means never.
	DieAfter int
	// Exec, when set, runs each command in place of the built-in language
	// (after sshexec's preamble was answered and the command logged): it
	// writes the command's output and returns its exit status. It is
	// called without the host's lock, concurrently for concurrent
	// sessions. Its ctx is cancelled when sshexec kills the command's
	// process group (a timeout or a cancelled Run) and when the host
	// closes. Nil means the built-in language, which executes nothing.
	Exec func(ctx context.Context, command string, stdout, stderr io.Writer) int
}

// Host is a running simulated host.
type Host struct {
	Addr string // 127.0.0.1:port
	Port int

	cfg     Config
	ln      net.Listener
	hostKey ssh.Signer
	srv     *ssh.ServerConfig

	mu     sync.Mutex
	state  map[string]string
	log    []string
	execs  int
	closed bool
	conns  map[net.Conn]bool
	logf   *os.File
	wg     sync.WaitGroup
	// running cancels the Exec calls in progress (Config.Exec only).
	running map[*context.CancelFunc]bool
	ctx     context.Context // cancelled by Close
	cancel  context.CancelFunc
}

// KeyFromSeed returns an ed25519 key derived from seed (tests only: the key
// is as secret as the seed).
func KeyFromSeed(seed string) ssh.Signer {
	sum := sha256.Sum256([]byte("nightshift simhost " + seed))
	s, _ := ssh.NewSignerFromKey(ed25519.NewKeyFromSeed(sum[:]))
	return s
}

// Start starts a host listening on 127.0.0.1 at a free port. ctx bounds
// only the start.
func Start(ctx context.Context, cfg Config) (*Host, error) {
	if cfg.AuthorizedKey == nil {
		return nil, fmt.Errorf("%w: AuthorizedKey is required", ErrConfig)
	}
	if cfg.Name == "" {
		cfg.Name = "sim"
	}
	if cfg.HostKey == nil {
		cfg.HostKey = KeyFromSeed("host " + cfg.Name)
	}
	h := &Host{cfg: cfg, hostKey: cfg.HostKey, state: map[string]string{}, conns: map[net.Conn]bool{},
		running: map[*context.CancelFunc]bool{}}
	h.ctx, h.cancel = context.WithCancel(context.WithoutCancel(ctx))
	for k, v := range cfg.State {
		h.state[k] = v
	}
	if err := h.load(); err != nil {
		return nil, err
	}
	want := cfg.AuthorizedKey.Marshal()
	h.srv = &ssh.ServerConfig{PublicKeyCallback: func(_ ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
		if string(k.Marshal()) == string(want) {
			return nil, nil
		}
		return nil, errors.New("unknown key")
	}}
	h.srv.AddHostKey(h.hostKey)
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("simhost %s: listen: %w", cfg.Name, err)
	}
	h.ln = ln
	h.Addr = ln.Addr().String()
	h.Port = ln.Addr().(*net.TCPAddr).Port
	h.wg.Add(1)
	go h.accept()
	return h, nil
}

// load reads the state and the log from Dir.
func (h *Host) load() error {
	if h.cfg.Dir == "" {
		return nil
	}
	if err := os.MkdirAll(h.cfg.Dir, 0o755); err != nil {
		return fmt.Errorf("simhost %s: %w", h.cfg.Name, err)
	}
	if b, err := os.ReadFile(filepath.Join(h.cfg.Dir, "state.json")); err == nil {
		st := map[string]string{}
		if err := json.Unmarshal(b, &st); err != nil {
			return fmt.Errorf("simhost %s: state.json: %w", h.cfg.Name, err)
		}
		h.state = st
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("simhost %s: %w", h.cfg.Name, err)
	}
	logs, err := ReadLog(h.cfg.Dir)
	if err != nil {
		return err
	}
	h.log = logs
	f, err := os.OpenFile(filepath.Join(h.cfg.Dir, "exec.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("simhost %s: %w", h.cfg.Name, err)
	}
	h.logf = f
	return nil
}

// ReadLog returns the commands logged in dir's exec.log, oldest first.
func ReadLog(dir string) ([]string, error) {
	f, err := os.Open(filepath.Join(dir, "exec.log"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("simhost: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var s string
		if json.Unmarshal(sc.Bytes(), &s) == nil { // a torn last line is skipped
			out = append(out, s)
		}
	}
	return out, sc.Err()
}

// Log returns every command the host received, oldest first.
func (h *Host) Log() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.log...)
}

// Count returns how many times command was received.
func (h *Host) Count(command string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.log {
		if c == command {
			n++
		}
	}
	return n
}

// OpenConns returns how many client connections the host has open.
func (h *Host) OpenConns() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// Get returns a state value.
func (h *Host) Get(key string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state[key]
}

// KnownHostsLine returns the known_hosts line for the host.
func (h *Host) KnownHostsLine() string {
	return fmt.Sprintf("[127.0.0.1]:%d %s", h.Port, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(h.hostKey.PublicKey()))))
}

// Close stops the host: the listener and every connection are closed.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	h.cancel()
	for c := range h.conns {
		c.Close()
	}
	h.mu.Unlock()
	err := h.ln.Close()
	h.wg.Wait()
	if h.logf != nil {
		h.logf.Close()
	}
	return err
}

func (h *Host) accept() {
	defer h.wg.Done()
	for {
		c, err := h.ln.Accept()
		if err != nil {
			return
		}
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			c.Close()
			return
		}
		h.conns[c] = true
		h.mu.Unlock()
		h.wg.Add(1)
		go h.serve(c)
	}
}

func (h *Host) serve(c net.Conn) {
	defer h.wg.Done()
	defer func() {
		h.mu.Lock()
		delete(h.conns, c)
		h.mu.Unlock()
		c.Close()
	}()
	sc, chans, reqs, err := ssh.NewServerConn(c, h.srv)
	if err != nil {
		return
	}
	defer sc.Close()
	go func() {
		for r := range reqs { // keepalives
			if r.WantReply {
				r.Reply(false, nil)
			}
		}
	}()
	var wg sync.WaitGroup
	for nc := range chans {
		if nc.ChannelType() != "session" {
			nc.Reject(ssh.UnknownChannelType, "only sessions")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.session(ch, creqs)
		}()
	}
	wg.Wait()
}

func (h *Host) session(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	for r := range reqs {
		switch r.Type {
		case "exec":
			var p struct{ Command string }
			if err := ssh.Unmarshal(r.Payload, &p); err != nil {
				r.Reply(false, nil)
				return
			}
			r.Reply(true, nil)
			code, ok := h.exec(p.Command, ch, ch.Stderr())
			if !ok {
				return
			}
			var st [4]byte
			binary.BigEndian.PutUint32(st[:], uint32(code))
			ch.SendRequest("exit-status", false, st[:])
			return
		default: // env, pty-req, signal…
			if r.WantReply {
				r.Reply(r.Type == "env", nil)
			}
		}
	}
}

var (
	preamble = regexp.MustCompile(`^printf '(sshexec-pgid:)%s:%s\\n' ([0-9a-f]+) \$\$ >&2; `)
	// groupKill is sshexec's kill of the fake process group the preamble
	// announced.
	groupKill = regexp.MustCompile(`^kill -[A-Z0-9]+ -- -` + strconv.Itoa(fakeGroup) + ` 2>/dev/null$`)
)

// fakeGroup is the process group announced to sshexec.
const fakeGroup = 4242

// exec runs one command. ok is false when the host died instead.
func (h *Host) exec(command string, stdout, stderr io.Writer) (code int, ok bool) {
	if m := preamble.FindStringSubmatch(command); m != nil {
		fmt.Fprintf(stderr, "%s%s:%d\n", m[1], m[2], fakeGroup)
		command = command[len(m[0]):]
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return 0, false
	}
	h.execs++
	if h.cfg.DieAfter > 0 && h.execs > h.cfg.DieAfter {
		h.mu.Unlock()
		go h.Close()
		return 0, false
	}
	h.log = append(h.log, command)
	if h.logf != nil {
		b, _ := json.Marshal(command)
		h.logf.Write(append(b, '\n'))
	}
	if h.cfg.Exec == nil {
		defer h.mu.Unlock()
		return h.interpret(command, stdout, stderr), true
	}
	if groupKill.MatchString(command) {
		for c := range h.running {
			(*c)()
		}
		h.mu.Unlock()
		return 0, true
	}
	ctx, cancel := context.WithCancel(h.ctx)
	h.running[&cancel] = true
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.running, &cancel)
		h.mu.Unlock()
		cancel()
	}()
	return h.cfg.Exec(ctx, command, stdout, stderr), true
}

// interpret runs command against the state; h.mu is held.
func (h *Host) interpret(command string, stdout, stderr io.Writer) int {
	f := strings.Fields(command)
	if strings.HasPrefix(command, ". /etc/os-release") {
		fmt.Fprintf(stdout, "os=Simulated Linux (%s)\nid=%s\nversion=%s\npkg=apt-get\ninit=systemd\n",
			h.cfg.Name, cmp.Or(h.cfg.OS, "simlinux"), cmp.Or(h.cfg.Version, "1"))
		return 0
	}
	if len(f) == 0 {
		return 0
	}
	switch f[0] {
	case "set":
		force := len(f) > 1 && f[1] == "--force"
		if force {
			f = append(f[:1], f[2:]...)
		}
		if len(f) < 3 {
			fmt.Fprintln(stderr, "set: usage: set [--force] KEY VALUE")
			return 2
		}
		if !force && slices.Contains(h.cfg.Locked, f[1]) {
			fmt.Fprintf(stderr, "set: %s: read-only (use set --force)\n", f[1])
			return 1
		}
		v := strings.Join(f[2:], " ")
		h.state[f[1]] = v
		if err := h.save(); err != nil {
			fmt.Fprintln(stderr, "set:", err)
			return 1
		}
		fmt.Fprintf(stdout, "%s=%s\n", f[1], v)
		return 0
	case "test":
		if len(f) != 4 || f[2] != "=" {
			fmt.Fprintln(stderr, "test: usage: test KEY = VALUE")
			return 2
		}
		if h.state[f[1]] == f[3] {
			return 0
		}
		fmt.Fprintf(stdout, "%s is %q, want %q\n", f[1], h.state[f[1]], f[3])
		return 1
	case "echo":
		fmt.Fprintln(stdout, strings.Join(f[1:], " "))
		return 0
	case "true", "kill":
		return 0
	case "false":
		return 1
	}
	fmt.Fprintf(stderr, "sh: 1: %s: not found\n", f[0])
	return 127
}

// save writes the state to Dir; h.mu is held.
func (h *Host) save() error {
	if h.cfg.Dir == "" {
		return nil
	}
	b, err := json.Marshal(h.state)
	if err != nil {
		return err
	}
	tmp := filepath.Join(h.cfg.Dir, "state.json.tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(h.cfg.Dir, "state.json"))
}

// WriteKey writes the private key KeyFromSeed(seed) derives to path, in
// OpenSSH format (mode 0600), for clients that take key files.
func WriteKey(path, seed string) error {
	sum := sha256.Sum256([]byte("nightshift simhost " + seed))
	blk, err := ssh.MarshalPrivateKey(ed25519.NewKeyFromSeed(sum[:]), "")
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(blk), 0o600)
}
