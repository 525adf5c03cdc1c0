package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Defaults applied to zero Policy fields.
const (
	DefaultBaseDelay = 500 * time.Millisecond
	DefaultMaxDelay  = 15 * time.Second
)

// Policy says whether and when a failed call is tried again. Every zero
// field means the documented default.
type Policy struct {
	// BaseDelay is the wait after the first failure; each further failure
	// doubles it. Default: 500ms.
	BaseDelay time.Duration
	// MaxDelay caps the doubled wait (not a server's Retry-After). Default:
	// 15s; a MaxDelay below BaseDelay is raised to it.
	MaxDelay time.Duration
	// Deadline bounds the whole sequence, counted from the first try: a
	// wait that would end after it is not begun, the policy gives up
	// instead. Zero: no deadline.
	Deadline time.Duration
	// MaxTries bounds the number of tries (the first one included). Zero:
	// no limit but the Deadline and the context.
	MaxTries int
	// Jitter turns the computed wait d into the wait slept; EqualJitter
	// draws it from [d/2, d]. Nil: no jitter, the wait is d. It is not
	// applied to a server's Retry-After.
	Jitter func(d time.Duration) time.Duration
	// CheckRetry reports whether a failed try's error is worth another try.
	// It is not asked about the context's own end, which always stops the
	// loop. Nil: every error is retried.
	CheckRetry func(err error) bool
	// OnRetry, when set, is told about each retry before its wait.
	OnRetry func(Retry)
	// Now and Sleep are the clock, for tests. Nil: time.Now, and a timer
	// that returns ctx.Err() when ctx ends first.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// Retry describes one retry, for Policy.OnRetry.
type Retry struct {
	Try      int           // the try that failed, from 1
	Err      error         // its error
	Wait     time.Duration // the wait before the next try
	GiveUpAt time.Time     // when the policy gives up; zero without a Deadline
}

// ErrGaveUp is matched by every *GiveUpError.
var ErrGaveUp = errors.New("retries exhausted")

// GiveUpError reports that the tries or the deadline ran out while the
// error was still worth retrying.
type GiveUpError struct {
	Tries int           // tries made
	Since time.Duration // from the first try to giving up
	Err   error         // the last try's error
}

func (e *GiveUpError) Error() string {
	return fmt.Sprintf("gave up after %d tries over %s: %v", e.Tries, e.Since.Round(time.Millisecond), e.Err)
}

func (e *GiveUpError) Unwrap() error { return e.Err }

// Is makes every GiveUpError match ErrGaveUp.
func (e *GiveUpError) Is(target error) bool { return target == ErrGaveUp }

// EqualJitter returns a wait drawn uniformly from [d/2, d].
func EqualJitter(d time.Duration) time.Duration {
	if d <= 0 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

// Delay is the wait after the n-th consecutive failure (n from 1; 0 or less
// waits nothing): the Retry-After that err carries (see RetryAfter) if any,
// else BaseDelay doubled n-1 times, capped at MaxDelay, through Jitter.
func (p Policy) Delay(n int, err error) time.Duration {
	if n <= 0 {
		return 0
	}
	if d, ok := RetryAfter(err); ok {
		return d
	}
	base, maxDelay := p.BaseDelay, p.MaxDelay
	if base <= 0 {
		base = DefaultBaseDelay
	}
	if maxDelay <= 0 {
		maxDelay = DefaultMaxDelay
	}
	maxDelay = max(maxDelay, base)
	d := base
	for i := 1; i < n && d < maxDelay; i++ {
		d *= 2
	}
	d = min(d, maxDelay)
	if p.Jitter != nil {
		d = p.Jitter(d)
	}
	return d
}

// Do calls try until it returns nil, CheckRetry refuses its error (that
// error is returned as it is), the tries or the deadline run out (a
// *GiveUpError wrapping the last error), or ctx ends (ctx.Err()). Each try
// is given a context derived from ctx that records a Retry-After header a
// Transport sees; that wait wins over the computed backoff.
func (p Policy) Do(ctx context.Context, try func(ctx context.Context) error) error {
	now, sleep := p.Now, p.Sleep
	if now == nil {
		now = time.Now
	}
	if sleep == nil {
		sleep = sleepCtx
	}
	start := now()
	var giveUpAt time.Time
	if p.Deadline > 0 {
		giveUpAt = start.Add(p.Deadline)
	}
	for n := 1; ; n++ {
		rec := &recorder{}
		err := try(context.WithValue(ctx, recorderKey{}, rec))
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if p.CheckRetry != nil && !p.CheckRetry(err) {
			return err
		}
		if p.MaxTries > 0 && n >= p.MaxTries {
			return &GiveUpError{Tries: n, Since: now().Sub(start), Err: err}
		}
		wait := p.Delay(n, rec.annotate(err))
		if !giveUpAt.IsZero() && now().Add(wait).After(giveUpAt) {
			return &GiveUpError{Tries: n, Since: now().Sub(start), Err: err}
		}
		if p.OnRetry != nil {
			p.OnRetry(Retry{Try: n, Err: err, Wait: wait, GiveUpAt: giveUpAt})
		}
		if err := sleep(ctx, wait); err != nil {
			return err
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
