package journal

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift"
)

// storedStatus reads a status column as the database holds it.
func storedStatus(t *testing.T, j *Journal, table string, id int64) string {
	t.Helper()
	var s string
	require.NoError(t, j.r.QueryRowContext(context.Background(), "SELECT status FROM "+table+" WHERE id = ?", id).Scan(&s))
	return s
}

// The typed statuses are stored as the text they always were (no migration),
// and every value round-trips.
func TestStatusesStoredAsText(t *testing.T) {
	ctx := context.Background()
	j, _ := openTest(t, Config{})
	run := must(j.StartRun(ctx, RunSpec{Name: "statuses"}))(t)
	assert.Equal(t, "running", storedStatus(t, j, "runs", int64(run)))

	for i, want := range nightshift.RuleStatuses() {
		task := must(j.StartTask(ctx, run, fmt.Sprintf("r%d", i), "h"))(t)
		tk := must(j.Task(ctx, task))(t)
		require.False(t, tk.Finished)
		assert.Equal(t, nightshift.RuleNone, tk.Status, "unfinished task")
		assert.Equal(t, "running", storedStatus(t, j, "tasks", int64(task)))
		assert.Equal(t, "running", tk.StatusText())

		require.NoError(t, j.FinishTask(ctx, task, Outcome{Status: want}))
		assert.Equal(t, want.String(), storedStatus(t, j, "tasks", int64(task)))
		tk = must(j.Task(ctx, task))(t)
		assert.True(t, tk.Finished)
		assert.Equal(t, want, tk.Status)
		assert.Equal(t, want.String(), tk.StatusText())
	}
	for _, want := range []nightshift.RunStatus{nightshift.RunDone, nightshift.RunInterrupted, nightshift.RunFailed} {
		require.NoError(t, j.EndRun(ctx, run, want))
		assert.Equal(t, want.String(), storedStatus(t, j, "runs", int64(run)))
		assert.Equal(t, want, must(j.Run(ctx, run))(t).Status)
		st := must(j.ResumeRun(ctx, run))(t)
		assert.Equal(t, nightshift.RunRunning, st.Run.Status)
		assert.Equal(t, "running", storedStatus(t, j, "runs", int64(run)))
	}

	for name, err := range map[string]error{
		"finish with no status":    j.FinishTask(ctx, must(j.StartTask(ctx, run, "none", "h"))(t), Outcome{}),
		"finish with a bad status": j.FinishTask(ctx, must(j.StartTask(ctx, run, "bad", "h"))(t), Outcome{Status: nightshift.RuleStatus(200)}),
		"end with no status":       j.EndRun(ctx, run, nightshift.RunNone),
		"end as running":           j.EndRun(ctx, run, nightshift.RunRunning),
		"end with a bad status":    j.EndRun(ctx, run, nightshift.RunStatus(200)),
	} {
		assert.Error(t, err, name)
	}
}

// A status the program does not know, read back, is an error naming the
// row, never a default.
func TestUnknownStoredStatus(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		table string
		set   string // the status column's new value
		done  bool   // the task is finished first
	}{
		{name: "run status from a newer program", table: "runs", set: "paused"},
		{name: "empty run status", table: "runs", set: ""},
		{name: "finished task with an unknown outcome", table: "tasks", set: "skipped", done: true},
		{name: "finished task still running", table: "tasks", set: "running", done: true},
		{name: "unfinished task with an outcome", table: "tasks", set: "fixed"},
		{name: "run status written as a rule outcome", table: "runs", set: "fixed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, _ := openTest(t, Config{})
			run := must(j.StartRun(ctx, RunSpec{Name: "unknown"}))(t)
			task := must(j.StartTask(ctx, run, "r", "h"))(t)
			if tt.done {
				require.NoError(t, j.FinishTask(ctx, task, Outcome{Status: nightshift.RuleFixed}))
			}
			id := int64(run)
			if tt.table == "tasks" {
				id = int64(task)
			}
			_, err := j.w.ExecContext(ctx, "UPDATE "+tt.table+" SET status = ? WHERE id = ?", tt.set, id)
			require.NoError(t, err)

			var reads map[string]error
			if tt.table == "runs" {
				_, e1 := j.Run(ctx, run)
				_, e2 := j.Runs(ctx)
				_, e3 := j.RunState(ctx, run)
				reads = map[string]error{"Run": e1, "Runs": e2, "RunState": e3}
			} else {
				_, e1 := j.Task(ctx, task)
				_, e2 := j.Tasks(ctx, run)
				_, e3 := j.TaskState(ctx, task)
				reads = map[string]error{"Task": e1, "Tasks": e2, "TaskState": e3}
			}
			for read, err := range reads {
				require.ErrorIs(t, err, nightshift.ErrUnknownValue, read)
				assert.Contains(t, err.Error(), fmt.Sprintf("%q", tt.set), read)
			}
		})
	}
}
