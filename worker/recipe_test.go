package worker_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/recipes"
	"github.com/nightshift-dev/nightshift/retry"
	"github.com/nightshift-dev/nightshift/vllmsim"
	"github.com/nightshift-dev/nightshift/worker"
)

// recipeWorker is e.worker with a recipe store; host names the proofs.
func (e *env) recipeWorker(rc worker.Recipes) *worker.Worker {
	e.t.Helper()
	b, err := budget.New(budget.Config{ContextWindow: 16384, Reserve: 1024})
	require.NoError(e.t, err)
	oc := openai.DefaultConfig("")
	oc.BaseURL = e.url + "/v1"
	oc.HTTPClient = &http.Client{Transport: &retry.Transport{}}
	w, err := worker.New(worker.Config{
		Chat: openai.NewClientWithConfig(oc), Model: qwen3(e.t).With(e.sim.Model(), b), Target: recordingTarget{e, e.ssh},
		Observer: e, Recipes: rc,
	})
	require.NoError(e.t, err)
	return w
}

func (e *env) ranCommands() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, r := range e.runs {
		out = append(out, r.command)
	}
	return out
}

// TestRecipeReplay: a fix the model found on one host is replayed on the
// next host of the same key without a model call; a recipe that no longer
// fixes the rule is demoted, its turn is the model's first, the model's fix
// becomes the recipe the third host replays, and the demoted one never runs
// again.
func TestRecipeReplay(t *testing.T) {
	var fix, marker string
	sw := &switchPolicy{}
	e := newEnv(t, envOptions{policy: func(dir string) vllmsim.Policy {
		marker = filepath.Join(dir, "fixed")
		fix = "touch " + marker
		sw.Store(vllmsim.Eventual(vllmsim.EventualConfig{FixAt: 3, DefaultFix: fix}))
		return sw
	}})
	r := e.rule(fmt.Sprintf("rules:\n  - id: aide_build_database\n    check: \"test -f %s\"\n", marker), "aide_build_database")
	ctx := context.Background()
	store := recipes.NewMemory(nil)

	first, err := e.recipeWorker(worker.Recipes{Store: store, Host: "host-1", Run: "1"}).Fix(ctx, r)
	require.NoError(t, err)
	require.Equal(t, nightshift.RuleFixed, first.Status)
	require.Equal(t, 3, first.Attempts)
	assert.Zero(t, first.RecipeAttempts)
	all, err := store.List(ctx, recipes.Filter{})
	require.NoError(t, err)
	require.Len(t, all, 1, "the passing attempt became a recipe")
	rec := all[0]
	assert.Equal(t, []string{fix}, rec.Commands, "only the passing attempt's commands")
	assert.Equal(t, first.Recipe, rec.ID)
	assert.Equal(t, "aide_build_database", rec.Key.Rule)
	assert.Equal(t, "test -f "+marker, rec.Check.Command, "the recipe carries the rule's check, for exports")
	osr, _ := os.ReadFile("/etc/os-release") // the target sees this machine's os-release
	assert.Contains(t, string(osr), "ID="+rec.Key.OS)
	assert.NotEmpty(t, rec.Key.PackageManager)
	require.Len(t, rec.Proofs, 1)
	assert.Equal(t, "host-1", rec.Proofs[0].Host)
	assert.Equal(t, "pass: exit 0: compliant", rec.Proofs[0].Check)

	// Host 2, same key: the recipe, no model call.
	require.NoError(t, os.Remove(marker))
	calls := len(e.requests())
	second, err := e.recipeWorker(worker.Recipes{Store: store, Host: "host-2", Run: "1"}).Fix(ctx, r)
	require.NoError(t, err)
	assert.Equal(t, nightshift.RuleFixed, second.Status)
	assert.Equal(t, 0, second.Attempts, "no model attempt")
	assert.Equal(t, 0, second.ModelCalls)
	assert.Equal(t, 1, second.RecipeAttempts)
	assert.Equal(t, rec.ID, second.Recipe)
	assert.Len(t, e.requests(), calls, "the model was not called")
	best, _, _ := store.Best(ctx, rec.Key)
	assert.Equal(t, 2, best.Fixes)
	assert.True(t, best.Proofs[1].Replayed)
	var replayEvents int
	for _, ev := range e.eventsOf(nightshift.EventCommand) {
		if ev.Recipe == rec.ID {
			replayEvents++
			assert.Equal(t, fix, ev.Command)
		}
	}
	assert.Equal(t, 1, replayEvents)

	// Host 3: the recipe's command no longer fixes the rule (the check
	// now wants a second file). Demoted; the model gets the rule with the
	// recipe's turn first, and fixes it.
	require.NoError(t, os.Remove(marker))
	marker2 := marker + "2"
	r3 := e.rule(fmt.Sprintf("rules:\n  - id: aide_build_database\n    check: \"test -f %s && test -f %s\"\n", marker, marker2), "aide_build_database")
	fix2 := fmt.Sprintf("touch %s %s", marker, marker2)
	sw.Store(vllmsim.Eventual(vllmsim.EventualConfig{FixAt: 2, DefaultFix: fix2}))
	calls = len(e.requests())
	third, err := e.recipeWorker(worker.Recipes{Store: store, Host: "host-3", Run: "2"}).Fix(ctx, r3)
	require.NoError(t, err)
	assert.Equal(t, nightshift.RuleFixed, third.Status)
	assert.Equal(t, 1, third.RecipeAttempts)
	reqs := e.requests()[calls:]
	require.NotEmpty(t, reqs)
	var firstPrompt strings.Builder
	for _, m := range reqs[0].Messages {
		firstPrompt.WriteString(m.Content + "\n")
	}
	assert.Contains(t, firstPrompt.String(), "Replaying recipe "+rec.ID)
	assert.Contains(t, firstPrompt.String(), "Re-check after the recipe replay: FAIL")
	demoted, err := store.List(ctx, recipes.Filter{ID: rec.ID})
	require.NoError(t, err)
	assert.Equal(t, nightshift.RecipeDemoted, demoted[0].State)
	assert.Contains(t, demoted[0].LastError, "fail")
	best, ok, _ := store.Best(ctx, rec.Key)
	require.True(t, ok)
	assert.Equal(t, []string{fix2}, best.Commands, "the model's fix is the key's recipe now")

	// Host 4: the new recipe, never the demoted one.
	require.NoError(t, os.Remove(marker))
	require.NoError(t, os.Remove(marker2))
	before := len(e.ranCommands())
	fourth, err := e.recipeWorker(worker.Recipes{Store: store, Host: "host-4", Run: "2"}).Fix(ctx, r3)
	require.NoError(t, err)
	assert.Equal(t, nightshift.RuleFixed, fourth.Status)
	assert.Equal(t, 0, fourth.Attempts)
	assert.Equal(t, best.ID, fourth.Recipe)
	for _, c := range e.ranCommands()[before:] {
		assert.NotEqual(t, fix, c, "the demoted recipe ran again")
	}
}

// TestRecipeSwitchesAndSafety: replay is off per night (NoReplay) and per
// rule (recipes: false), and a recipe is checked like a model's command: a
// banned one never reaches the host and demotes the recipe.
func TestRecipeSwitchesAndSafety(t *testing.T) {
	var fix, marker string
	e := newEnv(t, envOptions{policy: func(dir string) vllmsim.Policy {
		marker = filepath.Join(dir, "fixed")
		fix = "touch " + marker
		return vllmsim.Eventual(vllmsim.EventualConfig{FixAt: 1, DefaultFix: fix})
	}})
	ctx := context.Background()
	r := e.rule(fmt.Sprintf("rules:\n  - id: r1\n    check: \"test -f %s\"\n", marker), "r1")
	store := recipes.NewMemory(nil)
	_, err := e.recipeWorker(worker.Recipes{Store: store}).Fix(ctx, r)
	require.NoError(t, err)
	list, _ := store.List(ctx, recipes.Filter{})
	require.Len(t, list, 1)
	key := list[0].Key

	for _, tt := range []struct {
		name string
		rc   worker.Recipes
		yaml string
	}{
		{"night switch", worker.Recipes{Store: store, NoReplay: true}, "rules:\n  - id: r1\n    check: \"test -f %s\"\n"},
		{"rule switch", worker.Recipes{Store: store}, "rules:\n  - id: r1\n    recipes: false\n    check: \"test -f %s\"\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, os.Remove(marker))
			calls := len(e.requests())
			out, err := e.recipeWorker(tt.rc).Fix(ctx, e.rule(fmt.Sprintf(tt.yaml, marker), "r1"))
			require.NoError(t, err)
			assert.Equal(t, nightshift.RuleFixed, out.Status)
			assert.Zero(t, out.RecipeAttempts)
			assert.Equal(t, 1, out.Attempts)
			assert.Len(t, e.requests(), calls+1, "the model was asked")
		})
	}

	// A banned recipe (as a tampered store could hold) is blocked.
	require.NoError(t, os.Remove(marker))
	bad, err := store.Prove(ctx, nightshift.Recipe{Key: key, Commands: []string{"rm -rf / --no-preserve-root"}}, nightshift.RecipeProof{Host: "forged"})
	require.NoError(t, err)
	require.NoError(t, store.SetState(ctx, bad.ID, nil, nightshift.RecipePinned))
	before := len(e.ranCommands())
	out, err := e.recipeWorker(worker.Recipes{Store: store}).Fix(ctx, r)
	require.NoError(t, err)
	assert.Equal(t, nightshift.RuleFixed, out.Status, "the model fixed it after the refused recipe")
	assert.Equal(t, 1, out.RecipeAttempts)
	assert.Equal(t, 1, out.Blocked)
	for _, c := range e.ranCommands()[before:] {
		assert.NotContains(t, c, "rm -rf")
	}
	got, _ := store.List(ctx, recipes.Filter{ID: bad.ID})
	assert.Equal(t, nightshift.RecipeDemoted, got[0].State)
	assert.Contains(t, got[0].LastError, "0 of 1 commands reached the host")
}

// switchPolicy is a vllmsim.Policy the test changes between hosts.
type switchPolicy struct {
	p atomic.Pointer[vllmsim.Policy]
}

func (s *switchPolicy) Store(p vllmsim.Policy)                         { s.p.Store(&p) }
func (s *switchPolicy) Name() string                                   { return (*s.p.Load()).Name() }
func (s *switchPolicy) Next(c vllmsim.Conversation) vllmsim.Generation { return (*s.p.Load()).Next(c) }
