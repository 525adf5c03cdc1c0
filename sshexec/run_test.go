package sshexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/retry"
)

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	waiters map[string]chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	for sub, ch := range s.waiters {
		if strings.Contains(s.b.String(), sub) {
			close(ch)
			delete(s.waiters, sub)
		}
	}
	return n, err
}

// waitFor is closed once the buffer contains sub.
func (s *syncBuffer) waitFor(sub string) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	if strings.Contains(s.b.String(), sub) {
		close(ch)
		return ch
	}
	if s.waiters == nil {
		s.waiters = map[string]chan struct{}{}
	}
	s.waiters[sub] = ch
	return ch
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fixture is a test server plus a client key it accepts.
type fixture struct {
	srv    *testServer
	key    ssh.Signer
	known  string
	logBuf *syncBuffer
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	key := newKey(t)
	srv := newTestServer(t, key.PublicKey())
	return &fixture{srv: srv, key: key, known: srv.knownHosts(t), logBuf: &syncBuffer{}}
}

// config is a Config for the fixture's server; mods adjust it.
func (f *fixture) config(mods ...func(*Config)) Config {
	cfg := Config{
		Host:            f.srv.host,
		Port:            f.srv.portNum(),
		User:            "tester",
		Signers:         []ssh.Signer{f.key},
		IdentityFiles:   []string{},
		NoAgent:         true,
		KnownHostsFiles: []string{f.known},
		KeepAlive:       -1,
		Redial:          retry.Policy{BaseDelay: time.Millisecond, MaxDelay: 4 * time.Millisecond, MaxTries: 3},
		Logger:          slog.New(slog.NewJSONHandler(f.logBuf, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	for _, m := range mods {
		m(&cfg)
	}
	return cfg
}

func (f *fixture) client(t *testing.T, mods ...func(*Config)) *Client {
	t.Helper()
	c, err := New(f.config(mods...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestRunResults(t *testing.T) {
	f := newFixture(t)
	f.srv.handle("greet", func(x *execCtx) exit {
		io.WriteString(x.stdout, "hello\n")
		io.WriteString(x.stderr, "warning\n")
		return exit{}
	})
	f.srv.handle("fail", func(x *execCtx) exit {
		io.WriteString(x.stderr, "no such rule\n")
		return exit{status: 3}
	})
	f.srv.handle("crash", func(x *execCtx) exit { return exit{signal: "SEGV"} })
	f.srv.handle("quiet", func(x *execCtx) exit { return exit{} })
	c := f.client(t)

	tests := []struct {
		cmd  string
		want nightshift.Exec
	}{
		{"greet", nightshift.Exec{Stdout: "hello\n", Stderr: "warning\n", ExitCode: 0}},
		{"fail", nightshift.Exec{Stderr: "no such rule\n", ExitCode: 3}},
		{"crash", nightshift.Exec{ExitCode: 128 + 11, Signal: "SEGV"}},
		{"quiet", nightshift.Exec{ExitCode: 0}},
		{"missing", nightshift.Exec{Stderr: "sh: command not found\n", ExitCode: 127}},
	}
	for _, tc := range tests {
		t.Run(tc.cmd, func(t *testing.T) {
			got, err := c.Run(context.Background(), tc.cmd)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got.Duration <= 0 {
				t.Errorf("Duration = %v, want > 0", got.Duration)
			}
			got.Duration = 0
			if got != tc.want {
				t.Errorf("Run(%q) = %+v, want %+v", tc.cmd, got, tc.want)
			}
			if got.Exited() != (tc.want.Signal == "") {
				t.Errorf("Exited() = %v", got.Exited())
			}
		})
	}
	if n := f.srv.dialCount(); n != 1 {
		t.Errorf("server saw %d connections for %d commands, want 1 reused", n, len(tests))
	}
}

func TestRunRejectsBadCommand(t *testing.T) {
	f := newFixture(t)
	c := f.client(t)
	for _, cmd := range []string{"", "echo a\x00b"} {
		_, err := c.Run(context.Background(), cmd)
		var op *OpError
		if !errors.As(err, &op) || op.Op != OpSession {
			t.Errorf("Run(%q) error = %v, want session OpError", cmd, err)
		}
	}
	if n := f.srv.dialCount(); n != 0 {
		t.Errorf("dialled %d times for invalid commands", n)
	}
}

func TestTimeoutSignalsAndCloses(t *testing.T) {
	tests := []struct {
		name        string
		ignoreTERM  bool
		wantSignals []string
		wantSignal  string
	}{
		{"exits on TERM", false, []string{"TERM"}, "TERM"},
		{"needs KILL", true, []string{"TERM", "KILL"}, "KILL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.srv.handle("sleep", func(x *execCtx) exit {
				io.WriteString(x.stdout, "sleeping\n")
				for sig := range x.signals {
					if sig == "TERM" && tc.ignoreTERM {
						continue
					}
					return exit{signal: sig}
				}
				return exit{none: true}
			})
			c := f.client(t, func(c *Config) {
				c.CommandTimeout = 20 * time.Millisecond
				c.KillGrace = 20 * time.Millisecond
			})
			res, err := c.Run(context.Background(), "sleep")
			if err != nil {
				t.Fatalf("Run: %v (a timeout is a result, not an error)", err)
			}
			if !res.TimedOut || res.Canceled {
				t.Errorf("TimedOut=%v Canceled=%v, want timed out", res.TimedOut, res.Canceled)
			}
			if res.Signal != tc.wantSignal || res.Stdout != "sleeping\n" {
				t.Errorf("result %+v, want signal %s and the output so far", res, tc.wantSignal)
			}
			if got := f.srv.signalLog(); fmt.Sprint(got) != fmt.Sprint(tc.wantSignals) {
				t.Errorf("server received signals %v, want %v", got, tc.wantSignals)
			}
			// The connection survives a timed-out command.
			f.srv.handle("after", func(x *execCtx) exit { return exit{} })
			if _, err := c.Run(context.Background(), "after"); err != nil {
				t.Fatalf("Run after timeout: %v", err)
			}
			if n := f.srv.dialCount(); n != 1 {
				t.Errorf("%d connections, want 1", n)
			}
		})
	}
}

func TestTimeoutUnresponsiveServer(t *testing.T) {
	// The network goes silent mid-command: signals and the channel close
	// go nowhere, so Run tears the connection down rather than hang.
	f := newFixture(t)
	p := newProxy(t, f.srv.addr)
	f.srv.handle("stuck", func(x *execCtx) exit {
		p.freeze(t, x.raw)
		<-x.gone
		return exit{none: true}
	})
	f.srv.handle("next", func(x *execCtx) exit { return exit{} })
	c := f.client(t, func(c *Config) {
		c.Port = p.port
		c.KnownHostsFiles = []string{f.srv.knownHosts(t, p.addr())}
		c.CommandTimeout = 10 * time.Millisecond
		c.KillGrace = 10 * time.Millisecond
	})
	res, err := c.Run(context.Background(), "stuck")
	if err != nil || !res.TimedOut || res.ExitCode != -1 {
		t.Fatalf("Run = %+v, %v; want timed out with unknown exit code", res, err)
	}
	if _, err := c.Run(context.Background(), "next"); err != nil {
		t.Fatalf("Run after teardown: %v", err)
	}
	if n := f.srv.dialCount(); n != 2 {
		t.Errorf("%d connections, want 2 (torn down and redialled)", n)
	}
	if n := f.srv.execCount("stuck"); n != 1 {
		t.Errorf("stuck command ran %d times, want 1", n)
	}
}

func TestCancellation(t *testing.T) {
	f := newFixture(t)
	f.srv.handle("wait", func(x *execCtx) exit {
		sig := <-x.signals
		return exit{signal: sig}
	})
	c := f.client(t, func(c *Config) { c.KillGrace = time.Hour })
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-f.srv.startedCh("wait")
		cancel()
	}()
	res, err := c.Run(ctx, "wait")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	var op *OpError
	if !errors.As(err, &op) || op.Op != OpSession || op.Host != f.srv.addr {
		t.Errorf("error %#v, want session OpError for %s", err, f.srv.addr)
	}
	if !res.Canceled || res.TimedOut || res.Signal != "TERM" {
		t.Errorf("result %+v, want cancelled and TERMinated", res)
	}
}

func TestContextDeadlineIsTimeout(t *testing.T) {
	f := newFixture(t)
	f.srv.handle("wait", func(x *execCtx) exit { return exit{signal: <-x.signals} })
	c := f.client(t, func(c *Config) { c.KillGrace = time.Hour })
	f.srv.handle("warm", func(x *execCtx) exit { return exit{} })
	if _, err := c.Run(context.Background(), "warm"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	res, err := c.Run(ctx, "wait")
	if !errors.Is(err, context.DeadlineExceeded) || !res.TimedOut {
		t.Fatalf("Run = %+v, %v; want TimedOut and DeadlineExceeded", res, err)
	}
}

func TestLargeOutputIsCapped(t *testing.T) {
	const total = 50 << 20
	f := newFixture(t)
	pattern := func(i int) byte { return byte('a' + i%26) }
	f.srv.handle("flood", func(x *execCtx) exit {
		buf := make([]byte, 32<<10)
		for off := 0; off < total; off += len(buf) {
			for i := range buf {
				buf[i] = pattern(off + i)
			}
			if _, err := x.stdout.Write(buf); err != nil {
				return exit{none: true}
			}
		}
		io.WriteString(x.stderr, "done\n")
		return exit{}
	})
	c := f.client(t)
	res, err := c.Run(context.Background(), "flood")
	if err != nil {
		t.Fatal(err)
	}
	const capBytes = DefaultOutputCap
	if res.StdoutCut != total-capBytes || res.StderrCut != 0 || res.Stderr != "done\n" {
		t.Fatalf("StdoutCut=%d StderrCut=%d Stderr=%q; want %d, 0, done", res.StdoutCut, res.StderrCut, res.Stderr, total-capBytes)
	}
	marker := fmt.Sprintf(CutMarker, total-capBytes)
	head, tail, ok := strings.Cut(res.Stdout, marker)
	if !ok || len(head) != capBytes/2 || len(tail) != capBytes/2 {
		t.Fatalf("stdout is not head+marker+tail: head %d bytes, tail %d bytes, marker found %v", len(head), len(tail), ok)
	}
	for i := range len(head) {
		if head[i] != pattern(i) {
			t.Fatalf("head byte %d = %q, want %q", i, head[i], pattern(i))
		}
	}
	for i := range len(tail) {
		if want := pattern(total - capBytes/2 + i); tail[i] != want {
			t.Fatalf("tail byte %d = %q, want %q", i, tail[i], want)
		}
	}
}

func TestDisconnectMidCommandIsOutcomeUnknown(t *testing.T) {
	f := newFixture(t)
	f.srv.handle("apply", func(x *execCtx) exit {
		io.WriteString(x.stdout, "partial\n")
		x.raw.Close()
		return exit{none: true}
	})
	f.srv.handle("check", func(x *execCtx) exit {
		io.WriteString(x.stdout, "ok\n")
		return exit{}
	})
	c := f.client(t)
	res, err := c.Run(context.Background(), "apply")
	if !errors.Is(err, nightshift.ErrOutcomeUnknown) {
		t.Fatalf("error %v, want nightshift.ErrOutcomeUnknown", err)
	}
	var op *OpError
	if !errors.As(err, &op) || op.Op != OpSession || op.Host != f.srv.addr {
		t.Errorf("error %v is not a session OpError for %s", err, f.srv.addr)
	}
	if res.ExitCode != -1 || res.Stdout != "partial\n" {
		t.Errorf("result %+v, want exit -1 and the partial output", res)
	}
	res, err = c.Run(context.Background(), "check")
	if err != nil || res.Stdout != "ok\n" {
		t.Fatalf("next Run = %+v, %v; want a redialled success", res, err)
	}
	if n := f.srv.execCount("apply"); n != 1 {
		t.Errorf("the dropped command ran %d times, want exactly 1", n)
	}
	if n := f.srv.dialCount(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

func TestBrokenConnectionIsRedialledBeforeSending(t *testing.T) {
	f := newFixture(t)
	f.srv.handle("one", func(x *execCtx) exit { return exit{} })
	c := f.client(t)
	if _, err := c.Run(context.Background(), "one"); err != nil {
		t.Fatal(err)
	}
	f.srv.dropAll() // the connection dies while idle
	res, err := c.Run(context.Background(), "one")
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run after idle drop = %+v, %v", res, err)
	}
	if n := f.srv.execCount("one"); n != 2 {
		t.Errorf("command ran %d times, want 2 (once per Run)", n)
	}
	if n := f.srv.dialCount(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

func TestSilentIdleConnectionIsRedialledBeforeSending(t *testing.T) {
	// The network goes silent while the connection is idle and keepalives
	// are off: the next session open gets no answer. Within DialTimeout
	// the connection is given up and redialled; nothing had been sent.
	f := newFixture(t)
	p := newProxy(t, f.srv.addr)
	conns := make(chan net.Conn, 2)
	f.srv.handle("one", func(x *execCtx) exit {
		conns <- x.raw
		return exit{}
	})
	c := f.client(t, func(c *Config) {
		c.Port = p.port
		c.KnownHostsFiles = []string{f.srv.knownHosts(t, p.addr())}
		c.DialTimeout = 200 * time.Millisecond
	})
	if _, err := c.Run(context.Background(), "one"); err != nil {
		t.Fatal(err)
	}
	p.freeze(t, <-conns)
	res, err := c.Run(context.Background(), "one")
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run on a silent connection = %+v, %v; want it redialled and run", res, err)
	}
	if n := f.srv.execCount("one"); n != 2 {
		t.Errorf("command ran %d times, want 2 (once per Run)", n)
	}
	if n := f.srv.dialCount(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
	if !strings.Contains(f.logBuf.String(), "did not answer the session open") {
		t.Errorf("silent connection not logged; log:\n%s", f.logBuf.String())
	}
}

func TestClosesStdoutEarly(t *testing.T) {
	f := newFixture(t)
	f.srv.handle("half", func(x *execCtx) exit {
		io.WriteString(x.stderr, "before\n")
		io.WriteString(x.stdout, "head\n")
		x.ch.CloseWrite() // EOF: no more data from this command
		return exit{status: 4}
	})
	c := f.client(t)
	res, err := c.Run(context.Background(), "half")
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "head\n" || res.Stderr != "before\n" || res.ExitCode != 4 {
		t.Errorf("result %+v, want stdout head, stderr before, exit 4", res)
	}
}

func TestConcurrentRunsShareOneConnection(t *testing.T) {
	f := newFixture(t)
	for i := range 8 {
		f.srv.handle(fmt.Sprintf("n%d", i), func(x *execCtx) exit {
			fmt.Fprintf(x.stdout, "%d\n", i)
			return exit{status: i}
		})
	}
	c := f.client(t, func(c *Config) { c.MaxSessions = 3 })
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for j := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			i := j % 8
			res, err := c.Run(context.Background(), fmt.Sprintf("n%d", i))
			if err != nil {
				errs <- err
				return
			}
			if res.Stdout != fmt.Sprintf("%d\n", i) || res.ExitCode != i {
				errs <- fmt.Errorf("n%d: got %+v", i, res)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := f.srv.dialCount(); n != 1 {
		t.Errorf("%d connections for concurrent Runs, want 1", n)
	}
}

func TestRunAfterClose(t *testing.T) {
	f := newFixture(t)
	f.srv.handle("x", func(x *execCtx) exit { return exit{} })
	c := f.client(t)
	if _, err := c.Run(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := c.Run(context.Background(), "x"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Run after Close: %v, want ErrClosed", err)
	}
}

func TestSudoWrapsCommand(t *testing.T) {
	tests := []struct {
		user, cmd, want string
		sudo            bool
	}{
		{"deploy", "echo hi", "sudo -n -- sh -c 'echo hi'", true},
		{"deploy", "echo 'it''s' \"$HOME\"", `sudo -n -- sh -c 'echo '\''it'\'''\''s'\'' "$HOME"'`, true},
		{"root", "echo hi", "echo hi", true},
		{"deploy", "echo hi", "echo hi", false},
	}
	for _, tc := range tests {
		t.Run(tc.user+"/"+tc.cmd, func(t *testing.T) {
			f := newFixture(t)
			f.srv.handle(tc.want, func(x *execCtx) exit { return exit{} })
			c := f.client(t, func(c *Config) { c.User, c.Sudo = tc.user, tc.sudo })
			if _, err := c.Run(context.Background(), tc.cmd); err != nil {
				t.Fatal(err)
			}
			if n := f.srv.execCount(tc.want); n != 1 {
				t.Errorf("server never received %q", tc.want)
			}
		})
	}
}
