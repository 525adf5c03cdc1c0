package sshexec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/nightshift-dev/nightshift"
)

// The client is a [nightshift.Runner]: Run returns the module's one command
// result, [nightshift.Exec]. Each stream is capped at Config.OutputCap bytes
// (the first and the last half are kept and the cut is marked in place by a
// CutMarker line; StdoutCut and StderrCut count the bytes dropped); ExitCode
// is -1 when unknown (timed out or cancelled before the server reported one,
// or connection lost); TimedOut is set when Config.CommandTimeout or the
// context's deadline expired, Canceled when the context was cancelled (the
// command was then signalled, TERM then KILL after Config.KillGrace, and its
// session closed).
var _ nightshift.Runner = (*Client)(nil)

var errCommandTimeout = errors.New("command timeout")

// Run runs command on the host through the user's login shell (as ssh(1)
// does), with Sudo applied, and waits for it.
//
// A non-zero exit or a signal is reported in the Exec with a nil error.
// When Config.CommandTimeout expires, the command is signalled, its session
// closed, and Exec.TimedOut set, with a nil error. When ctx ends, the same
// happens and the error wraps ctx.Err().
//
// Errors are *OpError. If the connection cannot be used before the command
// is sent, Run redials once with backoff. If it drops after the command was
// sent, Run returns the partial Exec with an error wrapping
// nightshift.ErrOutcomeUnknown and never re-runs the command; the next Run redials.
func (c *Client) Run(ctx context.Context, command string) (nightshift.Exec, error) {
	res := nightshift.Exec{ExitCode: -1}
	if command == "" || strings.ContainsRune(command, 0) {
		return res, &OpError{Host: c.addr, Op: OpSession, Err: errors.New("command is empty or contains a NUL byte")}
	}
	if c.cfg.Sudo && c.cfg.User != "root" {
		command = "sudo -n -- sh -c " + shellQuote(command)
	}
	command, nonce := withPreamble(command)

	select {
	case c.sessions <- struct{}{}:
		defer func() { <-c.sessions }()
	case <-ctx.Done():
		return res, &OpError{Host: c.addr, Op: OpSession, Err: fmt.Errorf("waiting for a free session: %w", ctx.Err())}
	case <-c.closing:
		return res, &OpError{Host: c.addr, Op: OpSession, Err: ErrClosed}
	}
	cn, sess, err := c.openSession(ctx)
	if err != nil {
		return res, err
	}
	defer sess.Close()

	stdout := newCapBuffer(c.cfg.OutputCap)
	stderr := newCapBuffer(c.cfg.OutputCap)
	filter := newPgidFilter(stderr, nonce)
	sess.Stdout, sess.Stderr = stdout, filter
	collect := func() {
		res.Stdout, res.StdoutCut = stdout.result()
		res.Stderr, res.StderrCut = stderr.result()
	}

	cmdCtx, cancel := ctx, context.CancelFunc(func() {})
	if c.cfg.CommandTimeout > 0 {
		cmdCtx, cancel = context.WithTimeoutCause(ctx, c.cfg.CommandTimeout, errCommandTimeout)
	}
	defer cancel()

	// Start waits for the server's reply to the exec request, so it runs
	// in the goroutine too: a server that goes silent then cannot hang Run.
	start := time.Now()
	done := make(chan outcome, 1)
	go func() {
		if err := sess.Start(command); err != nil {
			done <- outcome{start: err}
			return
		}
		done <- outcome{wait: sess.Wait()}
	}()

	var o outcome
	interrupted := false
	select {
	case o = <-done:
	case <-cmdCtx.Done():
		interrupted = true
		o = c.interrupt(cn, sess, filter, done)
	}
	res.Duration = time.Since(start)
	filter.finish()
	collect()
	waitErr := o.wait
	if o.start != nil && !interrupted {
		if c.lost(ctx, cn) {
			return res, &OpError{Host: c.addr, Op: OpSession, Err: fmt.Errorf("%w: connection lost after the command was sent: starting command: %w", nightshift.ErrOutcomeUnknown, c.connErr(cn, o.start))}
		}
		return res, &OpError{Host: c.addr, Op: OpSession, Err: fmt.Errorf("start command: %w", o.start)}
	}

	if interrupted {
		if errors.Is(context.Cause(cmdCtx), errCommandTimeout) && ctx.Err() == nil {
			res.TimedOut = true
		} else if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			res.TimedOut = true
		} else {
			res.Canceled = true
		}
	}

	var exitErr *ssh.ExitError
	var missing *ssh.ExitMissingError
	switch {
	case o.start != nil:
		// Interrupted before the server confirmed the command: exit unknown.
	case waitErr == nil:
		res.ExitCode = 0
	case errors.As(waitErr, &exitErr):
		res.ExitCode = exitErr.ExitStatus()
		res.Signal = exitErr.Signal()
	case errors.As(waitErr, &missing):
		if !interrupted {
			if c.lost(ctx, cn) {
				return res, &OpError{Host: c.addr, Op: OpSession, Err: fmt.Errorf("%w: connection lost after the command was sent: %w", nightshift.ErrOutcomeUnknown, c.connErr(cn, waitErr))}
			}
			return res, &OpError{Host: c.addr, Op: OpSession, Err: ErrExitMissing}
		}
	default:
		return res, &OpError{Host: c.addr, Op: OpSession, Err: fmt.Errorf("wait for command: %w", waitErr)}
	}
	if interrupted && ctx.Err() != nil {
		return res, &OpError{Host: c.addr, Op: OpSession, Err: fmt.Errorf("command interrupted: %w", ctx.Err())}
	}
	return res, nil
}

// openSession opens a session, redialling once if the connection turns out
// to be broken: nothing has been sent yet, so this cannot run a command
// twice. A connection that does not answer the channel open within
// DialTimeout counts as broken (it went silent: without keepalives nothing
// else would notice) and is closed.
func (c *Client) openSession(ctx context.Context) (*conn, *ssh.Session, error) {
	for attempt := 0; ; attempt++ {
		cn, err := c.getConn(ctx)
		if err != nil {
			return nil, nil, err
		}
		octx, cancel := context.WithTimeoutCause(ctx, c.cfg.DialTimeout, errSessionTimeout)
		sess, err := newSession(octx, cn)
		cancel()
		if err == nil {
			return cn, sess, nil
		}
		if ctx.Err() != nil {
			return nil, nil, &OpError{Host: c.addr, Op: OpSession, Err: fmt.Errorf("open session: %w", err)}
		}
		silent := octx.Err() != nil
		if silent {
			err = fmt.Errorf("%w (%s)", errSessionTimeout, c.cfg.DialTimeout)
			cn.close()
			<-cn.done // so the next getConn dials
		}
		var refused *ssh.OpenChannelError
		if errors.As(err, &refused) || attempt > 0 || (!silent && !c.lost(ctx, cn)) {
			return nil, nil, &OpError{Host: c.addr, Op: OpSession, Err: fmt.Errorf("open session: %w", err)}
		}
		c.cfg.Logger.Info("sshexec: connection lost before command was sent; redialling", "host", c.addr, "err", err)
	}
}

// errSessionTimeout is why a session open gave up on a silent connection.
var errSessionTimeout = errors.New("server did not answer the session open within the dial timeout")

// errConnEnded is why a session open gave up on a connection that ended.
var errConnEnded = errors.New("connection ended while opening a session")

// newSession opens a session, giving up when ctx ends (a session that
// opens later is closed) or the connection ends: x/crypto/ssh's channel
// open can wait forever when it starts just after the connection closed
// (the write error is swallowed and the channel is registered after the
// connection's channels were all released), so cn.done is watched too.
func newSession(ctx context.Context, cn *conn) (*ssh.Session, error) {
	type opened struct {
		s   *ssh.Session
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		s, err := cn.client.NewSession()
		ch <- opened{s, err}
	}()
	release := func() {
		go func() {
			if o := <-ch; o.s != nil {
				o.s.Close()
			}
		}()
	}
	select {
	case o := <-ch:
		return o.s, o.err
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	case <-cn.done:
		release()
		return nil, errConnEnded
	}
}

// interrupt stops a command that outlived its context: SIGTERM, then
// SIGKILL after KillGrace, then, after another KillGrace, closes the
// session; if the server still has not closed the channel after a third
// KillGrace, the connection is torn down. It returns Wait's result.
func (c *Client) interrupt(cn *conn, sess *ssh.Session, f *pgidFilter, done <-chan outcome) outcome {
	grace := func() <-chan time.Time { return time.After(c.cfg.KillGrace) }
	// Signalling failures mean the channel or the connection is already
	// gone, which Wait then reports.
	steps := []func(){
		func() { c.signalCommand(cn, sess, f, ssh.SIGTERM) },
		func() { c.signalCommand(cn, sess, f, ssh.SIGKILL) },
		func() { sess.Close() },
	}
	for _, step := range steps {
		step()
		select {
		case o := <-done:
			return o
		case <-grace():
		}
	}
	c.cfg.Logger.Warn("sshexec: server did not close an interrupted session; closing the connection", "host", c.addr)
	cn.close()
	return <-done
}

// outcome is how a command's Start and Wait ended.
type outcome struct {
	start error // the exec request failed; the command may not have run
	wait  error // Session.Wait's result
}

// lost reports whether cn is dead, probing it with a keepalive request when
// it still looks alive (a channel can close a moment before the connection
// reports its end). A dead connection is closed so the next Run redials.
func (c *Client) lost(ctx context.Context, cn *conn) bool {
	if cn.broken() {
		return true
	}
	probe := make(chan error, 1)
	go func() {
		_, _, err := cn.client.SendRequest("keepalive@openssh.com", true, nil)
		probe <- err
	}()
	select {
	case <-cn.done:
		return true
	case err := <-probe:
		if err != nil {
			cn.close()
			<-cn.done
			return true
		}
		return false
	case <-ctx.Done():
		// Cannot tell; assume the worst, so nothing is trusted or re-run.
		cn.close()
		return true
	}
}

// connErr is why cn ended, falling back to fallback.
func (c *Client) connErr(cn *conn, fallback error) error {
	select {
	case <-cn.done:
		if cn.err != nil && !errors.Is(cn.err, io.EOF) {
			return fmt.Errorf("connection lost: %w", cn.err)
		}
		return fmt.Errorf("connection lost: %w", io.ErrUnexpectedEOF)
	default:
		return fallback
	}
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
