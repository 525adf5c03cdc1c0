package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/nightshift-dev/nightshift/fleet"
	"github.com/nightshift-dev/nightshift/internal/nighttest"
	"github.com/nightshift-dev/nightshift/internal/simhost"
	"github.com/nightshift-dev/nightshift/internal/temporaltest"
	"github.com/nightshift-dev/nightshift/recipes"
	"github.com/nightshift-dev/nightshift/report"
	"github.com/nightshift-dev/nightshift/served"

	"github.com/nightshift-dev/nightshift"
)

// Recipes outlive a night through the fleet's recipe book, on a real
// Temporal dev server, counted on the simulator's call log. Three nights of
// the five rule kinds on six fresh simulated hosts each (debian h00, h02,
// h04; rocky h01, h03, h05), none given --recipes, share one book, which
// continues as new every 3 changes:
//
//   - night 1: as in TestNightReplaysRecipesOnServer (h02 and h04 drifted:
//     plain `set` of the fixable keys refused): the first host of each
//     family asks the model, the debian recipe fails on h02 and is
//     demoted, the model's `set --force` is replayed after.
//   - night 2, started by a Temporal schedule (no host drifted): every
//     host replays the book's recipes, no model call for a fixed rule;
//     debian hosts replay `set --force`, never the plain recipe night 1
//     demoted there (which would have worked).
//   - an operator retires debian's `set --force r001 ok` and pins `set r002
//     ok` (demoted on debian): night 3 asks the model for r001 on every
//     debian host (its fix, the demoted recipe, stays demoted) and replays
//     the pinned recipe for r002 everywhere.
func TestRecipeBookAcrossNightsOnServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	c := devServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	// The book outlives each night's serve process: a worker of the
	// night queue answers its queries and updates between nights.
	nw := fleet.NightWorker(c, &fleet.Workflows{})
	if err := nw.Start(); err != nil {
		t.Fatal(err)
	}
	defer nw.Stop()
	const book = "book-nights"
	if _, err := fleet.Recipes(ctx, c, book, recipes.Filter{}); !errors.Is(err, fleet.ErrNoBook) {
		t.Fatalf("the recipes of a book no night started: %v, want ErrNoBook", err)
	}
	bookRun, err := fleet.StartBook(ctx, c, book, 3)
	if err != nil {
		t.Fatal(err)
	}

	type result struct {
		id  string // the night's workflow id
		n   *night
		log *callLog
		res fleet.NightResult
		rep report.Summary
	}
	var keep []recorded
	runNight := func(id string, drifted, scheduled bool) result {
		t.Helper()
		log := &callLog{inner: driftPolicy{}, calls: map[[2]string]int{}}
		n := startNight(t, nightOptions{rules: nighttest.Kinds, hosts: 6, policy: log, host: func(i int, c *simhost.Config) {
			c.OS, c.Version = "debian", "12"
			if i%2 == 1 {
				c.OS, c.Version = "rocky", "9.4"
			}
			if drifted && (i == 2 || i == 4) {
				c.Locked = []string{"r001", "r002"}
			}
		}})
		n.Night.NoRecipes, n.Night.HostsPerRun, n.Night.Book = false, 4, book
		var res fleet.NightResult
		var hist []recorded
		if scheduled {
			// Started by a Temporal schedule, as a nightly night is: no
			// operator hands it anything but what the schedule holds.
			res, hist = runStarted(t, c, n, func(ctx context.Context) (string, string) {
				return triggerSchedule(ctx, t, c, id, n.Night)
			})
			id = hist[0].id // the schedule's id and the time it started the night
		} else {
			res, hist = runOnServer(t, c, n, id)
		}
		for _, h := range hist {
			if err := fleet.Replay(&fleet.Workflows{LoadModel: func(string) (*served.Model, error) { return n.Model, nil }}, h.id, h.h, temporaltest.Quiet{}); err != nil {
				t.Errorf("replay of %s: %v", h.file, err)
			}
			// Kept: nights 1 and 3's runs (their hosts take no new step;
			// night 2 takes night 3's).
			if !strings.Contains(h.file, "%2F") && !scheduled {
				keep = append(keep, h)
			}
		}
		rep := fleet.Report(res)
		for _, x := range rep.Results {
			i := slices.Index(res.Hosts, x.Host)
			if x.Outcome == nightshift.RuleFixed && n.Hosts[i].Get(x.Rule) != "ok" {
				t.Errorf("%s: %s on %s reported fixed, its key is %q", id, x.Rule, x.Host, n.Hosts[i].Get(x.Rule))
			}
		}
		// A night ends once its publications are in the book: the book
		// then holds the night's recipes (the book's at its start and its
		// hosts' changes), proofs apart.
		rs, err := fleet.Recipes(ctx, c, book, recipes.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := recipeStates(rs), recipeStates(res.Recipes); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: the book holds\n %v\nthe night ended with\n %v", id, got, want)
		}
		return result{id: id, n: n, log: log, res: res, rep: report.NewSummary(rep)}
	}
	// perFixed is the night's model calls for rule × host tasks fixed,
	// and how many there were.
	perFixed := func(r result) (calls, fixed int) {
		for _, x := range fleet.Report(r.res).Results {
			if x.Outcome == nightshift.RuleFixed {
				fixed++
				calls += r.log.of(x.Host, x.Rule)
			}
		}
		return calls, fixed
	}
	fixable := []string{"r001", "r002"}
	debian, rocky := []string{"h00", "h02", "h04"}, []string{"h01", "h03", "h05"}

	// Night 1.
	n1 := runNight("bk-n1", true, false)
	if got, want := recipeStates(n1.res.Recipes), map[string]string{
		"debian r001 set r001 ok": "demoted 1 1", "debian r001 set --force r001 ok": "active 2 0", "rocky r001 set r001 ok": "active 3 0",
		"debian r002 set r002 ok": "demoted 1 1", "debian r002 set --force r002 ok": "active 2 0", "rocky r002 set r002 ok": "active 3 0",
	}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("night 1's recipes:\n got %v\nwant %v", got, want)
	}
	calls1, fixed1 := perFixed(n1)
	if fixed1 != 12 || calls1 == 0 {
		t.Errorf("night 1: %d model calls for %d fixed rule × host tasks, want 12 tasks and the first hosts' calls", calls1, fixed1)
	}

	// Night 2, started by a schedule: fresh hosts, the book's recipes, no
	// model call for a fix.
	n2 := runNight("bk-n2", false, true)
	calls2, fixed2 := perFixed(n2)
	t.Logf("model calls per fixed rule × host: night 1 %d/%d, night 2 %d/%d", calls1, fixed1, calls2, fixed2)
	if fixed2 != 12 || calls2 != 0 {
		t.Errorf("night 2: %d model calls for %d fixed rule × host tasks, want 0 for 12", calls2, fixed2)
	}
	if s := n2.rep.Totals; s.RecipeAttempts != 12 || s.FixedByRecipe != 12 {
		t.Errorf("night 2's report: %d recipe attempts, %d fixed by a recipe; want 12, 12", s.RecipeAttempts, s.FixedByRecipe)
	}
	for _, h := range debian {
		for _, r := range fixable {
			ran := n2.n.Hosts[hostIndex(h)].Log()
			if slices.Contains(ran, "set "+r+" ok") || !slices.Contains(ran, "set --force "+r+" ok") {
				t.Errorf("night 2: %s ran %q, want debian's active recipe, never the one night 1 demoted", h, ran)
			}
		}
	}
	rs, err := fleet.Recipes(ctx, c, book, recipes.Filter{Rule: "r001"})
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]bool{}
	for _, r := range rs {
		for _, p := range r.Proofs {
			runs[p.Run] = true
		}
	}
	if !runs["bk-n1"] || !runs[n2.id] {
		t.Errorf("the book's proofs of r001 name nights %v, want both", runs)
	}

	// The operator: retire debian's r001 fix, pin `set r002 ok` (demoted
	// on debian, active on rocky).
	id := func(rule, cmd string) string { return nightshift.RecipeID(rule, []string{cmd}) }
	if _, err := fleet.SetRecipeState(ctx, c, book, id("r001", "set --force r001 ok"), nil, nightshift.RecipeRetired); err != nil {
		t.Fatal(err)
	}
	pinned, err := fleet.SetRecipeState(ctx, c, book, id("r002", "set r002 ok"), nil, nightshift.RecipePinned)
	if err != nil {
		t.Fatal(err)
	}
	if len(pinned) != 2 || pinned[0].State != nightshift.RecipePinned || pinned[1].State != nightshift.RecipePinned {
		t.Errorf("pinned %+v, want the recipe under both families' keys", pinned)
	}
	if _, err := fleet.SetRecipeState(ctx, c, book, "r-000000000000", nil, nightshift.RecipeRetired); !errors.Is(err, recipes.ErrNotFound) {
		t.Errorf("retiring an unknown recipe: %v, want recipes.ErrNotFound", err)
	}
	rockyKey := pinned[len(pinned)-1].Key // List's order: debian, then rocky
	rockyKey.Rule = "r001"
	if _, err := fleet.SetRecipeState(ctx, c, book, id("r001", "set --force r001 ok"), &rockyKey, nightshift.RecipePinned); !errors.Is(err, recipes.ErrNotFound) {
		t.Errorf("pinning a recipe under a key it is not stored under: %v, want recipes.ErrNotFound", err)
	}

	// Night 3.
	n3 := runNight("bk-n3", false, false)
	for _, h := range append(slices.Clone(debian), rocky...) {
		ran := n3.n.Hosts[hostIndex(h)].Log()
		wantR001 := slices.Contains(debian, h) // the model
		if got := n3.log.of(h, "r001") > 0; got != wantR001 {
			t.Errorf("night 3: r001 on %s: %d model calls, want calls %v", h, n3.log.of(h, "r001"), wantR001)
		}
		if calls := n3.log.of(h, "r002"); calls != 0 || !slices.Contains(ran, "set r002 ok") || slices.Contains(ran, "set --force r002 ok") {
			t.Errorf("night 3: r002 on %s: %d model calls, ran %q; want the pinned recipe replayed", h, calls, ran)
		}
		if slices.Contains(ran, "set --force r001 ok") {
			t.Errorf("night 3: %s replayed the retired recipe", h)
		}
	}
	if s := n3.rep.Totals; s.RecipeAttempts != 9 || s.FixedByRecipe != 9 {
		t.Errorf("night 3's report: %d recipe attempts, %d fixed by a recipe; want 9 (r002 on 6 hosts, r001 on rocky's 3)", s.RecipeAttempts, s.FixedByRecipe)
	}
	if got := recipeStates(n3.res.Recipes)["debian r001 set r001 ok"]; got != "demoted 4 1" {
		t.Errorf("night 3: debian's r001 recipe the model found again is %q, want still demoted, 4 fixes, 1 failure", got)
	}

	// The book continued as new (every 3 changes) and kept its recipes;
	// its first run replays with today's code.
	d, err := c.DescribeWorkflowExecution(ctx, book, "")
	if err != nil {
		t.Fatal(err)
	}
	if d.WorkflowExecutionInfo.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING || d.WorkflowExecutionInfo.Execution.GetRunId() == bookRun.GetRunID() {
		t.Errorf("the book is %s in run %s, want it running in a later run than its first", d.WorkflowExecutionInfo.GetStatus(), d.WorkflowExecutionInfo.Execution.GetRunId())
	}
	bh := history(t, c, book, bookRun.GetRunID())
	if last := bh.Events[len(bh.Events)-1]; last.GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW {
		t.Errorf("the book's first run ended with %s, want continued as new", last.GetEventType())
	}
	keep = append(keep, recorded{book, bh, url.PathEscape(book) + "@run1"})
	for _, h := range keep {
		if err := fleet.Replay(&fleet.Workflows{LoadModel: func(string) (*served.Model, error) { return n1.n.Model, nil }}, h.id, h.h, temporaltest.Quiet{}); err != nil {
			t.Errorf("replay of %s: %v", h.file, err)
		}
		record(t, h.file, h.h)
	}
}

// recipeStates maps recipes ("os rule commands") to "state fixes failures".
func recipeStates(rs []nightshift.Recipe) map[string]string {
	out := map[string]string{}
	for _, r := range rs {
		out[r.Key.OS+" "+r.Key.Rule+" "+strings.Join(r.Commands, "; ")] = fmt.Sprintf("%s %d %d", r.State, r.Fixes, r.Failures)
	}
	return out
}

// triggerSchedule creates schedule id for night n (a cron that never comes
// due in a test), triggers it once, deletes it and returns the workflow id
// and first run of the night it started.
func triggerSchedule(ctx context.Context, t *testing.T, c client.Client, id string, n fleet.Night) (string, string) {
	t.Helper()
	if err := fleet.Schedule(ctx, c, id, "0 0 1 1 *", n); err != nil {
		t.Fatal(err)
	}
	defer fleet.Unschedule(ctx, c, id)
	h := c.ScheduleClient().GetHandle(ctx, id)
	if err := h.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 300 {
		d, err := h.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if a := d.Info.RecentActions; len(a) > 0 {
			return a[0].StartWorkflowResult.WorkflowID, a[0].StartWorkflowResult.FirstExecutionRunID
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("schedule %s started no night", id)
	return "", ""
}

// hostIndex is the index of simulated host hNN.
func hostIndex(name string) int {
	var i int
	fmt.Sscanf(name, "h%d", &i)
	return i
}
