package sshexec

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// exit is how a test command ends.
type exit struct {
	status int    // exit-status; ignored when signal is set
	signal string // exit-signal name, e.g. "TERM"
	none   bool   // close the channel without exit-status or exit-signal
}

// execCtx is what a test command sees.
type execCtx struct {
	stdout  io.Writer
	stderr  io.Writer
	ch      ssh.Channel
	raw     net.Conn        // the TCP connection, for simulated drops
	signals <-chan string   // signal requests from the client
	gone    <-chan struct{} // the client closed the channel
}

type handler func(x *execCtx) exit

// testServer is an in-process x/crypto/ssh server with scripted commands.
type testServer struct {
	t          *testing.T
	ln         net.Listener
	addr       string
	host, port string
	hostSigner ssh.Signer
	cfg        *ssh.ServerConfig

	mu       sync.Mutex
	handlers map[string]handler
	execs    map[string]int
	signals  []string
	conns    []net.Conn
	dials    int
	started  map[string]chan struct{}
	// forward enables direct-tcpip channels (a jump host).
	forward bool
	// groups maps the fake process groups announced to clients to the
	// sessions' signal channels, for "kill -SIG -- -PGID" helper commands.
	groups map[int]chan string
}

// preamble matches Run's process group announcement (see kill.go).
var (
	preamble = regexp.MustCompile(`(?s)^printf '` + pgidTag + `%s:%s\\n' ([0-9a-f]+) \$\$ >&2; (.*)$`)
	killCmd  = regexp.MustCompile(`^(?:sudo -n )?kill -([A-Z]+) -- -([0-9]+) 2>/dev/null$`)
)

func newKey(t testing.TB) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newTestServer serves until the test ends, authorizing the given keys.
func newTestServer(t *testing.T, authorized ...ssh.PublicKey) *testServer {
	t.Helper()
	s := &testServer{
		t: t, hostSigner: newKey(t),
		handlers: map[string]handler{}, execs: map[string]int{}, started: map[string]chan struct{}{},
		groups: map[int]chan string{},
	}
	s.cfg = &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			for _, a := range authorized {
				if string(a.Marshal()) == string(key.Marshal()) {
					return &ssh.Permissions{}, nil
				}
			}
			return nil, errors.New("key not authorized")
		},
	}
	s.cfg.AddHostKey(s.hostSigner)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.ln = ln
	s.addr = ln.Addr().String()
	s.host, s.port, _ = net.SplitHostPort(s.addr)
	go s.serve()
	t.Cleanup(func() {
		ln.Close()
		s.dropAll()
	})
	return s
}

func (s *testServer) portNum() int {
	p, _ := strconv.Atoi(s.port)
	return p
}

func (s *testServer) handle(cmd string, h handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[cmd] = h
	s.started[cmd] = make(chan struct{})
}

// startedCh is closed when cmd first starts running.
func (s *testServer) startedCh(cmd string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started[cmd]
}

func (s *testServer) execCount(cmd string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.execs[cmd]
}

func (s *testServer) dialCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dials
}

func (s *testServer) signalLog() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.signals...)
}

// dropAll closes every client TCP connection, as a crashing network would.
func (s *testServer) dropAll() {
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// knownHosts writes a known_hosts file listing the server's key.
func (s *testServer) knownHosts(t *testing.T, addrs ...string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "known_hosts")
	var names []string
	for _, a := range append([]string{s.addr}, addrs...) {
		names = append(names, knownhosts.Normalize(a))
	}
	line := knownhosts.Line(names, s.hostSigner.PublicKey())
	if err := os.WriteFile(f, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func (s *testServer) serve() {
	for {
		raw, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.dials++
		s.conns = append(s.conns, raw)
		s.mu.Unlock()
		go s.serveConn(raw)
	}
}

// setAuth replaces the public key check (before clients connect).
func (s *testServer) setAuth(cb func(ssh.ConnMetadata, ssh.PublicKey) (*ssh.Permissions, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cfg := *s.cfg
	cfg.PublicKeyCallback = cb
	s.cfg = &cfg
}

func (s *testServer) serveConn(raw net.Conn) {
	s.mu.Lock()
	cfg := s.cfg
	s.mu.Unlock()
	sconn, chans, reqs, err := ssh.NewServerConn(raw, cfg)
	if err != nil {
		raw.Close()
		return
	}
	defer sconn.Close()
	go ssh.DiscardRequests(reqs) // keepalives get a (negative) answer, as from OpenSSH
	for nc := range chans {
		switch nc.ChannelType() {
		case "session":
			ch, creqs, err := nc.Accept()
			if err != nil {
				continue
			}
			go s.serveSession(raw, ch, creqs)
		case "direct-tcpip":
			if !s.forward {
				nc.Reject(ssh.Prohibited, "forwarding disabled")
				continue
			}
			go s.serveForward(nc)
		default:
			nc.Reject(ssh.UnknownChannelType, "unsupported")
		}
	}
}

func (s *testServer) serveForward(nc ssh.NewChannel) {
	var p struct {
		Host       string
		Port       uint32
		OriginHost string
		OriginPort uint32
	}
	if err := ssh.Unmarshal(nc.ExtraData(), &p); err != nil {
		nc.Reject(ssh.ConnectionFailed, "bad payload")
		return
	}
	target, err := net.Dial("tcp", net.JoinHostPort(p.Host, strconv.Itoa(int(p.Port))))
	if err != nil {
		nc.Reject(ssh.ConnectionFailed, err.Error())
		return
	}
	ch, reqs, err := nc.Accept()
	if err != nil {
		target.Close()
		return
	}
	go ssh.DiscardRequests(reqs)
	go func() {
		io.Copy(target, ch)
		target.Close()
	}()
	io.Copy(ch, target)
	ch.Close()
}

func (s *testServer) serveSession(raw net.Conn, ch ssh.Channel, reqs <-chan *ssh.Request) {
	signals := make(chan string, 16)
	gone := make(chan struct{})
	running := false
	for req := range reqs {
		switch req.Type {
		case "exec":
			var p struct{ Command string }
			if running || ssh.Unmarshal(req.Payload, &p) != nil {
				req.Reply(false, nil)
				continue
			}
			if m := killCmd.FindStringSubmatch(p.Command); m != nil {
				pgid, _ := strconv.Atoi(m[2])
				s.mu.Lock()
				target := s.groups[pgid]
				if target != nil {
					s.signals = append(s.signals, m[1])
				}
				s.mu.Unlock()
				if target != nil {
					select {
					case target <- m[1]:
					default:
					}
				}
				req.Reply(true, nil)
				running = true
				go s.run(raw, ch, func(*execCtx) exit { return exit{} }, nil, gone, nil)
				continue
			}
			announce := ""
			if m := preamble.FindStringSubmatch(p.Command); m != nil {
				s.mu.Lock()
				pgid := 1000 + len(s.groups)
				s.groups[pgid] = signals
				s.mu.Unlock()
				announce = fmt.Sprintf("%s%s:%d\n", pgidTag, m[1], pgid)
				p.Command = m[2]
			}
			if announce != "" {
				io.WriteString(ch.Stderr(), announce)
			}
			s.mu.Lock()
			h, ok := s.handlers[p.Command]
			s.execs[p.Command]++
			started := s.started[p.Command]
			s.mu.Unlock()
			if !ok {
				h = func(x *execCtx) exit {
					io.WriteString(x.stderr, "sh: command not found\n")
					return exit{status: 127}
				}
			}
			req.Reply(true, nil)
			running = true
			go s.run(raw, ch, h, signals, gone, started)
		case "signal":
			var p struct{ Signal string }
			ssh.Unmarshal(req.Payload, &p)
			s.mu.Lock()
			s.signals = append(s.signals, p.Signal)
			s.mu.Unlock()
			select {
			case signals <- p.Signal:
			default:
			}
			if req.WantReply {
				req.Reply(true, nil)
			}
		default:
			if req.WantReply {
				req.Reply(false, nil)
			}
		}
	}
	close(gone)
}

func (s *testServer) run(raw net.Conn, ch ssh.Channel, h handler, signals <-chan string, gone <-chan struct{}, started chan struct{}) {
	x := &execCtx{stdout: ch, stderr: ch.Stderr(), ch: ch, raw: raw, signals: signals, gone: gone}
	if started != nil {
		s.mu.Lock()
		select {
		case <-started:
		default:
			close(started)
		}
		s.mu.Unlock()
	}
	e := h(x)
	switch {
	case e.none:
	case e.signal != "":
		ch.SendRequest("exit-signal", false, ssh.Marshal(struct {
			Signal     string
			CoreDumped bool
			Error      string
			Lang       string
		}{Signal: e.signal}))
	default:
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], uint32(e.status))
		ch.SendRequest("exit-status", false, b[:])
	}
	ch.Close()
}
