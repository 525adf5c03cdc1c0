package orchestrate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift/orchestrate"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

// step is what a fixer does for one rule: its outcome and error, and the
// host's transport error or a stop it causes on the way.
type step struct {
	status  nightshift.RuleStatus
	err     error
	hostErr error
	stop    bool
}

// fixer plays its steps, one per Fix, in order.
type fixer struct {
	steps []step
	e     *engine
}

func (f *fixer) Fix(_ context.Context, r rules.Rule) (nightshift.Outcome, error) {
	s := f.steps[0]
	f.steps = f.steps[1:]
	f.e.hostErr, f.e.stop = s.hostErr, f.e.stop || s.stop
	return nightshift.Outcome{Rule: r.ID, Status: s.status}, s.err
}

// engine records what Work asks of it, as "begin r1", "finish r1 fixed",
// "down …".
type engine struct {
	log     []string
	done    map[string]bool
	hostErr error
	stop    bool
	err     error
}

func (e *engine) Begin(_ context.Context, r rules.Rule) (bool, error) {
	if e.done[r.ID] {
		return true, nil
	}
	e.log = append(e.log, "begin "+r.ID)
	return false, nil
}
func (e *engine) Check(c rules.Check) rules.Check { return c }
func (e *engine) Finish(_ context.Context, r rules.Rule, out nightshift.Outcome) error {
	e.log = append(e.log, fmt.Sprintf("finish %s %s", r.ID, out.Status))
	return nil
}
func (e *engine) HostDown(_ context.Context, reason string) error {
	e.log = append(e.log, "down "+reason)
	return nil
}
func (e *engine) HostErr() error { return e.hostErr }
func (e *engine) Err() error     { return e.err }
func (e *engine) Stopped() bool  { return e.stop }

func TestWork(t *testing.T) {
	lost := errors.New("connection lost")
	tests := []struct {
		name     string
		done     []string
		steps    []step
		want     string
		wantEnd  orchestrate.HostEnd
		modelErr bool
	}{
		{"every rule ends", nil, []step{{status: nightshift.RuleFixed}, {status: nightshift.RuleGaveUp}, {status: nightshift.RuleCompliant}},
			"begin r1, finish r1 fixed, begin r2, finish r2 gave_up, begin r3, finish r3 compliant", orchestrate.HostEnd{}, false},
		{"finished tasks are skipped", []string{"r1", "r3"}, []step{{status: nightshift.RuleFixed}},
			"begin r2, finish r2 fixed", orchestrate.HostEnd{}, false},
		{"a rule's own error ends the rule, not the host", nil,
			[]step{{status: nightshift.RuleFailed, err: errors.New("no prompt fits")}, {status: nightshift.RuleFixed}, {status: nightshift.RuleFixed}},
			"begin r1, finish r1 failed, begin r2, finish r2 fixed, begin r3, finish r3 fixed", orchestrate.HostEnd{}, false},
		{"a transport error ends the host", nil, []step{{status: nightshift.RuleFixed}, {status: nightshift.RuleFailed, err: lost, hostErr: lost}},
			"begin r1, finish r1 fixed, begin r2, down host stopped answering: connection lost, finish r2 unreachable, finish r3 unreachable",
			orchestrate.HostEnd{Unreachable: "host stopped answering: connection lost"}, false},
		{"the model server down stops the night", nil,
			[]step{{status: nightshift.RuleUnreachable, err: &worker.UnreachableError{Tries: 3, Err: errors.New("refused")}}},
			"begin r1", orchestrate.HostEnd{Stopped: true}, true},
		{"a stop leaves the task unfinished", nil, []step{{status: nightshift.RuleInterrupted, stop: true}},
			"begin r1", orchestrate.HostEnd{Stopped: true}, false},
		{"a stop between rules starts nothing", nil, []step{{status: nightshift.RuleFixed, stop: true}},
			"begin r1, finish r1 fixed", orchestrate.HostEnd{Stopped: true}, false},
	}
	todo := []rules.Rule{{ID: "r1"}, {ID: "r2"}, {ID: "r3"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &engine{done: map[string]bool{}}
			for _, id := range tt.done {
				e.done[id] = true
			}
			end, err := orchestrate.Work(context.Background(), context.Background(), e, &fixer{steps: tt.steps, e: e}, todo)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(e.log, ", "); got != tt.want {
				t.Errorf("engine saw\n%s\nwant\n%s", got, tt.want)
			}
			if tt.modelErr != errors.Is(end.ModelDown, nightshift.ErrModelUnreachable) {
				t.Errorf("ModelDown = %v, want ErrModelUnreachable: %v", end.ModelDown, tt.modelErr)
			}
			end.ModelDown = nil
			if end != tt.wantEnd {
				t.Errorf("end %+v, want %+v", end, tt.wantEnd)
			}
		})
	}
}

// An engine that fails (a journal write) ends the host's work with its
// error, and the task stays unfinished.
func TestWorkEngineError(t *testing.T) {
	e := &engine{err: errors.New("disk full")}
	_, err := orchestrate.Work(context.Background(), context.Background(), e, &fixer{steps: []step{{status: nightshift.RuleFixed}}, e: e},
		[]rules.Rule{{ID: "r1"}})
	if err == nil || !strings.Contains(err.Error(), "r1: disk full") {
		t.Fatalf("Work = %v, want the engine's error naming the rule", err)
	}
	if got := strings.Join(e.log, ", "); got != "begin r1" {
		t.Errorf("engine saw %q, want only the begin", got)
	}
}
