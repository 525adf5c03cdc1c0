package batch_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/internal/nighttest"
	"github.com/nightshift-dev/nightshift/internal/simhost"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/recipes"
	"github.com/nightshift-dev/nightshift/vllmsim"
	"github.com/nightshift-dev/nightshift/worker"
)

var (
	recipeHosts    = flag.Int("recipes.hosts", 1000, "hosts of BenchmarkRecipesNight")
	recipeRules    = flag.Int("recipes.rules", 20, "rules of BenchmarkRecipesNight")
	recipeParallel = flag.Int("recipes.parallel", 16, "parallel hosts of BenchmarkRecipesNight")
)

// families are the OS families of BenchmarkRecipesNight's hosts, host i in
// families[i%3]. On the last one, the hosts of the second half have
// drifted: plain `set` of a fixable rule's key is refused ("read-only"),
// only `set --force` works, so the recipe its first half proved breaks there.
var families = [][2]string{{"debian", "12"}, {"rocky", "9.4"}, {"ubuntu", "24.04"}}

// driftPolicy is the night's policy, reading the prompt as a model would:
// when a `set` was refused as read-only, it proposes `set --force`.
type driftPolicy struct{ nighttest.Policy }

func (p driftPolicy) Next(c vllmsim.Conversation) vllmsim.Generation {
	for _, m := range c.Messages {
		if strings.Contains(m.Content, c.RuleID+": read-only (use set --force)") {
			return vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply(fmt.Sprintf("set --force %s ok", c.RuleID), "the key is locked")}}
		}
	}
	return p.Policy.Next(c)
}

// BenchmarkRecipesNight is issue 24's night: H hosts (default 1,000) in three
// OS families × R rules (default 20) of nighttest's five kinds, run twice in
// one process on fresh hosts and journals — recipes off (every host asks
// the model: --no-recipes) and on (the first host of a family proves a fix,
// the others replay it) — and reports both nights' model calls, those per
// fixed rule × host, and durations. It fails unless both nights end every
// rule × host the same way, every rule reported fixed passes its check on
// its host, and the drifted family's broken recipe is never replayed after
// its demotion (a host that looked it up before the first failure was
// recorded may still replay it: at most the parallel hosts do). Run it once:
//
//	go test ./batch -run '^$' -bench RecipesNight -benchtime 1x -timeout 90m
func BenchmarkRecipesNight(b *testing.B) {
	for range b.N {
		off := recipesNight(b, false)
		on := recipesNight(b, true)
		for k, s := range off.status {
			if on.status[k] != s {
				b.Fatalf("%s: %s with recipes off, %s with recipes on", k, s, on.status[k])
			}
		}
		for _, n := range []struct {
			name string
			r    nightResult
		}{{"off", off}, {"on", on}} {
			b.ReportMetric(float64(n.r.calls), "model-calls-"+n.name)
			b.ReportMetric(float64(n.r.fixedCalls)/float64(max(n.r.fixed, 1)), "calls/fixed-"+n.name)
			b.ReportMetric(float64(n.r.calls)/float64(max(n.r.tasks, 1)), "calls/task-"+n.name)
			b.ReportMetric(n.r.took.Seconds(), "night-s-"+n.name)
		}
		b.ReportMetric(float64(on.fixed), "fixed")
		b.ReportMetric(float64(on.replayed), "fixed-by-recipe")
		b.ReportMetric(float64(on.demoted), "demoted")
	}
}

type nightResult struct {
	status                                             map[string]nightshift.RuleStatus
	calls, fixed, fixedCalls, tasks, replayed, demoted int
	took                                               time.Duration
}

func recipesNight(b *testing.B, replay bool) nightResult {
	nRules := *recipeRules
	locked := map[int]bool{}
	n := nighttest.Start(b, nighttest.Options{Rules: nRules, Hosts: *recipeHosts, Policy: driftPolicy{},
		Host: func(i int, c *simhost.Config) {
			f := families[i%len(families)]
			c.OS, c.Version = f[0], f[1]
			if i%len(families) == len(families)-1 && i >= *recipeHosts/2 {
				locked[i] = true
				for r := range nRules {
					c.Locked = append(c.Locked, fmt.Sprintf("r%03d", r))
				}
			}
		}})
	cfg := n.WorkerConfig(b)
	ctx := context.Background()
	j, err := journal.Open(ctx, filepath.Join(b.TempDir(), "night.db"), journal.Config{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer j.Close()
	store, err := recipes.NewSQLite(ctx, j, nil)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Recipes = worker.Recipes{Store: store, NoReplay: !replay}
	r, err := batch.New(batch.Config{Journal: j, Connector: n.Conn, Worker: cfg, ParallelHosts: *recipeParallel, ModelConcurrency: 8})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	res, err := r.Run(ctx, batch.Spec{Name: "recipes night", Rules: n.Rules, Hosts: n.Inv})
	took := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	if res.Finished != res.Total {
		b.Fatalf("%d of %d finished", res.Finished, res.Total)
	}
	tasks, err := j.Tasks(ctx, res.Run)
	if err != nil {
		b.Fatal(err)
	}
	out := nightResult{status: map[string]nightshift.RuleStatus{}, calls: int(n.Client.Calls()), tasks: len(tasks), took: took}
	hosts := map[string]*simhost.Host{}
	lockedHost := map[string]bool{}
	for i, h := range n.Inv {
		hosts[h.Name] = n.Hosts[i]
		lockedHost[h.Name] = locked[i]
	}
	for _, t := range tasks {
		out.status[t.Rule+" on "+t.Host] = t.Status
		if t.Status != nightshift.RuleFixed {
			continue
		}
		var o nightshift.Outcome
		if err := json.Unmarshal(t.Outcome, &o); err != nil {
			b.Fatal(err)
		}
		out.fixed++
		out.fixedCalls += o.ModelCalls
		if o.RecipeAttempts > 0 && o.Attempts == 0 {
			out.replayed++
		}
		if got := hosts[t.Host].Get(t.Rule); got != "ok" {
			b.Fatalf("%s on %s reported fixed, but its check fails: %s is %q", t.Rule, t.Host, t.Rule, got)
		}
	}
	if replay {
		// The drifted family's broken recipes: demoted, and never run on
		// that family's hosts after the first failure.
		all, err := store.List(ctx, recipes.Filter{States: []nightshift.RecipeState{nightshift.RecipeDemoted}})
		if err != nil {
			b.Fatal(err)
		}
		out.demoted = len(all)
		for _, rec := range all {
			if rec.Key.OS != families[len(families)-1][0] {
				b.Fatalf("recipe %s demoted on %s, not the drifted family", rec.ID, rec.Key)
			}
			ran := 0 // replays (attempt 0) of the recipe on drifted hosts
			for _, t := range tasks {
				if t.Rule != rec.Key.Rule || !lockedHost[t.Host] {
					continue
				}
				steps, err := j.Steps(ctx, t.ID)
				if err != nil {
					b.Fatal(err)
				}
				for _, st := range steps {
					if st.Command != nil && st.Attempt == 0 && st.Command.Command == rec.Commands[0] {
						ran++
					}
				}
			}
			// Every replay on a drifted host failed and was recorded; only
			// hosts that looked the recipe up before the first failure was
			// recorded (at most the parallel hosts) replayed it.
			if ran != rec.Failures || ran > *recipeParallel {
				b.Fatalf("demoted recipe %s (%q) ran on %d drifted hosts with %d failures recorded; want equal, at most %d (the parallel hosts)",
					rec.ID, rec.Commands[0], ran, rec.Failures, *recipeParallel)
			}
		}
	}
	return out
}
