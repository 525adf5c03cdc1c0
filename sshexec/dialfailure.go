package sshexec

import (
	"context"
	"log/slog"
	"time"

	"github.com/nightshift-dev/nightshift/retry"
)

// DialFailure is a failed dial that Config.OnDialFailure hears of: one per
// failed attempt of a Run's dial (or Connect's), network and handshake
// failures only (host key and authentication failures are returned, not
// retried).
type DialFailure struct {
	Host string // "host:port" dialled
	User string // the login user
	// Attempt is this attempt's number, from 1, of Attempts
	// (Config.Redial.MaxTries). Attempts is 0 while a redial of a host
	// that answered before goes on until GiveUpAt (ReconnectDeadline),
	// and the number made on the last attempt.
	Attempt, Attempts int
	Err               error // why it failed (an *OpError)
	// RetryIn is the wait before the next attempt; 0 on the last attempt,
	// after which the dial gives up and the Run fails with Err.
	RetryIn time.Duration
	// GiveUpAt is when the last attempt will have failed if each remaining
	// one fails as this one did, as fast (each within Config.DialTimeout),
	// and no later than the context's deadline — for a redial under
	// ReconnectDeadline, that deadline; zero on the last attempt.
	GiveUpAt time.Time
}

// Last reports whether the dial gives up after this failure.
func (f DialFailure) Last() bool { return f.Attempts > 0 && f.Attempt >= f.Attempts }

// dialFailed reports the failed, retryable try (from 1) of a dial under p
// that took took: to the Logger, and to OnDialFailure with the wait before
// the next try and when the dial gives up if it keeps failing. wait is 0
// when the policy gave up after this try; giveUpAt is the policy's own
// deadline (zero: none, the tries bound it).
func (c *Client) dialFailed(ctx context.Context, p retry.Policy, try int, took time.Duration, err error, wait time.Duration, giveUpAt time.Time) {
	level := slog.LevelWarn
	if c.cfg.OnDialFailure != nil {
		level = slog.LevelInfo
	}
	f := DialFailure{Host: c.addr, User: c.cfg.User, Attempt: try, Attempts: p.MaxTries, Err: err}
	if wait == 0 {
		f.Attempts = max(f.Attempts, try)
	}
	if f.Last() {
		c.cfg.Logger.Log(ctx, level, "sshexec: dial failed; giving up", "host", c.addr, "attempt", f.Attempt, "of", f.Attempts, "err", err)
	} else {
		f.RetryIn = wait
		// The remaining tries: each waits its nominal delay (the policy's
		// without jitter), then dials for about as long as this one did.
		nominal := p
		nominal.Jitter = nil
		took = min(took, c.cfg.DialTimeout)
		rest := f.RetryIn + took
		for n := try + 1; n < p.MaxTries; n++ {
			rest += nominal.Delay(n, nil) + took
		}
		f.GiveUpAt = time.Now().Add(rest)
		if p.MaxTries == 0 && !giveUpAt.IsZero() {
			f.GiveUpAt = giveUpAt
		}
		if d, ok := ctx.Deadline(); ok && d.Before(f.GiveUpAt) {
			f.GiveUpAt = d
		}
		c.cfg.Logger.Log(ctx, level, "sshexec: dial failed; retrying", "host", c.addr, "attempt", f.Attempt, "of", f.Attempts,
			"retry_in", f.RetryIn, "err", err)
	}
	if c.cfg.OnDialFailure != nil {
		c.cfg.OnDialFailure(f)
	}
}
