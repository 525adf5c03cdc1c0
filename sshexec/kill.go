package sshexec

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// Why a preamble: OpenSSH's sshd ignores "signal" channel requests for
// root logins ("session signalling requires privilege separation": the
// post-authentication process of a root session runs without privilege
// separation). sshd starts each command as a session leader (setsid), so
// the login shell's $$ is the command's process group. Run prefixes the
// command with a one-line announcement of that group on stderr, strips it
// from the captured output, and on timeout or cancellation kills the group
// from a second session — which works for every login user.

const pgidTag = "sshexec-pgid:"

// withPreamble returns command prefixed with the announcement and the
// nonce that identifies it.
func withPreamble(command string) (string, string) {
	var b [8]byte
	rand.Read(b[:])
	nonce := hex.EncodeToString(b[:])
	return "printf '" + pgidTag + "%s:%s\\n' " + nonce + " $$ >&2; " + command, nonce
}

// pgidFilter passes stderr through to w, removing the preamble's line (the
// first line, when it carries the nonce) and recording the process group.
type pgidFilter struct {
	w      io.Writer
	prefix []byte // pgidTag + nonce + ":"

	mu    sync.Mutex
	buf   []byte // held back while the first line may still be the preamble
	done  bool
	pgid  int
	known chan struct{} // closed once filtering ends, pgid found or not
}

func newPgidFilter(w io.Writer, nonce string) *pgidFilter {
	return &pgidFilter{w: w, prefix: []byte(pgidTag + nonce + ":"), known: make(chan struct{})}
}

func (f *pgidFilter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return f.w.Write(p)
	}
	f.buf = append(f.buf, p...)
	n := len(p)
	i := bytes.IndexByte(f.buf, '\n')
	if i < 0 {
		if len(f.buf) <= len(f.prefix)+20 && bytes.HasPrefix(f.prefix, f.buf[:min(len(f.buf), len(f.prefix))]) {
			return n, nil // could still be the preamble
		}
		return n, f.flush(f.buf)
	}
	line := f.buf[:i]
	if rest, ok := bytes.CutPrefix(line, f.prefix); ok {
		if pgid, err := strconv.Atoi(string(rest)); err == nil && pgid > 1 {
			f.pgid = pgid
			return n, f.flush(f.buf[i+1:])
		}
	}
	return n, f.flush(f.buf)
}

// flush ends filtering and writes what was held back.
func (f *pgidFilter) flush(b []byte) error {
	f.done = true
	close(f.known)
	f.buf = nil
	if len(b) == 0 {
		return nil
	}
	_, err := f.w.Write(b)
	return err
}

// finish releases a partial first line held back when the stream ended.
func (f *pgidFilter) finish() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.done {
		f.flush(f.buf)
	}
}

func (f *pgidFilter) group() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pgid
}

// signalCommand delivers sig to the command: through a second session that
// kills its process group when the group is known, else through a "signal"
// channel request. It does not wait longer than KillGrace for the helper
// session.
func (c *Client) signalCommand(cn *conn, sess *ssh.Session, f *pgidFilter, sig ssh.Signal) {
	if f.group() == 0 {
		// The announcement may still be on its way (a slow login shell).
		select {
		case <-f.known:
		case <-time.After(c.cfg.KillGrace):
		}
	}
	pgid := f.group()
	if pgid == 0 {
		sess.Signal(sig)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.KillGrace)
	defer cancel()
	helper, err := newSession(ctx, cn)
	if err != nil {
		c.cfg.Logger.Warn("sshexec: could not open a session to signal the command", "host", c.addr, "err", err)
		sess.Signal(sig)
		return
	}
	defer helper.Close()
	cmd := fmt.Sprintf("kill -%s -- -%d 2>/dev/null", sig, pgid)
	if c.cfg.Sudo && c.cfg.User != "root" {
		cmd = "sudo -n " + cmd
	}
	ran := make(chan error, 1)
	go func() { ran <- helper.Run(cmd) }()
	select {
	case <-ran:
	case <-ctx.Done():
	case <-time.After(c.cfg.KillGrace):
	}
}
