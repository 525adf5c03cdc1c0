package journal

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift"
)

// TestCommandResultRoundTrip: every field of the runner's Exec comes back
// as recorded: each stream's cut on its own, Canceled, the signal.
func TestCommandResultRoundTrip(t *testing.T) {
	ctx := context.Background()
	j, _ := openTest(t, Config{})
	run := must(j.StartRun(ctx, RunSpec{}))(t)
	task := must(j.StartTask(ctx, run, "r", "h"))(t)
	want := CommandResult{Action: nightshift.ActionUnknown, Error: "command interrupted: context canceled", Exec: nightshift.Exec{
		Stdout: "head\n[sshexec: 5 bytes cut]\ntail\n", Stderr: "E: lock\n[sshexec: 7000 bytes cut]\nE: lock\n",
		StdoutCut: 5, StderrCut: 7000, ExitCode: -1, Signal: "TERM", Canceled: true, Duration: 1500 * time.Millisecond}}
	p := must(j.BeginCommand(ctx, task, 1, "apt-get install -y aide"))(t)
	require.NoError(t, j.FinishCommand(ctx, p, want))
	timedOut := CommandResult{Exec: nightshift.Exec{ExitCode: -1, TimedOut: true, StderrCut: 1}}
	p = must(j.BeginCommand(ctx, task, 2, "sleep 99"))(t)
	require.NoError(t, j.FinishCommand(ctx, p, timedOut))
	timedOut.Action = nightshift.ActionRan // the zero action is recorded as ran

	steps := must(j.Steps(ctx, task))(t)
	require.Len(t, steps, 2)
	assert.Equal(t, want, steps[0].Command.Result)
	assert.Equal(t, timedOut, steps[1].Command.Result)
}

// TestAttemptEndText: an attempt's end is stored as the check's text, ""
// when nothing ran, "give_up" when the model gave up (the strings journals
// held before typed values), and reads back the same.
func TestAttemptEndText(t *testing.T) {
	ctx := context.Background()
	j, _ := openTest(t, Config{})
	run := must(j.StartRun(ctx, RunSpec{}))(t)
	task := must(j.StartTask(ctx, run, "r", "h"))(t)
	ends := []struct {
		end    AttemptEnd
		stored string
	}{
		{AttemptEnd{Attempt: 1, Check: nightshift.CheckFail}, "fail"},
		{AttemptEnd{Attempt: 2}, ""},
		{AttemptEnd{Attempt: 3, Check: nightshift.CheckError}, "error"},
		{AttemptEnd{Attempt: 4, Check: nightshift.CheckNotApplicable}, "notapplicable"},
		{AttemptEnd{Attempt: 5, GaveUp: true}, "give_up"},
		{AttemptEnd{Attempt: 6, Check: nightshift.CheckPass}, "pass"},
	}
	for _, e := range ends {
		require.NoError(t, j.EndAttempt(ctx, task, e.end))
	}
	var stored []string
	rows := must(j.r.QueryContext(ctx, "SELECT check_status FROM attempts ORDER BY step_id"))(t)
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		stored = append(stored, s)
	}
	require.NoError(t, rows.Err())
	steps := must(j.Steps(ctx, task))(t)
	require.Len(t, steps, len(ends))
	for i, e := range ends {
		assert.Equal(t, e.stored, stored[i], "attempt %d stored", e.end.Attempt)
		assert.Equal(t, e.end, *steps[i].AttemptEnd, "attempt %d read back", e.end.Attempt)
	}
	assert.Error(t, j.EndAttempt(ctx, task, AttemptEnd{Attempt: 7, GaveUp: true, Check: nightshift.CheckFail}),
		"a give-up has no check")
}

// TestUnknownStoredValue: a stored action or check status that names no
// value is an error when read back, never a default.
func TestUnknownStoredValue(t *testing.T) {
	tests := []struct {
		name, update string
	}{
		{"command action", "UPDATE commands SET action = 'passed'"},
		{"skipped command action", "UPDATE commands SET action = 'Blocked' WHERE state = 'skipped'"},
		{"check status", "UPDATE checks SET status = 'unknown'"},
		{"empty check status", "UPDATE checks SET status = ''"},
		{"check status in capitals", "UPDATE checks SET status = 'PASS'"},
		{"attempt check", "UPDATE attempts SET check_status = 'gave_up'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			j, _ := openTest(t, Config{})
			run := must(j.StartRun(ctx, RunSpec{}))(t)
			task := must(j.StartTask(ctx, run, "r", "h"))(t)
			recordAttempt(t, j, task, 1, "out")
			require.NoError(t, j.RecordSkippedCommand(ctx, task, 2, "rm -rf /", nightshift.ActionBlocked, "rm -rf /"))
			_, err := j.Steps(ctx, task)
			require.NoError(t, err)
			_, err = j.w.ExecContext(ctx, tt.update)
			require.NoError(t, err)
			_, err = j.Steps(ctx, task)
			assert.ErrorIs(t, err, nightshift.ErrUnknownValue)
		})
	}
	t.Run("ledger", func(t *testing.T) {
		ctx := context.Background()
		j, _ := openTest(t, Config{})
		run := must(j.StartRun(ctx, RunSpec{}))(t)
		task := must(j.StartTask(ctx, run, "r", "h"))(t)
		recordAttempt(t, j, task, 1, "out")
		_, err := j.w.ExecContext(ctx, "UPDATE commands SET action = 'ok'")
		require.NoError(t, err)
		_, err = j.TaskState(ctx, task)
		assert.ErrorIs(t, err, nightshift.ErrUnknownValue)
	})
}

// TestRefusedValues: the journal refuses to store an action or a check
// status that does not fit the step.
func TestRefusedValues(t *testing.T) {
	ctx := context.Background()
	j, _ := openTest(t, Config{})
	run := must(j.StartRun(ctx, RunSpec{}))(t)
	task := must(j.StartTask(ctx, run, "r", "h"))(t)
	p := must(j.BeginCommand(ctx, task, 1, "true"))(t)
	for name, err := range map[string]error{
		"finish as blocked":       j.FinishCommand(ctx, p, CommandResult{Action: nightshift.ActionBlocked}),
		"finish with no such one": j.FinishCommand(ctx, p, CommandResult{Action: nightshift.Action(99)}),
		"skip as ran":             j.RecordSkippedCommand(ctx, task, 1, "x", nightshift.ActionRan, ""),
		"skip with no action":     j.RecordSkippedCommand(ctx, task, 1, "x", nightshift.ActionNone, ""),
		"check not run":           j.RecordCheck(ctx, task, CheckRecord{}),
		"check no such status":    j.RecordCheck(ctx, task, CheckRecord{Status: nightshift.CheckStatus(42)}),
		"attempt no such status":  j.EndAttempt(ctx, task, AttemptEnd{Attempt: 1, Check: nightshift.CheckStatus(42)}),
	} {
		assert.Error(t, err, name)
		assert.False(t, errors.Is(err, ErrNotPending), "%s: refused before writing", name)
	}
	// Nothing was written: the command is still pending and can finish.
	require.NoError(t, j.FinishCommand(ctx, p, CommandResult{Exec: nightshift.Exec{ExitCode: 0}}))
	steps := must(j.Steps(ctx, task))(t)
	assert.Len(t, steps, 1)
}
