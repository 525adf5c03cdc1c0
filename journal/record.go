package journal

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/nightshift-dev/nightshift"

	"github.com/nightshift-dev/nightshift/internal/textcut"
)

// write runs fn in one immediate transaction on the writer connection and
// commits it before returning.
func (j *Journal) write(ctx context.Context, what string, fn func(tx *sql.Tx) error) (err error) {
	if j.w == nil {
		return fmt.Errorf("%s: %w", what, ErrReadOnly)
	}
	tx, err := j.w.BeginTx(ctx, nil)
	if err != nil {
		return j.classify(what, err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		if isJournalError(err) {
			return fmt.Errorf("%s: %w", what, err)
		}
		return j.classify(what, err)
	}
	if err := tx.Commit(); err != nil {
		return j.classify(what, err)
	}
	return nil
}

func isJournalError(err error) bool {
	for _, e := range []error{ErrNotFound, ErrTaskFinished, ErrCommandPending, ErrNotPending} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func (j *Journal) now() int64 { return j.cfg.Now().UnixNano() }

func marshal(v any) (string, error) {
	if b, ok := v.([]byte); ok {
		if len(b) == 0 {
			return "null", nil
		}
		if !json.Valid(b) {
			return "", errors.New("payload is not valid JSON")
		}
		return redactJSON(b)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode JSON: %w", err)
	}
	return redactJSON(b)
}

// redactJSON is the JSON b with nightshift.RedactText applied to every
// string in it (keys too): a model's reply or the messages a distillation
// replaced hold the commands the model wrote, and the journal keeps no
// secret. b is kept as it is when no string changes.
func redactJSON(b []byte) (string, error) {
	if nightshift.RedactText(string(b)) == string(b) {
		return string(b), nil // nothing that looks like a secret anywhere
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("decode JSON: %w", err)
	}
	out, err := json.Marshal(redactValue(v))
	if err != nil {
		return "", fmt.Errorf("encode JSON: %w", err)
	}
	return string(out), nil
}

// redactValue is v, a decoded JSON value, with its strings masked.
func redactValue(v any) any {
	switch x := v.(type) {
	case string:
		return nightshift.RedactText(x)
	case []any:
		for i := range x {
			x[i] = redactValue(x[i])
		}
		return x
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[nightshift.RedactText(k)] = redactValue(e)
		}
		return m
	default:
		return v
	}
}

// StartRun records a new run and returns its ID.
func (j *Journal) StartRun(ctx context.Context, spec RunSpec) (RunID, error) {
	cfg, err := marshal(spec.Config)
	if err != nil {
		return 0, fmt.Errorf("start run: config: %w", err)
	}
	var id RunID
	err = j.write(ctx, "start run", func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, "INSERT INTO runs(name, config, started_ns) VALUES (?, ?, ?) RETURNING id",
			spec.Name, cfg, j.now()).Scan(&id)
	})
	return id, err
}

// EndRun records the end of a run with its status: nightshift.RunDone,
// RunInterrupted or RunFailed (RunNone and RunRunning are refused).
func (j *Journal) EndRun(ctx context.Context, run RunID, status nightshift.RunStatus) error {
	text, err := status.MarshalText()
	if err != nil || status == nightshift.RunNone || status == nightshift.RunRunning {
		return fmt.Errorf("end run %d: invalid status %q", run, status)
	}
	return j.write(ctx, fmt.Sprintf("end run %d", run), func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE runs SET status = ?, ended_ns = ? WHERE id = ?", string(text), j.now(), run)
		if err != nil {
			return err
		}
		return mustAffect(res, ErrNotFound)
	})
}

func mustAffect(res sql.Result, orElse error) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return orElse
	}
	return nil
}

// StartTask records that rule starts on host in run and returns the task's
// ID. For a task already in the journal it returns the same ID: unfinished,
// the task is being resumed (see TaskState); finished, the error matches
// ErrTaskFinished and the task must not be redone.
func (j *Journal) StartTask(ctx context.Context, run RunID, rule, host string) (TaskID, error) {
	var id TaskID
	err := j.write(ctx, fmt.Sprintf("start task %s on %s", rule, host), func(tx *sql.Tx) error {
		var finished bool
		err := tx.QueryRowContext(ctx, "SELECT id, finished FROM tasks WHERE run_id = ? AND rule = ? AND host = ?", run, rule, host).Scan(&id, &finished)
		switch {
		case err == nil && finished:
			return ErrTaskFinished
		case err == nil:
			return nil
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		var ok int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM runs WHERE id = ?", run).Scan(&ok); err != nil {
			return err
		}
		if ok == 0 {
			return fmt.Errorf("run %d: %w", run, ErrNotFound)
		}
		return tx.QueryRowContext(ctx, "INSERT INTO tasks(run_id, rule, host, started_ns) VALUES (?, ?, ?, ?) RETURNING id",
			run, rule, host, j.now()).Scan(&id)
	})
	return id, err
}

// FinishTask records a task's outcome. It succeeds once per task
// (ErrTaskFinished afterwards) and refuses while a command of the task has
// no result (ErrCommandPending).
func (j *Journal) FinishTask(ctx context.Context, task TaskID, o Outcome) error {
	status, err := o.Status.MarshalText()
	if err != nil || o.Status == nightshift.RuleNone {
		return fmt.Errorf("finish task %d: invalid status %q", task, o.Status)
	}
	detail, err := marshal(o.Detail)
	if err != nil {
		return fmt.Errorf("finish task %d: outcome: %w", task, err)
	}
	o.Reason = nightshift.RedactText(o.Reason)
	return j.write(ctx, fmt.Sprintf("finish task %d", task), func(tx *sql.Tx) error {
		if _, err := openTask(ctx, tx, task); err != nil {
			return err
		}
		if err := noPending(ctx, tx, task); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "UPDATE tasks SET finished = 1, status = ?, reason = ?, attempts = max(attempts, ?), outcome = ?, ended_ns = ? WHERE id = ?",
			string(status), o.Reason, o.Attempts, detail, j.now(), task)
		return err
	})
}

// openTask returns the run of an unfinished task.
func openTask(ctx context.Context, tx *sql.Tx, task TaskID) (RunID, error) {
	var run RunID
	var finished bool
	err := tx.QueryRowContext(ctx, "SELECT run_id, finished FROM tasks WHERE id = ?", task).Scan(&run, &finished)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("task %d: %w", task, ErrNotFound)
	}
	if err != nil {
		return 0, err
	}
	if finished {
		return 0, fmt.Errorf("task %d: %w", task, ErrTaskFinished)
	}
	return run, nil
}

func noPending(ctx context.Context, tx *sql.Tx, task TaskID) error {
	var id int64
	err := tx.QueryRowContext(ctx, "SELECT step_id FROM commands WHERE task_id = ? AND state = 'started'", task).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("task %d: command %d: %w", task, id, ErrCommandPending)
}

// step inserts the common row of a step of an unfinished task.
func (j *Journal) step(ctx context.Context, tx *sql.Tx, task TaskID, attempt int, kind StepKind) (int64, error) {
	run, err := openTask(ctx, tx, task)
	if err != nil {
		return 0, err
	}
	var id int64
	err = tx.QueryRowContext(ctx, "INSERT INTO steps(run_id, task_id, attempt, kind, at_ns) VALUES (?, ?, ?, ?, ?) RETURNING id",
		run, task, attempt, string(kind), j.now()).Scan(&id)
	return id, err
}

// RecordModelCall records a model call of task.
func (j *Journal) RecordModelCall(ctx context.Context, task TaskID, m ModelCall) error {
	m.Error = nightshift.RedactText(m.Error)
	return j.write(ctx, fmt.Sprintf("record model call of task %d", task), func(tx *sql.Tx) error {
		id, err := j.step(ctx, tx, task, m.Attempt, StepModelCall)
		if err != nil {
			return err
		}
		a := m.Assessment
		_, err = tx.ExecContext(ctx, `INSERT INTO model_calls(step_id, system, history, current, prompt, reserve, total, limit_tokens,
			soft, window, messages, max_tokens, duration_ns, rejected, server_tokens, error, usage_prompt, cached_tokens)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			id, a.System, a.History, a.Current, a.Prompt, a.Reserve, a.Total, a.Limit, a.Soft, a.Window, a.Messages,
			m.MaxTokens, int64(m.Duration), m.Rejected, m.ServerTokens, m.Error, m.UsagePrompt, m.CachedTokens)
		return err
	})
}

// BeginCommand records that command is about to run in task, and returns
// the handle FinishCommand needs. Call it before running the command: if
// the process dies before FinishCommand, the command is reported pending
// (outcome unknown) instead of being forgotten. It fails with
// ErrCommandPending while another command of the task has no result.
func (j *Journal) BeginCommand(ctx context.Context, task TaskID, attempt int, command string) (PendingCommand, error) {
	var p PendingCommand
	command = nightshift.RedactText(command)
	err := j.write(ctx, fmt.Sprintf("begin command of task %d", task), func(tx *sql.Tx) error {
		id, err := j.step(ctx, tx, task, attempt, StepCommand)
		if err != nil {
			return err
		}
		if err := noPending(ctx, tx, task); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO commands(step_id, task_id, command, state, action) VALUES (?, ?, ?, 'started', 'started')",
			id, task, command); err != nil {
			return err
		}
		p = PendingCommand{id: CommandID(id), task: task}
		return nil
	})
	return p, err
}

// FinishCommand records the result of a command begun with BeginCommand.
// Stdout and Stderr are capped at Config.OutputCap.
func (j *Journal) FinishCommand(ctx context.Context, p PendingCommand, r CommandResult) error {
	if p.id == 0 {
		return fmt.Errorf("finish command: zero PendingCommand: %w", ErrNotPending)
	}
	switch r.Action {
	case nightshift.ActionNone:
		r.Action = nightshift.ActionRan
	case nightshift.ActionRan, nightshift.ActionTimedOut, nightshift.ActionUnknown:
	case nightshift.ActionBlocked:
		if r.Evidence == nil {
			return fmt.Errorf("finish command %d: action %s without sandbox evidence is not one of a command that ran", p.id, r.Action)
		}
	case nightshift.ActionRefused, nightshift.ActionMalformed, nightshift.ActionGiveUp:
		return fmt.Errorf("finish command %d: action %s is not one of a command that ran", p.id, r.Action)
	default:
		return fmt.Errorf("finish command %d: action %w", p.id, badValue(r.Action))
	}
	stdout, outCut := capText(nightshift.RedactText(r.Stdout), j.cfg.OutputCap)
	stderr, errCut := capText(nightshift.RedactText(r.Stderr), j.cfg.OutputCap)
	r.Error = nightshift.RedactText(r.Error)
	evidence, err := evidenceJSON(r.Evidence, j.cfg.OutputCap*8)
	if err != nil {
		return fmt.Errorf("finish command %d: %w", p.id, err)
	}
	return j.write(ctx, fmt.Sprintf("finish command %d", p.id), func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE commands SET state = 'finished', action = ?, exit_code = ?, signal = ?, timed_out = ?,
			canceled = ?, stdout = ?, stderr = ?, stdout_cut = ?, stderr_cut = ?, duration_ns = ?, error = ?, finished_ns = ?, evidence = ?
			WHERE step_id = ? AND task_id = ? AND state = 'started'`,
			r.Action.String(), r.ExitCode, r.Signal, r.TimedOut, r.Canceled, stdout, stderr, r.StdoutCut+outCut, r.StderrCut+errCut,
			int64(r.Duration), r.Error, j.now(), evidence, p.id, p.task)
		if err != nil {
			return err
		}
		return mustAffect(res, fmt.Errorf("command %d: %w", p.id, ErrNotPending))
	})
}

// MarkUnknown resolves a command left pending by a crash: it records that
// its outcome is unknown, with a note (what the caller found or decided).
// The command is not run again by the journal's doing; the caller should
// re-check the host state rather than repeat it.
func (j *Journal) MarkUnknown(ctx context.Context, id CommandID, note string) error {
	note = nightshift.RedactText(note)
	return j.write(ctx, fmt.Sprintf("mark command %d unknown", id), func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "UPDATE commands SET state = 'unknown', action = 'unknown', detail = ?, finished_ns = ? WHERE step_id = ? AND state = 'started'",
			note, j.now(), id)
		if err != nil {
			return err
		}
		return mustAffect(res, fmt.Errorf("command %d: %w", id, ErrNotPending))
	})
}

// RecordSkippedCommand records a command that was not run: action is
// ActionBlocked, ActionRefused, ActionMalformed or ActionGiveUp, detail says
// why.
func (j *Journal) RecordSkippedCommand(ctx context.Context, task TaskID, attempt int, command string, action nightshift.Action, detail string) error {
	switch action {
	case nightshift.ActionBlocked, nightshift.ActionRefused, nightshift.ActionMalformed, nightshift.ActionGiveUp:
	case nightshift.ActionNone, nightshift.ActionRan, nightshift.ActionTimedOut, nightshift.ActionUnknown:
		return fmt.Errorf("record skipped command of task %d: action %q is not one of a command that did not run", task, action)
	default:
		return fmt.Errorf("record skipped command of task %d: action %w", task, badValue(action))
	}
	command, detail = nightshift.RedactText(command), nightshift.RedactText(detail)
	return j.write(ctx, fmt.Sprintf("record skipped command of task %d", task), func(tx *sql.Tx) error {
		id, err := j.step(ctx, tx, task, attempt, StepCommand)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "INSERT INTO commands(step_id, task_id, command, state, action, detail, finished_ns) VALUES (?, ?, ?, 'skipped', ?, ?, ?)",
			id, task, command, action.String(), detail, j.now())
		return err
	})
}

// RecordCheck records a check result of task; the output is capped at
// Config.OutputCap.
func (j *Journal) RecordCheck(ctx context.Context, task TaskID, c CheckRecord) error {
	status, err := c.Status.MarshalText()
	if err != nil || c.Status == nightshift.CheckNotRun {
		return fmt.Errorf("record check of task %d: status %w", task, badValue(c.Status))
	}
	out, _ := capText(nightshift.RedactText(c.Output), j.cfg.OutputCap)
	c.Detail = nightshift.RedactText(c.Detail)
	return j.write(ctx, fmt.Sprintf("record check of task %d", task), func(tx *sql.Tx) error {
		id, err := j.step(ctx, tx, task, c.Attempt, StepCheck)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "INSERT INTO checks(step_id, status, exit_code, output, detail, duration_ns) VALUES (?, ?, ?, ?, ?, ?)",
			id, string(status), c.ExitCode, out, c.Detail, int64(c.Duration))
		return err
	})
}

// EndAttempt records the end of an attempt of task and raises the task's
// attempt count to it.
func (j *Journal) EndAttempt(ctx context.Context, task TaskID, a AttemptEnd) error {
	check, err := attemptCheckText(a)
	if err != nil {
		return fmt.Errorf("end attempt %d of task %d: %w", a.Attempt, task, err)
	}
	return j.write(ctx, fmt.Sprintf("end attempt %d of task %d", a.Attempt, task), func(tx *sql.Tx) error {
		id, err := j.step(ctx, tx, task, a.Attempt, StepAttempt)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO attempts(step_id, check_status, prompt_tokens, limit_tokens) VALUES (?, ?, ?, ?)",
			id, check, a.PromptTokens, a.Limit); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "UPDATE tasks SET attempts = max(attempts, ?) WHERE id = ?", a.Attempt, task)
		return err
	})
}

// RecordDistillation records a distillation of task: its lines and the
// exact messages before it, in one transaction.
func (j *Journal) RecordDistillation(ctx context.Context, task TaskID, d Distillation) error {
	msgs, err := marshal(d.Messages)
	if err != nil {
		return fmt.Errorf("record distillation of task %d: messages: %w", task, err)
	}
	return j.write(ctx, fmt.Sprintf("record distillation of task %d", task), func(tx *sql.Tx) error {
		id, err := j.step(ctx, tx, task, d.Attempt, StepDistill)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO distillations(step_id, turn, from_turn, to_turn, tokens_before, tokens_after, n_lines, messages)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, id, d.Turn, d.FromTurn, d.ToTurn, d.TokensBefore, d.TokensAfter, len(d.Lines), msgs); err != nil {
			return err
		}
		for i, l := range d.Lines {
			if _, err := tx.ExecContext(ctx, "INSERT INTO lines(step_id, idx, text) VALUES (?, ?, ?)", id, i, nightshift.RedactText(l)); err != nil {
				return err
			}
		}
		return nil
	})
}

// RecordEvent records a free-form event: of task when task is non-zero,
// else of run. payload is stored as JSON ([]byte is taken as JSON as is).
func (j *Journal) RecordEvent(ctx context.Context, run RunID, task TaskID, attempt int, name string, payload any) error {
	p, err := marshal(payload)
	if err != nil {
		return fmt.Errorf("record event %s: payload: %w", name, err)
	}
	return j.write(ctx, fmt.Sprintf("record event %s", name), func(tx *sql.Tx) error {
		var id int64
		if task != 0 {
			if id, err = j.step(ctx, tx, task, attempt, StepEvent); err != nil {
				return err
			}
		} else if err := tx.QueryRowContext(ctx, "INSERT INTO steps(run_id, attempt, kind, at_ns) SELECT id, ?, 'event', ? FROM runs WHERE id = ? RETURNING id",
			attempt, j.now(), run).Scan(&id); errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("run %d: %w", run, ErrNotFound)
		} else if err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO events(step_id, name, payload) VALUES (?, ?, ?)", id, name, p)
		return err
	})
}

// capText keeps s whole when it fits in limit bytes, else its first and last
// limit/2 bytes (on UTF-8 boundaries) around a marker line. It returns the
// text, valid UTF-8, and the number of bytes dropped.
func capText(s string, limit int) (string, int64) {
	out, cut := textcut.Middle(s, limit)
	return out, int64(cut)
}

// giveUpCheck is the check status stored for an attempt in which the model
// gave up (AttemptEnd.GaveUp).
const giveUpCheck = "give_up"

// attemptCheckText is the stored check status of an attempt's end: the
// check's text, "" when none ran, giveUpCheck when the model gave up.
func attemptCheckText(a AttemptEnd) (string, error) {
	if a.GaveUp {
		if a.Check != nightshift.CheckNotRun {
			return "", fmt.Errorf("the model gave up, but check %s ran", a.Check)
		}
		return giveUpCheck, nil
	}
	b, err := a.Check.MarshalText()
	if err != nil {
		return "", fmt.Errorf("check %w", err)
	}
	return string(b), nil
}

// badValue is the error for an enumeration value the journal does not
// store.
func badValue(v fmt.Stringer) error {
	return fmt.Errorf("%w %s", nightshift.ErrUnknownValue, v)
}

// parseAttemptCheck reads the stored check status of an attempt's end into
// a; text that is neither a check status nor giveUpCheck is an error.
func parseAttemptCheck(a *AttemptEnd, text string) error {
	if text == giveUpCheck {
		a.Check, a.GaveUp = nightshift.CheckNotRun, true
		return nil
	}
	return a.Check.UnmarshalText([]byte(text))
}

// evidenceJSON encodes a command's sandbox evidence redacted
// (nightshift.Evidence.Redacted), dropping diffs (the
// largest first; their hashes stay) until it fits in limit bytes; "" for
// none.
func evidenceJSON(ev *nightshift.Evidence, limit int) (string, error) {
	if ev == nil {
		return "", nil
	}
	// Never store a secret: the sandbox's Runner redacts its evidence
	// already; a Runner that did not is redacted here (idempotent).
	red := ev.Redacted()
	ev = &red
	b, err := json.Marshal(ev)
	if err != nil {
		return "", err
	}
	if limit <= 0 || len(b) <= limit {
		return string(b), nil
	}
	cp := *ev
	cp.Effects.Changes = slices.Clone(ev.Effects.Changes)
	idx := make([]int, len(cp.Effects.Changes))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return len(cp.Effects.Changes[b].Diff) - len(cp.Effects.Changes[a].Diff) })
	for _, i := range idx {
		if cp.Effects.Changes[i].Diff == "" {
			break
		}
		cp.Effects.Changes[i].Diff = "[diff dropped: the journal keeps at most " + strconv.Itoa(limit) + " bytes of evidence per command]"
		if b, err = json.Marshal(cp); err != nil || len(b) <= limit {
			return string(b), err
		}
	}
	return string(b), nil
}
