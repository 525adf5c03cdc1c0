package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/fleet"
	"github.com/nightshift-dev/nightshift/internal/nighttest"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/recipes"
	"github.com/nightshift-dev/nightshift/report"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

// The fleet's report of a night equals the report `worker run` (package
// batch) gives of the same night on fresh hosts, times aside, and every
// command ran once on its host: with recipes off (every host asks the
// model) and on (hosts after the first replay its fixes as attempt 0, in
// both reports).
func TestNightEqualsBatchRun(t *testing.T) {
	for _, tt := range []struct {
		name    string
		recipes bool
	}{{"no-recipes", false}, {"recipes", true}} {
		t.Run(tt.name, func(t *testing.T) { nightEqualsBatchRun(t, tt.recipes) })
	}
}

func nightEqualsBatchRun(t *testing.T, withRecipes bool) {
	const nRules, nHosts = 5, 3
	fl := startNight(t, nightOptions{rules: nRules, hosts: nHosts})
	fl.Night.NoRecipes = !withRecipes
	res := runNight(t, fl, fl.activities(), nil)
	got := fleet.Report(res)

	bn := startNight(t, nightOptions{rules: nRules, hosts: nHosts})
	j, err := journal.Open(context.Background(), filepath.Join(t.TempDir(), "j.db"), journal.Config{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	// One host at a time, as the fleet's night in the test environment: the
	// simulator's prefix cache then sees the same requests in the same
	// order, and the server's usage (cached tokens) must be equal too.
	wc := bn.workerConfig(t)
	if withRecipes {
		wc.Recipes = worker.Recipes{Store: recipes.NewMemory(nil)}
	}
	r, err := batch.New(batch.Config{Journal: j, Connector: bn.Conn, Worker: wc, ParallelHosts: 1})
	if err != nil {
		t.Fatal(err)
	}
	set, err := rules.Parse("night.yaml", nighttest.RulesYAML(nRules))
	if err != nil {
		t.Fatal(err)
	}
	br, err := r.Run(context.Background(), batch.Spec{Name: "simulated night", Rules: set.Rules(), Hosts: bn.Night.Hosts})
	if err != nil {
		t.Fatal(err)
	}
	want, err := batch.Report(context.Background(), j, br.Run, 0)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := comparable(t, got), comparable(t, want); g != w {
		t.Fatalf("fleet report differs from worker run's:\n--- fleet\n%s\n--- worker run\n%s", g, w)
	}

	// The server's usage reached the report: prompt tokens on every task
	// that called the model, and the prefix cache's share of them.
	if s := report.NewSummary(got); s.Totals.PromptTokens == 0 || s.Totals.CachedPromptTokens == 0 ||
		s.Totals.CachedPromptTokens >= s.Totals.PromptTokens {
		t.Fatalf("fleet report's usage: %d prompt tokens, %d cached; want both positive, cached fewer", s.Totals.PromptTokens, s.Totals.CachedPromptTokens)
	}
	replayed := 0
	for _, x := range got.Results {
		byRecipe := len(x.Attempts) == 1 && x.Attempts[0].Recipe
		if byRecipe {
			replayed++
			if x.Outcome != nightshift.RuleFixed || x.Attempts[0].Number != 0 {
				t.Errorf("%s on %s: %s by attempt %d, a recipe's replay", x.Rule, x.Host, x.Outcome, x.Attempts[0].Number)
			}
		}
		if called := x.Outcome != nightshift.RuleCompliant && !byRecipe; called != (x.UsagePromptTokens > 0) {
			t.Errorf("%s on %s (%s): %d prompt tokens of usage", x.Rule, x.Host, x.Outcome, x.UsagePromptTokens)
		}
	}

	wantStatus := map[int]nightshift.RuleStatus{nighttest.KindCompliant: nightshift.RuleCompliant, nighttest.KindFix1: nightshift.RuleFixed, nighttest.KindFix3: nightshift.RuleFixed,
		nighttest.KindGiveUp: nightshift.RuleGaveUp, nighttest.KindNever: nightshift.RuleNotFixed}
	for _, x := range got.Results {
		if w := wantStatus[nighttest.RuleKind(x.Rule)]; x.Outcome != w {
			t.Errorf("%s on %s: %s, want %s", x.Rule, x.Host, x.Outcome, w)
		}
	}
	// Fixed rules (2 of the 5 kinds) are replayed on every host after the
	// first, when recipes are on.
	if want := map[bool]int{false: 0, true: 2 * (nHosts - 1)}[withRecipes]; replayed != want {
		t.Errorf("%d results fixed by a recipe's replay alone, want %d", replayed, want)
	}
	if len(got.Results) != nRules*nHosts {
		t.Fatalf("%d results, want %d", len(got.Results), nRules*nHosts)
	}
	for i, h := range fl.Hosts {
		seen := map[string]int{}
		for _, c := range h.Log() {
			if strings.HasPrefix(c, "set ") {
				seen[c]++
			}
		}
		for c, k := range seen {
			if k != 1 {
				t.Errorf("host %d ran %q %d times", i, c, k)
			}
		}
		if len(seen) == 0 {
			t.Errorf("host %d ran no remediation command", i)
		}
	}
}

// A command whose worker died (the activity timed out) is recorded as of
// unknown outcome and never run again; the check that follows tells.
func TestCommandOfDeadWorkerIsNotRetried(t *testing.T) {
	fl := startNight(t, nightOptions{rules: 2, hosts: 1})
	a := fl.activities()
	calls := 0
	res := runNight(t, fl, a, func(env *testsuite.TestWorkflowEnvironment) {
		env.OnActivity(fleet.CommandActivity, mockAny, mockAny).Return(
			func(ctx context.Context, in fleet.CommandInput) (fleet.CommandResult, error) {
				calls++
				if in.Command == "set r001 ok" && calls == 1 {
					// The worker running it dies: the server times it out.
					return fleet.CommandResult{}, temporal.NewHeartbeatTimeoutError(nil)
				}
				return a.Command(ctx, in)
			})
	})
	rep := fleet.Report(res)
	var r1 report.TaskResult
	for _, x := range rep.Results {
		if x.Rule == "r001" {
			r1 = x
		}
	}
	if len(r1.Attempts) < 2 {
		t.Fatalf("r001: %+v, want a second attempt after the unknown outcome", r1)
	}
	first := r1.Attempts[0].Commands[0]
	if first.Command != "set r001 ok" || first.Action != "unknown" || first.ExitCode != nil || !strings.Contains(first.Detail, "outcome unknown") {
		t.Fatalf("r001 attempt 1: %+v", first)
	}
	if !strings.Contains(first.Output, nightshift.ErrOutcomeUnknown.Error()) {
		t.Fatalf("r001 attempt 1 output %q does not say the outcome is unknown", first.Output)
	}
	// The model proposes the same fix again at attempt 2; the host ran it
	// once only, because the first never reached it.
	if n := fl.Hosts[0].Count("set r001 ok"); n != 1 {
		t.Fatalf("host ran the fix %d times, want 1", n)
	}
	if r1.Outcome != nightshift.RuleFixed {
		t.Fatalf("r001: %s, want fixed", r1.Outcome)
	}
}

// Lessons of a host that finished reach hosts started after it.
func TestLessonsReachLaterHosts(t *testing.T) {
	fl := startNight(t, nightOptions{rules: 3, hosts: 2})
	fl.Night.NoLessons, fl.Night.ParallelHosts = false, 1
	res := runNight(t, fl, fl.activities(), nil)
	if len(res.HostRuns) != 2 || len(res.HostRuns[0].Lessons) == 0 {
		t.Fatalf("first host taught no lessons: %+v", res.HostRuns)
	}
	var first, second bool
	for _, req := range fl.Client.Requests() {
		// The rule and its lessons are in the task message, after the
		// system message every rule shares.
		var sys string
		for _, m := range req.Messages[:min(2, len(req.Messages))] {
			sys += m.Content
		}
		if !strings.Contains(sys, "r002") {
			continue
		}
		if strings.Contains(sys, "Lessons from earlier attempts") {
			second = true
		} else {
			first = true
		}
	}
	if !first || !second {
		t.Fatalf("r002: a prompt without lessons %v, a prompt with lessons %v; want both (host h00 then h01)", first, second)
	}
}

// A host that stops answering ends its remaining rules as unreachable; the
// other hosts go on.
func TestHostDownIsUnreachable(t *testing.T) {
	fl := startNight(t, nightOptions{rules: 5, hosts: 2, dieAfter: map[string]int{"h01": 3}})
	res := runNight(t, fl, fl.activities(), nil)
	rep := fleet.Report(res)
	down, fixed := 0, 0
	for _, x := range rep.Results {
		switch {
		case x.Host == "h01" && x.Outcome == nightshift.RuleUnreachable:
			down++
		case x.Host == "h00" && x.Outcome.Passed():
			fixed++
		}
	}
	if down == 0 || fixed != 3 {
		t.Fatalf("h01 unreachable rules %d (want > 0), h00 passed %d (want 3):\n%s", down, fixed, comparable(t, rep))
	}
	if res.HostRuns[1].Unreachable == "" {
		t.Fatalf("h01 not marked unreachable: %+v", res.HostRuns[1])
	}
}

// A model server that stays down past the retry deadline stops the host's
// work; its unfinished tasks are reported interrupted.
func TestModelUnreachableStopsHost(t *testing.T) {
	fl := startNight(t, nightOptions{rules: 2, hosts: 1})
	a := fl.activities()
	res := runNight(t, fl, a, func(env *testsuite.TestWorkflowEnvironment) {
		env.OnActivity(fleet.ModelActivity, mockAny, mockAny).Return(openai.ChatCompletionResponse{}, errors.New("dial tcp 127.0.0.1:1: connect: connection refused"))
	})
	hr := res.HostRuns[0]
	if !strings.Contains(hr.Stopped, nightshift.ErrModelUnreachable.Error()) {
		t.Fatalf("host stopped %q, want the model server unreachable", hr.Stopped)
	}
	rep := fleet.Report(res)
	if rep.Results[0].Outcome != nightshift.RuleCompliant || rep.Results[1].Outcome != nightshift.RuleInterrupted {
		t.Fatalf("outcomes %s, %s; want compliant, interrupted", rep.Results[0].Outcome, rep.Results[1].Outcome)
	}
}

// Bad input is refused with a clear error before anything runs.
func TestNightValidate(t *testing.T) {
	good := fleet.Night{RuleFiles: []fleet.RuleFile{{Name: "r.yaml", Data: nighttest.RulesYAML(1)}},
		Hosts: nil, Model: fleet.ModelSpec{Name: "m", Tokenizer: "qwen3", ContextWindow: 4096, MaxTokens: 512}}
	for _, tc := range []struct {
		name string
		edit func(n *fleet.Night)
		want string
	}{
		{"no hosts", func(n *fleet.Night) {}, "no rules or no hosts"},
		{"bad rules", func(n *fleet.Night) { n.RuleFiles[0].Data = []byte("rules: [{id: X}]") }, "r.yaml"},
		{"unknown rule", func(n *fleet.Night) { n.RuleIDs = []string{"nope"} }, `rule "nope"`},
		{"duplicate host", func(n *fleet.Night) { n.Hosts = append(n.Hosts, n.Hosts[0]) }, "listed twice"},
		{"no model", func(n *fleet.Night) { n.Model = fleet.ModelSpec{} }, "model"},
		{"foreign recipe", func(n *fleet.Night) {
			n.Recipes = []nightshift.Recipe{{ID: "r-000000000000", Key: nightshift.RecipeKey{Rule: "r000"}, Commands: []string{"set r000 ok"}}}
		}, "recipe r-000000000000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := good
			n.RuleFiles = []fleet.RuleFile{{Name: "r.yaml", Data: nighttest.RulesYAML(1)}}
			if tc.name != "no hosts" {
				n.Hosts = hostsN(1)
			}
			tc.edit(&n)
			err := n.Validate()
			if !errors.Is(err, fleet.ErrSpec) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v, want ErrSpec naming %q", err, tc.want)
			}
		})
	}
}

func hostsN(n int) []inventoryHost {
	var hs []inventoryHost
	for i := range n {
		hs = append(hs, inventoryHost{Name: fmt.Sprintf("h%d", i)})
	}
	return hs
}

// A context-length rejection by the server reaches the attempt loop inside
// the workflow as it does in `worker run`: the same parsing of the server's
// message, the same retries without spending attempts, the same outcome.
func TestContextLengthRejection(t *testing.T) {
	// The night believes in a window twice the server's and reserves the
	// server's whole window for the completion: vLLM rejects every request.
	fl := startNight(t, nightOptions{rules: 2, hosts: 1})
	fl.Night.Model.ContextWindow = 2 * fl.Sim.MaxModelLen()
	fl.Night.Model.MaxTokens = fl.Sim.MaxModelLen()
	res := runNight(t, fl, fl.activities(), nil)
	got := res.HostRuns[0].Tasks[1].Outcome

	bn := startNight(t, nightOptions{rules: 2, hosts: 1})
	wc := bn.workerConfig(t)
	b, err := budget.New(budget.Config{ContextWindow: fl.Night.Model.ContextWindow, Reserve: fl.Night.Model.MaxTokens})
	if err != nil {
		t.Fatal(err)
	}
	wc.Model = wc.Model.With("", b)
	j, err := journal.Open(context.Background(), filepath.Join(t.TempDir(), "j.db"), journal.Config{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	r, err := batch.New(batch.Config{Journal: j, Connector: bn.Conn, Worker: wc})
	if err != nil {
		t.Fatal(err)
	}
	set, err := rules.Parse("night.yaml", nighttest.RulesYAML(2))
	if err != nil {
		t.Fatal(err)
	}
	br, err := r.Run(context.Background(), batch.Spec{Name: "simulated night", Rules: set.Rules(), Hosts: bn.Night.Hosts})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := batch.Report(context.Background(), j, br.Run, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := rep.Results[1]
	if got.ContextRejections == 0 || got.Status != want.Outcome || got.Reason != want.Reason {
		t.Fatalf("fleet: %s (%d rejections) %q\nworker run: %s %q", got.Status, got.ContextRejections, got.Reason, want.Outcome, want.Reason)
	}
}

// A night longer than HostsPerRun continues as new between waves of hosts,
// carrying its progress and lessons: its report equals the report of the
// same night in one run (lessons on, so the prompts of later hosts depend
// on what the carried lessons were).
func TestNightContinuesAsNew(t *testing.T) {
	const nRules, nHosts = 3, 5
	one := startNight(t, nightOptions{rules: nRules, hosts: nHosts})
	one.Night.NoLessons = false
	want := runNight(t, one, one.activities(), nil)

	waves := startNight(t, nightOptions{rules: nRules, hosts: nHosts})
	waves.Night.NoLessons, waves.Night.HostsPerRun = false, 2
	got := runNight(t, waves, waves.activities(), nil)
	if want.Runs != 1 || got.Runs != 3 {
		t.Fatalf("runs: %d and %d, want 1 and 3 (5 hosts, 2 a run)", want.Runs, got.Runs)
	}
	if len(got.HostRuns) != nHosts {
		t.Fatalf("%d host results, want %d", len(got.HostRuns), nHosts)
	}
	if g, w := comparable(t, fleet.Report(got)), comparable(t, fleet.Report(want)); g != w {
		t.Fatalf("the night in 3 runs differs from the night in one:\n--- 3 runs\n%s\n--- one\n%s", g, w)
	}
	var withLessons int
	for _, req := range waves.Client.Requests() {
		if len(req.Messages) > 1 && strings.Contains(req.Messages[1].Content, "Lessons from earlier attempts") {
			withLessons++
		}
	}
	if withLessons == 0 {
		t.Fatal("no prompt carried lessons of earlier hosts")
	}
}

// A model-call result without choices, as a history recorded before the
// activity refused them may hold, replays as the worker then took it: an
// empty reply (a malformed attempt), never a retry of the worker's own
// (which would sleep inside the workflow and schedule activities the
// history does not have).
func TestEmptyChoicesInHistory(t *testing.T) {
	fl := startNight(t, nightOptions{rules: 2, hosts: 1})
	a := fl.activities()
	res := runNight(t, fl, a, func(env *testsuite.TestWorkflowEnvironment) {
		env.OnActivity(fleet.ModelActivity, mockAny, mockAny).Return(openai.ChatCompletionResponse{ID: "c", Object: "chat.completion"}, nil)
	})
	rep := fleet.Report(res)
	for _, r := range rep.Results {
		if r.Outcome != nightshift.RuleCompliant && r.Outcome != nightshift.RuleNotFixed {
			t.Errorf("%s: %s, want compliant or not fixed after its attempts", r.Rule, r.Outcome)
		}
	}
	if res.HostRuns[0].Stopped != "" {
		t.Errorf("host stopped: %s", res.HostRuns[0].Stopped)
	}
}
