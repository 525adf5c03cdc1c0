package recipes

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// Bounds.
const (
	// MaxProofs is the number of proofs a recipe keeps (the first ones);
	// Fixes keeps counting past it.
	MaxProofs = 20
	// MaxCommands bounds a recipe's commands; a longer passing attempt is
	// not a recipe.
	MaxCommands = 64
	// MaxErrorBytes bounds a recipe's LastError.
	MaxErrorBytes = 1000
)

// ErrInvalid is wrapped by Prove's error for a key without a rule, or
// commands that are empty, blank or too many.
var ErrInvalid = errors.New("invalid recipe")

// ErrNotFound is wrapped when no recipe has the given ID (and key).
var ErrNotFound = errors.New("recipe not found")

// ErrSchema is wrapped when a SQLite file holds a recipes schema newer than
// this package knows.
var ErrSchema = errors.New("unsupported recipes schema")

// Store keeps recipes. Implementations: Memory and SQLite.
type Store interface {
	// Prove records that fix's Commands fixed its Key's rule (proof says
	// where), creating the recipe (with fix's Check) or adding a proof to
	// it, and returns it. Only Key, Commands and Check of fix are read. A
	// demoted or retired recipe keeps its state.
	Prove(ctx context.Context, fix nightshift.Recipe, proof nightshift.RecipeProof) (nightshift.Recipe, error)
	// Best returns the recipe to replay for key, false when none is
	// replayable.
	Best(ctx context.Context, key nightshift.RecipeKey) (nightshift.Recipe, bool, error)
	// Fail records that a replay of recipe id on a host of key did not fix
	// the rule, and why: the recipe is demoted for key.
	Fail(ctx context.Context, id string, key nightshift.RecipeKey, reason string) error
	// SetState pins, retires or reactivates recipe id, for key or, when key
	// is nil, for every key it is stored under.
	SetState(ctx context.Context, id string, key *nightshift.RecipeKey, state nightshift.RecipeState) error
	// List returns the recipes f selects, ordered by rule, key, then rank.
	List(ctx context.Context, f Filter) ([]nightshift.Recipe, error)
}

// Filter selects recipes for List. The zero Filter selects all.
type Filter struct {
	Rule string // only this rule's
	ID   string // only this recipe (under each of its keys)
	// States: only these; empty means every state.
	States []nightshift.RecipeState
}

func (f Filter) match(r nightshift.Recipe) bool {
	return (f.Rule == "" || r.Key.Rule == f.Rule) && (f.ID == "" || r.ID == f.ID) &&
		(len(f.States) == 0 || slices.Contains(f.States, r.State))
}

// validate checks what Prove is given and returns the recipe to store,
// with its ID.
func validate(fix nightshift.Recipe) (nightshift.Recipe, error) {
	cmds, err := validCommands(fix.Key, fix.Commands)
	if err != nil {
		return fix, err
	}
	return nightshift.Recipe{ID: nightshift.RecipeID(fix.Key.Rule, cmds), Key: fix.Key, Commands: cmds,
		Check: nightshift.RecipeCheck{Command: fix.Check.Command, Failing: slices.Clone(fix.Check.Failing)}}, nil
}

func validCommands(key nightshift.RecipeKey, commands []string) ([]string, error) {
	if strings.TrimSpace(key.Rule) == "" {
		return nil, fmt.Errorf("%w: key has no rule", ErrInvalid)
	}
	if len(commands) == 0 {
		return nil, fmt.Errorf("%w: rule %s: no commands", ErrInvalid, key.Rule)
	}
	if len(commands) > MaxCommands {
		return nil, fmt.Errorf("%w: rule %s: %d commands, more than %d", ErrInvalid, key.Rule, len(commands), MaxCommands)
	}
	out := make([]string, len(commands))
	for i, c := range commands {
		if strings.TrimSpace(c) == "" {
			return nil, fmt.Errorf("%w: rule %s: command %d is blank", ErrInvalid, key.Rule, i+1)
		}
		out[i] = c
	}
	return out, nil
}

// compareRank orders a key's recipes best first: pinned, then active, then
// the others; most fixes, fewest failures, oldest, then ID.
func compareRank(a, b nightshift.Recipe) int {
	return cmp.Or(
		cmp.Compare(stateRank(a.State), stateRank(b.State)),
		cmp.Compare(b.Fixes, a.Fixes),
		cmp.Compare(a.Failures, b.Failures),
		a.Created.Compare(b.Created),
		strings.Compare(a.ID, b.ID),
	)
}

func stateRank(s nightshift.RecipeState) int {
	switch s {
	case nightshift.RecipePinned:
		return 0
	case nightshift.RecipeActive:
		return 1
	case nightshift.RecipeDemoted:
		return 2
	case nightshift.RecipeRetired:
		return 3
	default:
		return 4
	}
}

// compareList orders List's result: by key, then rank.
func compareList(a, b nightshift.Recipe) int {
	return cmp.Or(
		strings.Compare(a.Key.Rule, b.Key.Rule),
		strings.Compare(a.Key.OS, b.Key.OS),
		strings.Compare(a.Key.Version, b.Key.Version),
		strings.Compare(a.Key.PackageManager, b.Key.PackageManager),
		compareRank(a, b),
	)
}

// best picks the replayable recipe that ranks first among cands.
func best(cands []nightshift.Recipe) (nightshift.Recipe, bool) {
	var out nightshift.Recipe
	found := false
	for _, r := range cands {
		if !r.State.Replayable() {
			continue
		}
		if !found || compareRank(r, out) < 0 {
			out, found = r, true
		}
	}
	return out, found
}

func cutError(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= MaxErrorBytes {
		return s
	}
	cut := MaxErrorBytes
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

func checkState(s nightshift.RecipeState) error {
	if _, err := s.MarshalText(); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return nil
}
