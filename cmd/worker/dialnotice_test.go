package main

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/sshexec"
)

// TestDialNotices: a failed dial of a host is one line with the host, the
// cause, the wait and when the dials give up; the last one says it gave up.
func TestDialNotices(t *testing.T) {
	var b bytes.Buffer
	notice := dialNotices(&b)
	giveUp := time.Date(2026, 11, 24, 2, 14, 7, 0, time.Local)
	refused := &sshexec.OpError{Host: "10.0.0.9:22", Op: sshexec.OpDial, Err: errors.New("dial tcp 10.0.0.9:22: connect: connection refused")}
	timeout := &sshexec.OpError{Host: "db1:2222", Op: sshexec.OpDial, Err: errors.New("dial tcp 10.0.0.7:2222: i/o timeout")}
	notice(sshexec.DialFailure{Host: "10.0.0.9:22", User: "root", Attempt: 3, Attempts: 4, Err: refused, RetryIn: 4 * time.Second, GiveUpAt: giveUp})
	notice(sshexec.DialFailure{Host: "db1:2222", User: "admin", Attempt: 1, Attempts: 4, Err: timeout, RetryIn: 250 * time.Millisecond, GiveUpAt: giveUp})
	notice(sshexec.DialFailure{Host: "10.0.0.9:22", User: "root", Attempt: 4, Attempts: 4, Err: refused})
	want := "worker: host root@10.0.0.9:22: connection refused; retrying in 4s, giving up at 02:14:07\n" +
		"worker: host admin@db1:2222: no answer in time (i/o timeout); retrying in 250ms, giving up at 02:14:07\n" +
		"worker: host root@10.0.0.9:22: connection refused; giving up after 4 attempts\n"
	if b.String() != want {
		t.Errorf("notices:\n%s\nwant:\n%s", b.String(), want)
	}
	if dialNotices(nil) != nil {
		t.Error("dialNotices(nil) is not nil: sshexec would log dial failures at Info with nobody told")
	}
}
