package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nightshift-dev/nightshift"
)

func fromNanos(ns sql.NullInt64) time.Time {
	if !ns.Valid {
		return time.Time{}
	}
	return time.Unix(0, ns.Int64).UTC()
}

func (j *Journal) read(what string, err error) error {
	if err == nil || errors.Is(err, ErrNotFound) {
		return err
	}
	return j.classify(what, err)
}

const runColumns = "id, name, config, status, resumes, started_ns, ended_ns"

func scanRun(s interface{ Scan(...any) error }) (Run, error) {
	var r Run
	var cfg, status string
	var started, ended sql.NullInt64
	if err := s.Scan(&r.ID, &r.Name, &cfg, &status, &r.Resumes, &started, &ended); err != nil {
		return Run{}, err
	}
	var err error
	if r.Status, err = decodeRunStatus(status); err != nil {
		return Run{}, fmt.Errorf("run %d: %w", r.ID, err)
	}
	r.Config, r.Started, r.Ended = []byte(cfg), fromNanos(started), fromNanos(ended)
	return r, nil
}

// Runs lists the runs, oldest first.
func (j *Journal) Runs(ctx context.Context) ([]Run, error) {
	rows, err := j.r.QueryContext(ctx, "SELECT "+runColumns+" FROM runs ORDER BY id")
	if err != nil {
		return nil, j.read("list runs", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, j.read("list runs", err)
		}
		out = append(out, r)
	}
	return out, j.read("list runs", rows.Err())
}

// Run returns one run.
func (j *Journal) Run(ctx context.Context, id RunID) (Run, error) {
	r, err := scanRun(j.r.QueryRowContext(ctx, "SELECT "+runColumns+" FROM runs WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("run %d: %w", id, ErrNotFound)
	}
	return r, j.read(fmt.Sprintf("read run %d", id), err)
}

// decodeRunStatus reads back a run's stored status. Text that names no run
// status, or none, is an error wrapping nightshift.ErrUnknownValue, never a
// default.
func decodeRunStatus(text string) (nightshift.RunStatus, error) {
	var s nightshift.RunStatus
	if err := s.UnmarshalText([]byte(text)); err != nil {
		return 0, fmt.Errorf("stored status: %w", err)
	}
	if s == nightshift.RunNone {
		return 0, fmt.Errorf("stored status: run status: %w %q", nightshift.ErrUnknownValue, text)
	}
	return s, nil
}

// unfinishedTask is the status column of a task until FinishTask records its
// outcome (the schema's default).
const unfinishedTask = "running"

// StatusText is the task's status as the journal stores it: "running"
// until the task is finished, then its outcome ("fixed", "not_fixed"…).
func (t Task) StatusText() string {
	if !t.Finished {
		return unfinishedTask
	}
	return t.Status.String()
}

// decodeTaskStatus reads back a task's stored status: unfinishedTask while
// the task is unfinished (RuleNone), the rule's outcome once it is
// finished. Anything else is an error wrapping nightshift.ErrUnknownValue,
// never a default.
func decodeTaskStatus(finished bool, text string) (nightshift.RuleStatus, error) {
	if !finished {
		if text != unfinishedTask {
			return 0, fmt.Errorf("stored status of an unfinished task: %w %q", nightshift.ErrUnknownValue, text)
		}
		return nightshift.RuleNone, nil
	}
	var s nightshift.RuleStatus
	if err := s.UnmarshalText([]byte(text)); err != nil {
		return 0, fmt.Errorf("stored status: %w", err)
	}
	if s == nightshift.RuleNone {
		return 0, fmt.Errorf("stored status: rule status: %w %q", nightshift.ErrUnknownValue, text)
	}
	return s, nil
}

const taskColumns = "id, run_id, rule, host, finished, status, reason, attempts, outcome, started_ns, ended_ns"

func scanTask(s interface{ Scan(...any) error }) (Task, error) {
	var t Task
	var outcome, status string
	var started, ended sql.NullInt64
	if err := s.Scan(&t.ID, &t.Run, &t.Rule, &t.Host, &t.Finished, &status, &t.Reason, &t.Attempts, &outcome, &started, &ended); err != nil {
		return Task{}, err
	}
	var err error
	if t.Status, err = decodeTaskStatus(t.Finished, status); err != nil {
		return Task{}, fmt.Errorf("task %d: %w", t.ID, err)
	}
	t.Outcome, t.Started, t.Ended = []byte(outcome), fromNanos(started), fromNanos(ended)
	return t, nil
}

// Tasks lists the tasks of run in the order they started.
func (j *Journal) Tasks(ctx context.Context, run RunID) ([]Task, error) {
	what := fmt.Sprintf("list tasks of run %d", run)
	rows, err := j.r.QueryContext(ctx, "SELECT "+taskColumns+" FROM tasks WHERE run_id = ? ORDER BY id", run)
	if err != nil {
		return nil, j.read(what, err)
	}
	defer rows.Close()
	var out []Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, j.read(what, err)
		}
		out = append(out, t)
	}
	return out, j.read(what, rows.Err())
}

// Task returns one task.
func (j *Journal) Task(ctx context.Context, id TaskID) (Task, error) {
	t, err := scanTask(j.r.QueryRowContext(ctx, "SELECT "+taskColumns+" FROM tasks WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, fmt.Errorf("task %d: %w", id, ErrNotFound)
	}
	return t, j.read(fmt.Sprintf("read task %d", id), err)
}

const commandColumns = `c.step_id, c.task_id, s.attempt, c.command, c.state, c.action, c.exit_code, c.signal, c.timed_out, c.canceled,
	c.stdout, c.stderr, c.stdout_cut, c.stderr_cut, c.duration_ns, c.detail, c.error, s.at_ns, c.finished_ns, c.evidence`

func scanCommand(s interface{ Scan(...any) error }) (Command, error) {
	var c Command
	var dur int64
	var started, finished sql.NullInt64
	r := &c.Result
	var action, evidence string
	if err := s.Scan(&c.ID, &c.Task, &c.Attempt, &c.Command, &c.State, &action, &r.ExitCode, &r.Signal, &r.TimedOut, &r.Canceled,
		&r.Stdout, &r.Stderr, &r.StdoutCut, &r.StderrCut, &dur, &c.Detail, &r.Error, &started, &finished, &evidence); err != nil {
		return Command{}, err
	}
	if evidence != "" {
		r.Evidence = new(nightshift.Evidence)
		if err := json.Unmarshal([]byte(evidence), r.Evidence); err != nil {
			return Command{}, fmt.Errorf("command %d: evidence: %w", c.ID, err)
		}
	}
	r.Duration, c.Started, c.Finished = time.Duration(dur), fromNanos(started), fromNanos(finished)
	if c.State == CommandStarted {
		return c, nil // no action yet (stored as "started")
	}
	if err := r.Action.UnmarshalText([]byte(action)); err != nil {
		return Command{}, fmt.Errorf("command %d: %w", c.ID, err)
	}
	return c, nil
}

func (j *Journal) commands(ctx context.Context, what, where string, args ...any) ([]Command, error) {
	rows, err := j.r.QueryContext(ctx, "SELECT "+commandColumns+" FROM commands c JOIN steps s ON s.id = c.step_id WHERE "+where+" ORDER BY c.step_id", args...)
	if err != nil {
		return nil, j.read(what, err)
	}
	defer rows.Close()
	var out []Command
	for rows.Next() {
		c, err := scanCommand(rows)
		if err != nil {
			return nil, j.read(what, err)
		}
		out = append(out, c)
	}
	return out, j.read(what, rows.Err())
}

// PendingCommands lists the commands that started without a recorded
// result, of run (or of every run when run is 0). In a process that is
// running them they are in flight; after a crash their outcome is unknown:
// resolve each with MarkUnknown, never by running it again unnoticed.
func (j *Journal) PendingCommands(ctx context.Context, run RunID) ([]Command, error) {
	if run == 0 {
		return j.commands(ctx, "list pending commands", "c.state = 'started'")
	}
	return j.commands(ctx, "list pending commands", "c.state = 'started' AND s.run_id = ?", run)
}

// TaskState is a task reconstructed from the journal, for resuming it.
type TaskState struct {
	Task Task
	// Attempts are the attempts that ended, in order.
	Attempts []AttemptEnd
	// LastAttempt is the highest attempt number of any step: an attempt
	// can have started (model call, command) without ending.
	LastAttempt int
	// Ledger is every command of the task, in order, with its state:
	// CommandStarted ones have an unknown outcome.
	Ledger []Command
	// Checks are the check results, in order.
	Checks []CheckRecord
	// Lines are the distilled lines, in order.
	Lines []string
	// ModelCalls counts the model calls.
	ModelCalls int
}

// Pending returns the ledger's commands without a result.
func (s TaskState) Pending() []Command {
	var out []Command
	for _, c := range s.Ledger {
		if c.State == CommandStarted {
			out = append(out, c)
		}
	}
	return out
}

// TaskState reconstructs a task from its steps.
func (j *Journal) TaskState(ctx context.Context, id TaskID) (TaskState, error) {
	t, err := j.Task(ctx, id)
	if err != nil {
		return TaskState{}, err
	}
	steps, err := j.Steps(ctx, id)
	if err != nil {
		return TaskState{}, err
	}
	st := TaskState{Task: t}
	for _, s := range steps {
		st.LastAttempt = max(st.LastAttempt, s.Attempt)
		switch s.Kind {
		case StepModelCall:
			st.ModelCalls++
		case StepCommand:
			st.Ledger = append(st.Ledger, *s.Command)
		case StepCheck:
			st.Checks = append(st.Checks, *s.Check)
		case StepAttempt:
			st.Attempts = append(st.Attempts, *s.AttemptEnd)
		case StepDistill:
			st.Lines = append(st.Lines, s.Distillation.Lines...)
		default:
			// other steps (events) add nothing to the resume state
		}
	}
	return st, nil
}

// RunState is what ResumeRun finds.
type RunState struct {
	Run Run
	// Finished tasks have their outcome and must not be redone.
	Finished []Task
	// InProgress are the unfinished tasks, reconstructed.
	InProgress []TaskState
	// Pending are the commands of the run without a result (outcome
	// unknown); BeginCommand and FinishTask refuse their tasks until each
	// is resolved with MarkUnknown.
	Pending []Command
}

// ResumeRun marks run as running again (counting the resume and recording a
// "resume" event) and returns its state.
func (j *Journal) ResumeRun(ctx context.Context, run RunID) (RunState, error) {
	err := j.write(ctx, fmt.Sprintf("resume run %d", run), func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE runs SET status = ?, ended_ns = NULL, resumes = resumes + 1 WHERE id = ?", nightshift.RunRunning.String(), run)
		if err != nil {
			return err
		}
		if err := mustAffect(res, fmt.Errorf("run %d: %w", run, ErrNotFound)); err != nil {
			return err
		}
		var id int64
		if err := tx.QueryRowContext(ctx, "INSERT INTO steps(run_id, kind, at_ns) VALUES (?, 'event', ?) RETURNING id", run, j.now()).Scan(&id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "INSERT INTO events(step_id, name, payload) VALUES (?, 'resume', 'null')", id)
		return err
	})
	if err != nil {
		return RunState{}, err
	}
	return j.RunState(ctx, run)
}

// ReopenTasks makes the run's tasks finished with status unfinished again,
// to be worked on by a resume: their outcome is cleared, their steps are
// kept (a resume replays them), and an event "reopen" naming the status
// and the number of tasks is recorded. It returns that number. Only
// RuleUnreachable is accepted: a host that did not answer is worth another
// try, an outcome the host gave is not redone.
func (j *Journal) ReopenTasks(ctx context.Context, run RunID, status nightshift.RuleStatus) (int, error) {
	if status != nightshift.RuleUnreachable {
		return 0, fmt.Errorf("reopen tasks of run %d: status %s: only %s tasks are reopened", run, status, nightshift.RuleUnreachable)
	}
	var n int64
	err := j.write(ctx, fmt.Sprintf("reopen %s tasks of run %d", status, run), func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE tasks SET finished = 0, status = 'running', reason = '', outcome = 'null', ended_ns = NULL WHERE run_id = ? AND finished = 1 AND status = ?",
			run, status.String())
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		var id int64
		if err := tx.QueryRowContext(ctx, "INSERT INTO steps(run_id, kind, at_ns) VALUES (?, 'event', ?) RETURNING id", run, j.now()).Scan(&id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "INSERT INTO events(step_id, name, payload) VALUES (?, 'reopen', json_object('status', ?, 'tasks', ?))", id, status.String(), n)
		return err
	})
	return int(n), err
}

// RunState returns a run's state without changing it.
func (j *Journal) RunState(ctx context.Context, run RunID) (RunState, error) {
	r, err := j.Run(ctx, run)
	if err != nil {
		return RunState{}, err
	}
	tasks, err := j.Tasks(ctx, run)
	if err != nil {
		return RunState{}, err
	}
	rs := RunState{Run: r}
	for _, t := range tasks {
		if t.Finished {
			rs.Finished = append(rs.Finished, t)
			continue
		}
		st, err := j.TaskState(ctx, t.ID)
		if err != nil {
			return RunState{}, err
		}
		rs.InProgress = append(rs.InProgress, st)
	}
	if rs.Pending, err = j.PendingCommands(ctx, run); err != nil {
		return RunState{}, err
	}
	return rs, nil
}

// Prune deletes the runs that ended more than olderThan ago, with all their
// tasks and steps, and returns how many it deleted. Runs without an end
// (running, or crashed and not resumed) are kept.
func (j *Journal) Prune(ctx context.Context, olderThan time.Duration) (int, error) {
	cutoff := j.cfg.Now().Add(-olderThan).UnixNano()
	var n int64
	err := j.write(ctx, "prune journal", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM runs WHERE ended_ns IS NOT NULL AND ended_ns < ?", cutoff)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, err
	}
	if n > 0 {
		// Best effort: return the freed pages to the file system.
		_, _ = j.w.ExecContext(ctx, "PRAGMA incremental_vacuum")
		_, _ = j.w.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	}
	return int(n), nil
}

// Trial is one command of a run whose effects a recording sandbox
// committed to a host (an evidence with a trial and the verdict
// committed).
type Trial struct {
	Command CommandID
	Task    TaskID
	Rule    string
	Host    string
	Attempt int
	// ID names the trial and its pre-images on the host.
	ID string
	// Undone is set once `worker undo` restored the trial's pre-images
	// (an event named "undone" with {"trial": ID}).
	Undone bool
}

// EventUndone is the event RecordEvent gets when a trial is undone.
const EventUndone = "undone"

// Trials returns the committed sandbox trials of run, in the order they
// were committed.
func (j *Journal) Trials(ctx context.Context, run RunID) ([]Trial, error) {
	what := fmt.Sprintf("read the trials of run %d", run)
	rows, err := j.r.QueryContext(ctx, `SELECT command_id, task, rule, host, attempt, trial,
		EXISTS (SELECT 1 FROM events e WHERE e.name = ? AND json_extract(e.payload, '$.trial') = x.trial)
		FROM trials x WHERE run = ? AND verdict = 'committed' AND coalesce(trial, '') <> '' ORDER BY command_id`, EventUndone, run)
	if err != nil {
		return nil, j.read(what, err)
	}
	defer rows.Close()
	var out []Trial
	for rows.Next() {
		var t Trial
		if err := rows.Scan(&t.Command, &t.Task, &t.Rule, &t.Host, &t.Attempt, &t.ID, &t.Undone); err != nil {
			return nil, j.read(what, err)
		}
		out = append(out, t)
	}
	return out, j.read(what, rows.Err())
}
