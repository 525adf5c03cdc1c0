package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"

	"github.com/nightshift-dev/nightshift"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/journal")

// clock is a deterministic Config.Now: each call is one second later.
func clock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

func openTest(t testing.TB, cfg Config) (*Journal, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "journal.db")
	if cfg.Now == nil {
		cfg.Now = clock()
	}
	j, err := Open(context.Background(), path, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { j.Close() })
	return j, path
}

// must(f())(t) returns f's value, failing t on its error.
func must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func ok(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var assessment = budget.Assessment{System: 900, History: 3000, Current: 400, Prompt: 4300, Reserve: 1024, Total: 5324,
	Limit: 16000, Soft: 12000, Window: 16384, Messages: 9}

// recordAttempt records one whole attempt: model call, command, check,
// distillation, attempt end.
func recordAttempt(t testing.TB, j *Journal, task TaskID, n int, out string) {
	t.Helper()
	ctx := context.Background()
	ok(t, j.RecordModelCall(ctx, task, ModelCall{Attempt: n, Assessment: assessment, MaxTokens: 1024, Duration: 2 * time.Second}))
	p := must(j.BeginCommand(ctx, task, n, fmt.Sprintf("sed -i 's/^PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config # %d", n)))(t)
	ok(t, j.FinishCommand(ctx, p, CommandResult{Exec: nightshift.Exec{ExitCode: 0, Stdout: out, Stderr: "warning\n", Duration: 30 * time.Millisecond}}))
	ok(t, j.RecordCheck(ctx, task, CheckRecord{Attempt: n, Status: nightshift.CheckFail, ExitCode: 1, Output: "PermitRootLogin yes", Detail: "exit 1: not compliant"}))
	ok(t, j.RecordDistillation(ctx, task, Distillation{Attempt: n, Turn: n, FromTurn: n, ToTurn: n, TokensBefore: 5000, TokensAfter: 3000,
		Messages: []openai.ChatCompletionMessage{{Role: "system", Content: "instruction"}, {Role: "user", Content: "task"}},
		Lines:    []string{fmt.Sprintf("t%d sed … → exit 0; check FAIL", n), "second line"}}))
	ok(t, j.EndAttempt(ctx, task, AttemptEnd{Attempt: n, Check: nightshift.CheckFail, PromptTokens: 4300, Limit: 16000}))
}

func TestRecordAndSteps(t *testing.T) {
	ctx := context.Background()
	j, _ := openTest(t, Config{OutputCap: 32})
	run := must(j.StartRun(ctx, RunSpec{Name: "nightly", Config: map[string]any{"rules": []string{"r1"}, "hosts": []string{"h1"}}}))(t)
	task := must(j.StartTask(ctx, run, "sshd_disable_root_login", "h1"))(t)
	ok(t, j.RecordCheck(ctx, task, CheckRecord{Status: nightshift.CheckFail, ExitCode: 1, Output: "x"}))
	recordAttempt(t, j, task, 1, strings.Repeat("a", 20)+strings.Repeat("b", 20))
	ok(t, j.RecordSkippedCommand(ctx, task, 2, "rm -rf /", nightshift.ActionBlocked, "rm -rf /"))
	ok(t, j.RecordModelCall(ctx, task, ModelCall{Attempt: 2, Assessment: assessment, Rejected: true, ServerTokens: 4400, Error: "too long"}))
	ok(t, j.RecordEvent(ctx, run, task, 2, "retry", map[string]string{"error": "503"}))
	ok(t, j.RecordEvent(ctx, run, 0, 0, "host_down", []byte(`{"host":"h2"}`)))
	ok(t, j.FinishTask(ctx, task, Outcome{Status: nightshift.RuleFixed, Attempts: 2, Detail: map[string]int{"commands": 1}}))
	ok(t, j.EndRun(ctx, run, nightshift.RunDone))

	steps := must(j.Steps(ctx, task))(t)
	kinds := []StepKind{StepCheck, StepModelCall, StepCommand, StepCheck, StepDistill, StepAttempt, StepCommand, StepModelCall, StepEvent}
	if len(steps) != len(kinds) {
		t.Fatalf("got %d steps, want %d: %+v", len(steps), len(kinds), steps)
	}
	for i, s := range steps {
		if s.Kind != kinds[i] {
			t.Errorf("step %d: kind %s, want %s", i, s.Kind, kinds[i])
		}
		set := 0
		for _, p := range []bool{s.ModelCall != nil, s.Command != nil, s.Check != nil, s.AttemptEnd != nil, s.Distillation != nil, s.Event != nil} {
			if p {
				set++
			}
		}
		if set != 1 {
			t.Errorf("step %d (%s): %d detail fields set, want 1", i, s.Kind, set)
		}
	}
	tests := []struct {
		name      string
		got, want any
	}{
		{"model call assessment", steps[1].ModelCall.Assessment, assessment},
		{"model call max tokens", steps[1].ModelCall.MaxTokens, 1024},
		{"model call duration", steps[1].ModelCall.Duration, 2 * time.Second},
		{"command state", steps[2].Command.State, CommandFinished},
		{"command action defaulted", steps[2].Command.Result.Action, nightshift.ActionRan},
		{"stdout capped", steps[2].Command.Result.Stdout, strings.Repeat("a", 16) + "\n[… 8 bytes cut …]\n" + strings.Repeat("b", 16)},
		{"stdout cut counted", steps[2].Command.Result.StdoutCut, int64(8)},
		{"stderr kept", steps[2].Command.Result.Stderr, "warning\n"},
		{"command attempt", steps[2].Command.Attempt, 1},
		{"check", *steps[3].Check, CheckRecord{Attempt: 1, Status: nightshift.CheckFail, ExitCode: 1, Output: "PermitRootLogin yes", Detail: "exit 1: not compliant"}},
		{"distilled lines", steps[4].Distillation.Lines, []string{"t1 sed … → exit 0; check FAIL", "second line"}},
		{"audit messages", steps[4].Distillation.Messages, []openai.ChatCompletionMessage{{Role: "system", Content: "instruction"}, {Role: "user", Content: "task"}}},
		{"attempt end", *steps[5].AttemptEnd, AttemptEnd{Attempt: 1, Check: nightshift.CheckFail, PromptTokens: 4300, Limit: 16000}},
		{"skipped command", [3]any{steps[6].Command.State, steps[6].Command.Result.Action, steps[6].Command.Detail}, [3]any{CommandSkipped, nightshift.ActionBlocked, "rm -rf /"}},
		{"rejection", [2]any{steps[7].ModelCall.Rejected, steps[7].ModelCall.ServerTokens}, [2]any{true, 4400}},
		{"event", [2]string{steps[8].Event.Name, string(steps[8].Event.Payload)}, [2]string{"retry", `{"error":"503"}`}},
	}
	for _, tt := range tests {
		if g, w := fmt.Sprintf("%#v", tt.got), fmt.Sprintf("%#v", tt.want); g != w {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, g, w)
		}
	}
	tk := must(j.Task(ctx, task))(t)
	if !tk.Finished || tk.Status != nightshift.RuleFixed || tk.Attempts != 2 || string(tk.Outcome) != `{"commands":1}` {
		t.Errorf("task = %+v", tk)
	}
	runs := must(j.Runs(ctx))(t)
	if len(runs) != 1 || runs[0].Status != nightshift.RunDone || runs[0].Ended.IsZero() || string(runs[0].Config) != `{"hosts":["h1"],"rules":["r1"]}` {
		t.Errorf("runs = %+v", runs)
	}
}

func TestProtocolErrors(t *testing.T) {
	ctx := context.Background()
	j, _ := openTest(t, Config{})
	run := must(j.StartRun(ctx, RunSpec{}))(t)
	open := must(j.StartTask(ctx, run, "r", "h"))(t)
	pending := must(j.BeginCommand(ctx, open, 1, "true"))(t)
	done := must(j.StartTask(ctx, run, "r2", "h"))(t)
	ok(t, j.FinishTask(ctx, done, Outcome{Status: nightshift.RuleFixed}))
	finished := must(j.BeginCommand(ctx, must(j.StartTask(ctx, run, "r3", "h"))(t), 1, "true"))(t)
	ok(t, j.FinishCommand(ctx, finished, CommandResult{}))

	tests := []struct {
		name string
		err  error
		want error
	}{
		{"second begin while one is pending", second(j.BeginCommand(ctx, open, 1, "false")), ErrCommandPending},
		{"finish task with a pending command", j.FinishTask(ctx, open, Outcome{Status: nightshift.RuleFixed}), ErrCommandPending},
		{"finish a finished command", j.FinishCommand(ctx, finished, CommandResult{}), ErrNotPending},
		{"zero handle", j.FinishCommand(ctx, PendingCommand{}, CommandResult{}), ErrNotPending},
		{"mark a finished command unknown", j.MarkUnknown(ctx, finished.ID(), ""), ErrNotPending},
		{"mark a missing command unknown", j.MarkUnknown(ctx, 9999, ""), ErrNotPending},
		{"finish a task twice", j.FinishTask(ctx, done, Outcome{Status: nightshift.RuleFixed}), ErrTaskFinished},
		{"restart a finished task", second(j.StartTask(ctx, run, "r2", "h")), ErrTaskFinished},
		{"step on a finished task", j.RecordCheck(ctx, done, CheckRecord{Status: nightshift.CheckPass}), ErrTaskFinished},
		{"command on a finished task", second(j.BeginCommand(ctx, done, 1, "true")), ErrTaskFinished},
		{"task of a missing run", second(j.StartTask(ctx, 9999, "r", "h")), ErrNotFound},
		{"step of a missing task", j.RecordModelCall(ctx, 9999, ModelCall{}), ErrNotFound},
		{"event of a missing run", j.RecordEvent(ctx, 9999, 0, 0, "x", nil), ErrNotFound},
		{"end a missing run", j.EndRun(ctx, 9999, nightshift.RunDone), ErrNotFound},
		{"read a missing task", second(j.Task(ctx, 9999)), ErrNotFound},
		{"resume a missing run", second(j.ResumeRun(ctx, 9999)), ErrNotFound},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: err = %v, want %v", tt.name, tt.err, tt.want)
		}
	}
	// Errors that are not sentinels still name what failed.
	for name, err := range map[string]error{
		"invalid status":  j.FinishTask(ctx, open, Outcome{}),
		"invalid payload": j.RecordEvent(ctx, run, 0, 0, "x", []byte("{")),
		"running end":     j.EndRun(ctx, run, nightshift.RunRunning),
		"bad messages":    j.RecordDistillation(ctx, open, Distillation{Messages: []openai.ChatCompletionMessage{{Content: "a", MultiContent: []openai.ChatMessagePart{{Type: "text"}}}}}),
	} {
		if err == nil || err.Error() != strings.ToLower(err.Error()[:1])+err.Error()[1:] {
			t.Errorf("%s: err = %v, want a lowercase error", name, err)
		}
	}
	// The pending command resolves through its handle.
	ok(t, j.FinishCommand(ctx, pending, CommandResult{Exec: nightshift.Exec{ExitCode: 1}}))
	ok(t, j.FinishTask(ctx, open, Outcome{Status: nightshift.RuleNotFixed}))
}

func second[T any](_ T, err error) error { return err }

func TestResumeAfterCrash(t *testing.T) {
	ctx := context.Background()
	j, path := openTest(t, Config{})
	run := must(j.StartRun(ctx, RunSpec{Name: "night"}))(t)
	done := must(j.StartTask(ctx, run, "r1", "h1"))(t)
	recordAttempt(t, j, done, 1, "out")
	ok(t, j.FinishTask(ctx, done, Outcome{Status: nightshift.RuleFixed, Attempts: 1}))
	busy := must(j.StartTask(ctx, run, "r2", "h1"))(t)
	recordAttempt(t, j, busy, 1, "out")
	recordAttempt(t, j, busy, 2, "out")
	ok(t, j.RecordModelCall(ctx, busy, ModelCall{Attempt: 3, Assessment: assessment}))
	inflight := must(j.BeginCommand(ctx, busy, 3, "systemctl restart sshd"))(t)
	// The "crash": the process goes away without finishing anything.
	ok(t, j.Close())

	j2, err := Open(ctx, path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	pending := must(j2.PendingCommands(ctx, 0))(t)
	if len(pending) != 1 || pending[0].ID != inflight.ID() || pending[0].Command != "systemctl restart sshd" || pending[0].State != CommandStarted {
		t.Fatalf("pending = %+v", pending)
	}
	st := must(j2.ResumeRun(ctx, run))(t)
	if st.Run.Resumes != 1 || st.Run.Status != nightshift.RunRunning {
		t.Errorf("run = %+v", st.Run)
	}
	if len(st.Finished) != 1 || st.Finished[0].ID != done || st.Finished[0].Status != nightshift.RuleFixed {
		t.Errorf("finished = %+v", st.Finished)
	}
	if len(st.InProgress) != 1 {
		t.Fatalf("in progress = %+v", st.InProgress)
	}
	ts := st.InProgress[0]
	if ts.Task.ID != busy || len(ts.Attempts) != 2 || ts.LastAttempt != 3 || ts.ModelCalls != 3 || len(ts.Ledger) != 3 ||
		len(ts.Checks) != 2 || len(ts.Lines) != 4 || len(ts.Pending()) != 1 || len(st.Pending) != 1 {
		t.Errorf("task state: attempts %d last %d calls %d ledger %d checks %d lines %d pending %d/%d",
			len(ts.Attempts), ts.LastAttempt, ts.ModelCalls, len(ts.Ledger), len(ts.Checks), len(ts.Lines), len(ts.Pending()), len(st.Pending))
	}
	// Starting the task again gives the same task; it cannot move on
	// until the unknown command is resolved.
	if id := must(j2.StartTask(ctx, run, "r2", "h1"))(t); id != busy {
		t.Errorf("StartTask after resume = %d, want %d", id, busy)
	}
	if _, err := j2.BeginCommand(ctx, busy, 4, "true"); !errors.Is(err, ErrCommandPending) {
		t.Errorf("BeginCommand before MarkUnknown: %v, want ErrCommandPending", err)
	}
	ok(t, j2.MarkUnknown(ctx, inflight.ID(), "process killed; re-checking instead"))
	p := must(j2.BeginCommand(ctx, busy, 4, "true"))(t)
	ok(t, j2.FinishCommand(ctx, p, CommandResult{}))
	ok(t, j2.FinishTask(ctx, busy, Outcome{Status: nightshift.RuleFixed, Attempts: 4}))
	ts2 := must(j2.TaskState(ctx, busy))(t)
	if got := ts2.Ledger[2]; got.State != CommandUnknown || got.Detail != "process killed; re-checking instead" || got.Result.Action != nightshift.ActionUnknown {
		t.Errorf("resolved command = %+v", got)
	}
	if len(must(j2.PendingCommands(ctx, run))(t)) != 0 {
		t.Error("pending commands remain")
	}
}

func TestOpenBadInput(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name string, data []byte, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		ok(t, os.WriteFile(p, data, mode))
		return p
	}
	text := write("notes.txt", []byte(strings.Repeat("not a database\n", 100)), 0o644)
	short := write("short", []byte("SQLite format 3\x00garbage"), 0o644)
	other := filepath.Join(dir, "other.db")
	db := must(sql.Open("sqlite", other))(t)
	must(db.Exec("CREATE TABLE accounts(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO accounts(name) VALUES ('x')"))(t)
	ok(t, db.Close())
	newer := filepath.Join(dir, "newer.db")
	j := must(Open(ctx, newer, Config{}))(t)
	ok(t, j.Close())
	db = must(sql.Open("sqlite", newer))(t)
	must(db.Exec(fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion+1)))(t)
	ok(t, db.Close())
	ro := filepath.Join(dir, "ro.db")
	j = must(Open(ctx, ro, Config{}))(t)
	ok(t, j.Close())
	ok(t, os.Chmod(ro, 0o444))

	tests := []struct {
		name string
		path string
		cfg  Config
		want error
	}{
		{"text file", text, Config{}, ErrNotJournal},
		{"text file read-only", text, Config{ReadOnly: true}, ErrNotJournal},
		{"truncated sqlite header", short, Config{}, ErrNotJournal},
		{"another application's database", other, Config{}, ErrNotJournal},
		{"newer schema", newer, Config{}, ErrNewerSchema},
		{"newer schema read-only", newer, Config{ReadOnly: true}, ErrNewerSchema},
		{"read-only file", ro, Config{}, ErrReadOnly},
		{"directory", dir, Config{}, ErrNotJournal},
		{"missing file read-only", filepath.Join(dir, "missing.db"), Config{ReadOnly: true}, os.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, berr := os.ReadFile(tt.path) // the missing file's error is kept
			j, err := Open(ctx, tt.path, tt.cfg)
			if err == nil {
				j.Close()
				t.Fatalf("Open succeeded, want %v", tt.want)
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Open: %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.path) {
				t.Errorf("error %q does not name the file", err)
			}
			if after, aerr := os.ReadFile(tt.path); string(after) != string(before) || (aerr == nil) != (berr == nil) {
				t.Errorf("Open changed the file (read before: %v, after: %v)", berr, aerr)
			}
		})
	}
	var se *SchemaError
	if _, err := Open(ctx, newer, Config{}); !errors.As(err, &se) || se.Found != SchemaVersion+1 || se.Supported != SchemaVersion {
		t.Errorf("newer schema: %v, want a *SchemaError with the versions", err)
	}
}

func TestReadOnlyJournal(t *testing.T) {
	ctx := context.Background()
	j, path := openTest(t, Config{})
	run := must(j.StartRun(ctx, RunSpec{Name: "n"}))(t)
	task := must(j.StartTask(ctx, run, "r", "h"))(t)
	recordAttempt(t, j, task, 1, "out")
	ok(t, j.Close())
	ok(t, os.Chmod(path, 0o444))

	r, err := Open(ctx, path, Config{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if steps := must(r.Steps(ctx, task))(t); len(steps) != 5 {
		t.Errorf("got %d steps, want 5", len(steps))
	}
	writes := map[string]error{
		"StartRun":   second(r.StartRun(ctx, RunSpec{})),
		"StartTask":  second(r.StartTask(ctx, run, "r2", "h")),
		"RecordNote": r.RecordEvent(ctx, run, 0, 0, "x", nil),
		"Prune":      second(r.Prune(ctx, 0)),
		"Resume":     second(r.ResumeRun(ctx, run)),
	}
	for name, err := range writes {
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s: %v, want ErrReadOnly", name, err)
		}
	}
}

func TestCapText(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		limit int
		want  string
		cut   int64
	}{
		{"fits", "hello", 5, "hello", 0},
		{"no cap", strings.Repeat("x", 100), -1, strings.Repeat("x", 100), 0},
		{"cut", "aaaabbbbcc", 8, "aaaa\n[… 2 bytes cut …]\nbbcc", 2},
		{"utf-8 boundaries", "ééééé", 5, "é\n[… 6 bytes cut …]\né", 6},
		{"invalid utf-8 repaired", "a\xffb", 10, "a\uFFFDb", 0},
		{"zero limit", "abc", 0, "\n[… 3 bytes cut …]\n", 3},
	}
	for _, tt := range tests {
		got, cut := capText(tt.in, tt.limit)
		if got != tt.want || cut != tt.cut {
			t.Errorf("%s: capText = %q, %d; want %q, %d", tt.name, got, cut, tt.want, tt.cut)
		}
	}
}

func TestPrune(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	j, _ := openTest(t, Config{Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
	setNow := func(t time.Time) { mu.Lock(); now = t; mu.Unlock() }
	old := must(j.StartRun(ctx, RunSpec{Name: "old"}))(t)
	task := must(j.StartTask(ctx, old, "r", "h"))(t)
	recordAttempt(t, j, task, 1, strings.Repeat("x", 10000))
	ok(t, j.FinishTask(ctx, task, Outcome{Status: nightshift.RuleFixed}))
	ok(t, j.EndRun(ctx, old, nightshift.RunDone))
	crashed := must(j.StartRun(ctx, RunSpec{Name: "crashed, never ended"}))(t)
	setNow(now.Add(30 * 24 * time.Hour))
	recent := must(j.StartRun(ctx, RunSpec{Name: "recent"}))(t)
	ok(t, j.EndRun(ctx, recent, nightshift.RunDone))

	n := must(j.Prune(ctx, 7*24*time.Hour))(t)
	if n != 1 {
		t.Errorf("Prune deleted %d runs, want 1", n)
	}
	var ids []RunID
	for _, r := range must(j.Runs(ctx))(t) {
		ids = append(ids, r.ID)
	}
	if fmt.Sprint(ids) != fmt.Sprint([]RunID{crashed, recent}) {
		t.Errorf("runs after prune = %v, want %v", ids, []RunID{crashed, recent})
	}
	for _, table := range []string{"tasks", "steps", "model_calls", "commands", "checks", "attempts", "distillations", "lines", "events"} {
		var c int
		ok(t, j.r.QueryRow("SELECT count(*) FROM "+table).Scan(&c))
		if c != 0 { // the kept runs have no tasks or steps
			t.Errorf("%s: %d rows left, want 0", table, c)
		}
	}
}

func TestConcurrentHosts(t *testing.T) {
	ctx := context.Background()
	j, _ := openTest(t, Config{NoSync: true})
	run := must(j.StartRun(ctx, RunSpec{}))(t)
	const hosts, rules, attempts = 8, 5, 3
	var wg sync.WaitGroup
	errs := make(chan error, hosts)
	for h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rules {
				task, err := j.StartTask(ctx, run, fmt.Sprintf("rule%d", r), fmt.Sprintf("host%d", h))
				if err != nil {
					errs <- err
					return
				}
				for a := 1; a <= attempts; a++ {
					recordAttempt(t, j, task, a, "output")
				}
				if err := j.FinishTask(ctx, task, Outcome{Status: nightshift.RuleNotFixed, Attempts: attempts}); err != nil {
					errs <- err
					return
				}
				if _, err := j.Tasks(ctx, run); err != nil { // readers alongside the writers
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	tasks := must(j.Tasks(ctx, run))(t)
	if len(tasks) != hosts*rules {
		t.Fatalf("%d tasks, want %d", len(tasks), hosts*rules)
	}
	for _, tk := range tasks {
		st := must(j.TaskState(ctx, tk.ID))(t)
		if !tk.Finished || len(st.Attempts) != attempts || len(st.Ledger) != attempts || len(st.Lines) != 2*attempts {
			t.Errorf("task %s/%s: finished %v attempts %d ledger %d lines %d", tk.Rule, tk.Host, tk.Finished, len(st.Attempts), len(st.Ledger), len(st.Lines))
		}
	}
}

// TestViews checks the documented plain-SQL views on a small journal.
func TestViews(t *testing.T) {
	ctx := context.Background()
	j, _ := openTest(t, Config{})
	run := must(j.StartRun(ctx, RunSpec{Name: "views"}))(t)
	a := must(j.StartTask(ctx, run, "r1", "h1"))(t)
	recordAttempt(t, j, a, 1, "out")
	ok(t, j.FinishTask(ctx, a, Outcome{Status: nightshift.RuleFixed, Attempts: 1}))
	b := must(j.StartTask(ctx, run, "r2", "h1"))(t)
	must(j.BeginCommand(ctx, b, 1, "reboot"))(t)

	query := func(q string) string {
		rows := must(j.r.QueryContext(ctx, q))(t)
		defer rows.Close()
		cols := must(rows.Columns())(t)
		var out []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			ok(t, rows.Scan(ptrs...))
			var cells []string
			for i, v := range vals {
				cells = append(cells, fmt.Sprintf("%s=%v", cols[i], v))
			}
			out = append(out, strings.Join(cells, " "))
		}
		ok(t, rows.Err())
		return strings.Join(out, "\n")
	}
	tests := []struct{ query, want string }{
		{"SELECT run, name, status, tasks, finished, fixed FROM run_summary",
			"run=1 name=views status=running tasks=2 finished=1 fixed=1"},
		{"SELECT rule, host, status, attempts, model_calls, commands, unknown_commands, max_prompt_tokens FROM task_summary ORDER BY task",
			"rule=r1 host=h1 status=fixed attempts=1 model_calls=1 commands=1 unknown_commands=0 max_prompt_tokens=4300\n" +
				"rule=r2 host=h1 status=running attempts=0 model_calls=0 commands=1 unknown_commands=1 max_prompt_tokens=<nil>"},
		{"SELECT rule, state, action, exit_code FROM command_log ORDER BY command_id",
			"rule=r1 state=finished action=ran exit_code=0\nrule=r2 state=started action=started exit_code=-1"},
		{"SELECT rule, host, command FROM pending_commands", "rule=r2 host=h1 command=reboot"},
	}
	for _, tt := range tests {
		if got := query(tt.query); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.query, got, tt.want)
		}
	}
}

// TestSchemaGolden pins the schema: a change needs a new migration and
// `go test ./journal -run TestSchemaGolden -update`.
func TestSchemaGolden(t *testing.T) {
	if SchemaVersion != len(migrations) {
		t.Fatalf("SchemaVersion = %d, but there are %d migrations", SchemaVersion, len(migrations))
	}
	j, _ := openTest(t, Config{})
	rows := must(j.r.Query("SELECT type, name, coalesce(sql, '') FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name"))(t)
	defer rows.Close()
	var b strings.Builder
	var version, app int
	ok(t, j.r.QueryRow("PRAGMA user_version").Scan(&version))
	ok(t, j.r.QueryRow("PRAGMA application_id").Scan(&app))
	fmt.Fprintf(&b, "-- schema version %d, application_id %#x\n", version, app)
	for rows.Next() {
		var typ, name, sqlText string
		ok(t, rows.Scan(&typ, &name, &sqlText))
		fmt.Fprintf(&b, "\n-- %s %s\n%s;\n", typ, name, sqlText)
	}
	ok(t, rows.Err())
	golden := filepath.Join("..", "testdata", "journal", "schema.sql")
	if *update {
		ok(t, os.WriteFile(golden, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if b.String() != string(want) {
		t.Errorf("schema differs from %s; add a migration and run with -update", golden)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	// Outcome details and run configs come back byte-identical to their JSON.
	ctx := context.Background()
	j, _ := openTest(t, Config{})
	cfg := json.RawMessage(`{"hosts":["a","b"],"max_model_calls":4}`)
	run := must(j.StartRun(ctx, RunSpec{Config: []byte(cfg)}))(t)
	if r := must(j.Run(ctx, run))(t); string(r.Config) != string(cfg) {
		t.Errorf("config = %s, want %s", r.Config, cfg)
	}
}

// TestMigrateUsage opens a journal written at schema version 1 (with a
// model call recorded) and records the server's usage after the migration:
// the old call reads as 0 cached tokens, the new one as recorded, and
// task_summary sums them.
func TestMigrateUsage(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	db := must(sql.Open("sqlite", path))(t)
	must(db.Exec(migrations[0]))(t)
	must(db.Exec(fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = 1", applicationID)))(t)
	must(db.Exec(`INSERT INTO runs(id, started_ns) VALUES (1, 1); INSERT INTO tasks(id, run_id, rule, host, started_ns) VALUES (1, 1, 'r1', 'h1', 1);
		INSERT INTO steps(id, run_id, task_id, attempt, kind, at_ns) VALUES (1, 1, 1, 1, 'model_call', 2);
		INSERT INTO model_calls VALUES (1, 900, 0, 400, 1300, 1024, 2324, 16000, 12000, 16384, 2, 1024, 5, 0, 0, '')`))(t)
	ok(t, db.Close())

	j := must(Open(ctx, path, Config{}))(t)
	defer j.Close()
	ok(t, j.RecordModelCall(ctx, 1, ModelCall{Attempt: 2, Assessment: assessment, UsagePrompt: 4300, CachedTokens: 4096}))
	steps := must(j.Steps(ctx, 1))(t)
	if len(steps) != 2 || steps[0].ModelCall == nil || steps[1].ModelCall == nil {
		t.Fatalf("steps after the migration: %+v", steps)
	}
	if m := steps[0].ModelCall; m.Assessment.Prompt != 1300 || m.CachedTokens != 0 || m.UsagePrompt != 0 {
		t.Errorf("the version-1 call reads %+v", m)
	}
	if m := steps[1].ModelCall; m.UsagePrompt != 4300 || m.CachedTokens != 4096 {
		t.Errorf("the new call reads %+v", m)
	}
	var prompt, cached int
	ok(t, j.r.QueryRow("SELECT prompt_tokens, cached_tokens FROM task_summary WHERE task = 1").Scan(&prompt, &cached))
	if prompt != 4300 || cached != 4096 {
		t.Errorf("task_summary: %d prompt tokens, %d cached", prompt, cached)
	}
}

// fault: journal-lock-identity
// A second writer is refused on the file, not the path: the path itself, a
// symlink and a hard link all get ErrBusy while the first is open; a
// reader is not refused, and the lock goes with Close.
func TestSecondWriterRefused(t *testing.T) {
	ctx := context.Background()
	j, path := openTest(t, Config{})
	dir := filepath.Dir(path)
	link, hard := filepath.Join(dir, "link.db"), filepath.Join(dir, "hard.db")
	ok(t, os.Symlink(path, link))
	ok(t, os.Link(path, hard))
	for _, p := range []string{path, link, hard} {
		if j2, err := Open(ctx, p, Config{}); !errors.Is(err, ErrBusy) {
			if err == nil {
				j2.Close()
			}
			t.Errorf("second writer through %s: %v, want ErrBusy", p, err)
		}
	}
	r := must(Open(ctx, link, Config{ReadOnly: true}))(t)
	ok(t, r.Close())
	ok(t, j.Close())
	j2 := must(Open(ctx, link, Config{}))(t)
	ok(t, j2.Close())
}

// fault: journal-empty-or-copied
// A copy of a journal in use made without its -wal file (where all its
// records are) is ErrWALMissing, for writers and readers, not a new
// journal or "schema version 0".
func TestCopyWithoutWAL(t *testing.T) {
	ctx := context.Background()
	j, path := openTest(t, Config{})
	defer j.Close()
	must(j.StartRun(ctx, RunSpec{Name: "n"}))(t)
	cp := filepath.Join(filepath.Dir(path), "copy.db")
	ok(t, os.WriteFile(cp, must(os.ReadFile(path))(t), 0o600))
	for _, cfg := range []Config{{}, {ReadOnly: true}} {
		if c, err := Open(ctx, cp, cfg); !errors.Is(err, ErrWALMissing) || !strings.Contains(err.Error(), cp+"-wal") {
			if err == nil {
				c.Close()
			}
			t.Errorf("open %+v: %v, want ErrWALMissing naming %s-wal", cfg, err, cp)
		}
	}
}
