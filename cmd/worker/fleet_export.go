package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/fleet"
	"github.com/nightshift-dev/nightshift/recipes"
)

const fleetExportUsage = `Usage:
  worker fleet export --temporal ADDR RUN (--ansible DIR | --shell FILE)

Writes the fixes night RUN proved as a plan to apply elsewhere, as
'worker export' does for a journal's run: for each rule and host key
(os-release ID and VERSION_ID, package manager) with a replayable recipe
proven in the night, the best one. --ansible writes an Ansible playbook
(DIR/site.yml, one task file per rule: the rule's check, the proven commands
only if it fails, then the re-check, which must pass); --shell writes the
same plan as one bash script. The recipes are the night's result (while it
runs: those proven so far); the same night gives the same files, byte for
byte.
`

const fleetExportExamples = `
Examples:
  worker fleet export tonight --ansible playbook/
  worker fleet export tonight --shell fix.sh
`

func runFleetExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var tf temporalFlags
	var ansible, shell string
	fs := newFlags(cmdFleetExport, stderr)
	bindTemporalFlags(fs, &tf)
	fs.bind("ansible", &ansible)
	fs.bind("shell", &shell)
	id, err := oneRun(fs, fleetExportUsage, fleetExportExamples, args)
	if err != nil {
		return err
	}
	if ansible == "" && shell == "" {
		return usagef("fleet export: give --ansible DIR or --shell FILE")
	}
	c, err := tf.dial(ctx, stderr)
	if err != nil {
		return err
	}
	defer c.Close()
	res, err := fleet.Fetch(ctx, c, id)
	if err != nil {
		return err
	}
	e := recipes.Export{Title: "fleet night " + id, Run: id, Recipes: recipes.Night(replayable(res.Recipes), id)}
	if len(e.Recipes) == 0 {
		return fmt.Errorf("night %s proved no recipe that may be replayed (a night started before fleets kept recipes has none)", id)
	}
	return writeExport(e, ansible, shell, stdout)
}

// replayable keeps the recipes that may be replayed (active or pinned).
func replayable(rs []nightshift.Recipe) []nightshift.Recipe {
	return slices.DeleteFunc(slices.Clone(rs), func(r nightshift.Recipe) bool { return !r.State.Replayable() })
}

// seedRecipes reads the replayable recipes of journal path for a night's
// seed, without the files their proofs changed (the night's input stays
// small; the diffs stay in that journal).
func seedRecipes(ctx context.Context, path string) ([]nightshift.Recipe, error) {
	j, err := openExisting(ctx, path, false)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	store, err := recipes.NewSQLite(ctx, j, nil)
	if err != nil {
		return nil, err
	}
	rs, err := store.List(ctx, recipes.Filter{States: []nightshift.RecipeState{nightshift.RecipeActive, nightshift.RecipePinned}})
	if err != nil {
		return nil, fmt.Errorf("recipes of %s: %w", path, err)
	}
	for i := range rs {
		for k := range rs[i].Proofs {
			rs[i].Proofs[k].Changes = nil
		}
	}
	return rs, nil
}
