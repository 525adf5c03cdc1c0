package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/vllmsim"

	"github.com/nightshift-dev/nightshift"
)

var policyAttempts = flag.Int("policies.attempts", 0, "attempts of every BenchmarkCachePolicies shape (0: the shape's own)")

// policyShape is one kind of run BenchmarkCachePolicies replays.
type policyShape struct {
	name     string
	attempts int
	// description is the length in tokens of the rule description in the
	// task message (0: a one-line task).
	description int
	// turn returns attempt n's command and the output the target printed.
	turn func(tb testing.TB, tok Model, n int) (command, stdout string)
}

var variedCommands = []string{"grep -n 'database' /etc/aide/aide.conf", "aide --config /etc/aide/aide.conf --init", "ls -la /var/lib/aide",
	"dpkg -s aide aide-common", "journalctl -u aidecheck --no-pager -n 20", "sed -n '1,40p' /etc/default/aide",
	"systemctl status aidecheck.timer --no-pager", "find /etc/aide -name '*.conf'"}

// variedTurn is worker.BenchmarkCacheShareProduction's run: a different
// command at every attempt, answered with one of testdata/outputs chosen
// by a hash of the command, whole or its first 50–200 tokens.
func variedTurn(whole bool) func(testing.TB, Model, int) (string, string) {
	return func(tb testing.TB, tok Model, n int) (string, string) {
		outs := loadOutputs(tb)
		cmd := fmt.Sprintf("%s # try %d", variedCommands[n%len(variedCommands)], n)
		h := fnv.New32a()
		h.Write([]byte(cmd))
		v := h.Sum32()
		out := outs[int(v/151)%len(outs)]
		if whole {
			return cmd, out
		}
		want := 50 + int(v%151)
		var b strings.Builder
		for _, l := range strings.SplitAfter(out, "\n") {
			if tok.CountText(b.String()+l) > want {
				break
			}
			b.WriteString(l)
		}
		return cmd, b.String()
	}
}

// oversizedTurn is harsher than the stubborn regression run (where the
// stubborn policy repeats its few commands and the worker refuses the
// repeats): every command is new, and in every 6 attempts two print more
// than the whole window — a 30 KB `ls -laR` (about 16,000 tokens) and
// 3,000 lines of `yes` — one is a 400-line heredoc call, and three print
// whole realistic outputs.
func oversizedTurn(tb testing.TB, _ Model, n int) (string, string) {
	switch n % 6 {
	case 1:
		return "ls -laR /usr/share/doc", lsLaR(30 << 10)
	case 3:
		return "yes 'log line: nightshift stubborn policy is still looking at this host' | head -n 3000",
			strings.Repeat("log line: nightshift stubborn policy is still looking at this host\n", 3000)
	case 5:
		var b strings.Builder
		fmt.Fprintf(&b, "mkdir -p /tmp/drafts && cat > /tmp/drafts/draft-%d.conf <<'EOF'\n", n)
		for i := 1; i <= 400; i++ {
			fmt.Fprintf(&b, "# option %d: nightshift draft setting kept for review, value=%d\n", i, i*7%101)
		}
		b.WriteString("EOF")
		return b.String(), ""
	}
	cmd := fmt.Sprintf("%s # try %d", variedCommands[n%len(variedCommands)], n)
	outs := loadOutputs(tb)
	return cmd, outs[n%len(outs)]
}

// lsLaR returns an `ls -laR`-like listing of about size bytes, with a
// permission error now and then.
func lsLaR(size int) string {
	var b strings.Builder
	for d := 0; b.Len() < size; d++ {
		fmt.Fprintf(&b, "\n/usr/share/doc/package-%03d:\ntotal %d\n", d, 8+d%5)
		fmt.Fprintf(&b, "drwxr-xr-x   2 root root  4096 Mar  3 10:%02d .\ndrwxr-xr-x 812 root root 28672 Mar  3 10:%02d ..\n", d%60, d%60)
		for f := 0; f < 4; f++ {
			fmt.Fprintf(&b, "-rw-r--r--   1 root root %5d Jan 12  2023 changelog.Debian.%d.gz\n", 300+(d*37+f*101)%9000, f)
		}
		if d%40 == 39 {
			fmt.Fprintf(&b, "ls: cannot open directory '/usr/share/doc/package-%03d/private': Permission denied\n", d)
		}
	}
	return b.String()
}

var policyShapes = []policyShape{
	{name: "production", attempts: 120, description: 3000, turn: variedTurn(false)},
	{name: "whole-outputs", attempts: 100, description: 3000, turn: variedTurn(true)},
	{name: "oversized", attempts: 100, turn: oversizedTurn},
}

// policyRun is what one policy sent over one replay.
type policyRun struct {
	calls, prompt, cached, largest int
	// after* count the calls from the first compaction on.
	after, afterPrompt, afterCached int
	// shortK counts the prompts that did not show the last 3 turns' calls.
	shortK int
}

// BenchmarkCachePolicies replays the same turns through the current memory
// and through the policy before issue 14 (oldPolicy), in one run, and sends
// every prompt to a vLLM simulator of its own (its prefix cache: 16-token
// blocks, 16,384 blocks, LRU), with the Qwen3 template, a 16,384 window and
// max_tokens 1,024. It reports, for both policies, the share of prompt
// tokens served from the cache (over all calls and over the calls from the
// first compaction on), prompt and prefilled tokens per attempt, the
// largest prompt and the prompts that did not show the last 3 turns' calls.
// The shapes: "production" (a 3,000-token rule description, outputs of
// 50–200 tokens, 120 attempts), "whole-outputs" (the same with whole
// 300–3,000-token outputs, 100 attempts) and "oversized" (outputs larger
// than the window and 400-line heredoc calls, 100 attempts; see
// oversizedTurn):
//
//	go test ./memory -run '^$' -bench CachePolicies -benchtime 1x
func BenchmarkCachePolicies(b *testing.B) {
	qwen3(b)
	loadOutputs(b)
	for _, s := range policyShapes {
		if *policyAttempts > 0 {
			s.attempts = *policyAttempts
		}
		b.Run(s.name, func(b *testing.B) {
			for b.Loop() {
				old := replayPolicy(b, s, true)
				cur := replayPolicy(b, s, false)
				for _, r := range []struct {
					name string
					run  policyRun
				}{{"old", old}, {"new", cur}} {
					n := float64(r.run.calls)
					b.ReportMetric(100*float64(r.run.cached)/float64(r.run.prompt), r.name+"-%cached")
					b.ReportMetric(100*float64(r.run.afterCached)/float64(max(r.run.afterPrompt, 1)), r.name+"-%cached-after-compaction")
					b.ReportMetric(float64(r.run.prompt)/n, r.name+"-prompt/attempt")
					b.ReportMetric(float64(r.run.prompt-r.run.cached)/n, r.name+"-prefilled/attempt")
					b.ReportMetric(float64(r.run.largest), r.name+"-largest-prompt")
					b.ReportMetric(float64(r.run.shortK), r.name+"-prompts-without-last-3")
				}
				b.Logf("%s, %d attempts: old policy / new\n"+
					"  cached, all calls:                 %5.1f %% / %5.1f %%\n"+
					"  cached, from the first compaction: %5.1f %% / %5.1f %% (%d / %d calls)\n"+
					"  prompt tokens per attempt:         %5d / %5d\n"+
					"  prefilled per attempt:             %5d / %5d\n"+
					"  largest prompt:                    %5d / %5d\n"+
					"  prompts without the last 3 calls:  %5d / %5d",
					s.name, s.attempts,
					100*float64(old.cached)/float64(old.prompt), 100*float64(cur.cached)/float64(cur.prompt),
					100*float64(old.afterCached)/float64(max(old.afterPrompt, 1)), 100*float64(cur.afterCached)/float64(max(cur.afterPrompt, 1)), old.after, cur.after,
					old.prompt/old.calls, cur.prompt/cur.calls,
					(old.prompt-old.cached)/old.calls, (cur.prompt-cur.cached)/cur.calls,
					old.largest, cur.largest, old.shortK, cur.shortK)
			}
		})
	}
}

// replayPolicy runs shape s's attempts through a fresh Memory, prompting
// with the old policy or the current one, as the worker does: prompt, the
// model's call, its output, the failed re-check.
func replayPolicy(b *testing.B, s policyShape, old bool) policyRun {
	b.Helper()
	ctx := context.Background()
	model := qwen3(b)
	task := "Rule: aide_build_database\nTitle: Build and Test AIDE Database\n"
	if s.description > 0 {
		var desc strings.Builder
		for i := 0; model.CountText(desc.String()) < s.description; i++ {
			fmt.Fprintf(&desc, "AIDE must be configured to check file %d of the protected set (/etc/aide/aide.conf.d/%02d_rules), and its database must be rebuilt after any change to it. ", i, i%70)
		}
		task += "Description: " + desc.String() + "\n"
	}
	task += "Check (exit status 0 means compliant): test -f /var/lib/aide/aide.db\n\nMake the host compliant. Its check currently fails. Propose the next command with ssh_apply."
	rec := &recorder{}
	m, err := New(Config{Model: model, Tools: testTools, Observer: rec}, testInstruction, task)
	if err != nil {
		b.Fatal(err)
	}
	var op *oldPolicy
	if old {
		op = newOldPolicy(m)
	}
	sc := vllmsim.NewModelCounter(model)
	if err != nil {
		b.Fatal(err)
	}
	sim, err := vllmsim.New(vllmsim.Config{Counter: sc, Policy: vllmsim.GiveUp(1, ""), PromptTokensDetails: true})
	if err != nil {
		b.Fatal(err)
	}
	var run policyRun
	compacted := false
	for n := 1; n <= s.attempts; n++ {
		var p Prompt
		if old {
			p, err = op.Prompt(ctx)
			compacted = compacted || op.compressed
		} else {
			p, err = m.Prompt(ctx)
			_, distilled := rec.last(EventDistill)
			compacted = compacted || distilled
		}
		if err != nil {
			b.Fatalf("%s attempt %d (old policy: %v): %v", s.name, n, old, err)
		}
		//lint:ignore SA1019 the worker sends max_tokens (vLLM has read it in every release).
		body, err := json.Marshal(openai.ChatCompletionRequest{Model: sim.Model(), Messages: p.Messages, Tools: p.Tools, MaxTokens: 1024})
		if err != nil {
			b.Fatal(err)
		}
		w := httptest.NewRecorder()
		sim.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body)))
		if w.Code != http.StatusOK {
			b.Fatalf("%s attempt %d (old policy: %v): the simulator answered %d: %s", s.name, n, old, w.Code, w.Body)
		}
		recs := sim.Stats().Completions()
		r := recs[len(recs)-1]
		run.calls++
		run.prompt += r.PromptTokens
		run.cached += r.CachedTokens
		run.largest = max(run.largest, r.PromptTokens)
		if compacted {
			run.after++
			run.afterPrompt += r.PromptTokens
			run.afterCached += r.CachedTokens
		}
		shown := map[string]bool{}
		for _, msg := range p.Messages {
			for _, c := range msg.ToolCalls {
				shown[c.ID] = true
			}
		}
		for k := max(1, n-3); k < n; k++ {
			if !shown[fmt.Sprintf("call_%d", k)] {
				run.shortK++
				break
			}
		}

		cmd, stdout := s.turn(b, model, n)
		args, _ := json.Marshal(map[string]string{"command": cmd, "reason": "look again"})
		id := fmt.Sprintf("call_%d", n)
		m.AddAssistant(openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{
			ID: id, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "ssh_apply", Arguments: string(args)}}}})
		if err := m.AddToolResult(id, Step{Tool: "ssh_apply", Command: cmd, Action: nightshift.ActionRan, ExitCode: 1, Before: "exit status: 1\n", Stdout: stdout}); err != nil {
			b.Fatal(err)
		}
		if err := m.SetCheck(nightshift.CheckFail); err != nil {
			b.Fatal(err)
		}
		if err := m.AddFeedback(FeedbackCheck, fmt.Sprintf("Re-check after attempt %d: FAIL (exit 1). The host is still not compliant.\nAttempt: %d", n, n+1)); err != nil {
			b.Fatal(err)
		}
	}
	return run
}
