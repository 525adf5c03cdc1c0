package fleet_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/nightshift-dev/nightshift/fleet"
	"github.com/nightshift-dev/nightshift/internal/nighttest"
	"github.com/nightshift-dev/nightshift/internal/simhost"
	"github.com/nightshift-dev/nightshift/internal/temporaltest"
	"github.com/nightshift-dev/nightshift/report"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"

	"github.com/nightshift-dev/nightshift"
)

// callLog is the simulator's log of model calls by host and rule: the
// policy reads the host's name from the probe's facts in the prompt
// ("Simulated Linux (h03)"), as the simulator sees each call.
type callLog struct {
	inner vllmsim.Policy
	mu    sync.Mutex
	calls map[[2]string]int // host, rule → calls
}

var hostInPrompt = regexp.MustCompile(`Simulated Linux \((h\d+)\)`)

func (l *callLog) Name() string { return "call log of " + l.inner.Name() }

func (l *callLog) Next(c vllmsim.Conversation) vllmsim.Generation {
	host := "?"
	for _, m := range c.Messages {
		if x := hostInPrompt.FindStringSubmatch(m.Content); x != nil {
			host = x[1]
			break
		}
	}
	l.mu.Lock()
	l.calls[[2]string{host, c.RuleID}]++
	l.mu.Unlock()
	return l.inner.Next(c)
}

func (l *callLog) of(host, rule string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls[[2]string{host, rule}]
}

// driftPolicy is nighttest's, reading the prompt as a model would: when a
// plain `set` of the rule's key was refused as read-only, it proposes
// `set --force`.
type driftPolicy struct{ nighttest.Policy }

func (p driftPolicy) Next(c vllmsim.Conversation) vllmsim.Generation {
	for _, m := range c.Messages {
		if strings.Contains(m.Content, c.RuleID+": read-only (use set --force)") {
			return vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply(fmt.Sprintf("set --force %s ok", c.RuleID), "the key is locked")}}
		}
	}
	return p.Policy.Next(c)
}

// Fleet nights replay recipes, counted on the simulator's call log: on a
// real Temporal dev server, a night of the five rule kinds on six hosts of
// two OS families, one host at a time, four hosts per run (so that the
// recipes also cross a continue-as-new). On debian, h02 and h04 have
// drifted: plain `set` of the fixable rules' keys is refused there. With
// recipes, the first host of each family calls the model for a fixable
// rule and the later ones make no call for it; on h02 the debian recipe
// fails, is demoted, and the model fixes the rule with `set --force`,
// which h04 then replays (never the demoted one). With --no-recipes every
// host calls the model, and fixes are still proved into the night's
// recipes. Both nights' histories replay with today's code.
func TestNightReplaysRecipesOnServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	c := devServer(t)
	const first, replays, model = "first", "replays", "model" // what a host does for a fixable rule
	for _, tt := range []struct {
		name      string
		noRecipes bool
		// want is, per host, whether it calls the model for a fixable
		// rule (first of its family, or after a failed replay: model) or
		// replays a recipe without calling it.
		want map[string]string
		// recipes are the night's recipes at its end: key (os rule) and
		// commands → "state fixes failures".
		recipes        map[string]string
		recipeAttempts int
		fixedByRecipe  int
	}{
		{name: "recipes",
			want: map[string]string{"h00": first, "h01": first, "h02": model, "h03": replays, "h04": replays, "h05": replays},
			recipes: map[string]string{
				"debian r001 set r001 ok": "demoted 1 1", "debian r001 set --force r001 ok": "active 2 0", "rocky r001 set r001 ok": "active 3 0",
				"debian r002 set r002 ok": "demoted 1 1", "debian r002 set --force r002 ok": "active 2 0", "rocky r002 set r002 ok": "active 3 0",
			},
			recipeAttempts: 2 * 4, fixedByRecipe: 2 * 3},
		{name: "no-recipes", noRecipes: true,
			want: map[string]string{"h00": first, "h01": first, "h02": model, "h03": model, "h04": model, "h05": model},
			recipes: map[string]string{
				"debian r001 set r001 ok": "active 1 0", "debian r001 set --force r001 ok": "active 2 0", "rocky r001 set r001 ok": "active 3 0",
				"debian r002 set r002 ok": "active 1 0", "debian r002 set --force r002 ok": "active 2 0", "rocky r002 set r002 ok": "active 3 0",
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			log := &callLog{inner: driftPolicy{}, calls: map[[2]string]int{}}
			n := startNight(t, nightOptions{rules: nighttest.Kinds, hosts: 6, policy: log, host: func(i int, c *simhost.Config) {
				c.OS, c.Version = "debian", "12"
				if i%2 == 1 {
					c.OS, c.Version = "rocky", "9.4"
				}
				if i == 2 || i == 4 {
					c.Locked = []string{"r001", "r002"}
				}
			}})
			n.Night.NoRecipes, n.Night.HostsPerRun = tt.noRecipes, 4
			// A recipe book of its own: each subtest's night starts from
			// nothing (TestRecipeBookAcrossNightsOnServer has nights share one).
			n.Night.Book = "book-rcp-" + tt.name
			res, hist := runOnServer(t, c, n, "rcp-"+tt.name)

			// The call log: per host and rule.
			total := 0
			for _, h := range n.Night.Hosts {
				for _, r := range n.sim.Rules {
					calls := log.of(h.Name, r.ID)
					total += calls
					var ok bool
					switch kind := nighttest.RuleKind(r.ID); {
					case kind == nighttest.KindCompliant:
						ok = calls == 0
					case kind == nighttest.KindFix1 || kind == nighttest.KindFix3:
						ok = (calls == 0) == (tt.want[h.Name] == replays)
					default: // not fixed anywhere: no recipe, the model on every host
						ok = calls > 0
					}
					if !ok {
						t.Errorf("%s on %s: %d model calls, want the host to be %q", r.ID, h.Name, calls, tt.want[h.Name])
					}
				}
			}
			if got := len(n.Sim.Stats().Completions()); total != got || int64(total) != n.Client.Calls() {
				t.Errorf("call log: %d calls by host, the simulator answered %d, the client made %d", total, got, n.Client.Calls())
			}

			// The demoted recipe never ran on h04 (with recipes; without,
			// the model tries it); every fixed rule passes its check.
			for _, c := range n.Hosts[4].Log() {
				if !tt.noRecipes && (c == "set r001 ok" || c == "set r002 ok") {
					t.Errorf("h04 ran %q, a recipe demoted on its family before it started", c)
				}
			}
			rep := fleet.Report(res)
			for _, x := range rep.Results {
				i := slices.Index(res.Hosts, x.Host)
				if x.Outcome == nightshift.RuleFixed && n.Hosts[i].Get(x.Rule) != "ok" {
					t.Errorf("%s on %s reported fixed, its key is %q", x.Rule, x.Host, n.Hosts[i].Get(x.Rule))
				}
			}

			// The night's recipes.
			got := map[string]string{}
			for _, r := range res.Recipes {
				got[r.Key.OS+" "+r.Key.Rule+" "+strings.Join(r.Commands, "; ")] = fmt.Sprintf("%s %d %d", r.State, r.Fixes, r.Failures)
				for _, p := range r.Proofs {
					if p.Run != "rcp-"+tt.name || p.At.IsZero() || !slices.Contains(res.Hosts, p.Host) {
						t.Errorf("recipe %s: proof %+v, want one of night %s, on one of its hosts, at a time", r.ID, p, "rcp-"+tt.name)
					}
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.recipes) {
				t.Errorf("night's recipes:\n got %v\nwant %v", got, tt.recipes)
			}

			// Reports: attempt 0 is the recipe's, apart from the model's.
			s := report.NewSummary(rep)
			if s.Totals.RecipeAttempts != tt.recipeAttempts || s.Totals.FixedByRecipe != tt.fixedByRecipe {
				t.Errorf("report: %d recipe attempts, %d fixed by a recipe; want %d, %d", s.Totals.RecipeAttempts, s.Totals.FixedByRecipe, tt.recipeAttempts, tt.fixedByRecipe)
			}
			for _, x := range rep.Results {
				if x.Host == "h02" && x.Rule == "r001" && !tt.noRecipes {
					if len(x.Attempts) < 2 || !x.Attempts[0].Recipe || x.Attempts[0].Check == "pass" || x.Attempts[1].Recipe || x.Attempts[1].Number != 1 {
						t.Errorf("r001 on h02: attempts %+v, want the failed replay (0), then the model's from 1", x.Attempts)
					}
				}
			}

			for _, h := range hist {
				if err := fleet.Replay(&fleet.Workflows{LoadModel: func(string) (*served.Model, error) { return n.Model, nil }}, h.id, h.h, temporaltest.Quiet{}); err != nil {
					t.Errorf("replay of %s: %v", h.file, err)
				}
				record(t, h.file, h.h)
			}
		})
	}
}

// runOnServer runs night n as id on the Temporal server c talks to, with a
// serve process of its own, and returns its result (fleet.Fetch) and the
// histories of its runs and of host h04, by workflow id.
func runOnServer(t *testing.T, c client.Client, n *night, id string) (fleet.NightResult, []recorded) {
	t.Helper()
	return runStarted(t, c, n, func(ctx context.Context) (string, string) {
		run, err := fleet.Start(ctx, c, id, n.Night)
		if err != nil {
			t.Fatal(err)
		}
		return id, run.GetRunID()
	})
}

// runStarted is runOnServer for a night start starts: it returns the
// night's workflow id and first run.
func runStarted(t *testing.T, c client.Client, n *night, start func(ctx context.Context) (id, firstRun string)) (fleet.NightResult, []recorded) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- fleet.Serve(sctx, fleet.ServeConfig{Client: c, Activities: n.activities(), ModelSlots: 2,
			Workflows: &fleet.Workflows{LoadModel: func(string) (*served.Model, error) { return n.Model, nil }}})
	}()
	defer func() { stop(); <-done }()
	id, firstRun := start(ctx)
	if err := c.GetWorkflow(ctx, id, firstRun).Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	res, err := fleet.Fetch(ctx, c, id)
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	host := fleet.HostWorkflowID(id, "h04")
	if res.Runs != 2 {
		t.Fatalf("the night took %d runs, want 2 (it continues as new after 4 hosts)", res.Runs)
	}
	return res, []recorded{
		{id, history(t, c, id, firstRun), url.PathEscape(id) + "@run1"},
		{id, history(t, c, id, d.WorkflowExecutionInfo.Execution.GetRunId()), url.PathEscape(id) + "@run2"},
		{host, history(t, c, host, ""), url.PathEscape(host)},
	}
}

type recorded struct {
	id   string // the workflow's
	h    *historypb.History
	file string
}

// record writes h as testdata/replay/FILE.json.gz when
// NIGHTSHIFT_RECORD_FLEET_HISTORY is set.
func record(t *testing.T, file string, h *historypb.History) {
	t.Helper()
	if os.Getenv("NIGHTSHIFT_RECORD_FLEET_HISTORY") == "" {
		return
	}
	b, err := protojson.MarshalOptions{Indent: " "}.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", "replay", file+".json.gz"), z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
