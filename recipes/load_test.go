package recipes_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/recipes"
)

// Load hands a store's recipes to another Memory as they are: what List of
// the first gives, List of the second gives, and Best and Fail go on from
// there; bad recipes are refused whole.
func TestMemoryLoad(t *testing.T) {
	ctx := context.Background()
	src := stores(t)["sqlite"]
	r1, err := src.Prove(ctx, nightshift.Recipe{Key: deb12, Commands: fix1, Check: chk}, nightshift.RecipeProof{Host: "web1", Run: "1"})
	require.NoError(t, err)
	_, err = src.Prove(ctx, nightshift.Recipe{Key: deb12, Commands: fix2, Check: chk}, nightshift.RecipeProof{Host: "web2", Run: "1"})
	require.NoError(t, err)
	require.NoError(t, src.Fail(ctx, nightshift.RecipeID(deb12.Rule, fix2), deb12, "re-check failed"))
	all, err := src.List(ctx, recipes.Filter{})
	require.NoError(t, err)

	m := recipes.NewMemory(func() time.Time { return time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC) })
	require.NoError(t, m.Load(all...))
	got, err := m.List(ctx, recipes.Filter{})
	require.NoError(t, err)
	assert.Equal(t, all, got)
	best, ok, err := m.Best(ctx, deb12)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, r1.ID, best.ID, "the demoted recipe stays demoted")
	// Loading again replaces, never duplicates.
	require.NoError(t, m.Load(all...))
	got, _ = m.List(ctx, recipes.Filter{})
	assert.Len(t, got, len(all))

	good := all[0]
	for _, tt := range []struct {
		name string
		bad  func(r *nightshift.Recipe)
	}{
		{"foreign ID", func(r *nightshift.Recipe) { r.ID = "r-000000000000" }},
		{"no rule", func(r *nightshift.Recipe) { r.Key.Rule = "" }},
		{"blank command", func(r *nightshift.Recipe) { r.Commands = []string{" "} }},
		{"unknown state", func(r *nightshift.Recipe) { r.State = nightshift.RecipeState(9) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := good
			r.Commands = append([]string(nil), good.Commands...)
			tt.bad(&r)
			m := recipes.NewMemory(nil)
			assert.ErrorIs(t, m.Load(good, r), recipes.ErrInvalid)
			list, err := m.List(ctx, recipes.Filter{})
			require.NoError(t, err)
			assert.Empty(t, list, "nothing of a refused load is stored")
		})
	}
}
