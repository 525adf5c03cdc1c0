package batch_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/internal/nighttest"

	"github.com/nightshift-dev/nightshift"
)

// A model server that stays down stops the run with ErrModelUnreachable;
// the rules in progress are not finished as failures but left for Resume,
// which completes the run once the server is back.
func TestModelServerDownStopsTheRunForResume(t *testing.T) {
	ctx := context.Background()
	n := startNight(t, nightOptions{rules: 3, hosts: 2})
	j := openJournal(t, filepath.Join(t.TempDir(), "j.db"))
	good := n.Worker.Chat
	oc := openai.DefaultConfig("")
	oc.BaseURL = "http://127.0.0.1:1/v1" // nothing listens there
	oc.HTTPClient = &http.Client{}
	n.Worker.Chat = openai.NewClientWithConfig(oc)
	n.Worker.RetryDeadline = 800 * time.Millisecond
	res, err := n.runner(t, j, 2, 2, nil).Run(ctx, n.spec())
	if !errors.Is(err, nightshift.ErrModelUnreachable) {
		t.Fatalf("run with the model server down: %v, want ErrModelUnreachable", err)
	}
	tasks, err := j.Tasks(ctx, res.Run)
	if err != nil || len(tasks) == 0 {
		t.Fatalf("tasks of the run: %v (%d)", err, len(tasks))
	}
	for _, task := range tasks {
		if task.Finished && task.Status != nightshift.RuleCompliant {
			t.Errorf("%s on %s finished as %s while the model server was down", task.Rule, task.Host, task.Status)
		}
	}
	if run, err := j.Run(ctx, res.Run); err != nil || run.Status != nightshift.RunInterrupted {
		t.Errorf("run status %q (err %v), want interrupted", run.Status, err)
	}
	n.Worker.Chat = good
	res2, err := n.runner(t, j, 2, 2, nil).Resume(ctx, res.Run, n.spec())
	if err != nil || res2.Finished != res2.Total {
		t.Fatalf("resume: %+v, %v", res2, err)
	}
	rep, err := batch.Report(ctx, j, res.Run, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if want := wantOutcome[nighttest.RuleKind(r.Rule)]; r.Outcome != want.outcome || len(r.Attempts) != want.attempts {
			t.Errorf("%s on %s: %s after %d attempts, want %s after %d", r.Rule, r.Host, r.Outcome, len(r.Attempts), want.outcome, want.attempts)
		}
	}
}
