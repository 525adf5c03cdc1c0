package worker_test

import (
	"encoding/json"
	"github.com/nightshift-dev/nightshift/safety"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

// errorLineRE is this test's own notion of an error line: independent of
// the memory's, and narrower, so every line it finds must be kept.
var errorLineRE = regexp.MustCompile(`(?i)(^|\s)(error|fatal|E):|No such file or directory|Permission denied|cannot `)

// groupRE matches a history line and the turns it covers.
var groupRE = regexp.MustCompile(`\[Turns? (\d+)(?:–(\d+))?:`)

// assertPromptContents checks that every prompt of a run (one model call
// per attempt, no rejection) gives the model what it needs:
//   - the global ban list in the system message, and the rule's own bans,
//     presented as bans, in the task message;
//   - the failed-attempt ledger: every earlier attempt is either shown
//     verbatim (its call) or summarised by a history line that covers it;
//   - the last 3 turns: their calls verbatim and every error line of their
//     outputs (as the target printed them), whenever those calls fit in
//     half the window at all (a call of a 400-line heredoc may not).
//
// It returns the number of prompts in which the last 3 turns were checked.
func assertPromptContents(t *testing.T, e *env, ruleBan string, tok interface{ Count(string) int }) int {
	t.Helper()
	reqs := e.requests()
	global := safety.DefaultBanList().Patterns()
	// The command and real output of each attempt's ran command.
	type attemptRun struct {
		command string
		errs    []string
	}
	byAttempt := map[int]attemptRun{}
	e.mu.Lock()
	runs := append([]ran(nil), e.runs...)
	e.mu.Unlock()
	next := 0
	for _, ev := range e.eventsOf(worker.EventCommand) {
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
		byAttempt[ev.Attempt] = attemptRun{command: ev.Command, errs: errs}
		next++
	}
	checked := 0
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
				from, _ := strconv.Atoi(g[1])
				to := from
				if g[2] != "" {
					to, _ = strconv.Atoi(g[2])
				}
				for k := from; k <= to; k++ {
					covered[k] = true
				}
			}
		}
		shown := func(k int) bool {
			c, ok := byAttempt[k]
			if !ok || c.command == "" {
				return true // a malformed call or none: nothing to find
			}
			return calls[c.command]
		}
		for k := 1; k < attempt; k++ {
			if !covered[k] && !shown(k) {
				t.Fatalf("request %d: attempt %d is neither shown nor summarised", attempt, k)
			}
		}
		var size int
		for k := max(1, attempt-3); k < attempt; k++ {
			size += tok.Count(byAttempt[k].command)
		}
		if size > 8192 {
			continue
		}
		checked++
		for k := max(1, attempt-3); k < attempt; k++ {
			if !shown(k) {
				t.Fatalf("request %d: the call of attempt %d (one of the last 3) is not verbatim", attempt, k)
			}
			for _, l := range byAttempt[k].errs {
				if !strings.Contains(all.String(), l) {
					t.Fatalf("request %d: error line %q of attempt %d is missing", attempt, l, k)
				}
			}
		}
	}
	return checked
}
