package sshexec

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/retry"
)

// Client runs commands on one host over one reused SSH connection. It is
// safe for concurrent use: concurrent Runs share the connection, each in its
// own session (channel); only one dial is in flight at a time.
type Client struct {
	cfg   Config
	addr  string
	creds *credentials
	keys  *hostKeys
	jump  *Destination

	mu       sync.Mutex
	conn     *conn     // nil until dialled or after it broke
	dialing  *dialCall // non-nil while a dial is in flight
	failures int       // consecutive failed dials
	lastFail time.Time // when the last dial failed
	// connected is set once a dial succeeded: later dials are redials,
	// bounded by ReconnectDeadline from downSince, the first failed one.
	connected bool
	downSince time.Time
	closed    bool
	closing   chan struct{}

	sessions chan struct{} // semaphore of MaxSessions
}

// conn is one established SSH connection and its keepalive loop.
type conn struct {
	client *ssh.Client
	jump   *ssh.Client // nil without ProxyJump
	facts  nightshift.SSHFacts
	done   chan struct{}
	err    error // why it ended; read after done is closed
}

func (c *conn) broken() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *conn) close() {
	c.client.Close()
	if c.jump != nil {
		c.jump.Close()
	}
}

type dialCall struct {
	done chan struct{}
	conn *conn
	err  error
}

// New validates cfg, applies defaults and loads credentials (reading and,
// if needed, decrypting identity files, and connecting to ssh-agent). It
// does not dial: the first Run (or Connect) does. Errors are *OpError with
// Op "config" or "auth".
func New(cfg Config) (*Client, error) {
	host := cfg.Host
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, &OpError{Host: host, Op: OpConfig, Err: err}
	}
	c := &Client{cfg: cfg, addr: cfg.addr(), closing: make(chan struct{}), sessions: make(chan struct{}, cfg.MaxSessions)}
	if cfg.ProxyJump != "" {
		d, _ := ParseDestination(cfg.ProxyJump) // validated by withDefaults
		if d.User == "" {
			d.User = cfg.User
		}
		if d.Port == 0 {
			d.Port = DefaultPort
		}
		c.jump = &d
	}
	c.keys, err = newHostKeys(&c.cfg)
	if err != nil {
		return nil, &OpError{Host: c.addr, Op: OpConfig, Err: err}
	}
	c.creds, err = loadCredentials(&c.cfg)
	if err != nil {
		return nil, &OpError{Host: c.addr, Op: OpAuth, Err: err}
	}
	return c, nil
}

// Addr is the "host:port" the Client dials.
func (c *Client) Addr() string { return c.addr }

// Connect establishes the connection now rather than at the first Run, to
// surface dial, host key and authentication errors early. It is a no-op on
// a healthy connection.
func (c *Client) Connect(ctx context.Context) error {
	_, err := c.getConn(ctx)
	return err
}

// Close closes the connection and the agent connection. Runs in progress
// fail; later Runs return ErrClosed. Close is idempotent.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.closing)
	cn := c.conn
	c.conn = nil
	c.mu.Unlock()
	if cn != nil {
		cn.close()
		<-cn.done
	}
	c.creds.close()
	return nil
}

// getConn returns the live connection, dialling (with backoff) if there is
// none. Concurrent callers share one dial.
func (c *Client) getConn(ctx context.Context) (*conn, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, &OpError{Host: c.addr, Op: OpSession, Err: ErrClosed}
		}
		if c.conn != nil && !c.conn.broken() {
			cn := c.conn
			c.mu.Unlock()
			return cn, nil
		}
		if call := c.dialing; call != nil {
			c.mu.Unlock()
			select {
			case <-call.done:
			case <-ctx.Done():
				return nil, &OpError{Host: c.addr, Op: OpDial, Err: ctx.Err()}
			}
			if call.err != nil && !isContextErr(call.err) {
				return nil, call.err
			}
			continue // connected, or the dialler gave up on its own context
		}
		call := &dialCall{done: make(chan struct{})}
		c.dialing = call
		failures, lastFail := c.failures, c.lastFail
		var giveUpAt time.Time
		if c.connected && c.cfg.ReconnectDeadline > 0 {
			if c.downSince.IsZero() {
				c.downSince = time.Now()
			}
			giveUpAt = c.downSince.Add(c.cfg.ReconnectDeadline)
		}
		c.mu.Unlock()

		call.conn, call.err = c.dialRetry(ctx, failures, lastFail, giveUpAt)

		c.mu.Lock()
		c.dialing = nil
		switch {
		case call.err == nil && c.closed:
			call.conn.close()
			call.err = &OpError{Host: c.addr, Op: OpSession, Err: ErrClosed}
		case call.err == nil:
			if c.conn != nil {
				c.cfg.Logger.Info("sshexec: reconnected", "host", c.addr)
			}
			c.conn, c.failures = call.conn, 0
			c.connected, c.downSince = true, time.Time{}
		case !isContextErr(call.err):
			c.failures++
			c.lastFail = time.Now()
		}
		c.mu.Unlock()
		close(call.done)
		return call.conn, call.err
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// dialRetry dials under the Redial policy; failures and lastFail carry the
// previous Runs' failed dials so a host that keeps failing is not hammered:
// the first dial waits what is left of the wait after them, and the
// schedule goes on from there. A non-zero giveUpAt (a redial of a host that
// answered before) replaces Redial's MaxTries: the dials go on until then.
// Host key, authentication and configuration errors are final.
func (c *Client) dialRetry(ctx context.Context, failures int, lastFail, giveUpAt time.Time) (*conn, error) {
	p := c.cfg.Redial
	if !giveUpAt.IsZero() {
		p.MaxTries = 0
		p.Deadline = time.Until(giveUpAt)
		if p.Deadline <= 0 {
			p.MaxTries, p.Deadline = 1, 0 // past the deadline: one dial per Run
		}
	}
	if failures > 0 {
		// Start the schedule after the carried failures: the doubling
		// from Delay(failures+1) is Delay(failures+n) for the n-th retry.
		nominal := p
		nominal.Jitter = nil
		p.BaseDelay = nominal.Delay(failures+1, nil)
	}
	var lastErr error
	dials := 0
	wait := func(ctx context.Context, d time.Duration) error {
		if d <= 0 {
			return nil
		}
		c.cfg.Logger.Info("sshexec: waiting before redial", "host", c.addr, "wait", d.Round(time.Millisecond), "failures", failures+dials)
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			cause := fmt.Errorf("waiting to redial after %d failed dials: %w", failures+dials, ctx.Err())
			if lastErr != nil {
				cause = fmt.Errorf("%w (last failure: %v)", cause, lastErr)
			}
			return &OpError{Host: c.addr, Op: OpDial, Err: cause}
		case <-c.closing:
			return &OpError{Host: c.addr, Op: OpDial, Err: ErrClosed}
		}
	}
	if failures > 0 {
		if err := wait(ctx, c.cfg.Redial.Delay(failures, nil)-time.Since(lastFail)); err != nil {
			return nil, err
		}
	}
	p.Sleep = wait
	p.CheckRetry = func(err error) bool {
		var op *OpError
		return !errors.As(err, &op) || (op.Op != OpHostKey && op.Op != OpAuth && op.Op != OpConfig)
	}
	var started time.Time
	p.OnRetry = func(r retry.Retry) {
		c.dialFailed(ctx, p, r.Try, time.Since(started), r.Err, r.Wait, r.GiveUpAt)
	}
	var cn *conn
	err := p.Do(ctx, func(ctx context.Context) error {
		var err error
		dials++
		started = time.Now()
		cn, err = c.dial(ctx)
		if err != nil {
			lastErr = err
		}
		return err
	})
	var gu *retry.GiveUpError
	switch {
	case err == nil:
		return cn, nil
	case errors.As(err, &gu):
		c.dialFailed(ctx, p, gu.Tries, 0, gu.Err, 0, time.Time{})
		return nil, gu.Err
	case err == lastErr, err == ctx.Err():
		// A final failure, or the context ended during a dial: the dial's
		// own error says what happened.
		c.cfg.Logger.Warn("sshexec: dial failed", "host", c.addr, "attempt", dials, "err", lastErr)
		return nil, lastErr
	}
	return nil, err // a wait was cut short; its *OpError says why
}

// dial makes one connection: TCP (directly or through the jump host), SSH
// handshake, host key check and authentication, all within DialTimeout.
func (c *Client) dial(ctx context.Context) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.DialTimeout)
	defer cancel()
	var jump *ssh.Client
	var raw net.Conn
	var err error
	if c.jump != nil {
		jaddr := net.JoinHostPort(c.jump.Host, strconv.Itoa(c.jump.Port))
		jraw, err := (&net.Dialer{}).DialContext(ctx, "tcp", jaddr)
		if err != nil {
			return nil, &OpError{Host: c.addr, Op: OpDial, Err: fmt.Errorf("jump host %s: %w", jaddr, err)}
		}
		jump, _, err = c.handshake(ctx, jraw, jaddr, c.jump.User)
		if err != nil {
			var op *OpError
			if errors.As(err, &op) {
				op.Err = fmt.Errorf("jump host %s: %w", jaddr, op.Err)
				op.Host = c.addr
			}
			return nil, err
		}
		raw, err = jump.DialContext(ctx, "tcp", c.addr)
		if err != nil {
			jump.Close()
			return nil, &OpError{Host: c.addr, Op: OpDial, Err: fmt.Errorf("through jump host %s: %w", jaddr, err)}
		}
	} else {
		raw, err = (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext(ctx, "tcp", c.addr)
		if err != nil {
			return nil, &OpError{Host: c.addr, Op: OpDial, Err: err}
		}
	}
	client, facts, err := c.handshake(ctx, raw, c.addr, c.cfg.User)
	if err != nil {
		if jump != nil {
			jump.Close()
		}
		return nil, err
	}
	if jump == nil {
		connAddrs(&facts, raw)
	}
	cn := &conn{client: client, jump: jump, facts: facts, done: make(chan struct{})}
	go func() {
		cn.err = client.Wait()
		if jump != nil {
			jump.Close()
		}
		close(cn.done)
	}()
	if c.cfg.KeepAlive > 0 {
		go c.keepAlive(cn)
	}
	c.cfg.Logger.Debug("sshexec: connected", "host", c.addr, "server_version", string(client.ServerVersion()))
	return cn, nil
}

// handshake runs the SSH handshake on raw, bounded by ctx, and classifies
// failures as handshake, host key or auth errors. It returns the facts the
// handshake established (all but the server's address).
func (c *Client) handshake(ctx context.Context, raw net.Conn, addr, user string) (*ssh.Client, nightshift.SSHFacts, error) {
	verify, algos, known, err := c.keys.callback(addr)
	if err != nil {
		raw.Close()
		return nil, nightshift.SSHFacts{}, &OpError{Host: addr, Op: OpHostKey, Err: err}
	}
	hf := &handshakeFacts{known: known, insecure: c.keys.insecure}
	var hostKeyErr error
	verified := false
	cfg := &ssh.ClientConfig{
		User: user,
		Auth: c.creds.methods(c.cfg.Logger, hf.wrap),
		HostKeyCallback: func(hostname string, remote net.Addr, key ssh.PublicKey) error {
			err := verify(hostname, remote, key)
			if err != nil {
				hostKeyErr = err
			} else {
				verified = true
				hf.hostKey = key
			}
			return err
		},
		HostKeyAlgorithms: algos,
		ClientVersion:     "SSH-2.0-nightshift-sshexec",
	}
	if d, ok := ctx.Deadline(); ok {
		raw.SetDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { raw.Close() })
	sconn, chans, reqs, err := ssh.NewClientConn(raw, addr, cfg)
	stopped := stop()
	if err != nil {
		raw.Close()
		var none nightshift.SSHFacts
		if ctx.Err() != nil && !stopped {
			// The context closed the connection under the handshake.
			return nil, none, &OpError{Host: addr, Op: OpHandshake, Err: fmt.Errorf("%w (%v)", ctx.Err(), err)}
		}
		switch {
		case hostKeyErr != nil:
			return nil, none, &OpError{Host: addr, Op: OpHostKey, Err: hostKeyErr}
		case verified && strings.Contains(err.Error(), "unable to authenticate"):
			return nil, none, &OpError{Host: addr, Op: OpAuth, Err: fmt.Errorf("user %q: %w: %w", user, ErrAuthFailed, err)}
		}
		return nil, none, &OpError{Host: addr, Op: OpHandshake, Err: err}
	}
	raw.SetDeadline(time.Time{})
	return ssh.NewClient(sconn, chans, reqs), hf.facts(sconn), nil
}

// keepAlive sends keepalive@openssh.com every KeepAlive and closes the
// connection when KeepAliveMax intervals pass without an answer, so a dead
// peer fails the running commands instead of hanging them.
func (c *Client) keepAlive(cn *conn) {
	interval := c.cfg.KeepAlive
	t := time.NewTicker(interval)
	defer t.Stop()
	answered := make(chan error, 1)
	inFlight := false
	missed := 0
	for {
		select {
		case <-cn.done:
			return
		case err := <-answered:
			inFlight = false
			if err != nil {
				return // the connection is going down; done follows
			}
			missed = 0
		case <-t.C:
			if inFlight {
				missed++
				if missed >= c.cfg.KeepAliveMax {
					c.cfg.Logger.Warn("sshexec: keepalive timed out; closing connection", "host", c.addr, "missed", missed)
					cn.close()
					return
				}
				continue
			}
			inFlight = true
			go func() {
				_, _, err := cn.client.SendRequest("keepalive@openssh.com", true, nil)
				answered <- err
			}()
		}
	}
}
