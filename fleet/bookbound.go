package fleet

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/nightshift-dev/nightshift"
)

// The recipe book's size. Temporal refuses a payload over 2 MiB by default
// (the server's BlobSizeLimitError), and the book carries its recipes into
// each new run as one: a book that outgrew it could not continue as new,
// and its workflow task would fail on every retry. So the book keeps a
// bound (workflow version "book-bound"):
//
//   - a proof in the book keeps where and when it was proved and the
//     re-check's line, not the file changes: those stay in the night's
//     results, where 'worker fleet report' and 'worker fleet export' read
//     them;
//   - when the recipes it carries into its next run exceed bookMaxBytes (as
//     JSON, the payload converter's encoding), proofs beyond the first
//     bookProofsKept of each recipe go first, then active recipes, the
//     least recently proved or replayed first (a later night asks the model
//     again where one is missing). Pinned, retired and demoted recipes are
//     never dropped: they are an operator's decisions and the failures that
//     keep a recipe off a host family.
const (
	versionBookBound = "book-bound"
	bookMaxBytes     = 1 << 20
	bookProofsKept   = 3
)

// bookProof is what the book keeps of a proof.
func bookProof(p nightshift.RecipeProof) nightshift.RecipeProof {
	p.Changes = nil
	return p
}

// bookRecipe is r as the book keeps it.
func bookRecipe(r nightshift.Recipe) nightshift.Recipe {
	r.Proofs = slices.Clone(r.Proofs)
	for i := range r.Proofs {
		r.Proofs[i] = bookProof(r.Proofs[i])
	}
	return r
}

// errBookOver says the recipes a book may not drop alone exceed its bound.
type errBookOver struct{ kept, bytes, max int }

func (e *errBookOver) Error() string {
	return fmt.Sprintf("recipe book over its bound: %d pinned, retired or demoted recipes take %d bytes, more than %d", e.kept, e.bytes, e.max)
}

// boundBook returns rs (recipes.Memory.List's order, which it keeps) made
// to fit max bytes of JSON as the package doc above says, and the recipes
// it dropped. When what may not be dropped still exceeds max it returns
// what is left with an *errBookOver.
func boundBook(rs []nightshift.Recipe, max int) (kept, dropped []nightshift.Recipe, err error) {
	kept = make([]nightshift.Recipe, len(rs))
	for i, r := range rs {
		kept[i] = bookRecipe(r)
	}
	size := jsonSize(kept)
	if size <= max {
		return kept, nil, nil
	}
	for i := range kept {
		if len(kept[i].Proofs) > bookProofsKept {
			kept[i].Proofs = kept[i].Proofs[:bookProofsKept]
		}
	}
	if size = jsonSize(kept); size <= max {
		return kept, nil, nil
	}
	// Drop active recipes, least recently updated first, by their own
	// encoded size (each element adds its length and a comma).
	order := make([]int, 0, len(kept))
	for i, r := range kept {
		if r.State == nightshift.RecipeActive {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(kept[a].Updated.Compare(kept[b].Updated), cmp.Compare(kept[a].ID, kept[b].ID))
	})
	drop := map[int]bool{}
	for _, i := range order {
		if size <= max {
			break
		}
		drop[i] = true
		size -= jsonSize(kept[i]) + 1
	}
	out := kept[:0:0]
	for i, r := range kept {
		if drop[i] {
			dropped = append(dropped, r)
		} else {
			out = append(out, r)
		}
	}
	if size = jsonSize(out); size > max {
		return out, dropped, &errBookOver{kept: len(out), bytes: size, max: max}
	}
	return out, dropped, nil
}

// jsonSize is the length of v's JSON. Recipes encode but for a state no
// store accepts; such a recipe counts as larger than any bound.
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return math.MaxInt / 2
	}
	return len(b)
}

// bookChanges is bc as the book keeps it: proofs without their changes.
func bookChanges(bc BookChanges) BookChanges {
	adopt := make([]nightshift.Recipe, len(bc.Adopt))
	for i, r := range bc.Adopt {
		adopt[i] = bookRecipe(r)
	}
	changes := slices.Clone(bc.Changes)
	for i, c := range changes {
		if c.Proof != nil {
			p := bookProof(*c.Proof)
			changes[i].Proof = &p
		}
	}
	bc.Adopt, bc.Changes = adopt, changes
	return bc
}

// boundForNextRun bounds the recipes the book carries into its next run,
// logging what it drops.
func boundForNextRun(ctx workflow.Context, all []nightshift.Recipe) []nightshift.Recipe {
	kept, dropped, err := boundBook(all, bookMaxBytes)
	log := workflow.GetLogger(ctx)
	for _, r := range dropped {
		log.Warn("recipe book over its bound: recipe dropped (a later night asks the model again)",
			"recipe", r.ID, "key", r.Key.String(), "updated", r.Updated)
	}
	if err != nil {
		log.Error("recipe book over its bound; it carries what it may not drop", "err", err)
	}
	return kept
}
