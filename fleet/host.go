package fleet

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/lessons"
	"github.com/nightshift-dev/nightshift/orchestrate"
	"github.com/nightshift-dev/nightshift/report"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/sandbox"
	"github.com/nightshift-dev/nightshift/scap"
	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

// never is the worker's own request timeout and retry deadline inside a
// workflow: the model-call activity's timeouts and retry policy bound the
// call, and the worker must never sleep or retry on its own there.
const never = 100 * 365 * 24 * time.Hour

// Host is the host workflow: the rules of one host, one at a time, each
// worked on by the attempt loop (package worker) running inside the
// workflow. Memory, distiller, budget and lessons are deterministic and run
// here; the probe, checks, model calls and commands are activities.
func (f *Workflows) host(ctx workflow.Context, in hostInput) (HostResult, error) {
	n := in.Night.withDefaults()
	res := HostResult{Host: in.Host.Name, Zone: ZoneOf(in.Host)}
	rs, err := n.Rules()
	if err != nil {
		return res, temporal.NewNonRetryableApplicationError(err.Error(), "InvalidNight", err)
	}
	for _, r := range rs {
		res.Tasks = append(res.Tasks, orchestrate.Task{Rule: r.ID, Title: r.Title, Host: in.Host.Name})
	}
	model, err := f.model(n.Model.Tokenizer)
	if err != nil {
		res.Stopped = fmt.Sprintf("tokenizer %s: %v", n.Model.Tokenizer, err)
		return res, nil
	}
	bud, err := budget.New(budget.Config{ContextWindow: n.Model.ContextWindow, Reserve: n.Model.MaxTokens})
	if err != nil {
		res.Stopped = err.Error()
		return res, nil
	}
	model = model.With(n.Model.Name, bud)
	h := &hostRun{wctx: ctx, n: n, in: in, res: &res}
	store := lessons.NewMemoryStore(lessons.MemoryStoreConfig{Now: func() time.Time { return workflow.Now(ctx) }})
	wctx := wfContext{ctx}
	if err := store.Add(wctx, in.Lessons...); err != nil {
		workflow.GetLogger(ctx).Warn("lessons of earlier hosts refused", "err", err)
	}
	rec, err := lessons.NewRecorder(lessons.RecorderConfig{Store: store, Host: in.Host.Name, Counter: model.Tokenizer(),
		Now: func() time.Time { return workflow.Now(ctx) }})
	if err != nil {
		return res, err
	}
	cfg := worker.Config{Chat: hostModel{h}, Model: model, Target: hostTarget{h}, Probe: hostProbe{h}, MaxAttempts: n.MaxAttempts, KeepTurns: n.KeepTurns,
		RetryDeadline: never, RequestTimeout: never, Observer: h}
	if !n.NoLessons {
		cfg.Lessons = lessons.NewSource(store, lessons.SourceConfig{})
		h.rec = rec
	}
	if workflow.GetVersion(ctx, versionHostRecipes, workflow.DefaultVersion, 1) >= 1 {
		night := workflow.GetInfo(ctx).WorkflowExecution.ID
		if p := workflow.GetInfo(ctx).ParentWorkflowExecution; p != nil {
			night = p.ID
		}
		h.recipes = newHostRecipes(ctx, in.Recipes, func() { h.replaying = true })
		cfg.Recipes = worker.Recipes{Store: h.recipes, Host: in.Host.Name, Run: night, NoReplay: n.NoRecipes}
	}
	if done := h.sandbox(&cfg, rs); done {
		return res, nil
	}
	w, err := worker.New(cfg)
	if err != nil {
		return res, temporal.NewNonRetryableApplicationError(err.Error(), "InvalidNight", err)
	}
	end, err := orchestrate.Work(wctx, wctx, h, w, rs)
	switch {
	case err != nil:
		return res, err // no engine error is possible here: the tasks are in memory
	case end.ModelDown != nil:
		res.Stopped = end.ModelDown.Error()
	case end.Stopped:
		res.Stopped = "the night was cancelled"
	}
	h.flushLessons()
	if h.recipes != nil {
		res.Recipes = h.recipes.changes
	}
	return res, nil
}

// Begin starts rule's task (orchestrate.Engine).
func (h *hostRun) Begin(_ context.Context, rule rules.Rule) (bool, error) {
	h.task, h.hostErr, h.last = h.taskOf(rule.ID), nil, nil
	h.start = workflow.Now(h.wctx)
	return false, nil
}

// Check evaluates c as the check activity (orchestrate.Engine).
func (h *hostRun) Check(c rules.Check) rules.Check { return fleetCheck{orig: c, h: h} }

// Finish sets the task's outcome (orchestrate.Engine): the task worked on
// takes its duration from the workflow's clock.
func (h *hostRun) Finish(_ context.Context, rule rules.Rule, out nightshift.Outcome) error {
	t := h.taskOf(rule.ID)
	if t.Finished {
		return nil
	}
	if t == h.task {
		out.Duration = workflow.Now(h.wctx).Sub(h.start)
		h.flushLessons()
	}
	t.Finished, t.Outcome = true, out
	return nil
}

// HostDown notes why the host stopped answering (orchestrate.Engine).
func (h *hostRun) HostDown(_ context.Context, reason string) error {
	h.res.Unreachable = reason
	return nil
}

// HostErr is the host's transport error in the current task (orchestrate.Engine).
func (h *hostRun) HostErr() error { return h.hostErr }

// Err is nil: the tasks are in the workflow's memory (orchestrate.Engine).
func (h *hostRun) Err() error { return nil }

// Stopped reports the night's cancellation (orchestrate.Engine).
func (h *hostRun) Stopped() bool { return h.wctx.Err() != nil }

// taskOf is the task of rule.
func (h *hostRun) taskOf(rule string) *orchestrate.Task {
	for i := range h.res.Tasks {
		if h.res.Tasks[i].Rule == rule {
			return &h.res.Tasks[i]
		}
	}
	return nil // every rule of the night has its task
}

// flushLessons moves what the host's rules taught into its result.
func (h *hostRun) flushLessons() {
	if h.rec != nil {
		h.res.Lessons = append(h.res.Lessons, h.rec.Pending()...)
		_ = h.rec.Flush(wfContext{h.wctx}) // a Memory store; only a cancelled context fails it
	}
}

// sandbox sets up the recording sandbox the night asks for: the sandbox
// probe activity first; a host where it cannot run has its rules failed
// (required) or falls back to the static check (auto). It reports whether
// the host's work is over.
func (h *hostRun) sandbox(cfg *worker.Config, rs []rules.Rule) bool {
	switch h.n.Sandbox {
	case "":
		return false // a night started before the sandbox: as then
	case "off":
		cfg.Fallback = "--sandbox off: the static check alone judged commands on " + h.in.Host.Name
		return false
	}
	ctx := h.hostOptions(h.wctx)
	var pr sandboxProbeResult
	err := workflow.ExecuteActivity(ctx, sandboxProbeActivity, probeInput{Host: h.in.Host}).Get(ctx, &pr)
	var reason string
	switch {
	case err != nil && (canceled(err) || h.wctx.Err() != nil):
		h.res.Stopped = "the night was cancelled"
		return true
	case err != nil:
		// The tasks are in memory: ending them cannot fail.
		_ = orchestrate.Unreachable(wfContext{h.wctx}, h, rs, fmt.Sprintf("host stopped answering: %s", rootMessage(err)))
		return true
	case pr.Missing == "":
		cfg.Sandboxed, h.sandboxed = true, true
		return false
	case h.n.Sandbox == "required":
		reason = fmt.Sprintf("host %s: the sandbox is required but cannot run there: %s", h.in.Host.Name, pr.Missing)
	default:
		cfg.Fallback = fmt.Sprintf("no sandbox on %s (%s): the static check alone judged commands", h.in.Host.Name, pr.Missing)
		return false
	}
	_ = orchestrate.End(wfContext{h.wctx}, h, rs, nightshift.RuleFailed, reason)
	return true
}

// hostRun is the state of one host workflow shared by its adapters.
type hostRun struct {
	wctx      workflow.Context
	sandboxed bool // commands run through the recording sandbox
	n         Night
	in        hostInput
	rec       *lessons.Recorder
	recipes   *hostRecipes      // nil in hosts started before recipes
	replaying bool              // the worker replays a recipe (attempt 0)
	res       *HostResult       // the workflow's result, its tasks in the night's rule order
	task      *orchestrate.Task // the task being worked on
	start     time.Time         // when it began, on the workflow's clock
	hostErr   error             // a transport error of the host in this task
	last      *commandResult    // the last remediation command's result
	lost      bool              // its worker died while it ran: outcome unknown
}

func (h *hostRun) hostOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: h.n.CommandTimeout + 30*time.Second,
		HeartbeatTimeout:    h.n.Heartbeat,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 3,
			NonRetryableErrorTypes: []string{errTypeBanned}},
	})
}

// Observe records the worker's events into the task for the report and
// passes them to the lessons recorder.
func (h *hostRun) Observe(e nightshift.Event) {
	if h.rec != nil {
		h.rec.Observe(e)
	}
	t := h.task
	if t == nil {
		return
	}
	switch e.Kind {
	case nightshift.EventCommand:
		rc := report.Command{Command: e.Command, Action: e.Action.String(), Detail: e.Detail}
		if e.Action.Ran() {
			if l := h.last; l != nil {
				rc = orchestrate.CommandEntry(e.Command, e.Action, l.Exec, l.Err, 0)
			}
			if h.lost {
				rc = orchestrate.UnknownEntry(rc)
			}
		}
		rc.Evidence = e.Evidence
		t.AddCommand(e.Attempt, rc)
	case nightshift.EventCheck:
		t.Checked(e.Attempt, e.Check)
	case nightshift.EventModelUsage:
		t.Usage(e.UsagePrompt, e.CachedTokens)
	case nightshift.EventAttempt:
		if e.Attempt == 0 {
			h.replaying = false
		}
		t.EndAttempt(e.Attempt, e.PromptTokens, e.Limit, e.Check, e.Action == nightshift.ActionGiveUp)
	default:
		// other events are not part of the host's report
	}
}

// wfContext lets the worker, written against context.Context, run inside a
// workflow: Err reports the workflow's cancellation; Done is nil (the
// worker only selects on it while sleeping between its own retries, which
// never happen here).
type wfContext struct{ w workflow.Context }

func (c wfContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c wfContext) Done() <-chan struct{}       { return nil }
func (c wfContext) Err() error {
	if c.w.Err() != nil {
		return context.Canceled
	}
	return nil
}
func (c wfContext) Value(key any) any { return c.w.Value(key) }

func canceled(err error) bool {
	var ce *temporal.CanceledError
	return errors.As(err, &ce)
}

// hostModel calls the model through the model-call activity on the model
// queue, whose workers hold the fleet-wide cap.
type hostModel struct{ h *hostRun }

func (m hostModel) CreateChatCompletion(_ context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	h := m.h
	ctx := workflow.WithActivityOptions(h.wctx, modelOptions(h.n))
	var resp openai.ChatCompletionResponse
	err := workflow.ExecuteActivity(ctx, modelActivity, modelRequest{req}).Get(ctx, &resp)
	if err == nil {
		if len(resp.Choices) == 0 {
			// Only in a history recorded before the activity refused
			// answers without choices: replayed as the worker then took
			// them, an empty assistant reply (the worker would now retry
			// the call, scheduling an activity the history does not have).
			resp.Choices = []openai.ChatCompletionChoice{{Message: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant}}}
		}
		return resp, nil
	}
	if canceled(err) || h.wctx.Err() != nil {
		return resp, context.Canceled
	}
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) && ae.Type() == errTypeModelRejected {
		return resp, rejection(ae)
	}
	return resp, &worker.UnreachableError{Tries: modelAttempts(h.n.RetryDeadline), Since: h.n.RetryDeadline, Err: errors.New(rootMessage(err))}
}

// rootMessage is the innermost message of an activity failure.
func rootMessage(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err.Error()
		}
		err = u
	}
}

// modelOptions are the model call's activity options: the worker's retry
// policy (backoff from 500ms doubling to 30s) with as many attempts as fit
// in the retry deadline; the time a call waits for the fleet cap in the
// model queue does not count against it.
func modelOptions(n Night) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		TaskQueue:           modelQueue,
		StartToCloseTimeout: min(cmp.Or(n.RequestTimeout, worker.DefaultRequestTimeout), cmp.Or(n.RetryDeadline, worker.DefaultRetryDeadline)),
		HeartbeatTimeout:    n.Heartbeat,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: 500 * time.Millisecond, BackoffCoefficient: 2,
			MaximumInterval: 30 * time.Second, MaximumAttempts: int32(modelAttempts(n.RetryDeadline)),
			NonRetryableErrorTypes: []string{errTypeModelRejected, errTypeNoModel}},
	}
}

// modelAttempts is how many tries the backoff schedule fits in deadline.
func modelAttempts(deadline time.Duration) int {
	d, waited, n := 500*time.Millisecond, time.Duration(0), 1
	for waited+d <= deadline && n < 1000 {
		waited += d
		n++
		d = min(d*2, 30*time.Second)
	}
	return n
}

// hostProbe runs the worker's read-only host probe as the probe activity
// (retried).
type hostProbe struct{ h *hostRun }

func (p hostProbe) Run(_ context.Context, command string) (nightshift.Exec, error) {
	h := p.h
	ctx := h.hostOptions(h.wctx)
	var ex nightshift.Exec
	err := workflow.ExecuteActivity(ctx, probeActivity, probeInput{Host: h.in.Host, Command: command}).Get(ctx, &ex)
	if err != nil {
		if canceled(err) || h.wctx.Err() != nil {
			return nightshift.Exec{ExitCode: -1}, context.Canceled
		}
		h.hostErr = errors.New(rootMessage(err))
		return nightshift.Exec{ExitCode: -1}, h.hostErr
	}
	return ex, nil
}

// hostTarget runs remediation commands as the command activity (one
// attempt, never retried).
type hostTarget struct{ h *hostRun }

func (t hostTarget) Run(cctx context.Context, command string) (nightshift.Exec, error) {
	h := t.h
	ctx := h.hostOptions(h.wctx)
	ctx = workflow.WithRetryPolicy(ctx, temporal.RetryPolicy{MaximumAttempts: 1})
	attempt := 0 // a recipe's replay
	if h.task != nil && !h.replaying {
		attempt = len(h.task.Attempts) + 1
		if len(h.task.Attempts) > 0 && h.task.Attempts[0].N == 0 {
			attempt-- // after the replay: the model's attempts count from 1
		}
	}
	var res commandResult
	in := commandInput{Host: h.in.Host, Rule: h.task.Rule, Attempt: attempt, Command: command}
	if h.sandboxed {
		in.Sandbox = true
		sc := sandbox.RuleScopeOf(cctx)
		in.Scope, in.StrictScope, in.Units, in.Sysctl, in.Keys, in.ScopeNote = sc.Paths, sc.Strict, sc.Units, sc.Sysctl, sc.Keys, sc.Note
	}
	err := workflow.ExecuteActivity(ctx, commandActivity, in).Get(ctx, &res)
	if err != nil {
		if canceled(err) || h.wctx.Err() != nil {
			return nightshift.Exec{ExitCode: -1}, context.Canceled
		}
		// The worker running it died or it timed out: its outcome is
		// unknown and it is not run again, as the journal does on resume.
		// Not an error: the worker re-runs the check, which tells.
		res = commandResult{Exec: nightshift.Exec{ExitCode: -1, Stderr: orchestrate.OutcomeUnknownStderr}}
		h.last, h.lost = &res, true
		return res.Exec, nil
	}
	h.last, h.lost = &res, false
	if res.Err != "" {
		h.hostErr = errors.New(res.Err)
		return res.Exec, h.hostErr
	}
	return res.Exec, nil
}

// fleetCheck evaluates the rule's shell or oscap check through the check
// activity.
type fleetCheck struct {
	orig rules.Check
	h    *hostRun
}

func (c fleetCheck) Kind() string   { return c.orig.Kind() }
func (c fleetCheck) String() string { return c.orig.String() }

func (c fleetCheck) Evaluate(_ context.Context, _ nightshift.Runner) (rules.CheckResult, error) {
	h := c.h
	in := checkInput{Host: h.in.Host, Rule: h.task.Rule}
	switch ck := c.orig.(type) {
	case rules.ShellCheck:
		in.Command = ck.Command
	case scap.Check:
		in.Oscap = &oscapInput{Datastream: ck.Datastream, Profile: ck.Profile, Rule: ck.Rule, Oscap: ck.Oscap}
	default:
		return rules.CheckResult{Status: nightshift.CheckError}, fmt.Errorf("fleet: %s checks are not supported in fleet mode", c.orig.Kind())
	}
	ctx := h.hostOptions(h.wctx)
	var res recordedCheck
	err := workflow.ExecuteActivity(ctx, checkActivity, in).Get(ctx, &res)
	if err != nil {
		if canceled(err) || h.wctx.Err() != nil {
			return rules.CheckResult{Status: nightshift.CheckError}, context.Canceled
		}
		var ae *temporal.ApplicationError
		if !(errors.As(err, &ae) && ae.Type() == errTypeBanned) {
			h.hostErr = errors.New(rootMessage(err))
		}
		return rules.CheckResult{Status: nightshift.CheckError}, errors.New(rootMessage(err))
	}
	return rules.CheckResult{Status: nightshift.CheckStatus(res.Status), ExitCode: res.ExitCode, Output: res.Output, Detail: res.Detail}, nil
}

// recordedCheck is the check activity's result (a rules.CheckResult) as
// the workflow reads it back, from this version's histories (the status as
// text, "fail") and from those recorded before the status was typed
// (rules.Status's number, in the same order as nightshift.CheckStatus).
type recordedCheck struct {
	Status   recordedCheckStatus
	ExitCode int
	Output   string
	Detail   string
}

type recordedCheckStatus nightshift.CheckStatus

func (s *recordedCheckStatus) UnmarshalJSON(b []byte) error {
	var n uint8
	if err := json.Unmarshal(b, &n); err == nil {
		if n > uint8(nightshift.CheckNotApplicable) {
			return fmt.Errorf("recorded check status %d: %w", n, nightshift.ErrUnknownValue)
		}
		*s = recordedCheckStatus(n)
		return nil
	}
	var c nightshift.CheckStatus
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	*s = recordedCheckStatus(c)
	return nil
}
