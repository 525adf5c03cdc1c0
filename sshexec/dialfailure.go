package sshexec

import (
	"context"
	"log/slog"
	"time"
)

// DialFailure is a failed dial that Config.OnDialFailure hears of: one per
// failed attempt of a Run's dial (or Connect's), network and handshake
// failures only (host key and authentication failures are returned, not
// retried).
type DialFailure struct {
	Host string // "host:port" dialled
	User string // the login user
	// Attempt is this attempt's number, from 1, of Attempts
	// (Config.Backoff.Attempts).
	Attempt, Attempts int
	Err               error // why it failed (an *OpError)
	// RetryIn is the wait before the next attempt; 0 on the last attempt,
	// after which the dial gives up and the Run fails with Err.
	RetryIn time.Duration
	// GiveUpAt is when the last attempt will have failed if each remaining
	// one fails as this one did, as fast (each within Config.DialTimeout),
	// and no sooner than the context's deadline; zero on the last
	// attempt.
	GiveUpAt time.Time
}

// Last reports whether the dial gives up after this failure.
func (f DialFailure) Last() bool { return f.Attempt >= f.Attempts }

// dialFailed reports a failed, retryable dial attempt (0-based) that took
// took: to the Logger, and to OnDialFailure with the next wait and when the
// dial gives up if it keeps failing. failures are the previous Runs'
// consecutive failed dials (they lengthen the waits).
func (c *Client) dialFailed(ctx context.Context, failures, attempt int, took time.Duration, err error) {
	b := c.cfg.Backoff
	level := slog.LevelWarn
	if c.cfg.OnDialFailure != nil {
		level = slog.LevelInfo
	}
	f := DialFailure{Host: c.addr, User: c.cfg.User, Attempt: attempt + 1, Attempts: b.Attempts, Err: err}
	if f.Last() {
		c.cfg.Logger.Log(ctx, level, "sshexec: dial failed; giving up", "host", c.addr, "attempt", f.Attempt, "of", b.Attempts, "err", err)
	} else {
		f.RetryIn = b.delay(failures + attempt + 1)
		// The remaining attempts: each waits its delay, then dials for
		// about as long as this one did.
		took = min(took, c.cfg.DialTimeout)
		rest := f.RetryIn + took
		for n := attempt + 2; n < b.Attempts; n++ {
			rest += b.delay(failures+n) + took
		}
		f.GiveUpAt = time.Now().Add(rest)
		if d, ok := ctx.Deadline(); ok && d.Before(f.GiveUpAt) {
			f.GiveUpAt = d
		}
		c.cfg.Logger.Log(ctx, level, "sshexec: dial failed; retrying", "host", c.addr, "attempt", f.Attempt, "of", b.Attempts,
			"retry_in", f.RetryIn, "err", err)
	}
	if c.cfg.OnDialFailure != nil {
		c.cfg.OnDialFailure(f)
	}
}
