package main

import (
	"fmt"
	"io"

	"github.com/nightshift-dev/nightshift/sshexec"
)

// dialNotices returns the sshexec.Config.OnDialFailure that says what the
// worker waits for when a host does not answer: one line per failed dial
// with the cause, the next retry and when it gives up ("worker: host
// root@db1:22: connection refused; retrying in 250ms, giving up at
// 02:14:07"), then the last one ("…; giving up after 4 attempts"). w nil:
// none.
func dialNotices(w io.Writer) func(sshexec.DialFailure) {
	if w == nil {
		return nil
	}
	return func(f sshexec.DialFailure) {
		what := "host " + f.User + "@" + f.Host
		if f.Last() {
			fmt.Fprintf(w, "worker: %s: %s; giving up after %d attempts\n", what, shortCause(f.Err.Error()), f.Attempts)
			return
		}
		waitNotice(w, what, f.Err.Error(), f.RetryIn, f.GiveUpAt)
	}
}
