package fleet

import (
	"context"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/nightshift-dev/nightshift/internal/textcut"
	"github.com/nightshift-dev/nightshift/recipes"

	"github.com/nightshift-dev/nightshift"
)

// Versions of the workflows (workflow.GetVersion) for recipes: nights and
// hosts started before them replay without recipes, whatever their input.
const (
	// versionNightRecipes: the night keeps its recipes (seeded from
	// Night.Recipes, carried when it continues as new), hands the
	// replayable ones to each host it starts and merges each host's
	// RecipeChanges as it ends.
	versionNightRecipes = "night-recipes"
	// versionHostRecipes: the host's worker replays the recipes it was
	// given and proves its own fixes (worker.Recipes).
	versionHostRecipes = "host-recipes"
)

// maxRecipesPerKey bounds the recipes of one key handed to a host workflow
// (the best-ranked), so that inputs stay small however often the model
// found another fix.
const maxRecipesPerKey = 4

// RecipeChange is one change a host made to the night's recipes, in the
// order it made them: a proof (Proof set: Commands fixed Key's rule, Check
// is the rule's check) or a failed replay (Failed is the recipe's ID,
// Reason why; the night demotes it for Key).
type RecipeChange struct {
	Key      nightshift.RecipeKey    `json:"key"`
	Commands []string                `json:"commands,omitempty"`
	Check    nightshift.RecipeCheck  `json:"check,omitzero"`
	Proof    *nightshift.RecipeProof `json:"proof,omitempty"`
	Failed   string                  `json:"failed,omitempty"`
	Reason   string                  `json:"reason,omitempty"`
}

// hostRecipes is a host workflow's recipe store (worker.RecipeStore): the
// recipes the night gave it in a recipes.Memory on the workflow's clock,
// and the changes the host made, for its result.
type hostRecipes struct {
	mem     *recipes.Memory
	now     func() time.Time
	changes []RecipeChange
	// looked is called when Best found a recipe: the worker replays it
	// next.
	looked func()
}

func newHostRecipes(ctx workflow.Context, given []nightshift.Recipe, looked func()) *hostRecipes {
	now := func() time.Time { return workflow.Now(ctx).UTC() }
	s := &hostRecipes{mem: recipes.NewMemory(now), now: now, looked: looked}
	if err := s.mem.Load(given...); err != nil {
		workflow.GetLogger(ctx).Warn("recipes of the night refused; the model is asked instead", "err", err)
	}
	return s
}

func (s *hostRecipes) Best(ctx context.Context, key nightshift.RecipeKey) (nightshift.Recipe, bool, error) {
	r, ok, err := s.mem.Best(ctx, key)
	if ok && err == nil {
		s.looked()
	}
	return r, ok, err
}

func (s *hostRecipes) Prove(ctx context.Context, fix nightshift.Recipe, proof nightshift.RecipeProof) (nightshift.Recipe, error) {
	if proof.At.IsZero() {
		proof.At = s.now()
	}
	r, err := s.mem.Prove(ctx, fix, proof)
	if err == nil {
		s.changes = append(s.changes, RecipeChange{Key: r.Key, Commands: r.Commands, Check: r.Check, Proof: &proof})
	}
	return r, err
}

func (s *hostRecipes) Fail(ctx context.Context, id string, key nightshift.RecipeKey, reason string) error {
	err := s.mem.Fail(ctx, id, key, reason)
	if err == nil {
		// The night keeps at most recipes.MaxErrorBytes of it.
		s.changes = append(s.changes, RecipeChange{Key: key, Failed: id, Reason: textcut.Head(reason, recipes.MaxErrorBytes)})
	}
	return err
}

// nightRecipes are a night's recipes on the workflow's clock: its seed,
// then every host's changes in the order the hosts ended (deterministic in
// a workflow).
type nightRecipes struct {
	mem *recipes.Memory
	ctx workflow.Context
}

func newNightRecipes(ctx workflow.Context, seed []nightshift.Recipe) *nightRecipes {
	r := &nightRecipes{mem: recipes.NewMemory(func() time.Time { return workflow.Now(ctx).UTC() }), ctx: ctx}
	if err := r.mem.Load(seed...); err != nil {
		workflow.GetLogger(ctx).Warn("the night's recipes refused; it starts without them", "err", err)
	}
	return r
}

// merge applies a host's changes (applyChanges, as the recipe book does).
func (r *nightRecipes) merge(changes []RecipeChange) { applyChanges(r.ctx, r.mem, changes) }

// useBook makes the recipes of the fleet's book the night's, then adds the
// recipes of the night's seed the book does not have, and returns those.
func (r *nightRecipes) useBook(book, seed []nightshift.Recipe) []nightshift.Recipe {
	r.mem = recipes.NewMemory(func() time.Time { return workflow.Now(r.ctx).UTC() })
	if err := r.mem.Load(book...); err != nil {
		workflow.GetLogger(r.ctx).Warn("the recipe book's recipes refused; the night starts without them", "err", err)
	}
	return adopt(r.ctx, r.mem, seed)
}

// all is every recipe of the night, in List's order.
func (r *nightRecipes) all() []nightshift.Recipe {
	out, _ := r.mem.List(wfContext{r.ctx}, recipes.Filter{}) // a Memory store: no error
	return out
}

// forHost are the recipes a host may replay: the best maxRecipesPerKey
// replayable ones of each key, without their proofs (a host only ranks
// them; it reports its own proofs as changes).
func (r *nightRecipes) forHost() []nightshift.Recipe {
	rs, _ := r.mem.List(wfContext{r.ctx}, recipes.Filter{States: []nightshift.RecipeState{nightshift.RecipeActive, nightshift.RecipePinned}})
	var out []nightshift.Recipe
	per := map[nightshift.RecipeKey]int{}
	for _, x := range rs {
		if per[x.Key] >= maxRecipesPerKey {
			continue
		}
		per[x.Key]++
		x.Proofs = nil
		out = append(out, x)
	}
	return out
}
