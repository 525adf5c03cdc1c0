package main

import (
	"testing"
	"time"
)

// TestCommandTimeoutZeroIsNone: --command-timeout 0 means no timeout, as
// the help says; sshexec reads a zero CommandTimeout as its 10-minute
// default and a negative one as none.
func TestCommandTimeoutZeroIsNone(t *testing.T) {
	for _, tt := range []struct{ flag, want time.Duration }{
		{0, -1},
		{time.Second, time.Second},
		{5 * time.Minute, 5 * time.Minute},
	} {
		if got := sshCommandTimeout(tt.flag); got != tt.want {
			t.Errorf("sshCommandTimeout(%s) = %s, want %s", tt.flag, got, tt.want)
		}
		if got := sshBase(&runMeta{CommandTimeout: tt.flag}, nil).CommandTimeout; got != tt.want {
			t.Errorf("run --command-timeout %s: sshexec CommandTimeout %s, want %s", tt.flag, got, tt.want)
		}
	}
}
