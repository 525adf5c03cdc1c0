package main

import (
	"testing"
	"time"
)

// TestSSHFlagsPassedUnchanged: --command-timeout and
// --host-reconnect-deadline reach sshexec.Config as given, 0 included:
// sshexec's zero is none, as the flags' is (TestNewValidatesConfig and
// TestReconnectDeadlineOutlastsAnOutage in sshexec prove what it means).
func TestSSHFlagsPassedUnchanged(t *testing.T) {
	for _, d := range []time.Duration{0, time.Second, 5 * time.Minute} {
		cfg := sshBase(&runMeta{CommandTimeout: d, ReconnectDeadline: d}, nil)
		if cfg.CommandTimeout != d || cfg.ReconnectDeadline != d {
			t.Errorf("run --command-timeout %s --host-reconnect-deadline %s: sshexec CommandTimeout %s, ReconnectDeadline %s",
				d, d, cfg.CommandTimeout, cfg.ReconnectDeadline)
		}
	}
}
