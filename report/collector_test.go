package report

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"
)

// TestCollectorRebuildsRun replays the sample run through a Collector in the
// worker's order and gets the same Run back.
func TestCollectorRebuildsRun(t *testing.T) {
	want := loadRun(t)
	c := NewCollector(want.Name, want.Model, want.Started)
	for _, r := range want.Results {
		if r.Outcome != Unreachable {
			c.Start(r.Rule, r.Title, r.Host)
		}
		for _, a := range r.Attempts {
			for _, cmd := range a.Commands {
				c.Command(r.Rule, r.Host, a.Number, cmd)
			}
			c.Attempt(r.Rule, r.Host, a.Number, a.PromptTokens, a.Limit, a.Check)
		}
		c.End(r.Rule, r.Host, r.Outcome, r.Reason, r.Duration)
	}
	got := c.Run(want.Finished)
	// The unreachable result was never started, so it has no title.
	want.Results[len(want.Results)-1].Title = ""
	if !reflect.DeepEqual(got, want) {
		t.Errorf("collected run differs:\n got %+v\nwant %+v", got, want)
	}
	if u := c.Unfinished(); len(u) != 0 {
		t.Errorf("unfinished = %v", u)
	}
}

func TestCollectorOrderAndCopies(t *testing.T) {
	c := NewCollector("n", "m", time.Time{})
	exit := 3
	c.Attempt("r", "h", 2, 200, 1000, "fail") // out of order
	c.Command("r", "h", 1, Command{Command: "a", Action: "ran", ExitCode: &exit})
	c.Attempt("r", "h", 1, 100, 1000, "fail")
	exit = 9 // the collector kept its own copy
	run := c.Run(time.Time{})
	a := run.Results[0].Attempts
	if len(a) != 2 || a[0].Number != 1 || a[1].Number != 2 || *a[0].Commands[0].ExitCode != 3 {
		t.Fatalf("attempts = %+v", a)
	}
	*run.Results[0].Attempts[0].Commands[0].ExitCode = 7
	if *c.Run(time.Time{}).Results[0].Attempts[0].Commands[0].ExitCode != 3 {
		t.Error("Run returned memory shared with the collector")
	}
	if u := c.Unfinished(); len(u) != 1 || u[0] != [2]string{"r", "h"} {
		t.Errorf("unfinished = %v", u)
	}
	if err := run.Validate(); err == nil {
		t.Error("a run with an unfinished result validated")
	}
}

func TestCollectorConcurrent(t *testing.T) {
	c := NewCollector("n", "m", time.Time{})
	var wg sync.WaitGroup
	for h := 0; h < 8; h++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			host := fmt.Sprintf("h%d", h)
			for r := 0; r < 20; r++ {
				rule := fmt.Sprintf("r%d", r)
				c.Start(rule, "", host)
				for n := 1; n <= 3; n++ {
					c.Command(rule, host, n, Command{Command: "x", Action: "ran"})
					c.Attempt(rule, host, n, 10*n, 100, "fail")
				}
				c.End(rule, host, NotFixed, "", time.Second)
				_ = c.Run(time.Time{})
			}
		}()
	}
	wg.Wait()
	run := c.Run(time.Time{})
	if err := run.Validate(); err != nil {
		t.Fatal(err)
	}
	if s := NewSummary(run); s.Totals.Results != 160 || s.Totals.Attempts != 480 || s.Totals.Commands != 480 {
		t.Errorf("totals = %+v", s.Totals)
	}
}
