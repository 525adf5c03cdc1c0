package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/recipes"
)

const exportUsage = `Usage:
  worker export JOURNAL --run ID (--ansible DIR | --shell FILE)

Writes the fixes a run proved as a plan to apply elsewhere: for each rule and
host key (os-release ID and VERSION_ID, package manager) with a replayable
recipe proven in the run, the best one. --ansible writes an Ansible playbook,
DIR/site.yml with one task file per rule (DIR/tasks/RULE.yml): on hosts of
the recipe's key, the rule's check, then the proven commands only if it
fails, then the re-check, which must pass. Comments name the run, the hosts
each recipe was proven on and the re-check's result. --shell writes the same
plan as one bash script for hosts without Ansible. The same journal gives
the same files, byte for byte.
`

const exportExamples = `
Examples:
  worker export night.db --run 3 --ansible playbook/
  ansible-playbook -i inventory.ini playbook/site.yml
  worker export night.db --run 3 --shell fix.sh
`

func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var runID int64
	var ansible, shell string
	fs := newFlags(cmdExport, stderr)
	fs.bind("run", &runID)
	fs.bind("ansible", &ansible)
	fs.bind("shell", &shell)
	setUsage(fs.FlagSet, exportUsage, exportExamples)
	path, err := parseJournalRun(fs, args, &runID, "worker export JOURNAL --run ID --ansible DIR", "the run whose proven fixes to export")
	if err != nil {
		return err
	}
	if ansible == "" && shell == "" {
		return usagef("give --ansible DIR or --shell FILE")
	}
	j, err := openExisting(ctx, path, false)
	if err != nil {
		return err
	}
	defer j.Close()
	if _, err := j.Run(ctx, journal.RunID(runID)); err != nil {
		return usagef("run %d: %v", runID, err)
	}
	store, err := recipes.NewSQLite(ctx, j, nil)
	if err != nil {
		return err
	}
	all, err := store.List(ctx, recipes.Filter{States: []nightshift.RecipeState{nightshift.RecipeActive, nightshift.RecipePinned}})
	if err != nil {
		return err
	}
	e := recipes.Export{Title: fmt.Sprintf("journal %s run %d", filepath.Base(path), runID), Run: strconv.FormatInt(runID, 10), Recipes: recipes.Night(all, strconv.FormatInt(runID, 10))}
	if len(e.Recipes) == 0 {
		return fmt.Errorf("run %d proved no recipe that may be replayed (worker recipes list %s)", runID, path)
	}
	return writeExport(e, ansible, shell, stdout)
}

// writeExport writes e as the playbook in ansible and the script in
// shell (either may be empty) and says what it wrote.
func writeExport(e recipes.Export, ansible, shell string, stdout io.Writer) error {
	if ansible != "" {
		if err := e.WriteAnsible(ansible); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s/site.yml: %d recipe(s) of %d rule(s)\n", ansible, len(e.Recipes), rulesOf(e.Recipes))
	}
	if shell != "" {
		if err := e.WriteShell(shell); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s: %d recipe(s) of %d rule(s)\n", shell, len(e.Recipes), rulesOf(e.Recipes))
	}
	return nil
}

func rulesOf(rs []nightshift.Recipe) int {
	var ids []string
	for _, r := range rs {
		if !slices.Contains(ids, r.Key.Rule) {
			ids = append(ids, r.Key.Rule)
		}
	}
	return len(ids)
}
