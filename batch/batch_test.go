package batch_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/internal/nighttest"
	"github.com/nightshift-dev/nightshift/journal"

	"github.com/nightshift-dev/nightshift"
)

// wantOutcome is each kind's outcome and attempts.
var wantOutcome = map[int]struct {
	outcome  nightshift.RuleStatus
	attempts int
}{
	nighttest.KindCompliant: {nightshift.RuleCompliant, 0},
	nighttest.KindFix1:      {nightshift.RuleFixed, 1},
	nighttest.KindFix3:      {nightshift.RuleFixed, 3},
	nighttest.KindGiveUp:    {nightshift.RuleGaveUp, 2},
	nighttest.KindNever:     {nightshift.RuleNotFixed, 5},
}

func TestRunRulesTimesHosts(t *testing.T) {
	tests := []struct {
		name             string
		rules, hosts     int
		parallel, models int
	}{
		{"one host", 5, 1, 1, 1},
		{"hosts in parallel, one model call at a time", 5, 4, 4, 1},
		{"more hosts than workers", 6, 5, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			n := startNight(t, nightOptions{rules: tt.rules, hosts: tt.hosts})
			j := openJournal(t, filepath.Join(t.TempDir(), "j.db"))
			res, err := n.runner(t, j, tt.parallel, tt.models, nil).Run(ctx, n.spec())
			if err != nil {
				t.Fatal(err)
			}
			if res.Total != tt.rules*tt.hosts || res.Finished != res.Total || res.Stopped {
				t.Fatalf("result %+v, want %d tasks all finished", res, tt.rules*tt.hosts)
			}
			if got := n.calls.MaxInFlight(); got > int64(tt.models) {
				t.Errorf("%d model calls in flight at once, cap %d", got, tt.models)
			}
			rep, err := batch.Report(ctx, j, res.Run, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := rep.Validate(); err != nil {
				t.Fatal(err)
			}
			if len(rep.Results) != res.Total {
				t.Fatalf("%d results, want %d", len(rep.Results), res.Total)
			}
			for _, r := range rep.Results {
				want := wantOutcome[nighttest.RuleKind(r.Rule)]
				if r.Outcome != want.outcome || len(r.Attempts) != want.attempts {
					t.Errorf("%s on %s: %s after %d attempts, want %s after %d", r.Rule, r.Host, r.Outcome, len(r.Attempts), want.outcome, want.attempts)
				}
			}
			checkTargets(t, ctx, j, res.Run, n)
			run, err := j.Run(ctx, res.Run)
			if err != nil || run.Status != nightshift.RunDone {
				t.Errorf("run status %q (%v), want done", run.Status, err)
			}
		})
	}
}

// checkTargets compares the journal's commands with what the hosts ran: a
// command recorded as run ran exactly once, one of unknown outcome at most
// once, and nothing ran that the journal does not hold.
func checkTargets(t *testing.T, ctx context.Context, j *journal.Journal, run journal.RunID, n *night) (unknown map[[2]string]bool) {
	t.Helper()
	tasks, err := j.Tasks(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	unknown = map[[2]string]bool{}
	recorded := map[string]map[string]int{} // host → command → times recorded as run or started
	for _, task := range tasks {
		steps, err := j.Steps(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range steps {
			c := s.Command
			if c == nil || c.State == journal.CommandSkipped {
				continue
			}
			if recorded[task.Host] == nil {
				recorded[task.Host] = map[string]int{}
			}
			recorded[task.Host][c.Command]++
			ran := n.hostByName(task.Host).Count(c.Command)
			switch c.State {
			case journal.CommandFinished:
				if ran != 1 {
					t.Errorf("%s on %s: %q recorded as run ran %d times on the host", task.Rule, task.Host, c.Command, ran)
				}
			default:
				unknown[[2]string{task.Rule, task.Host}] = true
				if ran > 1 {
					t.Errorf("%s on %s: %q of unknown outcome ran %d times on the host", task.Rule, task.Host, c.Command, ran)
				}
			}
		}
	}
	for _, h := range n.Hosts {
		name := n.Inv[indexOf(n.Hosts, h)].Name
		for _, c := range h.Log() {
			if strings.HasPrefix(c, "set ") && recorded[name][c] == 0 {
				t.Errorf("%s ran %q, which the journal does not hold", name, c)
			}
		}
	}
	for host, cmds := range recorded {
		for c, k := range cmds {
			if k > 1 {
				t.Errorf("%s: %q recorded %d times", host, c, k)
			}
		}
	}
	return unknown
}

func (n *night) hostByName(name string) interface{ Count(string) int } {
	for i, h := range n.Inv {
		if h.Name == name {
			return n.Hosts[i]
		}
	}
	panic("no host " + name)
}

func indexOf[T comparable](s []T, x T) int {
	for i, v := range s {
		if v == x {
			return i
		}
	}
	return -1
}

func TestJournalHoldsEveryStep(t *testing.T) {
	ctx := context.Background()
	n := startNight(t, nightOptions{rules: 5, hosts: 1})
	j := openJournal(t, filepath.Join(t.TempDir(), "j.db"))
	res, err := n.runner(t, j, 1, 1, nil).Run(ctx, n.spec())
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := j.Tasks(ctx, res.Run)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		steps, err := j.Steps(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, s := range steps {
			k := string(s.Kind)
			switch {
			case s.Event != nil:
				k = s.Event.Name
			case s.Command != nil:
				k += ":" + s.Command.Result.Action.String()
			case s.ModelCall != nil && s.ModelCall.Assessment.Prompt == 0:
				t.Errorf("%s: model call without its budget: %+v", task.Rule, s.ModelCall)
			}
			kinds = append(kinds, fmt.Sprint(s.Attempt, k))
		}
		got := strings.Join(kinds, " ")
		want := map[int]string{
			nighttest.KindCompliant: "0check",
			nighttest.KindFix1:      "0check 1model_call 1model_reply 1command:ran 1check 1attempt",
			nighttest.KindFix3: "0check 1model_call 1model_reply 1command:ran 1check 1attempt 2model_call 2model_reply 2command:blocked 2attempt " +
				"3model_call 3model_reply 3command:ran 3check 3attempt",
			nighttest.KindGiveUp: "0check 1model_call 1model_reply 1command:ran 1check 1attempt 2model_call 2model_reply 2command:give_up 2attempt",
		}[nighttest.RuleKind(task.Rule)]
		if want != "" && got != want {
			t.Errorf("%s steps:\n got %s\nwant %s", task.Rule, got, want)
		}
	}
}

func TestHostStopsAnswering(t *testing.T) {
	ctx := context.Background()
	// h01 stops answering at its 6th command (the probe and the checks count).
	n := startNight(t, nightOptions{rules: 5, hosts: 3, dieAfter: map[string]int{"h01": 5}})
	j := openJournal(t, filepath.Join(t.TempDir(), "j.db"))
	res, err := n.runner(t, j, 3, 2, nil).Run(ctx, n.spec())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Unreachable) != 1 || res.Unreachable[0] != "h01" {
		t.Fatalf("unreachable %v, want [h01]", res.Unreachable)
	}
	if res.Finished != res.Total {
		t.Fatalf("%d of %d finished", res.Finished, res.Total)
	}
	rep, err := batch.Report(ctx, j, res.Run, 0)
	if err != nil {
		t.Fatal(err)
	}
	unreachable := 0
	for _, r := range rep.Results {
		switch {
		case r.Host != "h01":
			if want := wantOutcome[nighttest.RuleKind(r.Rule)].outcome; r.Outcome != want {
				t.Errorf("%s on %s: %s, want %s: the other hosts go on", r.Rule, r.Host, r.Outcome, want)
			}
		case r.Outcome == nightshift.RuleUnreachable:
			unreachable++
			if !strings.Contains(r.Reason, "host stopped answering") {
				t.Errorf("%s on h01: reason %q", r.Rule, r.Reason)
			}
		}
	}
	if unreachable == 0 {
		t.Error("no rule of h01 reported unreachable")
	}
}

func TestConfigErrors(t *testing.T) {
	n := startNight(t, nightOptions{rules: 1, hosts: 1})
	j := openJournal(t, filepath.Join(t.TempDir(), "j.db"))
	// The fields the Runner owns are refused, not silently overwritten.
	withTarget, withProbe, withStop := n.Worker, n.Worker, n.Worker
	withTarget.Target = struct{ nightshift.Runner }{} // any non-nil runner
	withProbe.Probe = struct{ nightshift.Runner }{}
	withStop.Stop = make(chan struct{})
	tests := []struct {
		name string
		cfg  batch.Config
	}{
		{"no journal", batch.Config{Connector: n.Conn, Worker: n.Worker}},
		{"no connector", batch.Config{Journal: j, Worker: n.Worker}},
		{"no model", batch.Config{Journal: j, Connector: n.Conn}},
		{"negative parallelism", batch.Config{Journal: j, Connector: n.Conn, Worker: n.Worker, ParallelHosts: -1}},
		{"worker target set", batch.Config{Journal: j, Connector: n.Conn, Worker: withTarget}},
		{"worker probe set", batch.Config{Journal: j, Connector: n.Conn, Worker: withProbe}},
		{"worker stop set", batch.Config{Journal: j, Connector: n.Conn, Worker: withStop}},
	}
	for _, tt := range tests {
		if _, err := batch.New(tt.cfg); !errors.Is(err, batch.ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", tt.name, err)
		}
	}
	r := n.runner(t, j, 1, 1, nil)
	spec := n.spec()
	spec.Rules = append(spec.Rules, spec.Rules[0])
	if _, err := r.Run(context.Background(), spec); !errors.Is(err, batch.ErrSpec) {
		t.Errorf("duplicate rule: %v, want ErrSpec", err)
	}
	if _, err := r.Run(context.Background(), batch.Spec{}); !errors.Is(err, batch.ErrSpec) {
		t.Errorf("empty spec: %v, want ErrSpec", err)
	}
}
