package sshexec

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/sshtarget"
	"github.com/nightshift-dev/nightshift/retry"
)

// fault: ssh-outage
// A host that answered and whose sshd then dies (listener and sessions)
// and comes back on the same port a few seconds later: under
// ReconnectDeadline the next Run redials with backoff until it answers;
// with no reconnect deadline (Redial's MaxTries alone, the previous rule)
// the Run gives up after its dials. The notices of a redial under the
// deadline say when it gives up (the deadline), not an attempt count.
func TestReconnectDeadlineOutlastsAnOutage(t *testing.T) {
	tests := []struct {
		name     string
		deadline time.Duration
		wantErr  bool
	}{
		{"within the reconnect deadline", time.Minute, false},
		{"no reconnect deadline", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := startTarget(t, sshtarget.Options{})
			var mu sync.Mutex
			var notices []DialFailure
			c := targetClient(t, tg, func(c *Config) {
				c.Redial = retry.Policy{BaseDelay: 100 * time.Millisecond, MaxDelay: 500 * time.Millisecond}
				c.ReconnectDeadline = tt.deadline
				c.OnDialFailure = func(f DialFailure) {
					mu.Lock()
					notices = append(notices, f)
					mu.Unlock()
				}
			})
			if _, err := c.Run(context.Background(), "true"); err != nil {
				t.Fatal(err)
			}
			tg.Stop()
			restarted := make(chan error, 1)
			ran := make(chan struct{})
			go func() {
				// Restart once the client has failed more dials than
				// Redial's MaxTries alone allows, or once the Run gave up.
				for {
					mu.Lock()
					n := len(notices)
					mu.Unlock()
					select {
					case <-ran:
					case <-time.After(20 * time.Millisecond):
						if n <= DefaultRedialTries {
							continue
						}
					}
					break
				}
				restarted <- tg.Restart(context.Background())
			}()
			res, err := c.Run(context.Background(), "echo back")
			close(ran)
			if rerr := <-restarted; rerr != nil {
				t.Fatalf("restart sshd: %v", rerr)
			}
			mu.Lock()
			defer mu.Unlock()
			if tt.wantErr {
				var op *OpError
				if !errors.As(err, &op) || op.Op != OpDial {
					t.Fatalf("Run during the outage = %+v, %v; want a dial error", res, err)
				}
				if last := notices[len(notices)-1]; !last.Last() || last.Attempts != DefaultRedialTries {
					t.Errorf("last notice %+v, want the last of %d attempts", last, DefaultRedialTries)
				}
				return
			}
			if err != nil || res.Stdout != "back\n" {
				t.Fatalf("Run across the outage = %+v, %v; want it to run once sshd is back (%d failed dials)", res, err, len(notices))
			}
			for _, f := range notices {
				if f.Last() || f.Attempts != 0 || f.GiveUpAt.IsZero() {
					t.Errorf("notice %+v: want a redial going on until the deadline", f)
				}
			}
		})
	}
}
