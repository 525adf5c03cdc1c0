package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift"
)

// TestRetryNotices: a retried model call is one line with the rule, the
// attempt, the server, the cause, the wait and the deadline.
func TestRetryNotices(t *testing.T) {
	var b bytes.Buffer
	giveUp := time.Date(2026, 11, 24, 2, 14, 7, 0, time.Local)
	n := retryNotices{w: &b, baseURL: "http://gpu1:8000/v1"}
	n.Observe(nightshift.Event{Kind: nightshift.EventAttempt, Rule: "r"}) // not a retry: nothing
	n.Observe(nightshift.Event{Kind: nightshift.EventRetry, Rule: "sshd_disable_root_login", Attempt: 4, Try: 2,
		RetryIn: 8 * time.Second, GiveUpAt: giveUp,
		Error: `Post "http://gpu1:8000/v1/chat/completions": dial tcp 10.0.0.9:8000: connect: connection refused`})
	n.host = "web1"
	n.Observe(nightshift.Event{Kind: nightshift.EventRetry, Rule: "a", Attempt: 1, RetryIn: 1500 * time.Millisecond, GiveUpAt: giveUp,
		Error: "error, status code: 503, status: 503 Service Unavailable, message: busy"})
	want := "worker: rule sshd_disable_root_login attempt 4: model server http://gpu1:8000/v1: connection refused; retrying in 8s, giving up at 02:14:07\n" +
		"worker: host web1: rule a attempt 1: model server http://gpu1:8000/v1: error, status code: 503, status: 503 Service Unavailable, message: busy; retrying in 1.5s, giving up at 02:14:07\n"
	if b.String() != want {
		t.Errorf("notices:\n%s\nwant:\n%s", b.String(), want)
	}
}
