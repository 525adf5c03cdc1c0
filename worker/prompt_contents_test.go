package worker_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/safety"
	"github.com/nightshift-dev/nightshift/vllmsim"

	"github.com/nightshift-dev/nightshift"
)

// errorLineRE is this test's own notion of an error line: independent of
// the memory's, and narrower, so every line it finds must be kept.
var errorLineRE = regexp.MustCompile(`(?i)(^|\s)(error|fatal|E):|No such file or directory|Permission denied|cannot `)

// groupRE matches a history line and the turns it lists: numbers and
// ranges ("4–6"), and for a long list the first and last few around " … "
// with the count of turns in parentheses.
var groupRE = regexp.MustCompile(`\[Turns? ([0-9–, ]+?)(?: … ([0-9–, ]+) \((\d+) turns\))?: `)

// listedTurns returns the turns a history line's groupRE match lists and
// how many more it counts without listing them.
func listedTurns(g []string) (listed []int, unlisted int) {
	for _, part := range []string{g[1], g[2]} {
		for _, item := range strings.Split(part, ", ") {
			if item = strings.TrimSpace(item); item == "" {
				continue
			}
			from, to, ok := strings.Cut(item, "–")
			a, _ := strconv.Atoi(from)
			b := a
			if ok {
				b, _ = strconv.Atoi(to)
			}
			for k := a; k <= b; k++ {
				listed = append(listed, k)
			}
		}
	}
	if g[3] != "" {
		n, _ := strconv.Atoi(g[3])
		unlisted = n - len(listed)
	}
	return listed, unlisted
}

// assertPromptContents checks that every prompt of a run the model was
// shown (every request the server answered; one per attempt) gives the
// model what it needs:
//   - the global ban list in the system message, and the rule's own bans,
//     presented as bans, in the task message;
//   - the failed-attempt ledger: every earlier attempt is either shown
//     verbatim (its call) or summarised by a history line that covers it;
//   - the last 3 turns: their calls verbatim and every error line of their
//     outputs (as the target printed them). The memory may keep fewer only
//     when the last 3 turns' calls, with their outputs cut as far as it
//     cuts before dropping a turn (512 tokens for the older two, 1,024 for
//     the newest), do not fit in the prompt limit with the pinned messages
//     (two 400-line heredoc calls do not); then the newest turns that do
//     fit are checked the same way, and the newest always.
//
// It returns the number of prompts in which all of the last 3 turns were
// checked and the number in which fewer fitted.
func assertPromptContents(t *testing.T, e *env, ruleBan string, tok interface{ Count(string) int }) (checked, fewer int) {
	t.Helper()
	reqs := answered(t, e)
	global := safety.DefaultBanList().Patterns()
	// The command and real output of each attempt's ran command.
	type attemptRun struct {
		command string
		errs    []string
		output  int // tokens of what the target printed
	}
	byAttempt := map[int]attemptRun{}
	e.mu.Lock()
	runs := append([]ran(nil), e.runs...)
	e.mu.Unlock()
	next := 0
	for _, ev := range e.eventsOf(nightshift.EventCommand) {
		if ev.Action != nightshift.ActionRan {
			byAttempt[ev.Attempt] = attemptRun{command: ev.Command}
			continue
		}
		for next < len(runs) && runs[next].command != ev.Command {
			next++
		}
		if next == len(runs) {
			t.Fatalf("attempt %d: command %.60q was never run on the target", ev.Attempt, ev.Command)
		}
		var errs []string
		for _, l := range strings.Split(runs[next].exec.Stdout+"\n"+runs[next].exec.Stderr, "\n") {
			if errorLineRE.MatchString(l) && len(l) <= 200 {
				errs = append(errs, l)
			}
		}
		byAttempt[ev.Attempt] = attemptRun{command: ev.Command, errs: errs,
			output: tok.Count(runs[next].exec.Stdout) + tok.Count(runs[next].exec.Stderr)}
		next++
	}
	for i, req := range reqs {
		attempt := i + 1
		if len(req.Messages) < 2 {
			t.Fatalf("request %d: %d messages", attempt, len(req.Messages))
		}
		sys, task := req.Messages[0].Content, req.Messages[1].Content
		if !contains(sys, "Banned commands", global[0], global[len(global)-1]) {
			t.Fatalf("request %d: the global ban list is not in the system message:\n%s", attempt, sys)
		}
		if ruleBan != "" && !contains(task, "Banned commands for this rule", strconv.Quote(ruleBan)) {
			t.Fatalf("request %d: the rule's own bans are not in the task message:\n%s", attempt, task)
		}
		var all strings.Builder
		calls := map[string]bool{}
		covered := map[int]bool{}
		unlisted := 0 // turns counted by long history lines without their numbers
		for _, m := range req.Messages {
			all.WriteString(m.Content + "\n")
			for _, c := range m.ToolCalls {
				var args struct {
					Command string `json:"command"`
				}
				if json.Unmarshal([]byte(c.Function.Arguments), &args) == nil {
					calls[args.Command] = true
				}
			}
			for _, g := range groupRE.FindAllStringSubmatch(m.Content, -1) {
				listed, more := listedTurns(g)
				for _, k := range listed {
					covered[k] = true
				}
				unlisted += more
			}
		}
		shown := func(k int) bool {
			c, ok := byAttempt[k]
			if !ok || c.command == "" {
				return true // a malformed call or none: nothing to find
			}
			return calls[c.command]
		}
		var missing []int
		for k := 1; k < attempt; k++ {
			if !covered[k] && !shown(k) {
				missing = append(missing, k)
			}
		}
		if len(missing) > unlisted {
			t.Fatalf("request %d: attempts %v are neither shown nor summarised (%d counted by history lines without their numbers)", attempt, missing, unlisted)
		}
		// The newest of the last 3 turns that fit, with their outputs cut
		// to 1,024 tokens (the newest) and 512, in the limit of this
		// prompt (the server's window less max_tokens, less a margin for
		// the worker's lowered limit after a rejection).
		pc, err := qwen3(t).Count(req.Messages, req.Tools)
		require.NoError(t, err)
		//lint:ignore SA1019 the worker sends max_tokens (vLLM has read it in every release).
		maxTokens := req.MaxTokens
		if req.MaxCompletionTokens > 0 {
			maxTokens = req.MaxCompletionTokens
		}
		limit := e.sim.MaxModelLen() - maxTokens - 64
		need := pc.PerMessage[0] + pc.PerMessage[1]
		first := attempt
		for k := attempt - 1; k >= max(1, attempt-3); k-- {
			c := byAttempt[k]
			out := 60 // a notice instead of an output
			if c.output > 0 {
				out = min(c.output+20, 512)
				if k == attempt-1 {
					out = min(c.output+20, 1024)
				}
			}
			need += tok.Count(c.command) + out + 80 // the call's JSON and template, the re-check message
			if need*21/20 > limit && k < attempt-1 {
				break
			}
			first = k
		}
		if first == max(1, attempt-3) {
			checked++
		} else {
			fewer++
		}
		for k := first; k < attempt; k++ {
			if !shown(k) {
				t.Fatalf("request %d: the call of attempt %d (one of the last %d, which fit) is not verbatim", attempt, k, attempt-first)
			}
			for _, l := range byAttempt[k].errs {
				if !strings.Contains(all.String(), l) {
					t.Fatalf("request %d: error line %q of attempt %d is missing", attempt, l, k)
				}
			}
		}
	}
	return checked, fewer
}

// answered returns the requests the server answered, in order: the
// prompts the model was shown. Requests refused for their length, faulted
// or dropped are left out.
func answered(t *testing.T, e *env) []openai.ChatCompletionRequest {
	t.Helper()
	reqs := e.requests()
	var recs []vllmsim.Record
	for _, r := range e.sim.Stats().Records {
		if r.Endpoint == "/v1/chat/completions" {
			recs = append(recs, r)
		}
	}
	require.Len(t, recs, len(reqs), "chat requests received and recorded by the simulator")
	var out []openai.ChatCompletionRequest
	for i, r := range recs {
		if r.Status == http.StatusOK {
			out = append(out, reqs[i])
		}
	}
	return out
}
