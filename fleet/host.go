package fleet

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/internal/textcut"
	"github.com/nightshift-dev/nightshift/lessons"
	"github.com/nightshift-dev/nightshift/report"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/sandbox"
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
func (f *Workflows) Host(ctx workflow.Context, in HostInput) (HostResult, error) {
	n := in.Night.withDefaults()
	res := HostResult{Host: in.Host.Name, Zone: ZoneOf(in.Host)}
	rs, err := n.Rules()
	if err != nil {
		return res, temporal.NewNonRetryableApplicationError(err.Error(), "InvalidNight", err)
	}
	for _, r := range rs {
		res.Tasks = append(res.Tasks, Task{Rule: r.ID, Title: r.Title, Host: in.Host.Name})
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
	h := &hostRun{wctx: ctx, n: n, in: in}
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
	if done := h.sandbox(&cfg, &res); done {
		return res, nil
	}
	w, err := worker.New(cfg)
	if err != nil {
		return res, temporal.NewNonRetryableApplicationError(err.Error(), "InvalidNight", err)
	}
	for i, rule := range rs {
		if ctx.Err() != nil {
			res.Stopped = "the night was cancelled"
			break
		}
		h.task, h.hostErr, h.last = &res.Tasks[i], nil, nil
		rr := rule
		if rr.Check != nil {
			rr.Check = fleetCheck{orig: rule.Check, h: h}
		}
		start := workflow.Now(ctx)
		out, ferr := w.Fix(wctx, rr)
		out.Duration = workflow.Now(ctx).Sub(start)
		var ue *worker.UnreachableError
		switch {
		case ctx.Err() != nil:
			res.Stopped = "the night was cancelled"
		case errors.As(ferr, &ue):
			res.Stopped = fmt.Sprintf("%s: %v", batch.ErrModelUnreachable, ferr)
		case ferr != nil && h.hostErr != nil:
			res.Unreachable = fmt.Sprintf("host stopped answering: %v", h.hostErr)
			for j := i; j < len(rs); j++ {
				t := &res.Tasks[j]
				t.Finished = true
				t.Outcome = worker.Outcome{Rule: t.Rule, Status: nightshift.RuleUnreachable, Reason: res.Unreachable}
			}
		default:
			h.task.Finished, h.task.Outcome = true, out
		}
		if h.rec != nil {
			res.Lessons = append(res.Lessons, h.rec.Pending()...)
			_ = h.rec.Flush(wctx) // a Memory store; only a cancelled context fails it
		}
		if res.Stopped != "" || res.Unreachable != "" {
			break
		}
	}
	return res, nil
}

// sandbox sets up the recording sandbox the night asks for: the sandbox
// probe activity first; a host where it cannot run has its rules failed
// (required) or falls back to the static check (auto). It reports whether
// the host's work is over.
func (h *hostRun) sandbox(cfg *worker.Config, res *HostResult) bool {
	switch h.n.Sandbox {
	case "":
		return false // a night started before the sandbox: as then
	case "off":
		cfg.Fallback = "--sandbox off: the static check alone judged commands on " + h.in.Host.Name
		return false
	}
	ctx := h.hostOptions(h.wctx)
	var pr SandboxProbeResult
	err := workflow.ExecuteActivity(ctx, SandboxProbeActivity, ProbeInput{Host: h.in.Host}).Get(ctx, &pr)
	reason := ""
	switch {
	case err != nil && (canceled(err) || h.wctx.Err() != nil):
		res.Stopped = "the night was cancelled"
		return true
	case err != nil:
		res.Unreachable = fmt.Sprintf("host stopped answering: %s", rootMessage(err))
		reason, err = res.Unreachable, nil
	case pr.Missing == "":
		cfg.Sandboxed, h.sandboxed = true, true
		return false
	case h.n.Sandbox == "required":
		reason = fmt.Sprintf("host %s: the sandbox is required but cannot run there: %s", h.in.Host.Name, pr.Missing)
	default:
		cfg.Fallback = fmt.Sprintf("no sandbox on %s (%s): the static check alone judged commands", h.in.Host.Name, pr.Missing)
		return false
	}
	status := nightshift.RuleFailed
	if res.Unreachable != "" {
		status = nightshift.RuleUnreachable
	}
	for i := range res.Tasks {
		t := &res.Tasks[i]
		t.Finished = true
		t.Outcome = worker.Outcome{Rule: t.Rule, Status: status, Reason: reason}
	}
	return true
}

// hostRun is the state of one host workflow shared by its adapters.
type hostRun struct {
	wctx      workflow.Context
	sandboxed bool // commands run through the recording sandbox
	n         Night
	in        HostInput
	rec       *lessons.Recorder
	task      *Task          // the task being worked on
	hostErr   error          // a transport error of the host in this task
	last      *CommandResult // the last remediation command's result
	lost      bool           // its worker died while it ran: outcome unknown
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
func (h *hostRun) Observe(e worker.Event) {
	if h.rec != nil {
		h.rec.Observe(e)
	}
	t := h.task
	if t == nil {
		return
	}
	switch e.Kind {
	case worker.EventCommand:
		rc := report.Command{Command: e.Command, Action: e.Action.String(), Detail: e.Detail}
		if e.Action.Ran() {
			if l := h.last; l != nil {
				rc = commandReport(e, *l)
			}
			if h.lost {
				rc.Action, rc.ExitCode, rc.Detail = nightshift.ActionUnknown.String(), nil, "outcome unknown: the worker stopped while the command ran"
			}
		}
		rc.Evidence = e.Evidence
		t.Commands = append(t.Commands, Command{Attempt: max(e.Attempt, 1), Command: rc})
	case worker.EventCheck:
		if e.Attempt > 0 && len(t.Commands) > 0 {
			if c := &t.Commands[len(t.Commands)-1]; c.Attempt == e.Attempt {
				c.Command.Check = e.Check.String()
			}
		}
	case worker.EventModelUsage:
		t.UsagePromptTokens += e.UsagePrompt
		t.CachedTokens += e.CachedTokens
	case worker.EventAttempt:
		t.Attempts = append(t.Attempts, Attempt{N: e.Attempt, PromptTokens: e.PromptTokens, Limit: e.Limit,
			Check: batch.AttemptCheck(e.Check, e.Action == nightshift.ActionGiveUp)})
	default:
		// other events are not part of the host's report
	}
}

// commandReport is a remediation command as the report shows it.
func commandReport(e worker.Event, r CommandResult) report.Command {
	rc := report.Command{Command: e.Command, Action: e.Action.String(), Detail: r.Err}
	if e.ExitCode != nil {
		code := *e.ExitCode
		rc.ExitCode = &code
	}
	out := r.Exec.Stdout
	if r.Exec.Stderr != "" {
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		out += r.Exec.Stderr
	}
	rc.Output, _ = textcut.Middle(out, outputCap)
	return rc
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
	err := workflow.ExecuteActivity(ctx, ModelActivity, ModelRequest{req}).Get(ctx, &resp)
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
		TaskQueue:           ModelQueue,
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
	err := workflow.ExecuteActivity(ctx, ProbeActivity, ProbeInput{Host: h.in.Host, Command: command}).Get(ctx, &ex)
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
	attempt := 0
	if h.task != nil {
		attempt = len(h.task.Attempts) + 1
	}
	var res CommandResult
	in := CommandInput{Host: h.in.Host, Rule: h.task.Rule, Attempt: attempt, Command: command}
	if h.sandboxed {
		in.Sandbox, in.Scope = true, sandbox.ScopeOf(cctx)
	}
	err := workflow.ExecuteActivity(ctx, CommandActivity, in).Get(ctx, &res)
	if err != nil {
		if canceled(err) || h.wctx.Err() != nil {
			return nightshift.Exec{ExitCode: -1}, context.Canceled
		}
		// The worker running it died or it timed out: its outcome is
		// unknown and it is not run again, as the journal does on resume.
		// Not an error: the worker re-runs the check, which tells.
		res = CommandResult{Exec: nightshift.Exec{ExitCode: -1, Stderr: batch.ErrOutcomeUnknown.Error() + "\n"}}
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
	in := CheckInput{Host: h.in.Host, Rule: h.task.Rule}
	switch ck := c.orig.(type) {
	case rules.ShellCheck:
		in.Command = ck.Command
	case rules.OscapCheck:
		in.Oscap = &OscapInput{Datastream: ck.Datastream, Profile: ck.Profile, Rule: ck.Rule, Oscap: ck.Oscap}
	default:
		return rules.CheckResult{Status: nightshift.CheckError}, fmt.Errorf("fleet: %s checks are not supported in fleet mode", c.orig.Kind())
	}
	ctx := h.hostOptions(h.wctx)
	var res recordedCheck
	err := workflow.ExecuteActivity(ctx, CheckActivity, in).Get(ctx, &res)
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
