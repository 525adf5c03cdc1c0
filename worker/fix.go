package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/internal/textcut"
	"github.com/nightshift-dev/nightshift/memory"
	"github.com/nightshift-dev/nightshift/retry"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/safety"
	"github.com/nightshift-dev/nightshift/sandbox"
	"github.com/nightshift-dev/nightshift/served"
)

// maxContextRetries bounds how often one attempt's model call is retried
// after a context-length rejection.
const maxContextRetries = 3

// Fix works on one rule until its check passes, the model gives up or the
// attempts run out. The returned Outcome is valid even with a non-nil error
// (it then says how far the rule got): an *UnreachableError when the model
// server or the host stayed unreachable, a *memory.OverflowError when no
// prompt fits, ctx.Err() when interrupted.
func (w *Worker) Fix(ctx context.Context, r rules.Rule) (nightshift.Outcome, error) {
	t, err := w.fix(ctx, r)
	return t.Outcome, err
}

func (w *Worker) fix(ctx context.Context, r rules.Rule) (out tally, err error) {
	start := time.Now()
	out = tally{Outcome: nightshift.Outcome{Rule: r.ID, Fallback: w.cfg.Fallback}}
	if w.cfg.Sandboxed {
		// Every rule is judged default-deny: a rule without paths may
		// change nothing outside scratch but through the package manager
		// (safety's doc, "Rule scope").
		ctx = sandbox.WithRuleScope(ctx, sandbox.Scope{Paths: r.Paths, Strict: true, Units: r.Units, Sysctl: r.Sysctl, Keys: r.Keys, Rule: r.ID, Note: r.ScopeNote})
	}
	var facts *nightshift.HostFacts
	defer func() {
		out.Duration = time.Since(start)
		if err != nil && out.Status == nightshift.RuleNone {
			out.Status = nightshift.RuleFailed
			out.Reason = err.Error()
		}
		var ue *UnreachableError
		if errors.As(err, &ue) {
			out.Status = nightshift.RuleUnreachable
		}
		if ctx.Err() != nil && err != nil {
			out.Status = nightshift.RuleInterrupted
		}
		end := nightshift.Event{Kind: nightshift.EventRuleEnd, Rule: r.ID, Outcome: &out.Outcome, Error: errString(err)}
		if facts != nil {
			f := *facts
			end.Facts = &f
		}
		w.emit(end)
	}()
	w.emit(nightshift.Event{Kind: nightshift.EventRuleStart, Rule: r.ID})

	res, err := w.check(ctx, r)
	if err != nil {
		return out, fmt.Errorf("rule %s: check: %w", r.ID, err)
	}
	w.emit(nightshift.Event{Kind: nightshift.EventCheck, Rule: r.ID, Check: res.Status})
	switch res.Status {
	case nightshift.CheckPass:
		out.Status = nightshift.RuleCompliant
		return out, nil
	case nightshift.CheckNotApplicable:
		out.Status, out.Reason = nightshift.RuleNotApplicable, res.Detail
		return out, nil
	case nightshift.CheckError:
		out.Status, out.Reason = nightshift.RuleCheckError, res.Detail
		return out, nil
	case nightshift.CheckFail, nightshift.CheckNotRun:
		// Not compliant: work on it. (A check never returns CheckNotRun.)
	default:
		return out, fmt.Errorf("rule %s: check: unexpected status %s", r.ID, res.Status)
	}

	facts, err = w.probe(ctx, r.ID)
	if err != nil {
		return out, fmt.Errorf("rule %s: %w", r.ID, err)
	}
	bans := w.cfg.Bans
	if len(r.Banned) > 0 {
		if bans, err = bans.With(r.Banned...); err != nil {
			return out, fmt.Errorf("rule %s: %w", r.ID, err)
		}
	}
	system, taskMsg, err := w.instruction(r, bans, facts, w.lessons(ctx, r.ID, facts), w.cfg.Model.Budget().PromptLimit()*w.cfg.InstructionPercent/100)
	if err != nil {
		return out, err
	}
	mem, err := memory.New(w.memoryConfig(r.ID, memLogger{w.log(), r.ID, w.cfg.MemoryObserver}), system, taskMsg)
	if err != nil {
		return out, fmt.Errorf("rule %s: %w", r.ID, err)
	}

	maxAttempts := cmp.Or(r.MaxAttempts, w.cfg.MaxAttempts, DefaultMaxAttempts)
	if w.cfg.MaxAttempts > 0 {
		maxAttempts = min(maxAttempts, w.cfg.MaxAttempts) // the caller's cap wins
	}
	key := recipeKey(r.ID, facts)
	if fixed, err := w.replay(ctx, r, bans, mem, key, &out); err != nil || fixed {
		return out, err
	}
	maxTokens := w.cfg.Model.Budget().Reserve()
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if w.stopped() {
			out.Status, out.Reason = nightshift.RuleInterrupted, "stopped by signal"
			return out, nil
		}
		out.Attempts = attempt
		msg, prompt, usage, err := w.ask(ctx, r.ID, attempt, mem, &maxTokens, &out)
		if err != nil {
			return out, err
		}
		out.turn, out.turnCheck = nil, ""
		status, gaveUp, err := w.act(ctx, r, bans, attempt, mem, msg, &out)
		end := nightshift.Event{Kind: nightshift.EventAttempt, Rule: r.ID, Attempt: attempt, Check: status, PromptTokens: prompt, Limit: w.cfg.Model.Budget().PromptLimit(),
			UsagePrompt: usage.PromptTokens, CachedTokens: cachedTokens(usage)}
		if gaveUp {
			end.Action = nightshift.ActionGiveUp
		}
		w.emit(end)
		if err != nil {
			return out, err
		}
		switch {
		case gaveUp:
			out.Status = nightshift.RuleGaveUp
			out.needsAccess()
			return out, nil
		case status == nightshift.CheckPass:
			out.Status = nightshift.RuleFixed
			if !r.NoRecipes {
				w.prove(ctx, r, key, &out, false)
			}
			return out, nil
		}
	}
	out.Status = nightshift.RuleNotFixed
	out.Reason = fmt.Sprintf("not fixed after %d attempts", maxAttempts)
	out.needsAccess()
	return out, nil
}

// memoryConfig is the memory configuration of one rule.
func (w *Worker) memoryConfig(rule string, obs memory.Observer) memory.Config {
	return memory.Config{
		Model: w.cfg.Model, Tools: Tools(),
		KeepTurns: w.cfg.KeepTurns, LowWaterPercent: w.cfg.LowWaterPercent, OutputTokens: w.cfg.OutputTokens, Distiller: w.ruleDistiller(rule), Observer: obs,
	}
}

// ask prepares the prompt and calls the model, handling context-length
// rejections without spending an attempt.
func (w *Worker) ask(ctx context.Context, rule string, attempt int, mem *memory.Memory, maxTokens *int, out *tally) (msg openai.ChatCompletionMessage, prompt int, usage openai.Usage, err error) {
	policy := retry.Policy{
		BaseDelay: 500 * time.Millisecond, MaxDelay: 30 * time.Second, Deadline: w.cfg.RetryDeadline, Jitter: retry.EqualJitter, Sleep: w.cfg.sleep,
		OnRetry: func(r retry.Retry) {
			out.Retries++
			w.log().Info("model call failed; retrying", "rule", rule, "attempt", attempt, "try", r.Try, "delay", r.Wait, "err", r.Err)
			w.emit(nightshift.Event{Kind: nightshift.EventRetry, Rule: rule, Attempt: attempt, Error: r.Err.Error(), Try: r.Try, RetryIn: r.Wait, GiveUpAt: r.GiveUpAt})
		},
	}
	if w.cfg.RetryDeadline == 0 {
		policy.MaxTries = 1 // no retries
	}
	for tries := 0; ; tries++ {
		p, err := mem.Prompt(ctx)
		if err != nil {
			return openai.ChatCompletionMessage{}, 0, usage, fmt.Errorf("rule %s attempt %d: %w", rule, attempt, err)
		}
		a := p.Assessment
		if a.Prompt > out.MaxPromptTokens {
			out.MaxPromptTokens = a.Prompt
		}
		mt := min(*maxTokens, w.cfg.Model.Budget().ContextWindow()-a.Prompt)
		w.log().Info("model call", "rule", rule, "attempt", attempt, "system", a.System, "history", a.History,
			"current", a.Current, "reserve", a.Reserve, "total", a.Total, "limit", a.Limit, "messages", a.Messages, "max_tokens", mt)
		w.emit(nightshift.Event{Kind: nightshift.EventModelCall, Rule: rule, Attempt: attempt, Assessment: &a, MaxTokens: mt})
		out.ModelCalls++
		resp, err := complete(ctx, w.cfg.Chat, openai.ChatCompletionRequest{
			Model: w.cfg.Model.Name(), Messages: p.Messages, Tools: p.Tools,
			//lint:ignore SA1019 vLLM has read max_tokens in every release; max_completion_tokens came later.
			MaxTokens:   mt,
			Temperature: 0.2,
		}, w.cfg.RequestTimeout, policy)
		var cl *served.ContextLengthError
		if errors.As(err, &cl) {
			out.ContextRejections++
			w.log().Error("model server rejected the prompt for its length; our count disagrees with the server's",
				"rule", rule, "attempt", attempt, "kind", cl.Kind.String(), "server_prompt_tokens", cl.PromptTokens,
				"local_prompt_tokens", a.Prompt, "max_tokens", mt, "max_model_len", cl.MaxModelLen, "message", cl.Message)
			w.emit(nightshift.Event{Kind: nightshift.EventRejected, Rule: rule, Attempt: attempt, ServerTokens: cl.PromptTokens, LocalTokens: a.Prompt, Error: cl.Message})
			if tries >= maxContextRetries {
				return openai.ChatCompletionMessage{}, a.Prompt, usage, fmt.Errorf("rule %s attempt %d: %w", rule, attempt, cl)
			}
			if cl.Kind == served.ContextOutput {
				prompt := max(cl.PromptTokens, a.Prompt) // the server may not say
				if cl.MaxModelLen > prompt+16 {
					*maxTokens = cl.MaxModelLen - prompt - 16
					continue
				}
			}
			// The prompt must shrink: below what the server says fits, less
			// any amount by which its count exceeds ours, with some room.
			target := a.Prompt - 256
			if cl.MaxModelLen > 0 {
				target = min(target, cl.MaxModelLen-mt-64-max(0, cl.PromptTokens-a.Prompt))
			}
			mem.LimitPrompt(target)
			continue
		}
		if err != nil {
			return openai.ChatCompletionMessage{}, a.Prompt, usage, fmt.Errorf("rule %s attempt %d: %w", rule, attempt, err)
		}
		usage = resp.Usage
		out.PromptTokens += usage.PromptTokens
		out.CachedTokens += cachedTokens(usage)
		w.emit(nightshift.Event{Kind: nightshift.EventModelUsage, Rule: rule, Attempt: attempt, UsagePrompt: usage.PromptTokens, CachedTokens: cachedTokens(usage)})
		msg = resp.Choices[0].Message // complete returns no reply without choices
		msg.Role = openai.ChatMessageRoleAssistant
		return msg, a.Prompt, usage, nil
	}
}

// cachedTokens returns usage.prompt_tokens_details.cached_tokens, 0 when
// absent.
func cachedTokens(u openai.Usage) int {
	if u.PromptTokensDetails == nil {
		return 0
	}
	return u.PromptTokensDetails.CachedTokens
}

// act records the model's message, carries out its tool calls and runs the
// check. It returns the re-check's status (CheckNotRun when nothing ran or
// the model gave up) and whether the model gave up.
func (w *Worker) act(ctx context.Context, r rules.Rule, bans *safety.BanList, attempt int, mem *memory.Memory,
	msg openai.ChatCompletionMessage, out *tally) (nightshift.CheckStatus, bool, error) {
	mem.AddAssistant(msg)
	calls := parseCalls(msg)
	if len(calls) == 0 {
		text := fmt.Sprintf("Malformed reply: %v. Reply with exactly one ssh_apply or give_up tool call.", ErrNoToolCall)
		w.emit(nightshift.Event{Kind: nightshift.EventCommand, Rule: r.ID, Attempt: attempt, Recipe: out.replaying, Action: nightshift.ActionMalformed, Detail: ErrNoToolCall.Error()})
		if err := mem.AddFeedback(memory.FeedbackMalformed, text); err != nil {
			return nightshift.CheckNotRun, false, err
		}
		return nightshift.CheckNotRun, false, mem.AddFeedback(memory.FeedbackCheck, fmt.Sprintf("Nothing ran in %s; the rule still fails.\n%s", attemptName(attempt), nextAttempt(attempt)))
	}
	ran, gaveUp := false, false
	for _, c := range calls {
		switch {
		case c.err != nil:
			w.emit(nightshift.Event{Kind: nightshift.EventCommand, Rule: r.ID, Attempt: attempt, Recipe: out.replaying, Action: nightshift.ActionMalformed, Detail: c.err.Error()})
			if err := mem.AddToolResult(c.id, memory.Step{Tool: c.name, Action: nightshift.ActionMalformed, Note: c.err.Error(),
				Before: "error: malformed call: " + c.err.Error()}); err != nil {
				return nightshift.CheckNotRun, false, err
			}
			if err := mem.AddFeedback(memory.FeedbackMalformed, "Malformed tool call: "+c.err.Error()+". Nothing was run."); err != nil {
				return nightshift.CheckNotRun, false, err
			}
		case c.name == nightshift.ToolGiveUp:
			gaveUp = true
			out.Reason = c.reason
			w.emit(nightshift.Event{Kind: nightshift.EventCommand, Rule: r.ID, Attempt: attempt, Recipe: out.replaying, Action: nightshift.ActionGiveUp, Detail: c.reason})
			if err := mem.AddToolResult(c.id, memory.Step{Tool: c.name, Action: nightshift.ActionGiveUp, Reason: c.reason,
				Before: "Understood: the worker stops working on this rule."}); err != nil {
				return nightshift.CheckNotRun, false, err
			}
			if err := mem.SetGaveUp(); err != nil {
				return nightshift.CheckNotRun, false, err
			}
		default:
			did, err := w.apply(ctx, r.ID, bans, attempt, mem, c, out)
			if err != nil {
				return nightshift.CheckNotRun, gaveUp, err
			}
			ran = ran || did
		}
	}
	if gaveUp {
		return nightshift.CheckNotRun, true, nil
	}
	if !ran {
		return nightshift.CheckNotRun, false, mem.AddFeedback(memory.FeedbackCheck,
			fmt.Sprintf("No command ran in %s, so the check was not re-run: the rule still fails.\n%s", attemptName(attempt), nextAttempt(attempt)))
	}
	res, err := w.check(ctx, r)
	if err != nil {
		return nightshift.CheckNotRun, false, fmt.Errorf("rule %s attempt %d: check: %w", r.ID, attempt, err)
	}
	status := res.Status
	out.turnCheck = checkLine(status, res.ExitCode, res.Detail)
	w.emit(nightshift.Event{Kind: nightshift.EventCheck, Rule: r.ID, Attempt: attempt, Recipe: out.replaying, Check: status})
	var text string
	switch status {
	case nightshift.CheckPass:
		text = fmt.Sprintf("Re-check after %s: PASS. The rule is compliant.", attemptName(attempt))
	case nightshift.CheckFail:
		text = fmt.Sprintf("Re-check after %s: FAIL (exit %d). The host is still not compliant.", attemptName(attempt), res.ExitCode)
	case nightshift.CheckError, nightshift.CheckNotApplicable, nightshift.CheckNotRun:
		text = fmt.Sprintf("Re-check after %s: %s: %s", attemptName(attempt), status, res.Detail)
	default:
		return status, false, fmt.Errorf("rule %s attempt %d: check: unexpected status %s", r.ID, attempt, status)
	}
	if res.Output != "" && status != nightshift.CheckPass {
		text += "\nCheck output:\n" + textcut.Head(res.Output, 2000)
	}
	if status != nightshift.CheckPass {
		text += "\n" + nextAttempt(attempt)
	}
	if err := mem.SetCheckResult(status, res.Output); err != nil {
		return nightshift.CheckNotRun, false, err
	}
	if err := mem.AddFeedback(memory.FeedbackCheck, text); err != nil {
		return status, false, err
	}
	return status, false, nil
}

// apply runs one ssh_apply call unless the ban list or the repeat rule stops
// it. It reports whether the command ran.
func (w *Worker) apply(ctx context.Context, rule string, bans *safety.BanList, attempt int, mem *memory.Memory, c call, out *tally) (bool, error) {
	ban, hit := bans.Match(c.command)
	// The ban's reason and pattern may quote the command: they are logged
	// and shown, so masked like its text.
	ban.Reason, ban.Pattern = nightshift.RedactText(ban.Reason), nightshift.RedactText(ban.Pattern)
	if hit && w.cfg.Sandboxed && !certain(ban) {
		// The text cannot be analysed: the sandbox judges what it does.
		w.log().Info("static check cannot analyse the command; the sandbox judges its effects", "rule", rule, "attempt", attempt, "why", ban.Reason)
		hit = false
	}
	if hit {
		out.Blocked++
		note := fmt.Sprintf("blocked by the ban list (%s)", ban.Reason)
		w.emit(nightshift.Event{Kind: nightshift.EventCommand, Rule: rule, Attempt: attempt, Recipe: out.replaying, Command: c.command, Action: nightshift.ActionBlocked, Detail: ban.Pattern})
		w.log().Warn("command blocked", "rule", rule, "attempt", attempt, "pattern", ban.Pattern)
		if err := mem.AddToolResult(c.id, memory.Step{Tool: c.name, Command: c.command, Action: nightshift.ActionBlocked, Note: ban.Pattern,
			Before: "BLOCKED: the command was not run: " + note + "."}); err != nil {
			return false, err
		}
		return false, mem.AddFeedback(memory.FeedbackBlocked,
			fmt.Sprintf("Command blocked before it ran: %s. Banned commands are never run; use a safer command.", note))
	}
	if m := nightshift.MaskIn(c.command); m != "" {
		// The model copied a mask from what it was shown (or a resumed
		// journal's reply holds one): run, it would write the mask itself
		// where a hash or a key belongs.
		note := "it holds " + m + ", the mask of a secret in the output you were shown; the real value is not known here"
		w.emit(nightshift.Event{Kind: nightshift.EventCommand, Rule: rule, Attempt: attempt, Recipe: out.replaying, Command: c.command, Action: nightshift.ActionRefused, Detail: "holds a masked secret"})
		if err := mem.AddToolResult(c.id, memory.Step{Tool: c.name, Command: c.command, Action: nightshift.ActionRefused, Note: "holds a masked secret",
			Before: "REFUSED: the command was not run: " + note + "."}); err != nil {
			return false, err
		}
		return false, mem.AddFeedback(memory.FeedbackBlocked,
			"Command refused before it ran: "+note+". Write a command that does not need the secret's value.")
	}
	if e, ok := mem.Ledger().Lookup(c.command); ok && e.Failed > 0 && !e.Fixed {
		if w.cfg.RefuseRepeats > 0 && e.Tries >= w.cfg.RefuseRepeats {
			w.emit(nightshift.Event{Kind: nightshift.EventCommand, Rule: rule, Attempt: attempt, Recipe: out.replaying, Command: c.command, Action: nightshift.ActionRefused,
				Detail: fmt.Sprintf("failed %d times before", e.Failed)})
			if err := mem.AddToolResult(c.id, memory.Step{Tool: c.name, Command: c.command, Action: nightshift.ActionRefused, Note: "repeat of a failed command",
				Before: fmt.Sprintf("REFUSED: this exact command was already tried %d times and failed; it was not run again.", e.Tries)}); err != nil {
				return false, err
			}
			return false, mem.AddFeedback(memory.FeedbackRepeat,
				fmt.Sprintf("Refused an exact repeat of a command that failed %d times (first in turn %d). Change the approach.", e.Failed, e.FirstTurn))
		}
		if err := mem.AddFeedback(memory.FeedbackRepeat,
			fmt.Sprintf("Warning: this exact command was tried %d times before (first in turn %d) and did not fix the rule.", e.Tries, e.FirstTurn)); err != nil {
			return false, err
		}
	}
	out.Commands++
	ex, err := w.cfg.Target.Run(ctx, c.command)
	if err != nil && ctx.Err() != nil {
		return false, ctx.Err()
	}
	// From here on the result is shown (to the model, the observers): its
	// output's secrets masked. The command's text stays as the model
	// wrote it in the model's own history; emit masks it for the rest.
	ex = ex.Redacted()
	var code *int
	if err == nil && !ex.TimedOut {
		code = &ex.ExitCode
	}
	action := nightshift.ActionOf(ex, err)
	w.emit(nightshift.Event{Kind: nightshift.EventCommand, Rule: rule, Attempt: attempt, Recipe: out.replaying, Command: c.command, Action: action, ExitCode: code,
		Classes: classes(ex, err), Error: errString(err), Evidence: ex.Evidence})
	if ev := ex.Evidence; ev != nil && action == nightshift.ActionBlocked {
		out.Blocked++
		if ev.Lockout && out.lockout == "" {
			out.lockout = strings.Join(ev.Reasons, "; ")
		}
		w.log().Info("command's effects refused", "rule", rule, "attempt", attempt, "verdict", ev.Verdict.String(), "reasons", strings.Join(ev.Reasons, "; "))
		step := stepOf(c, ex, nil)
		step.Note = strings.Join(ev.Reasons, "; ") // the one-line summary carries why
		// The output shown is the sandbox's, within the refusal; a step
		// that did not run on the host has none of its own.
		step.Before, step.Stdout, step.Stderr, step.After = formatRefused(ex), "", "", ""
		if err := mem.AddToolResult(c.id, step); err != nil {
			return false, err
		}
		return false, mem.AddFeedback(memory.FeedbackBlocked,
			"Nothing was applied: "+strings.Join(ev.Reasons, "; ")+". Reach the rule's goal with a change that does not do that.")
	}
	if err := mem.AddToolResult(c.id, stepOf(c, ex, err)); err != nil {
		return false, err
	}
	if err == nil && action == nightshift.ActionRan {
		rc := ranCommand{command: c.command}
		if ex.Evidence != nil {
			rc.changes = ex.Evidence.Effects.Changes
		}
		out.turn = append(out.turn, rc)
	}
	return err == nil, nil
}

// certain reports whether a static ban is certain: the text fully shows
// the harm (safety.Ban.Certain). The rest (the command cannot be analysed,
// or a value it uses is only known when it runs) is for the sandbox to
// judge by its effects.
func certain(b safety.Ban) bool { return b.Certain }

// formatRefused tells the model what a command would have done and why
// none of it was applied.
func formatRefused(ex nightshift.Exec) string {
	ev := ex.Evidence
	var b strings.Builder
	if ev.Verdict == nightshift.VerdictRolledBack {
		fmt.Fprintf(&b, "ROLLED BACK: the command's changes were applied, then undone, because they locked the worker's own login out.\nWhy: %s.\n",
			strings.Join(ev.Reasons, "; "))
	} else {
		fmt.Fprintf(&b, "REFUSED: the command ran in a throwaway sandbox and none of its effects were applied to the host.\nWhy: %s.\n",
			strings.Join(ev.Reasons, "; "))
	}
	if !ev.Effects.Empty() {
		fmt.Fprintf(&b, "In the sandbox it %s.\n", ev.Effects.Summary(600))
	}
	if ex.ExitCode >= 0 {
		b.WriteString("What it printed there:\n")
		b.WriteString(execStatus(ex, nil))
		b.WriteString(memory.Step{Stdout: ex.Stdout, Stderr: ex.Stderr, Action: nightshift.ActionRan}.Shown())
	}
	return b.String()
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func (w *Worker) stopped() bool {
	select {
	case <-w.cfg.Stop:
		return true
	default:
		return false
	}
}

// Plan is what a dry run learns of a rule: the check result and the size of
// the first prompt, with no model call and no command but the check and the
// host probe.
type Plan struct {
	Check        nightshift.CheckStatus
	PromptTokens int
	Limit        int
	// Instruction is the system message followed by the task message.
	Instruction string
}

// Plan checks r and assembles its instruction and first prompt without
// calling the model or running any remediation.
func (w *Worker) Plan(ctx context.Context, r rules.Rule) (Plan, error) {
	res, err := w.check(ctx, r)
	if err != nil {
		return Plan{}, fmt.Errorf("rule %s: check: %w", r.ID, err)
	}
	facts, err := w.probe(ctx, r.ID)
	if err != nil {
		return Plan{}, err
	}
	bans := w.cfg.Bans
	if len(r.Banned) > 0 {
		if bans, err = bans.With(r.Banned...); err != nil {
			return Plan{}, fmt.Errorf("rule %s: %w", r.ID, err)
		}
	}
	system, taskMsg, err := w.instruction(r, bans, facts, w.lessons(ctx, r.ID, facts), w.cfg.Model.Budget().PromptLimit()*w.cfg.InstructionPercent/100)
	if err != nil {
		return Plan{}, err
	}
	mem, err := memory.New(w.memoryConfig(r.ID, nil), system, taskMsg)
	if err != nil {
		return Plan{}, err
	}
	p, err := mem.Prompt(ctx)
	if err != nil {
		return Plan{}, err
	}
	return Plan{Check: res.Status, PromptTokens: p.Assessment.Prompt, Limit: w.cfg.Model.Budget().PromptLimit(), Instruction: system + taskMsg}, nil
}

// nextAttempt is the line that tells the model (and the simulator) which
// attempt its next reply is; distillation removes old assistant messages, so
// counting them would not do.
func nextAttempt(attempt int) string {
	return fmt.Sprintf("Attempt: %d", attempt+1)
}
