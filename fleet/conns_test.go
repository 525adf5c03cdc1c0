package fleet_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/fleet"
)

// The connections the activities keep between them, counted on the
// simulated hosts (their SSH servers' open connections), not in the pool.

// openConns is each host's count of open client connections.
func openConns(n *night) []int {
	out := make([]int, len(n.Hosts))
	for i, h := range n.Hosts {
		out[i] = h.OpenConns()
	}
	return out
}

// waitConns waits (at most 10 s) until the hosts' open connections are want.
func waitConns(t *testing.T, n *night, want []int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := openConns(n)
		if fmt.Sprint(got) == fmt.Sprint(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("open connections per host %v, want %v", got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func probe(t *testing.T, a *fleet.Activities, n *night, i int) {
	t.Helper()
	ex, err := a.Probe(context.Background(), fleet.ProbeInput{Host: n.Night.Hosts[i], Command: "true"})
	if err != nil || ex.ExitCode != 0 {
		t.Fatalf("probe of host %d = %+v, %v", i, ex, err)
	}
}

func TestActivitiesConnectionKeeping(t *testing.T) {
	hold := make(chan struct{})
	held := make(chan struct{}, 1)
	n := startNight(t, nightOptions{rules: 1, hosts: 5, exec: func(ctx context.Context, command string, stdout, stderr io.Writer) int {
		if command == "hold" {
			held <- struct{}{}
			select {
			case <-hold:
			case <-ctx.Done():
				return 1
			}
		}
		return 0
	}})
	activities := func(maxIdle int, idle time.Duration) *fleet.Activities {
		a := n.activities()
		a.HeartbeatEvery = time.Hour // called outside an activity: never heartbeat
		a.MaxIdleConns, a.IdleConnTimeout = maxIdle, idle
		t.Cleanup(func() { a.Close() })
		return a
	}

	t.Run("least recently used beyond the cap are closed", func(t *testing.T) {
		a := activities(2, time.Hour)
		for i := range 5 {
			probe(t, a, n, i)
		}
		waitConns(t, n, []int{0, 0, 0, 1, 1})
		probe(t, a, n, 3) // reused: no new connection
		probe(t, a, n, 0) // redialled; 4 is now the least recently used
		waitConns(t, n, []int{1, 0, 0, 1, 0})
		a.Close()
		waitConns(t, n, []int{0, 0, 0, 0, 0})
	})

	t.Run("idle ones are closed after the timeout", func(t *testing.T) {
		a := activities(fleet.DefaultMaxIdleConns, 50*time.Millisecond)
		for i := range 3 {
			probe(t, a, n, i)
		}
		waitConns(t, n, []int{0, 0, 0, 0, 0})
		probe(t, a, n, 1) // a closed host connection is dialled again
		waitConns(t, n, []int{0, 0, 0, 0, 0})
	})

	t.Run("one in use is never closed", func(t *testing.T) {
		a := activities(0, time.Hour) // keep none idle
		type result struct {
			res fleet.CommandResult
			err error
		}
		done := make(chan result, 1)
		go func() {
			res, err := a.Command(context.Background(), fleet.CommandInput{Host: n.Night.Hosts[0], Rule: "r000", Attempt: 1, Command: "hold"})
			done <- result{res, err}
		}()
		<-held
		for i := 1; i < 5; i++ {
			probe(t, a, n, i)
		}
		waitConns(t, n, []int{1, 0, 0, 0, 0})
		close(hold)
		r := <-done
		if r.err != nil || r.res.Err != "" || r.res.Exec.ExitCode != 0 {
			t.Fatalf("held command = %+v, %v; want it to end normally", r.res, r.err)
		}
		waitConns(t, n, []int{0, 0, 0, 0, 0})
	})
}
