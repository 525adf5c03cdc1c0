package sshexec

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/retry"
)

func TestDialFailureRetriesWithBackoff(t *testing.T) {
	f := newFixture(t)
	// A port with nothing listening.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	c := f.client(t, func(c *Config) { c.Port = port })
	_, err = c.Run(context.Background(), "true")
	var op *OpError
	if !errors.As(err, &op) || op.Op != OpDial || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("error %v, want dial OpError wrapping ECONNREFUSED", err)
	}
	if got := strings.Count(f.logBuf.String(), "dial failed"); got != 3 {
		t.Errorf("%d dial attempts logged, want Redial.MaxTries = 3", got)
	}
	if got := strings.Count(f.logBuf.String(), "waiting before redial"); got != 2 {
		t.Errorf("%d backoff waits logged, want 2", got)
	}
	// The next Run waits before its first attempt: the host just failed.
	c.Run(context.Background(), "true")
	if got := strings.Count(f.logBuf.String(), "waiting before redial"); got != 5 {
		t.Errorf("%d backoff waits after the second Run, want 5", got)
	}
}

func TestDialHonoursContext(t *testing.T) {
	f := newFixture(t)
	c := f.client(t, func(c *Config) {
		c.Port = 1 // refused
		c.Redial = retry.Policy{BaseDelay: time.Hour, MaxTries: 3}
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Cancel once the first attempt has failed and the hour-long wait began.
		<-f.logBuf.waitFor("waiting before redial")
		cancel()
	}()
	_, err := c.Run(ctx, "true")
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "last failure") {
		t.Fatalf("error %v, want cancellation that reports the last dial failure", err)
	}
}

func TestHandshakeWithNonSSHServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			io.WriteString(c, "HTTP/1.1 400 Bad Request\r\n\r\n")
			c.Close()
		}
	}()
	f := newFixture(t)
	c := f.client(t, func(c *Config) { c.Port = ln.Addr().(*net.TCPAddr).Port })
	_, err = c.Run(context.Background(), "true")
	var op *OpError
	if !errors.As(err, &op) || op.Op != OpHandshake {
		t.Fatalf("error %v, want handshake OpError", err)
	}
}

func TestHandshakeTimeout(t *testing.T) {
	// A server that accepts and then says nothing.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var mu sync.Mutex
	var held []net.Conn
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	f := newFixture(t)
	c := f.client(t, func(c *Config) {
		c.Port = ln.Addr().(*net.TCPAddr).Port
		c.DialTimeout = 20 * time.Millisecond
		c.Redial.MaxTries = 1
	})
	_, err = c.Run(context.Background(), "true")
	var op *OpError
	if !errors.As(err, &op) || op.Op != OpHandshake {
		t.Fatalf("error %v, want handshake OpError", err)
	}
}

func TestKeepAliveDetectsSilentPeer(t *testing.T) {
	f := newFixture(t)
	p := newProxy(t, f.srv.addr)
	f.srv.handle("long", func(x *execCtx) exit {
		p.freeze(t, x.raw)
		<-x.gone
		return exit{none: true}
	})
	c := f.client(t, func(c *Config) {
		c.Port = p.port
		c.KnownHostsFiles = []string{f.srv.knownHosts(t, p.addr())}
		c.KeepAlive = 5 * time.Millisecond
		c.KeepAliveMax = 2
		c.CommandTimeout = 0 // none: only keepalives can end this
	})
	_, err := c.Run(context.Background(), "long")
	if !errors.Is(err, nightshift.ErrOutcomeUnknown) {
		t.Fatalf("error %v, want nightshift.ErrOutcomeUnknown", err)
	}
	if !strings.Contains(f.logBuf.String(), "keepalive timed out") {
		t.Error("keepalive failure not logged")
	}
}

func TestProxyJump(t *testing.T) {
	target := newFixture(t)
	target.srv.handle("hostname", func(x *execCtx) exit {
		io.WriteString(x.stdout, "target\n")
		return exit{}
	})
	jump := newTestServer(t, target.key.PublicKey())
	jump.forward = true
	known := writeFile(t, "known_hosts", "")
	// Both hosts in one known_hosts, as ssh -J uses.
	for _, s := range []*testServer{target.srv, jump} {
		appendFile(t, known, mustRead(t, s.knownHosts(t)))
	}
	c := target.client(t, func(c *Config) {
		c.ProxyJump = "jumper@" + jump.addr
		c.KnownHostsFiles = []string{known}
	})
	res, err := c.Run(context.Background(), "hostname")
	if err != nil || res.Stdout != "target\n" {
		t.Fatalf("Run via jump = %+v, %v", res, err)
	}
	if jump.dialCount() != 1 || target.srv.dialCount() != 1 {
		t.Errorf("dials: jump %d, target %d; want 1 each", jump.dialCount(), target.srv.dialCount())
	}

	t.Run("jump host key unknown", func(t *testing.T) {
		c := target.client(t, func(c *Config) {
			c.ProxyJump = jump.addr
			c.KnownHostsFiles = []string{target.known} // lacks the jump host
		})
		_, err := c.Run(context.Background(), "hostname")
		herr := hostKeyErr(t, err)
		if !strings.Contains(err.Error(), "jump host "+jump.addr) || herr.Problem != HostKeyUnknown {
			t.Fatalf("error %v should name the jump host and the unknown key", err)
		}
	})
	t.Run("forwarding refused", func(t *testing.T) {
		noFwd := newTestServer(t, target.key.PublicKey())
		appendFile(t, known, mustRead(t, noFwd.knownHosts(t)))
		c := target.client(t, func(c *Config) {
			c.ProxyJump = noFwd.addr
			c.KnownHostsFiles = []string{known}
			c.Redial.MaxTries = 1
		})
		_, err := c.Run(context.Background(), "hostname")
		var op *OpError
		if !errors.As(err, &op) || op.Op != OpDial || !strings.Contains(err.Error(), "through jump host") {
			t.Fatalf("error %v, want dial OpError through the jump host", err)
		}
		var oce *ssh.OpenChannelError
		if !errors.As(err, &oce) {
			t.Errorf("error %v does not wrap the server's refusal", err)
		}
	})
}

func TestNewValidatesConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no host", Config{}, "host is empty"},
		{"space in host", Config{Host: "a b"}, "not allowed"},
		{"port in host", Config{Host: "example.com:22"}, "give the port in Port"},
		{"bad port", Config{Host: "h", Port: 70000}, "port 70000"},
		{"negative command timeout", Config{Host: "h", CommandTimeout: -time.Second}, "command timeout -1s is negative (0 means none)"},
		{"negative reconnect deadline", Config{Host: "h", ReconnectDeadline: -time.Minute}, "reconnect deadline -1m0s is negative (0 means none)"},
		{"bad jump", Config{Host: "h", ProxyJump: "user@"}, "proxy jump"},
		{"missing identity", Config{Host: "h", IdentityFiles: []string{"/nonexistent/id"}, NoAgent: true, KnownHostsFiles: []string{"/dev/null"}}, "read identity /nonexistent/id"},
		{"bad certificate", Config{Host: "h", CertificateFiles: []string{"/nonexistent/c"}, NoAgent: true, KnownHostsFiles: []string{"/dev/null"}}, "read certificate /nonexistent/c"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(tc.cfg)
			if err == nil {
				c.Close()
				t.Fatal("New succeeded")
			}
			var op *OpError
			if !errors.As(err, &op) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want an OpError containing %q", err, tc.want)
			}
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	cfg, err := Config{Host: "h"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Port != 22 || cfg.User == "" || cfg.DialTimeout != DefaultDialTimeout || cfg.CommandTimeout != 0 || cfg.ReconnectDeadline != 0 ||
		cfg.OutputCap != DefaultOutputCap || cfg.KeepAlive != DefaultKeepAlive || cfg.KeepAliveMax != 3 ||
		cfg.MaxSessions != 10 || cfg.PassphraseEnv != DefaultPassphraseEnv || cfg.KillGrace != DefaultKillGrace ||
		cfg.Redial.BaseDelay != 250*time.Millisecond || cfg.Redial.MaxDelay != 8*time.Second || cfg.Redial.MaxTries != 4 || cfg.Redial.Jitter != nil ||
		cfg.Logger == nil {
		t.Errorf("defaults: %+v", cfg.redact())
	}
	b := redialDefaults(retry.Policy{BaseDelay: time.Second, MaxDelay: 5 * time.Second, MaxTries: 1})
	for n, want := range []time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second} {
		if got := b.Delay(n, nil); got != want {
			t.Errorf("Delay(%d) = %v, want %v", n, got, want)
		}
	}
}

func appendFile(t *testing.T, name string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}
