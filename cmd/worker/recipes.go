package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/fleet"
	"github.com/nightshift-dev/nightshift/internal/textcut"
	"github.com/nightshift-dev/nightshift/recipes"
)

const recipesUsage = `Usage:
  worker recipes list JOURNAL [--rule ID] [--state STATE] [--json]
  worker recipes show JOURNAL RECIPE [--json]
  worker recipes pin|retire|activate JOURNAL RECIPE
  worker recipes list|show|pin|retire|activate --temporal ADDR [--book ID] [RECIPE] [flags]

Lists and manages the recipes a journal's nights proved: the commands of an
attempt that fixed a rule, keyed by rule, OS (os-release ID and VERSION_ID)
and package manager. Before asking the model, 'worker run' replays the best
recipe of a host's key (pinned first, then the one that fixed most hosts)
through the same safety check, sandbox and re-check; a recipe that fails is
demoted for that key and never replayed there again. pin makes a recipe the
first choice of its keys (also a demoted one), retire withdraws it for good,
activate makes it an ordinary candidate again. Turn replay off for a night
with 'worker run --no-recipes', for a rule with 'recipes: false'.

With --temporal, the same for a fleet: its recipe book, the workflow (--book,
default nightshift-recipe-book) every fleet night reads its recipes from when
it starts and publishes what its hosts prove and demote to. A change is made
through the book (a Temporal update), so nights started after it replay
accordingly; a night already running keeps the recipes it started with.
`

const recipesExamples = `
Examples:
  worker recipes list night.db --rule sshd_disable_root_login
  worker recipes show night.db r-3f2a9c1b7d40
  worker recipes retire night.db r-3f2a9c1b7d40
  worker recipes list --temporal temporal.example.com:7233
  worker recipes pin --temporal temporal.example.com:7233 r-3f2a9c1b7d40
  worker export night.db --run 3 --ansible playbook/
`

func runRecipes(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var rule, state, book string
	var asJSON bool
	var tf temporalFlags
	fs := newFlags(cmdRecipes, stderr)
	fs.bind("rule", &rule)
	fs.bind("state", &state)
	fs.bind("json", &asJSON)
	fs.bind("book", &book)
	bindTemporalFlags(fs, &tf)
	setUsage(fs.FlagSet, recipesUsage, recipesExamples)
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			fs.Usage()
			return errHelp
		}
		fmt.Fprint(stderr, recipesUsage)
		return usagef("worker recipes: give list, show, pin, retire or activate")
	}
	verb := args[0]
	switch verb {
	case "list", "show", "pin", "retire", "activate":
	default:
		fmt.Fprint(stderr, recipesUsage)
		return usagef("worker recipes: unknown action %q (list, show, pin, retire, activate)", verb)
	}
	rest, err := fs.parse(args[1:])
	if err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	fleetMode := given["temporal"]
	if !fleetMode {
		for _, name := range []string{"book", "namespace", "tls-cert", "tls-key", "tls-ca", "tls-server-name"} {
			if given[name] {
				return usagef("--%s applies only with --temporal (a fleet's recipe book)", name)
			}
		}
	} else if err := checkTemporalFlags(fs.FlagSet); err != nil {
		return err
	}
	var path, id string
	switch {
	case fleetMode && (len(rest) > 1 || verb == "list" && len(rest) == 1):
		return usagef("unexpected argument %q (with --temporal no JOURNAL is read)", rest[len(rest)-1])
	case fleetMode && len(rest) == 1:
		id = rest[0]
	case len(rest) == 1:
		path = rest[0]
	case len(rest) == 2:
		path, id = rest[0], rest[1]
	case len(rest) > 2:
		return usagef("unexpected argument %q", rest[2])
	}
	where, usageArgs := path, "JOURNAL"
	if fleetMode {
		where, usageArgs = "recipe book "+cmp.Or(book, fleet.DefaultBook), "--temporal ADDR"
	}
	switch {
	case !fleetMode && path == "":
		return usagef("the journal file is required: worker recipes %s JOURNAL (or --temporal ADDR for a fleet's recipe book)", verb)
	case verb == "list" && id != "":
		return usagef("unexpected argument %q", id)
	case verb != "list" && id == "":
		return usagef("the recipe ID is required: worker recipes %s %s RECIPE", verb, usageArgs)
	case verb != "list" && (rule != "" || state != ""):
		return usagef("--rule and --state select recipes for list only")
	}
	f := recipes.Filter{Rule: rule, ID: id}
	if state != "" {
		var s nightshift.RecipeState
		if err := s.UnmarshalText([]byte(state)); err != nil {
			return usagef("--state %q: not active, pinned, demoted or retired", state)
		}
		f.States = []nightshift.RecipeState{s}
	}
	var store recipeBook
	if fleetMode {
		c, err := tf.dial(ctx, stderr)
		if err != nil {
			return err
		}
		defer c.Close()
		store = fleetBook{c: c, book: book}
	} else {
		j, err := openExisting(ctx, path, false)
		if err != nil {
			return err
		}
		defer j.Close()
		if store, err = recipes.NewSQLite(ctx, j, nil); err != nil {
			return err
		}
	}
	listHint := "worker recipes list " + path
	if fleetMode {
		listHint = "worker recipes list --temporal " + tf.addr
	}
	switch verb {
	case "pin", "retire", "activate":
		to := map[string]nightshift.RecipeState{"pin": nightshift.RecipePinned, "retire": nightshift.RecipeRetired, "activate": nightshift.RecipeActive}[verb]
		if err := store.SetState(ctx, id, nil, to); err != nil {
			if errors.Is(err, recipes.ErrNotFound) {
				return usagef("recipe %s: not in %s (%s)", id, where, listHint)
			}
			return err
		}
		fmt.Fprintf(stdout, "recipe %s: %s\n", id, to)
		return nil
	}
	list, err := store.List(ctx, f)
	if err != nil {
		return err
	}
	if verb == "show" && len(list) == 0 {
		return usagef("recipe %s: not in %s (%s)", id, where, listHint)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	if verb == "show" {
		for _, r := range list {
			printRecipe(stdout, r)
		}
		return nil
	}
	if len(list) == 0 {
		fmt.Fprintln(stdout, "no recipes")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RECIPE\tRULE\tOS\tPACKAGE MANAGER\tSTATE\tFIXES\tFAILED\tCOMMANDS")
	for _, r := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", r.ID, r.Key.Rule, strings.TrimSpace(r.Key.OS+" "+r.Key.Version), r.Key.PackageManager,
			r.State, r.Fixes, r.Failures, textcut.Head(strings.Join(strings.Fields(strings.Join(r.Commands, "; ")), " "), 60))
	}
	return tw.Flush()
}

// recipeBook is what 'worker recipes' does with a store: a journal's
// (recipes.SQLite) or a fleet's recipe book (fleetBook).
type recipeBook interface {
	SetState(ctx context.Context, id string, key *nightshift.RecipeKey, state nightshift.RecipeState) error
	List(ctx context.Context, f recipes.Filter) ([]nightshift.Recipe, error)
}

// fleetBook is a fleet's recipe book through its workflow.
type fleetBook struct {
	c    client.Client
	book string
}

// bookTimeout bounds one question to the recipe book: its workflow is
// answered by a worker of the night queue, which may not run.
const bookTimeout = 30 * time.Second

func (b fleetBook) SetState(ctx context.Context, id string, key *nightshift.RecipeKey, state nightshift.RecipeState) error {
	tctx, cancel := context.WithTimeout(ctx, bookTimeout)
	defer cancel()
	_, err := fleet.SetRecipeState(tctx, b.c, b.book, id, key, state)
	return b.explain(tctx, ctx, err)
}

func (b fleetBook) List(ctx context.Context, f recipes.Filter) ([]nightshift.Recipe, error) {
	tctx, cancel := context.WithTimeout(ctx, bookTimeout)
	defer cancel()
	rs, err := fleet.Recipes(tctx, b.c, b.book, f)
	return rs, b.explain(tctx, ctx, err)
}

// explain says why the book did not answer in time.
func (b fleetBook) explain(tctx, ctx context.Context, err error) error {
	if err != nil && tctx.Err() != nil && ctx.Err() == nil {
		return fmt.Errorf("recipe book %s: no answer in %s: is a 'worker fleet serve' without --no-night running? (%w)", cmp.Or(b.book, fleet.DefaultBook), bookTimeout, err)
	}
	return err
}

func printRecipe(w io.Writer, r nightshift.Recipe) {
	fmt.Fprintf(w, "recipe %s for %s\nstate %s, fixed %d host(s), %d failed replay(s)\n", r.ID, r.Key, r.State, r.Fixes, r.Failures)
	if r.LastError != "" {
		fmt.Fprintf(w, "last failure: %s\n", r.LastError)
	}
	fmt.Fprintf(w, "check: %s\ncommands:\n", r.Check.Command)
	for i, c := range r.Commands {
		fmt.Fprintf(w, "  %d. %s\n", i+1, c)
	}
	for _, p := range r.Proofs {
		how := "found by the model"
		if p.Replayed {
			how = "replayed"
		}
		fmt.Fprintf(w, "proven on %s in run %s at %s (%s): %s\n", p.Host, p.Run, p.At.Format("2006-01-02 15:04:05Z07:00"), how, p.Check)
		for _, c := range p.Changes {
			fmt.Fprintf(w, "  %s %s\n", c.Change, c.Path)
			if c.Diff != "" {
				for _, l := range strings.Split(strings.TrimRight(c.Diff, "\n"), "\n") {
					fmt.Fprintf(w, "    %s\n", l)
				}
			}
		}
	}
	fmt.Fprintln(w)
}
