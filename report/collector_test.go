package report

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift"
)

// TestCollectorRebuildsRun replays the sample run through a Collector in the
// worker's order and gets the same Run back.
func TestCollectorRebuildsRun(t *testing.T) {
	want := loadRun(t)
	c := NewCollector(want.Name, want.Model, want.Started)
	for _, r := range want.Results {
		if r.Outcome != nightshift.RuleUnreachable {
			c.Start(r.Rule, r.Title, r.Host)
		}
		for _, a := range r.Attempts {
			for _, cmd := range a.Commands {
				c.Command(r.Rule, r.Host, a.Number, cmd)
			}
			c.Attempt(r.Rule, r.Host, a.Number, a.PromptTokens, a.Limit, a.Check)
		}
		c.End(r.Rule, r.Host, r.Outcome, r.Reason, r.Duration)
		if r.Fallback != "" {
			c.Fallback(r.Rule, r.Host, r.Fallback)
		}
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
				c.End(rule, host, nightshift.RuleNotFixed, "", time.Second)
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

// TestCacheShare: the usage the collector adds up reaches the JSON totals
// and the HTML report as the run's share of prompt tokens served from the
// server's prefix cache; a run without usage has neither.
func TestCacheShare(t *testing.T) {
	c := NewCollector("n", "m", time.Time{})
	c.Attempt("r1", "h1", 1, 5000, 14336, "fail")
	c.Usage("r1", "h1", 5000, 0)
	c.Usage("r1", "h1", 5200, 4992)
	c.Usage("r2", "h1", 3000, 2000)
	c.End("r1", "h1", nightshift.RuleNotFixed, "", 0)
	c.End("r2", "h1", nightshift.RuleFixed, "", 0)
	run := c.Run(time.Time{})
	s := NewSummary(run)
	if s.Totals.PromptTokens != 13200 || s.Totals.CachedPromptTokens != 6992 || s.Totals.CacheShare != 0.53 {
		t.Fatalf("totals %+v, want 6992 of 13200 cached, share 0.53", s.Totals)
	}
	var b strings.Builder
	if err := WriteHTML(&b, run); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "53.0%") || !strings.Contains(b.String(), "13,200 prompt tokens from the server") {
		t.Log(b.String()[:min(3000, b.Len())])
		t.Errorf("the HTML report lacks the cache share")
	}
	run.Results[0].CachedTokens = 99999
	if err := run.Validate(); err == nil {
		t.Error("more cached tokens than prompt tokens was accepted")
	}
	empty := NewCollector("n", "m", time.Time{})
	empty.End("r1", "h1", nightshift.RuleFixed, "", 0)
	if s := NewSummary(empty.Run(time.Time{})); s.Totals.PromptTokens != 0 || s.Totals.CacheShare != 0 {
		t.Errorf("a run without usage has totals %+v", s.Totals)
	}
}
