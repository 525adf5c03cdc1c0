package batch_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nightshift-dev/nightshift/batch"

	"github.com/nightshift-dev/nightshift"
)

// hostEvents is one host's observer: the events it was given.
type hostEvents struct {
	mu     sync.Mutex
	events []nightshift.Event
}

func (h *hostEvents) Observe(e nightshift.Event) {
	h.mu.Lock()
	h.events = append(h.events, e)
	h.mu.Unlock()
}

// progressLog records what the batch told its Progress, one line per call.
type progressLog struct {
	mu    sync.Mutex
	calls map[string][]string // host → calls, in order
}

func (p *progressLog) add(host, call string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.calls == nil {
		p.calls = map[string][]string{}
	}
	p.calls[host] = append(p.calls[host], call)
}

func (p *progressLog) Plan(host string, rules int) { p.add(host, fmt.Sprintf("plan %d", rules)) }
func (p *progressLog) RuleStarted(host, rule string) {
	p.add(host, "start "+rule)
}
func (p *progressLog) RuleEnded(host, rule string, status nightshift.RuleStatus) {
	p.add(host, "end "+rule+" "+status.String())
}
func (p *progressLog) HostDown(host string, err error) {
	p.add(host, fmt.Sprintf("down %v", err != nil))
}

var _ batch.Progress = (*progressLog)(nil)

// TestHostObserversAndProgress: each host's worker events reach that host's
// observer only (the probe's facts name the host), and the Progress hears
// each host's plan, each task's start and end with its outcome, and a host
// that stops answering, with its remaining rules ended as unreachable.
func TestHostObserversAndProgress(t *testing.T) {
	tests := []struct {
		name     string
		dieAfter map[string]int
		down     string
	}{
		{"every host answers", nil, ""},
		{"h01 stops answering", map[string]int{"h01": 5}, "h01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			n := startNight(t, nightOptions{rules: 5, hosts: 3, dieAfter: tt.dieAfter})
			j := openJournal(t, filepath.Join(t.TempDir(), "j.db"))
			var mu sync.Mutex
			observers := map[string]*hostEvents{}
			plog := &progressLog{}
			r, err := batch.New(batch.Config{Journal: j, Connector: n.Conn, Worker: n.Worker, ParallelHosts: 3, ModelConcurrency: 2,
				Progress: plog,
				HostObserver: func(host string) nightshift.Observer {
					mu.Lock()
					defer mu.Unlock()
					if observers[host] != nil {
						t.Errorf("HostObserver called twice for %s", host)
					}
					observers[host] = &hostEvents{}
					return observers[host]
				}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Run(ctx, n.spec())
			if err != nil || res.Finished != res.Total {
				t.Fatalf("run: %+v, %v", res, err)
			}
			rep, err := batch.Report(ctx, j, res.Run, 0)
			if err != nil {
				t.Fatal(err)
			}
			outcome := map[string]nightshift.RuleStatus{}
			for _, x := range rep.Results {
				outcome[x.Rule+" "+x.Host] = x.Outcome
			}
			for _, h := range n.Inv {
				// Progress: plan, then start/end per rule in order.
				want := []string{"plan 5"}
				downSeen := false
				for _, rule := range n.Rules {
					o := outcome[rule.ID+" "+h.Name]
					if o == nightshift.RuleUnreachable {
						if !downSeen {
							want = append(want, "down true")
							downSeen = true
						}
						want = append(want, "end "+rule.ID+" unreachable")
						continue
					}
					want = append(want, "start "+rule.ID, "end "+rule.ID+" "+o.String())
				}
				got := plog.calls[h.Name]
				if h.Name == tt.down {
					// The rule the host died in was started, then ended unreachable.
					got = dropStartBeforeDown(got)
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("%s progress:\n got %q\nwant %q", h.Name, got, want)
				}
				if (h.Name == tt.down) != downSeen {
					t.Errorf("%s: down %v, want %v", h.Name, downSeen, h.Name == tt.down)
				}

				// Observer: this host's events only.
				obs := observers[h.Name]
				if obs == nil {
					t.Fatalf("no observer for %s", h.Name)
				}
				ends, probed := 0, 0
				for _, e := range obs.events {
					if e.Kind != nightshift.EventRuleEnd {
						continue
					}
					ends++
					if e.Facts == nil { // compliant before any attempt: no probe
						continue
					}
					probed++
					if !strings.Contains(e.Facts.OS, "("+h.Name+")") {
						t.Errorf("%s's observer got the end of %s on another host (facts %+v)", h.Name, e.Rule, e.Facts)
					}
				}
				if probed == 0 {
					t.Errorf("%s's observer saw no rule end with the host's facts", h.Name)
				}
				if h.Name != tt.down && ends != len(n.Rules) {
					t.Errorf("%s's observer saw %d rule ends, want %d", h.Name, ends, len(n.Rules))
				}
				if h.Name == tt.down && ends == 0 {
					t.Errorf("%s's observer saw no rule end before the host went down", h.Name)
				}
			}
		})
	}
}

// dropStartBeforeDown removes the "start" of the rule a host was working on
// when it went down: that rule ends as unreachable after HostDown.
func dropStartBeforeDown(calls []string) []string {
	for i, c := range calls {
		if c == "down true" && i > 0 && strings.HasPrefix(calls[i-1], "start ") {
			return append(append([]string(nil), calls[:i-1]...), calls[i:]...)
		}
	}
	return calls
}
