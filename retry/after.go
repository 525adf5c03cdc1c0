package retry

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RetryAfter returns the wait the first error in err's chain with a
// RetryAfter() time.Duration method asks for, when it is positive.
func RetryAfter(err error) (time.Duration, bool) {
	var ra interface{ RetryAfter() time.Duration }
	if errors.As(err, &ra) {
		if d := ra.RetryAfter(); d > 0 {
			return d, true
		}
	}
	return 0, false
}

// ParseRetryAfter reads a Retry-After header value (RFC 9110 10.2.3): a
// number of seconds, or an HTTP-date, counted from now. A date in the past
// is no wait (0, true); an empty or malformed value is (0, false).
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(s) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// Transport is an http.RoundTripper that records each response's
// Retry-After header into the try whose context the request carries (the
// context Policy.Do gives each try); requests made outside Do pass through
// untouched. The response itself is not changed.
type Transport struct {
	// Base makes the requests. Nil: http.DefaultTransport.
	Base http.RoundTripper
	// Now is the clock an HTTP-date is counted from. Nil: time.Now.
	Now func() time.Time
}

// RoundTrip makes the request with Base and records the response's
// Retry-After.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil || resp == nil {
		return resp, err
	}
	if rec, ok := req.Context().Value(recorderKey{}).(*recorder); ok {
		now := time.Now
		if t.Now != nil {
			now = t.Now
		}
		if d, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), now()); ok {
			rec.set(d)
		}
	}
	return resp, nil
}

// recorderKey is the context key of a try's recorder.
type recorderKey struct{}

// recorder holds the last Retry-After seen during one try.
type recorder struct {
	mu   sync.Mutex
	wait time.Duration
	seen bool
}

func (r *recorder) set(d time.Duration) {
	r.mu.Lock()
	r.wait, r.seen = d, true
	r.mu.Unlock()
}

// annotate returns err carrying the recorded wait, when one was recorded
// and err carries none of its own.
func (r *recorder) annotate(err error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.seen || r.wait <= 0 {
		return err
	}
	if _, ok := RetryAfter(err); ok {
		return err
	}
	return &afterError{err: err, wait: r.wait}
}

// afterError is an error with the wait its server asked for.
type afterError struct {
	err  error
	wait time.Duration
}

func (e *afterError) Error() string             { return e.err.Error() }
func (e *afterError) Unwrap() error             { return e.err }
func (e *afterError) RetryAfter() time.Duration { return e.wait }
