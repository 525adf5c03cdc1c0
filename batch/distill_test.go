package batch_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/journal"
)

// A soft limit just above the first prompt makes the memory distil; each
// distillation is in the journal with its lines and the exact messages it
// replaced, and a run stopped and resumed past distillations still reports
// as if never interrupted.
func TestDistillationsAreRecordedAndReplayed(t *testing.T) {
	ctx := context.Background()
	night := func() *night {
		n := startNight(t, nightOptions{rules: 5, hosts: 1})
		b, err := budget.New(budget.Config{ContextWindow: n.Sim.MaxModelLen(), Reserve: budget.DefaultReserve, SoftLimit: 2000})
		if err != nil {
			t.Fatal(err)
		}
		n.Worker.Model, n.Worker.KeepTurns = n.Worker.Model.With("", b), 1
		n.Rules = n.Rules[4:] // r004: wrong tries until max_attempts
		return n
	}
	n := night()
	j := openJournal(t, filepath.Join(t.TempDir(), "ref.db"))
	res, err := n.runner(t, j, 1, 1, nil).Run(ctx, n.spec())
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := j.Tasks(ctx, res.Run)
	if err != nil || len(tasks) != 1 {
		t.Fatalf("%d tasks, %v", len(tasks), err)
	}
	steps, err := j.Steps(ctx, tasks[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	distills := 0
	for _, s := range steps {
		if d := s.Distillation; d != nil {
			distills++
			if len(d.Lines) == 0 || len(d.Messages) < 3 || d.TokensAfter >= d.TokensBefore {
				t.Errorf("distillation %+v: want lines, the messages before it, and fewer tokens after", d)
			}
		}
	}
	if distills == 0 {
		for _, s := range steps {
			if s.AttemptEnd != nil {
				t.Logf("attempt %d: %d prompt tokens", s.AttemptEnd.Attempt, s.AttemptEnd.PromptTokens)
			}
		}
		t.Fatal("no distillation recorded")
	}
	t.Logf("%d distillations", distills)
	ref, err := batch.Report(ctx, j, res.Run, 0)
	if err != nil {
		t.Fatal(err)
	}

	// Stopped after the 4th model call (past the first distillation), then resumed.
	n2 := night()
	j2 := openJournal(t, filepath.Join(t.TempDir(), "j.db"))
	stop := make(chan struct{})
	n2.Worker.Chat = &stopAfter{inner: n2.Worker.Chat, n: 4, stop: stop}
	res2, err := n2.runner(t, j2, 1, 1, stop).Run(ctx, n2.spec())
	if err != nil || !res2.Stopped {
		t.Fatalf("first part: %+v, %v", res2, err)
	}
	if _, err := n2.runner(t, j2, 1, 1, nil).Resume(ctx, res2.Run, n2.spec()); err != nil {
		t.Fatal(err)
	}
	tasks2, err := j2.Tasks(ctx, res2.Run)
	if err != nil || len(tasks2) == 0 {
		t.Fatalf("tasks of the resumed run: %v (%d)", err, len(tasks2))
	}
	steps2, err := j2.Steps(ctx, tasks2[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := countKind(steps2, journal.StepDistill); got != distills {
		t.Errorf("%d distillations after stop and resume, want %d (none recorded twice)", got, distills)
	}
	got, err := batch.Report(ctx, j2, res2.Run, 0)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := reportJSON(t, normalized(got)), reportJSON(t, normalized(ref)); !bytes.Equal(a, b) {
		t.Errorf("report differs:\n%s", firstDiff(a, b))
	}
}

func countKind(steps []journal.Step, k journal.StepKind) int {
	n := 0
	for _, s := range steps {
		if s.Kind == k {
			n++
		}
	}
	return n
}
