package worker_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/safety"
	"github.com/nightshift-dev/nightshift/vllmsim"
	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

// TestStubbornStaysInsideTheWindow is the regression test asked for by name:
// 25, 50 and 100 attempts of the stubborn policy (a rule that never gets
// fixed), whose commands print thousands of tokens so that the memory
// compresses, against a real sshd and the vLLM simulator with a 16,384-token
// window. The simulator counts every prompt, and rejects it as vLLM would,
// with the independent reference (internal/vllmref: Python Jinja2 renders,
// the HF tokenizers count), not with package served, which the worker
// counts with. vLLM never rejects a prompt, the worker's count of every
// prompt equals the reference's, the ban list is in every prompt, and the
// prompt plateaus. Under -race (testenv.Race) it runs the 50 attempts
// alone, the first run that compacts the memory many times and plateaus:
// 25 and 100 take the same path, shorter and longer, at the race
// detector's price for every token counted; `make test` runs all three
// again without -race (the Makefile's FULL).
func TestStubbornStaysInsideTheWindow(t *testing.T) {
	t.Parallel()
	attempts := []int{25, 50, 100}
	if testing.Short() || testenv.Race {
		attempts = []int{50}
	}
	for _, n := range attempts {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			start := time.Now()
			e := newEnv(t, envOptions{reference: true, policy: func(dir string) vllmsim.Policy {
				return vllmsim.Stubborn(vllmsim.StubbornConfig{Seed: uint64(n), DraftDir: filepath.Join(dir, "drafts")})
			}})
			r := e.rule(fmt.Sprintf(`rules:
  - id: aide_build_database
    title: Build and Test AIDE Database
    check: "test -f %s/aide.db"
    banned: ['systemctl (restart|stop) ssh']
    max_attempts: %d
`, e.dir, n), "aide_build_database")
			out, err := e.worker(workerOptions{}).Fix(context.Background(), r)
			require.NoError(t, err, "Fix (outcome %+v)", out)
			require.Equal(t, nightshift.RuleNotFixed, out.Status, "outcome %+v", out)
			require.Equal(t, n, out.Attempts, "outcome %+v", out)
			rej := e.sim.Stats().Rejections()
			if len(rej) != 0 || out.ContextRejections != 0 {
				t.Fatalf("%d context-length rejections by the reference's count, %d in the outcome (first: %s)",
					len(rej), out.ContextRejections, rej[0].Error)
			}
			reqs := e.requests()
			require.Len(t, reqs, n, "model calls for %d attempts", n)
			// Every prompt was counted by the reference, and answered.
			assert.Equal(t, n, e.ref.Prompts(), "prompts counted by the reference")
			completions := e.sim.Stats().Completions()
			require.Len(t, completions, n)
			for i, c := range completions {
				require.Equal(t, http.StatusOK, c.Status, "call %d: %s", i+1, c.Error)
			}
			// The worker's count of every prompt is the reference's,
			// token for token (a count a few tokens off fits the window
			// here, so only this comparison catches it).
			calls := e.eventsOf(nightshift.EventModelCall)
			usages := e.eventsOf(nightshift.EventModelUsage)
			require.Len(t, calls, n)
			require.Len(t, usages, n)
			var off []string
			for i := range calls {
				if local, ref := calls[i].Assessment.Prompt, completions[i].PromptTokens; local != ref {
					off = append(off, fmt.Sprintf("attempt %d: the worker counted %d, the reference %d (%+d)", calls[i].Attempt, local, ref, local-ref))
				}
				require.Equal(t, completions[i].PromptTokens, usages[i].UsagePrompt, "attempt %d: usage.prompt_tokens", usages[i].Attempt)
			}
			if len(off) > 0 {
				t.Errorf("%d of %d prompts counted differently by the worker and the reference; first %s", len(off), n, strings.Join(off[:min(3, len(off))], "; "))
			}
			// The memory compressed: later prompts summarise earlier turns.
			compressed := 0
			for _, req := range reqs {
				for _, m := range req.Messages {
					if groupRE.MatchString(m.Content) {
						compressed++
						break
					}
				}
			}
			require.NotZero(t, compressed, "no prompt summarises a turn: the memory never compressed")
			checked, fewer := assertPromptContents(t, e, "systemctl (restart|stop) ssh", qwen3(t).Tokenizer())
			prompt, cached := e.sim.Stats().PromptTokens()
			var fromEvents int
			for _, u := range usages {
				fromEvents += u.CachedTokens
			}
			if fromEvents != cached || out.CachedTokens != cached || out.PromptTokens != prompt {
				t.Errorf("cached tokens: %d in the server's records, %d in the events, %d in the outcome (prompt %d, %d)",
					cached, fromEvents, out.CachedTokens, prompt, out.PromptTokens)
			}
			t.Logf("%d attempts: %d prompts counted by the reference, %d rejected, %d with summarised turns; %d prompt tokens, %d (%.1f%%) from the prefix cache, %d prefilled; last 3 turns checked in %d prompts, fewer (those that fit) in %d; %s",
				n, e.ref.Prompts(), len(rej), compressed, prompt, cached, 100*float64(cached)/float64(prompt), prompt-cached, checked, fewer, time.Since(start).Round(time.Millisecond))
			// Plateau: the largest prompt of attempts 21..n stays within 25%
			// of the largest of attempts 1..20, and the message count
			// within its bound. (Both move with the memory's degrade steps,
			// so maxima are compared, not single attempts.)
			maxEarly, maxLate, msgsEarly, msgsLate := 0, 0, 0, 0 // messages: logged only
			for _, c := range calls {
				a := c.Assessment
				if a.Total > a.Limit || a.Prompt+1024 > 16384 {
					t.Fatalf("attempt %d: prompt over the window: %s", c.Attempt, a)
				}
				if c.Attempt <= 20 {
					maxEarly, msgsEarly = max(maxEarly, a.Prompt), max(msgsEarly, a.Messages)
				} else {
					maxLate, msgsLate = max(maxLate, a.Prompt), max(msgsLate, a.Messages)
				}
			}
			t.Logf("%d attempts: max prompt %d tokens and %d messages in attempts 1–20, %d tokens and %d messages after; limit %d",
				n, maxEarly, msgsEarly, maxLate, msgsLate, calls[0].Assessment.Limit)
			if float64(maxLate) > 1.25*float64(maxEarly) {
				t.Errorf("the prompt grew from at most %d tokens in attempts 1–20 to %d after", maxEarly, maxLate)
			}
			// The number of messages is bounded by tokens, not by K: turns
			// are appended until the soft limit, and the worker's refusals
			// of repeated commands make small turns (hence no bound on it
			// here; the tokens plateau above).
		})
	}
}

// oversizedPolicy makes every command print more than the whole window: 40
// KB of `ls -laR` (about 22,000 tokens) with an error line in the middle
// that names the attempt.
type oversizedPolicy struct{}

func (oversizedPolicy) Name() string { return "oversized" }

func (oversizedPolicy) Next(c vllmsim.Conversation) vllmsim.Generation {
	return vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply(fmt.Sprintf(
		"ls -laR /usr/lib 2>/dev/null | head -c 20000; echo; ls -d /nonexistent/attempt-%d 2>&1; ls -laR /usr/share 2>/dev/null | head -c 20000", c.Attempt),
		"list everything")}}
}

// TestOutputsOverTheWindow: every single output is larger than the whole
// window, with an error line in its middle. No prompt is rejected, and
// every prompt holds the ban lists, the ledger, and the last 3 turns'
// calls and error lines.
func TestOutputsOverTheWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{policy: func(string) vllmsim.Policy { return oversizedPolicy{} }})
	r := e.rule(fmt.Sprintf(`rules:
  - id: aide_build_database
    check: "test -f %s/never"
    banned: ['systemctl (restart|stop) ssh']
    max_attempts: 30
`, e.dir), "aide_build_database")
	out, err := e.worker(workerOptions{}).Fix(context.Background(), r)
	require.NoError(t, err, "Fix (outcome %+v)", out)
	require.Equal(t, 30, out.Attempts, "outcome %+v", out)
	assert.Empty(t, e.sim.Stats().Rejections(), "requests rejected for their length")
	tok := qwen3(t).Tokenizer()
	e.mu.Lock()
	listings := 0
	for _, r := range e.runs {
		if !strings.HasPrefix(r.command, "ls -laR") {
			continue // the probe and the checks
		}
		listings++
		require.Greater(t, tok.Count(r.exec.Stdout), 16384, "the output of %q is not larger than the window", r.command)
		require.Contains(t, r.exec.Stdout, "No such file or directory", "the output of %q has no error line", r.command)
	}
	e.mu.Unlock()
	require.Equal(t, 30, listings, "commands run")
	checked, fewer := assertPromptContents(t, e, "systemctl (restart|stop) ssh", tok)
	assert.Equal(t, 30, checked, "prompts with all of the last 3 turns (%d with fewer)", fewer)
	prompt, cached := e.sim.Stats().PromptTokens()
	t.Logf("30 attempts, outputs over the window: %d prompt tokens, %.1f%% from the prefix cache, largest prompt %d",
		prompt, 100*float64(cached)/float64(prompt), e.sim.Stats().MaxPromptTokens())
}

// TestBannedProposerNeverRuns: the banned-proposer policy proposes
// destructive commands, each written "touch MARKER; <command>". The marker
// file proves that none of them ran.
func TestBannedProposerNeverRuns(t *testing.T) {
	t.Parallel()
	var marker string
	e := newEnv(t, envOptions{policy: func(dir string) vllmsim.Policy {
		marker = filepath.Join(dir, "BANNED-COMMAND-RAN")
		return vllmsim.BannedProposer(vllmsim.BannedConfig{Marker: marker})
	}})
	r := e.rule(fmt.Sprintf(`rules:
  - id: sshd_disable_root_login
    title: Disable SSH root login
    check: "test -f %s/never"
    max_attempts: 16
`, e.dir), "sshd_disable_root_login")
	out, err := e.worker(workerOptions{}).Fix(context.Background(), r)
	if err != nil {
		t.Fatalf("Fix: %v", err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a banned command ran: the marker %s exists (stat: %v)", marker, err)
	}
	if out.Blocked == 0 {
		t.Fatalf("no command was blocked: %+v", out)
	}
	blocked := 0
	for _, ev := range e.eventsOf(nightshift.EventCommand) {
		if ev.Action == nightshift.ActionBlocked {
			blocked++
			if !strings.Contains(ev.Command, marker) {
				t.Errorf("blocked command without the marker: %q", ev.Command)
			}
		}
		if ev.Action == nightshift.ActionRan && strings.Contains(ev.Command, marker) {
			t.Errorf("a marked (banned) command ran: %q", ev.Command)
		}
	}
	t.Logf("%d attempts, %d commands blocked, %d ran", out.Attempts, blocked, out.Commands)
	assertPromptContents(t, e, "", qwen3(t).Tokenizer())
}

// TestEventualFixes: wrong tries, then the fix; the rule ends fixed.
func TestEventualFixes(t *testing.T) {
	t.Parallel()
	var conf string
	e2 := newEnv(t, envOptions{policy: func(dir string) vllmsim.Policy {
		conf = filepath.Join(dir, "sshd_config")
		return vllmsim.Eventual(vllmsim.EventualConfig{FixAt: 4,
			Fixes: map[string]string{"sshd_disable_root_login": "sed -i 's/^#PermitRootLogin.*/PermitRootLogin no/' " + conf}})
	}})
	if err := os.WriteFile(conf, []byte("#PermitRootLogin prohibit-password\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e2.rule(fmt.Sprintf(`rules:
  - id: sshd_disable_root_login
    check: "grep -q '^PermitRootLogin no' %s"
`, conf), "sshd_disable_root_login")
	out, err := e2.worker(workerOptions{}).Fix(context.Background(), r)
	if err != nil || out.Status != nightshift.RuleFixed || out.Attempts != 4 {
		t.Fatalf("outcome %+v, err %v; want fixed at attempt 4", out, err)
	}
	assertPromptContents(t, e2, "", qwen3(t).Tokenizer())
	// Checking again costs no model call.
	calls := len(e2.requests())
	out, err = e2.worker(workerOptions{}).Fix(context.Background(), r)
	if err != nil || out.Status != nightshift.RuleCompliant || len(e2.requests()) != calls {
		t.Fatalf("a compliant rule: outcome %+v, err %v, %d model calls", out, err, len(e2.requests())-calls)
	}
}

// TestMalformedOutputIsFedBack: broken JSON arguments, unknown tools, no tool
// call and empty commands are attempts with feedback, never a crash.
func TestMalformedOutputIsFedBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{policy: func(string) vllmsim.Policy { return vllmsim.Malformed(1) }})
	r := e.rule(fmt.Sprintf(`rules:
  - id: accounts_tmout
    check: "test -f %s/never"
    max_attempts: 12
`, e.dir), "accounts_tmout")
	out, err := e.worker(workerOptions{}).Fix(context.Background(), r)
	if err != nil {
		t.Fatalf("Fix: %v", err)
	}
	if out.Status != nightshift.RuleNotFixed || out.Attempts != 12 {
		t.Fatalf("outcome %+v", out)
	}
	malformed := 0
	for _, ev := range e.eventsOf(nightshift.EventCommand) {
		if ev.Action == nightshift.ActionMalformed {
			malformed++
			if ev.Detail == "" {
				t.Error("malformed event without a detail")
			}
		}
	}
	if malformed == 0 {
		t.Fatal("no malformed call recorded")
	}
	if rej := e.sim.Stats().Rejections(); len(rej) != 0 {
		t.Fatalf("the server rejected %d requests: %s", len(rej), rej[0].Error)
	}
	assertPromptContents(t, e, "", qwen3(t).Tokenizer())
}

// TestRetriesAreNotAttempts: 503s, 429s and a dropped connection are retried
// with backoff and do not count as attempts.
func TestRetriesAreNotAttempts(t *testing.T) {
	e := newEnv(t, envOptions{
		policy: func(string) vllmsim.Policy { return vllmsim.GiveUp(2, "cannot fix this in a test") },
		faults: []vllmsim.Fault{{Kind: vllmsim.FaultUnavailable}, {Kind: vllmsim.FaultRateLimited}, {Kind: vllmsim.FaultClose}},
	})
	r := e.rule(fmt.Sprintf(`rules:
  - id: accounts_tmout
    check: "test -f %s/never"
`, e.dir), "accounts_tmout")
	out, err := e.worker(workerOptions{retryDeadline: time.Minute}).Fix(context.Background(), r)
	if err != nil {
		t.Fatalf("Fix: %v", err)
	}
	if out.Retries != 3 || out.Status != nightshift.RuleGaveUp || out.Attempts != 2 {
		t.Fatalf("outcome %+v, want 3 retries and give_up at attempt 2", out)
	}
	assertPromptContents(t, e, "", qwen3(t).Tokenizer())
}

// TestServerDownPastDeadline: a server that stays down ends the rule with
// *worker.UnreachableError.
func TestServerDownPastDeadline(t *testing.T) {
	faults := []vllmsim.Fault{{Kind: vllmsim.FaultUnavailable, Times: 1000}}
	e := newEnv(t, envOptions{policy: func(string) vllmsim.Policy { return vllmsim.GiveUp(1, "") }, faults: faults})
	r := e.rule(fmt.Sprintf(`rules:
  - id: accounts_tmout
    check: "test -f %s/never"
`, e.dir), "accounts_tmout")
	out, err := e.worker(workerOptions{retryDeadline: 3 * time.Second}).Fix(context.Background(), r)
	var ue *worker.UnreachableError
	if !errors.As(err, &ue) || out.Status != nightshift.RuleUnreachable {
		t.Fatalf("got %v (outcome %+v), want *UnreachableError", err, out)
	}
}

// sleeps records the retry waits the worker asks for, without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

// TestRetryAfterIsHonoured: a 429 with Retry-After: 3 makes the worker wait
// 3 s (not its own backoff, not jittered); the 503 after it, without the
// header, gets the jittered backoff of a second failure, 0.5 to 1 s.
func TestRetryAfterIsHonoured(t *testing.T) {
	e := newEnv(t, envOptions{
		policy: func(string) vllmsim.Policy { return vllmsim.GiveUp(1, "cannot fix this in a test") },
		faults: []vllmsim.Fault{{Kind: vllmsim.FaultRateLimited, RetryAfter: 3 * time.Second}, {Kind: vllmsim.FaultUnavailable}},
	})
	r := e.rule(fmt.Sprintf(`rules:
  - id: accounts_tmout
    check: "test -f %s/never"
`, e.dir), "accounts_tmout")
	var s sleeps
	out, err := e.worker(workerOptions{retryDeadline: time.Minute, sleep: s.sleep}).Fix(context.Background(), r)
	if err != nil {
		t.Fatalf("Fix: %v", err)
	}
	if out.Retries != 2 || out.Status != nightshift.RuleGaveUp {
		t.Fatalf("outcome %+v, want 2 retries and give_up", out)
	}
	if len(s.d) != 2 || s.d[0] != 3*time.Second || s.d[1] < 500*time.Millisecond || s.d[1] > time.Second {
		t.Fatalf("waits %v, want [3s, 0.5s..1s]", s.d)
	}
	retries := e.eventsOf(nightshift.EventRetry)
	if len(retries) != 2 || retries[0].Try != 1 || retries[0].RetryIn != 3*time.Second || retries[1].Try != 2 || retries[1].RetryIn != s.d[1] {
		t.Fatalf("retry events %+v, want tries 1 and 2 announcing the waits %v", retries, s.d)
	}
	if !strings.Contains(retries[0].Error, "429") || retries[0].GiveUpAt.IsZero() {
		t.Errorf("first retry event %+v: want the 429 and when the worker gives up", retries[0])
	}
}

// TestRetryAfterPastDeadline: a Retry-After that would end past the retry
// deadline is not waited for: the rule ends unreachable at once.
func TestRetryAfterPastDeadline(t *testing.T) {
	e := newEnv(t, envOptions{
		policy: func(string) vllmsim.Policy { return vllmsim.GiveUp(1, "") },
		faults: []vllmsim.Fault{{Kind: vllmsim.FaultRateLimited, RetryAfter: 3 * time.Second}},
	})
	r := e.rule(fmt.Sprintf(`rules:
  - id: accounts_tmout
    check: "test -f %s/never"
`, e.dir), "accounts_tmout")
	var s sleeps
	out, err := e.worker(workerOptions{retryDeadline: 2 * time.Second, sleep: s.sleep}).Fix(context.Background(), r)
	var ue *worker.UnreachableError
	if !errors.As(err, &ue) || out.Status != nightshift.RuleUnreachable || ue.Tries != 1 {
		t.Fatalf("got %v (outcome %+v), want *UnreachableError after 1 try", err, out)
	}
	if len(s.d) != 0 || out.Retries != 0 {
		t.Fatalf("waited %v with %d retries, want no wait", s.d, out.Retries)
	}
}

// TestContextRejectionsAreRecovered: a worker that believes the window is
// larger than the server's gets vLLM's context-length errors; it logs both
// counts, distils harder or lowers max_tokens, and carries on without
// spending attempts on the rejections.
func TestContextRejectionsAreRecovered(t *testing.T) {
	t.Parallel()
	for _, style := range vllmsim.Styles() {
		t.Run(style.String(), func(t *testing.T) {
			e := newEnv(t, envOptions{policy: func(dir string) vllmsim.Policy {
				return vllmsim.Stubborn(vllmsim.StubbornConfig{DraftDir: filepath.Join(dir, "drafts")})
			}, serverWindow: 6144, errorStyle: style})
			r := e.rule(fmt.Sprintf(`rules:
  - id: aide_build_database
    check: "test -f %s/never"
    max_attempts: 12
`, e.dir), "aide_build_database")
			out, err := e.worker(workerOptions{window: 16384}).Fix(context.Background(), r)
			if err != nil {
				t.Fatalf("Fix: %v (outcome %+v)", err, out)
			}
			if out.Attempts != 12 || out.ContextRejections == 0 {
				t.Fatalf("outcome %+v: want 12 attempts and some recovered rejections", out)
			}
			for _, ev := range e.eventsOf(nightshift.EventRejected) {
				if ev.LocalTokens == 0 || ev.Error == "" {
					t.Errorf("rejection event without both counts: %+v", ev)
				}
			}
			checked, fewer := assertPromptContents(t, e, "", qwen3(t).Tokenizer())
			t.Logf("%d rejections recovered; last 3 turns checked in %d prompts, fewer (those that fit) in %d", out.ContextRejections, checked, fewer)
		})
	}
}

// TestBanListCoversTheSimulatorsBannedCommands: every destructive command the
// banned-proposer policy can propose is refused by the default ban list, as
// the policy sends it ("touch MARKER; <command>").
func TestBanListCoversTheSimulatorsBannedCommands(t *testing.T) {
	t.Parallel()
	bans := safety.DefaultBanList()
	for _, c := range vllmsim.BannedCommands() {
		if _, hit := bans.Match("touch /tmp/marker; " + c); !hit {
			t.Errorf("not banned: %q", c)
		}
	}
}

// stopAfter closes stop when the given attempt ends, as the CLI's first
// SIGINT does.
type stopAfter struct {
	attempt int
	stop    chan struct{}
	inner   nightshift.Observer
}

func (s *stopAfter) Observe(e nightshift.Event) {
	s.inner.Observe(e)
	if e.Kind == nightshift.EventAttempt && e.Attempt == s.attempt {
		close(s.stop)
	}
}

// TestStopFinishesTheCurrentStep: closing Config.Stop (the CLI's first
// SIGINT) ends the rule after the step under way, as interrupted.
func TestStopFinishesTheCurrentStep(t *testing.T) {
	e := newEnv(t, envOptions{policy: func(dir string) vllmsim.Policy {
		return vllmsim.Eventual(vllmsim.EventualConfig{FixAt: 50, WrongFixes: []string{"echo attempt %d >> " + filepath.Join(dir, "log")}})
	}})
	r := e.rule(fmt.Sprintf("rules:\n  - id: accounts_tmout\n    check: \"test -f %s/never\"\n", e.dir), "accounts_tmout")
	oc := openai.DefaultConfig("")
	oc.BaseURL = e.url + "/v1"
	stop := make(chan struct{})
	w, err := worker.New(worker.Config{Chat: openai.NewClientWithConfig(oc), Model: servedAs(t, e.sim.Model(), budget.Config{}), Target: recordingTarget{e, e.ssh},
		Stop: stop, Observer: &stopAfter{attempt: 2, stop: stop, inner: e}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := w.Fix(context.Background(), r)
	if err != nil || out.Status != nightshift.RuleInterrupted || out.Attempts != 2 {
		t.Fatalf("outcome %+v, err %v; want interrupted after attempt 2", out, err)
	}
	log, err := os.ReadFile(filepath.Join(e.dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(log), "attempt"); got != 2 {
		t.Fatalf("%d commands ran, want the 2 of the finished attempts", got)
	}
	assertPromptContents(t, e, "", qwen3(t).Tokenizer())
}
