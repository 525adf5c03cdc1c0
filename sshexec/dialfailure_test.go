package sshexec

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/retry"
)

// refusedPort is a loopback port with nothing listening.
func refusedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

// dialFailures collects what OnDialFailure hears, with when it heard it.
type dialFailures struct {
	mu  sync.Mutex
	got []DialFailure
	at  []time.Time
}

func (d *dialFailures) add(f DialFailure) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.got = append(d.got, f)
	d.at = append(d.at, time.Now())
}

func TestOnDialFailure(t *testing.T) {
	f := newFixture(t)
	port := refusedPort(t)
	var heard dialFailures
	c := f.client(t, func(c *Config) {
		c.Port = port
		c.Redial = retry.Policy{BaseDelay: 20 * time.Millisecond, MaxDelay: 40 * time.Millisecond, MaxTries: 4}
		c.OnDialFailure = heard.add
	})
	_, err := c.Run(context.Background(), "true")
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("error %v, want ECONNREFUSED", err)
	}
	end := time.Now()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	wantRetry := []time.Duration{20 * time.Millisecond, 40 * time.Millisecond, 40 * time.Millisecond, 0}
	if len(heard.got) != len(wantRetry) {
		t.Fatalf("OnDialFailure called %d times, want one per attempt (%d): %+v", len(heard.got), len(wantRetry), heard.got)
	}
	for i, h := range heard.got {
		if h.Host != addr || h.User != "tester" || h.Attempt != i+1 || h.Attempts != 4 || !errors.Is(h.Err, syscall.ECONNREFUSED) {
			t.Errorf("failure %d: %+v, want host %s, user tester, attempt %d of 4, ECONNREFUSED", i, h, addr, i+1)
		}
		if h.RetryIn != wantRetry[i] {
			t.Errorf("failure %d: retry in %s, want %s", i, h.RetryIn, wantRetry[i])
		}
		if last := i == len(wantRetry)-1; h.Last() != last || h.GiveUpAt.IsZero() != last {
			t.Errorf("failure %d: Last %v, GiveUpAt %v; want the last one (only) to give up, with no give-up time", i, h.Last(), h.GiveUpAt)
		}
	}
	// The give-up time counts every remaining wait: at least 20+40+40 ms
	// after the first failure, 40+40 after the second, and it is never
	// earlier than a later failure's.
	for i, least := range []time.Duration{100 * time.Millisecond, 80 * time.Millisecond, 40 * time.Millisecond} {
		if d := heard.got[i].GiveUpAt.Sub(heard.at[i]); d < least {
			t.Errorf("failure %d: gives up %s after it, want at least the remaining waits, %s", i, d, least)
		}
	}
	// Nor is it a worst case of every dial taking DialTimeout (15 s each):
	// refused dials are quick, so is the end.
	if !heard.got[0].GiveUpAt.Before(end.Add(10 * time.Second)) {
		t.Errorf("give-up time %v is not near the real end %v", heard.got[0].GiveUpAt, end)
	}
	// With a callback, the Logger has the failures at Info, not Warn.
	if log := f.logBuf.String(); strings.Contains(log, `"level":"WARN"`) || strings.Count(log, "dial failed") != 4 {
		t.Errorf("log:\n%s\nwant the 4 dial failures at INFO", log)
	}
}

// A context deadline before the last attempt is when the dial gives up.
func TestOnDialFailureContextDeadline(t *testing.T) {
	f := newFixture(t)
	var heard dialFailures
	c := f.client(t, func(c *Config) {
		c.Port = refusedPort(t)
		c.Redial = retry.Policy{BaseDelay: time.Hour, MaxTries: 3}
		c.OnDialFailure = heard.add
	})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	deadline, _ := ctx.Deadline()
	if _, err := c.Run(ctx, "true"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want the context's deadline", err)
	}
	if len(heard.got) != 1 || heard.got[0].RetryIn != time.Hour || !heard.got[0].GiveUpAt.Equal(deadline) {
		t.Fatalf("heard %+v, want one failure retrying in 1h, giving up at the context's deadline %v", heard.got, deadline)
	}
}
