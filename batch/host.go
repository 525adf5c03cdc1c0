package batch

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/memory"
	"github.com/nightshift-dev/nightshift/orchestrate"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/sandbox"
	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

// ErrAlreadyRan is what the worker is told when a resumed task's model
// proposes a command that an earlier process started without recording its
// result (at any time), or recorded as run before the replay of the task's
// history is over: it is not run again.
var ErrAlreadyRan = errors.New("this command was started before the resume and its outcome was not recorded, or it was recorded as run; it was not run again: check the host's state with a different command")

// Event names recorded with RecordEvent.
const (
	eventReply       = "model_reply"      // the model's reply message (JSON), after its model call
	eventRejected    = "context_rejected" // the server rejected a prompt for its length
	eventUnreachable = "host_unreachable" // the host stopped answering
)

// hostRun works on one host's rules, one at a time. Its fields are used
// only by the host's goroutine: the worker calls the model, the target, the
// check and the observers from the goroutine running Fix.
type hostRun struct {
	r    *Runner
	run  journal.RunID
	host inventory.Host
	stop chan struct{}
	// continued counts the run's tasks continued from a recorded state.
	continued *atomic.Int64

	raw  nightshift.Target
	exec nightshift.Runner // runs remediation commands: raw, or the sandbox over it
	jctx context.Context   // the run's context without its cancellation: records survive a hard stop
	// hctx is the run's context: steps on the host (commands, checks) run
	// under it, so the first stop lets them finish. The worker itself runs
	// under a context that the stop also ends, so that every wait — a
	// model call, its retry backoff, the model-call limiter, a redial —
	// ends at once.
	hctx context.Context
	// down ends the worker's context when the host stays unreachable past
	// its redial deadline: the task ends at once (the host is marked
	// unreachable) instead of spending its attempts on a host that is not
	// there.
	down context.CancelFunc

	task    journal.TaskID
	rule    string            // the rule of task, until it is finished
	attempt int               // the attempt the next step belongs to
	call    *nightshift.Event // the last EventModelCall
	script  *script           // what a resumed task replays; nil for a fresh one
	hostErr error             // a transport error of the host in this task
	jerr    error             // the first journal error: nothing more runs
}

func (h *hostRun) journal() *journal.Journal { return h.r.cfg.Journal }

// record runs a journal write unless one failed before.
func (h *hostRun) record(f func(ctx context.Context) error) {
	if h.jerr != nil {
		return
	}
	if err := f(h.jctx); err != nil {
		h.jerr = err
	}
}

func (h *hostRun) stopped(ctx context.Context) bool {
	select {
	case <-h.stop:
		return true
	case <-ctx.Done():
		return true
	default:
		return false
	}
}

// work runs todo on the host. It reports whether the host was marked
// unreachable; an error is fatal to the run (journal, configuration, model
// server down).
func (h *hostRun) work(ctx context.Context, todo []rules.Rule) (bool, error) {
	if len(todo) == 0 || h.stopped(ctx) {
		return false, nil
	}
	h.jctx, h.hctx = context.WithoutCancel(ctx), ctx
	t, err := h.r.cfg.Connector.Connect(ctx, h.host)
	if err != nil {
		if ctx.Err() != nil {
			return false, nil
		}
		return true, orchestrate.Unreachable(h.jctx, h, todo, fmt.Sprintf("connect: %v", err))
	}
	defer t.Close()
	h.raw, h.exec = t, t
	cfg := h.r.cfg.Worker
	if sb := h.r.cfg.Sandbox; sb != nil {
		setup, err := sb(ctx, h.host, t)
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return false, nil
		case errors.Is(err, sandbox.ErrUnavailable):
			return false, orchestrate.End(h.jctx, h, todo, nightshift.RuleFailed, err.Error())
		default: // the host did not answer the probe
			return true, orchestrate.Unreachable(h.jctx, h, todo, fmt.Sprintf("connect: %v", err))
		}
		h.exec, cfg.Sandboxed, cfg.Fallback = setup.Runner, setup.Sandboxed, setup.Fallback
		cfg.Checks = t
	}
	if cfg.Recipes.Store != nil {
		cfg.Recipes.Host, cfg.Recipes.Run = h.host.Name, strconv.FormatInt(int64(h.run), 10)
	}
	cfg.Chat = hostModel{h}
	cfg.Target = hostTarget{h}
	cfg.Probe = t // read-only, not a step; EventProbe reports it
	next := cfg.Observer
	if h.r.cfg.HostObserver != nil {
		if o := h.r.cfg.HostObserver(h.host.Name); o != nil {
			next = nightshift.Observers{next, o}
		}
	}
	cfg.Observer = eventSink{h, next}
	cfg.MemoryObserver = memSink{h, cfg.MemoryObserver}
	cfg.Stop = h.stop
	w, err := worker.New(cfg)
	if err != nil {
		return false, fmt.Errorf("batch: host %s: %w", h.host.Name, err)
	}
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	h.down = wcancel
	go func() {
		select {
		case <-h.stop:
			wcancel()
		case <-wctx.Done():
		}
	}()
	end, err := orchestrate.Work(ctx, wctx, h, w, todo)
	switch {
	case err != nil:
		return end.Unreachable != "", fmt.Errorf("batch: host %s: %w", h.host.Name, err)
	case end.ModelDown != nil:
		return false, end.ModelDown
	}
	return end.Unreachable != "", nil
}

// Begin starts rule's task (orchestrate.Engine), loading what it replays if it
// was begun before.
func (h *hostRun) Begin(ctx context.Context, rule rules.Rule) (bool, error) {
	id, err := h.journal().StartTask(ctx, h.run, rule.ID, h.host.Name)
	if errors.Is(err, journal.ErrTaskFinished) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("batch: %w", err)
	}
	if err := h.begin(ctx, id); err != nil {
		return false, err
	}
	h.rule = rule.ID
	if p := h.r.cfg.Progress; p != nil {
		p.RuleStarted(h.host.Name, rule.ID)
	}
	return false, nil
}

// Check evaluates c through the journal (orchestrate.Engine).
func (h *hostRun) Check(c rules.Check) rules.Check { return recCheck{Check: c, h: h} }

// Finish records the task's outcome (orchestrate.Engine).
func (h *hostRun) Finish(_ context.Context, rule rules.Rule, out nightshift.Outcome) error {
	id := h.task
	if h.rule != rule.ID {
		var err error
		id, err = h.journal().StartTask(h.jctx, h.run, rule.ID, h.host.Name)
		if errors.Is(err, journal.ErrTaskFinished) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("batch: %w", err)
		}
	}
	h.rule = ""
	o := journal.Outcome{Status: out.Status, Reason: out.Reason, Attempts: out.Attempts, Detail: out}
	if err := h.journal().FinishTask(h.jctx, id, o); err != nil {
		return fmt.Errorf("batch: %s on %s: %w", rule.ID, h.host.Name, err)
	}
	if p := h.r.cfg.Progress; p != nil {
		p.RuleEnded(h.host.Name, rule.ID, out.Status)
	}
	return nil
}

// HostDown records that the host stopped answering (orchestrate.Engine).
func (h *hostRun) HostDown(_ context.Context, reason string) error {
	if err := h.journal().RecordEvent(h.jctx, h.run, 0, 0, eventUnreachable, map[string]string{"host": h.host.Name, "reason": reason}); err != nil {
		return fmt.Errorf("batch: %w", err)
	}
	if p := h.r.cfg.Progress; p != nil {
		p.HostDown(h.host.Name, errors.New(reason))
	}
	return nil
}

// HostErr is the host's transport error in the current task (orchestrate.Engine).
func (h *hostRun) HostErr() error { return h.hostErr }

// Err is the first journal error (orchestrate.Engine).
func (h *hostRun) Err() error {
	if h.jerr != nil {
		return fmt.Errorf("journal: %w", h.jerr)
	}
	return nil
}

// Stopped reports a stop or the run's context ending (orchestrate.Engine).
func (h *hostRun) Stopped() bool { return h.stopped(h.hctx) }

// begin makes id the current task, loading what it replays if resumed.
func (h *hostRun) begin(ctx context.Context, id journal.TaskID) error {
	h.task, h.attempt, h.call, h.script, h.hostErr = id, 0, nil, nil, nil
	steps, err := h.journal().Steps(ctx, id)
	if err != nil {
		return fmt.Errorf("batch: task %d: %w", id, err)
	}
	if len(steps) > 0 {
		s, err := newScript(steps)
		if err != nil {
			return fmt.Errorf("batch: task %d: %w", id, err)
		}
		h.script = s
		h.continued.Add(1)
	}
	return nil
}

// connector is a Target that can (re)establish its connection before a
// command: sshexec's client.
type connector interface {
	Connect(ctx context.Context) error
}

// connect (re)connects the host's target when it can, under ctx (the
// worker's, which a stop ends): the redial waits happen here, not inside
// a step that the first stop lets finish.
func (h *hostRun) connect(ctx context.Context) error {
	if c, ok := h.raw.(connector); ok {
		return c.Connect(ctx)
	}
	return nil
}

// noteErr remembers a transport error of the host.
func (h *hostRun) noteErr(ctx context.Context, err error) {
	if err != nil && ctx.Err() == nil {
		h.hostErr = err
	}
}

// hostModel is the worker's model: replayed replies first, then the global
// limiter, each call and reply recorded before the worker goes on.
type hostModel struct{ h *hostRun }

func (m hostModel) CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	h := m.h
	if h.jerr != nil {
		return openai.ChatCompletionResponse{}, h.jerr
	}
	if msg, ok := h.script.reply(); ok {
		return openai.ChatCompletionResponse{Model: req.Model, Choices: []openai.ChatCompletionChoice{{Message: msg}}}, nil
	}
	start := time.Now()
	resp, err := h.r.limit.CreateChatCompletion(ctx, req)
	if err == nil {
		// An answer without choices is a server fault the worker retries,
		// not a reply to record (a resume would replay it as one).
		err = worker.CheckReply(resp)
	}
	mc := journal.ModelCall{Attempt: h.attempt, Duration: time.Since(start), Error: errString(err)}
	if h.call != nil && h.call.Assessment != nil {
		mc.Assessment, mc.MaxTokens = *h.call.Assessment, h.call.MaxTokens
	}
	if err == nil {
		mc.UsagePrompt = resp.Usage.PromptTokens
		if d := resp.Usage.PromptTokensDetails; d != nil {
			mc.CachedTokens = d.CachedTokens
		}
	}
	h.record(func(ctx context.Context) error { return h.journal().RecordModelCall(ctx, h.task, mc) })
	if err == nil {
		msg := resp.Choices[0].Message // CheckReply: there is one
		h.record(func(ctx context.Context) error {
			return h.journal().RecordEvent(ctx, h.run, h.task, h.attempt, eventReply, msg)
		})
	}
	if h.jerr != nil {
		return openai.ChatCompletionResponse{}, h.jerr
	}
	return resp, err
}

// hostTarget is the worker's target for remediation commands (the probe
// has its own runner, the checks recCheck): a command is replayed if
// recorded, else begun in the journal, run, and its result recorded before
// the worker goes on.
type hostTarget struct{ h *hostRun }

func (t hostTarget) Run(ctx context.Context, command string) (nightshift.Exec, error) {
	h := t.h
	if h.jerr != nil {
		return nightshift.Exec{ExitCode: -1}, h.jerr
	}
	if c, ok := h.script.command(command); ok {
		switch {
		case c.State != journal.CommandFinished:
			// Not an error: the worker then re-runs the check, which tells
			// the model (and the report) whether the command took effect.
			return nightshift.Exec{ExitCode: -1, Stderr: orchestrate.OutcomeUnknownStderr}, nil
		case c.Result.Error != "":
			return c.Result.Exec, errors.New(c.Result.Error)
		}
		return c.Result.Exec, nil
	}
	if h.script.recorded(command) {
		h.record(func(ctx context.Context) error {
			return h.journal().RecordSkippedCommand(ctx, h.task, h.attempt, command, nightshift.ActionRefused, ErrAlreadyRan.Error())
		})
		return nightshift.Exec{ExitCode: -1}, ErrAlreadyRan
	}
	// A connection that broke is redialled now, under the worker's
	// context, which a stop ends: the command has not begun and is not
	// recorded, so a resume runs it. A host that does not come back
	// within its redial deadline fails the command as before.
	cerr := h.connect(ctx)
	if cerr != nil && h.stopped(h.hctx) {
		return nightshift.Exec{ExitCode: -1}, cerr
	}
	if cerr != nil {
		defer h.down() // recorded below, then the task ends
	}
	var p journal.PendingCommand
	h.record(func(ctx context.Context) (err error) {
		p, err = h.journal().BeginCommand(ctx, h.task, h.attempt, command)
		return err
	})
	if h.jerr != nil {
		return nightshift.Exec{ExitCode: -1}, h.jerr
	}
	ex, err := nightshift.Exec{ExitCode: -1}, cerr
	if cerr == nil {
		// The command runs under the run's context: the first stop
		// lets it finish, only the second cancels it.
		ex, err = h.exec.Run(h.hctx, command)
	}
	h.noteErr(h.hctx, err)
	res := journal.CommandResult{Action: nightshift.ActionOf(ex, err), Exec: ex, Error: errString(err)}
	h.record(func(ctx context.Context) error { return h.journal().FinishCommand(ctx, p, res) })
	return ex, err
}

// recCheck evaluates the rule's check on the raw target (its commands are
// not remediation steps), replaying recorded results first and recording
// each new one.
type recCheck struct {
	rules.Check
	h *hostRun
}

func (c recCheck) Evaluate(ctx context.Context, _ nightshift.Runner) (rules.CheckResult, error) {
	h := c.h
	if h.jerr != nil {
		return rules.CheckResult{}, h.jerr
	}
	if ck, ok := h.script.check(); ok {
		return rules.CheckResult{Status: ck.Status, ExitCode: ck.ExitCode, Output: ck.Output, Detail: ck.Detail}, nil
	}
	if err := h.connect(ctx); err != nil {
		if !h.stopped(h.hctx) {
			h.noteErr(h.hctx, err)
		}
		return rules.CheckResult{Status: nightshift.CheckError, ExitCode: -1, Detail: err.Error()}, err
	}
	start := time.Now()
	res, err := c.Check.Evaluate(h.hctx, h.raw)
	if err != nil {
		h.noteErr(h.hctx, err)
		return res, err
	}
	ck := journal.CheckRecord{Attempt: h.attempt, Status: res.Status, ExitCode: res.ExitCode, Output: res.Output,
		Detail: res.Detail, Duration: time.Since(start)}
	h.record(func(ctx context.Context) error { return h.journal().RecordCheck(ctx, h.task, ck) })
	if h.jerr != nil {
		return rules.CheckResult{}, h.jerr
	}
	return res, nil
}

// eventSink records the steps only the worker's events carry: commands
// that did not run, attempt ends, context rejections.
type eventSink struct {
	h    *hostRun
	next nightshift.Observer
}

func (s eventSink) Observe(e nightshift.Event) {
	h := s.h
	switch e.Kind {
	case nightshift.EventModelCall:
		ev := e
		h.call, h.attempt = &ev, e.Attempt
	case nightshift.EventProbe:
		// The probe runs on the raw target, outside the journal; a
		// transport error of it is the host's.
		if e.Error != "" {
			h.hostErr = errors.New(e.Error)
		}
	case nightshift.EventCommand:
		switch e.Action {
		case nightshift.ActionBlocked, nightshift.ActionRefused, nightshift.ActionMalformed, nightshift.ActionGiveUp:
			if h.script.skip() {
				break
			}
			h.record(func(ctx context.Context) error {
				return h.journal().RecordSkippedCommand(ctx, h.task, e.Attempt, e.Command, e.Action, e.Detail)
			})
		case nightshift.ActionRan, nightshift.ActionTimedOut, nightshift.ActionUnknown:
			// hostTarget recorded the command with its result.
		case nightshift.ActionNone:
		default:
		}
	case nightshift.EventAttempt:
		if !h.script.attemptEnd() {
			a := journal.AttemptEnd{Attempt: e.Attempt, Check: e.Check, GaveUp: e.Action == nightshift.ActionGiveUp,
				PromptTokens: e.PromptTokens, Limit: e.Limit}
			h.record(func(ctx context.Context) error { return h.journal().EndAttempt(ctx, h.task, a) })
		}
		h.attempt = e.Attempt + 1
	case nightshift.EventRejected:
		payload := map[string]any{"server_tokens": e.ServerTokens, "local_tokens": e.LocalTokens, "message": e.Error}
		h.record(func(ctx context.Context) error {
			return h.journal().RecordEvent(ctx, h.run, h.task, e.Attempt, eventRejected, payload)
		})
	default:
		// other events are recorded by the model, target and memory wrappers, or not at all
	}
	if s.next != nil {
		s.next.Observe(e)
	}
}

// memSink records distillations with the messages they replaced.
type memSink struct {
	h    *hostRun
	next memory.Observer
}

func (s memSink) Observe(e memory.Event) {
	h := s.h
	if e.Kind == memory.EventDistill && !h.script.distill() {
		d := journal.Distillation{Attempt: max(h.attempt, 1), Turn: e.Turn, FromTurn: e.FromTurn, ToTurn: e.ToTurn,
			TokensBefore: e.TokensBefore, TokensAfter: e.TokensAfter, Messages: e.Before, Lines: e.Lines}
		h.record(func(ctx context.Context) error { return h.journal().RecordDistillation(ctx, h.task, d) })
	}
	if s.next != nil {
		s.next.Observe(e)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
