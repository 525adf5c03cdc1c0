package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is an injected clock: Sleep advances Now and records the wait.
type fakeClock struct {
	now   time.Time
	waits []time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 11, 24, 2, 14, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

func (c *fakeClock) policy(p Policy) Policy {
	p.Now, p.Sleep = c.Now, c.Sleep
	return p
}

func TestDelay(t *testing.T) {
	half := func(d time.Duration) time.Duration { return d / 2 }
	for _, tc := range []struct {
		name string
		p    Policy
		n    int
		err  error
		want time.Duration
	}{
		{"no failure", Policy{}, 0, nil, 0},
		{"defaults first", Policy{}, 1, nil, 500 * time.Millisecond},
		{"defaults doubled", Policy{}, 3, nil, 2 * time.Second},
		{"defaults capped", Policy{}, 10, nil, 15 * time.Second},
		{"own base and max", Policy{BaseDelay: 250 * time.Millisecond, MaxDelay: 8 * time.Second}, 4, nil, 2 * time.Second},
		{"own max caps", Policy{BaseDelay: 250 * time.Millisecond, MaxDelay: 8 * time.Second}, 9, nil, 8 * time.Second},
		{"max below base", Policy{BaseDelay: time.Second, MaxDelay: time.Millisecond}, 3, nil, time.Second},
		{"huge n does not overflow", Policy{}, 1 << 20, nil, 15 * time.Second},
		{"jitter applied", Policy{Jitter: half}, 2, nil, 500 * time.Millisecond},
		{"retry-after wins, no jitter, no cap", Policy{Jitter: half, MaxDelay: time.Second}, 1, &afterError{err: io.EOF, wait: 3 * time.Second}, 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.p.Delay(tc.n, tc.err))
		})
	}
}

func TestEqualJitter(t *testing.T) {
	for range 1000 {
		d := EqualJitter(time.Second)
		require.GreaterOrEqual(t, d, 500*time.Millisecond)
		require.LessOrEqual(t, d, time.Second)
	}
	assert.Equal(t, time.Duration(0), EqualJitter(0))
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 24, 2, 14, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{" 120 ", 2 * time.Minute, true},
		{"0", 0, true},
		{"Tue, 24 Nov 2026 02:14:07 GMT", 7 * time.Second, true},
		{"Tuesday, 24-Nov-26 02:14:30 GMT", 30 * time.Second, true}, // RFC 850
		{"Tue, 24 Nov 2026 02:13:00 GMT", 0, true},                  // past
		{"", 0, false},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
	} {
		got, ok := ParseRetryAfter(tc.in, now)
		assert.Equal(t, tc.ok, ok, "%q", tc.in)
		assert.Equal(t, tc.want, got, "%q", tc.in)
	}
}

// statusError is a failed HTTP answer, as a client turns it into an error.
type statusError struct{ code int }

func (e *statusError) Error() string { return fmt.Sprintf("HTTP %d", e.code) }

// get makes one request through a Transport and fails on a non-200 answer.
func get(client *http.Client, url string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return &statusError{resp.StatusCode}
		}
		return nil
	}
}

// server answers with the given statuses and Retry-After headers in turn,
// then 200.
func server(t *testing.T, answers ...[2]string) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(calls.Add(1)) - 1
		if i >= len(answers) {
			return
		}
		if answers[i][1] != "" {
			w.Header().Set("Retry-After", answers[i][1])
		}
		code := 0
		_, _ = fmt.Sscan(answers[i][0], &code)
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func retryStatus(err error) bool {
	var se *statusError
	return errors.As(err, &se) && RetryableStatus(se.code)
}

// TestDoHonoursRetryAfter: a 429 with Retry-After: 3 waits 3 s, whatever the
// backoff would have said; without the header the backoff applies.
func TestDoHonoursRetryAfter(t *testing.T) {
	srv, calls := server(t, [2]string{"429", "3"}, [2]string{"503", ""}, [2]string{"503", "Tue, 24 Nov 2026 02:14:13 GMT"})
	clock := newFakeClock()
	client := &http.Client{Transport: &Transport{Now: clock.Now}}
	var retries []Retry
	p := clock.policy(Policy{BaseDelay: time.Second, Deadline: time.Minute, CheckRetry: retryStatus,
		OnRetry: func(r Retry) { retries = append(retries, r) }})
	require.NoError(t, p.Do(context.Background(), get(client, srv.URL)))
	assert.Equal(t, int32(4), calls.Load())
	// 3 s asked; 2 s of backoff (the second failure); the date is 02:14:13, reached at 02:14:05.
	assert.Equal(t, []time.Duration{3 * time.Second, 2 * time.Second, 8 * time.Second}, clock.waits)
	require.Len(t, retries, 3)
	for i, r := range retries {
		assert.Equal(t, i+1, r.Try)
		assert.Equal(t, clock.waits[i], r.Wait)
		assert.Equal(t, time.Date(2026, 11, 24, 2, 15, 0, 0, time.UTC), r.GiveUpAt)
	}
	assert.EqualError(t, retries[0].Err, "HTTP 429", "the error is passed on as the call returned it")
}

// TestDoDeadlineCapsRetryAfter: a Retry-After that would end past the
// deadline is not waited for; the policy gives up at once.
func TestDoDeadlineCapsRetryAfter(t *testing.T) {
	srv, calls := server(t, [2]string{"503", "1"}, [2]string{"429", "3"})
	clock := newFakeClock()
	client := &http.Client{Transport: &Transport{Now: clock.Now}}
	p := clock.policy(Policy{Deadline: 2500 * time.Millisecond, CheckRetry: retryStatus})
	err := p.Do(context.Background(), get(client, srv.URL))
	var gu *GiveUpError
	require.ErrorAs(t, err, &gu)
	assert.ErrorIs(t, err, ErrGaveUp)
	assert.Equal(t, 2, gu.Tries)
	assert.Equal(t, time.Second, gu.Since)
	assert.EqualError(t, gu.Err, "HTTP 429")
	assert.Equal(t, int32(2), calls.Load())
	assert.Equal(t, []time.Duration{time.Second}, clock.waits, "only the first Retry-After fits in the deadline")
}

// TestDoRetryAfterOutsideDo: a Transport used outside Do passes requests
// and answers through untouched.
func TestDoRetryAfterOutsideDo(t *testing.T) {
	srv, _ := server(t, [2]string{"429", "3"})
	err := get(&http.Client{Transport: &Transport{}}, srv.URL)(context.Background())
	assert.EqualError(t, err, "HTTP 429")
}

func TestDoStops(t *testing.T) {
	refused := fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
	permanent := errors.New("bad request")
	t.Run("success first", func(t *testing.T) {
		clock := newFakeClock()
		require.NoError(t, clock.policy(Policy{}).Do(context.Background(), func(context.Context) error { return nil }))
		assert.Empty(t, clock.waits)
	})
	t.Run("not retryable", func(t *testing.T) {
		clock := newFakeClock()
		n := 0
		err := clock.policy(Policy{CheckRetry: NetworkError}).Do(context.Background(), func(context.Context) error { n++; return permanent })
		assert.Same(t, permanent, err)
		assert.Equal(t, 1, n)
	})
	t.Run("max tries", func(t *testing.T) {
		clock := newFakeClock()
		n := 0
		err := clock.policy(Policy{MaxTries: 3, BaseDelay: time.Second}).Do(context.Background(), func(context.Context) error { n++; return refused })
		var gu *GiveUpError
		require.ErrorAs(t, err, &gu)
		assert.Equal(t, 3, gu.Tries)
		assert.Equal(t, 3, n)
		assert.Equal(t, []time.Duration{time.Second, 2 * time.Second}, clock.waits)
		assert.ErrorIs(t, err, syscall.ECONNREFUSED)
	})
	t.Run("deadline caps backoff", func(t *testing.T) {
		clock := newFakeClock()
		err := clock.policy(Policy{Deadline: 4 * time.Second, BaseDelay: time.Second}).Do(context.Background(), func(context.Context) error { return refused })
		var gu *GiveUpError
		require.ErrorAs(t, err, &gu)
		// 1 s + 2 s = 3 s; the next 4 s would end at 7 s > 4 s.
		assert.Equal(t, 3, gu.Tries)
		assert.Equal(t, 3*time.Second, gu.Since)
	})
	t.Run("context ends", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		clock := newFakeClock()
		n := 0
		err := clock.policy(Policy{}).Do(ctx, func(context.Context) error {
			n++
			if n == 2 {
				cancel()
			}
			return refused
		})
		assert.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 2, n)
	})
	t.Run("real sleep honours the context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := Policy{BaseDelay: time.Hour}.Do(ctx, func(context.Context) error { return refused })
		assert.ErrorIs(t, err, context.Canceled)
	})
}

func TestRetryableStatusAndNetworkError(t *testing.T) {
	for code, want := range map[int]bool{200: false, 400: false, 404: false, 429: true, 500: true, 503: true} {
		assert.Equal(t, want, RetryableStatus(code), "%d", code)
	}
	assert.True(t, NetworkError(fmt.Errorf("post: %w", syscall.ECONNREFUSED)))
	assert.True(t, NetworkError(io.ErrUnexpectedEOF))
	assert.True(t, NetworkError(context.DeadlineExceeded))
	assert.False(t, NetworkError(errors.New("HTTP 400")))
	assert.False(t, NetworkError(context.Canceled))
}
