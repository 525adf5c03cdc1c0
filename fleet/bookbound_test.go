package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	tworker "go.temporal.io/sdk/worker"

	"github.com/nightshift-dev/nightshift/internal/temporaltest"
	"github.com/nightshift-dev/nightshift/recipes"

	"github.com/nightshift-dev/nightshift"
)

// testRecipe is recipe i of rule r, in state s, updated at minute i, with
// n proofs each carrying a diff of d bytes.
func testRecipe(r string, i int, s nightshift.RecipeState, n, d int) nightshift.Recipe {
	cmds := []string{fmt.Sprintf("printf 'x=%d\\n' > /etc/%s.conf", i, r)}
	at := time.Date(2026, 11, 1, 0, i, 0, 0, time.UTC)
	rec := nightshift.Recipe{ID: nightshift.RecipeID(r, cmds), Key: nightshift.RecipeKey{Rule: r, OS: "debian", Version: "12", PackageManager: "apt-get"},
		Commands: cmds, Check: nightshift.RecipeCheck{Command: "grep -q x /etc/" + r + ".conf"}, State: s, Fixes: n, Created: at, Updated: at}
	for j := range n {
		rec.Proofs = append(rec.Proofs, nightshift.RecipeProof{Host: fmt.Sprintf("h%03d", j), Run: "n1", At: at, Check: "pass",
			Changes: []nightshift.FileChange{{Path: "/etc/" + r + ".conf", Change: nightshift.ChangeModified, Diff: strings.Repeat("+", d)}}})
	}
	return rec
}

func TestBoundBook(t *testing.T) {
	ids := func(rs []nightshift.Recipe) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Key.Rule)
		}
		return out
	}
	tests := []struct {
		name       string
		in         []nightshift.Recipe
		max        float64  // in units of one recipe with 3 proofs
		keep, drop []string // rules of the recipes kept and dropped, in order
		proofs     int      // proofs of each kept recipe
		over       bool     // an *errBookOver
	}{
		{"under the bound: only the diffs go",
			[]nightshift.Recipe{testRecipe("a", 1, nightshift.RecipeActive, 5, 4000), testRecipe("b", 2, nightshift.RecipeActive, 5, 4000)},
			100, []string{"a", "b"}, nil, 5, false},
		{"proofs beyond the first three go before any recipe",
			[]nightshift.Recipe{testRecipe("a", 1, nightshift.RecipeActive, 20, 10), testRecipe("b", 2, nightshift.RecipeActive, 20, 10)},
			2.5, []string{"a", "b"}, nil, 3, false},
		{"then the least recently updated active recipes",
			[]nightshift.Recipe{testRecipe("new", 9, nightshift.RecipeActive, 3, 0), testRecipe("old", 1, nightshift.RecipeActive, 3, 0),
				testRecipe("mid", 5, nightshift.RecipeActive, 3, 0)},
			1.5, []string{"new"}, []string{"old", "mid"}, 3, false},
		{"pinned, retired and demoted are never dropped",
			[]nightshift.Recipe{testRecipe("pin", 1, nightshift.RecipePinned, 3, 0), testRecipe("ret", 2, nightshift.RecipeRetired, 3, 0),
				testRecipe("dem", 3, nightshift.RecipeDemoted, 3, 0), testRecipe("act", 9, nightshift.RecipeActive, 3, 0)},
			1.5, []string{"pin", "ret", "dem"}, []string{"act"}, 3, true},
	}
	unit := jsonSize([]nightshift.Recipe{bookRecipe(testRecipe("xyz", 0, nightshift.RecipeActive, 3, 0))})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.in)
			keep, drop, err := boundBook(in, int(tt.max*float64(unit)))
			var over *errBookOver
			if errors.As(err, &over) != tt.over || (err != nil && over == nil) {
				t.Fatalf("err = %v, want errBookOver %v", err, tt.over)
			}
			if !slices.Equal(ids(keep), tt.keep) || !slices.Equal(ids(drop), tt.drop) {
				t.Fatalf("kept %v dropped %v, want %v and %v", ids(keep), ids(drop), tt.keep, tt.drop)
			}
			for _, r := range keep {
				if len(r.Proofs) != tt.proofs {
					t.Errorf("%s keeps %d proofs, want %d", r.Key.Rule, len(r.Proofs), tt.proofs)
				}
				for _, p := range r.Proofs {
					if p.Changes != nil {
						t.Errorf("%s: a proof keeps its changes", r.Key.Rule)
					}
				}
			}
			if max := int(tt.max * float64(unit)); !tt.over && jsonSize(keep) > max {
				t.Errorf("kept %d bytes, over %d", jsonSize(keep), max)
			}
			if len(tt.in[0].Proofs) > 0 && tt.in[0].Proofs[0].Changes == nil {
				t.Error("boundBook changed its input's proofs")
			}
		})
	}
}

// A recipe book whose proofs' diffs alone exceed Temporal's 2 MiB payload
// limit still continues as new, on a real dev server: two publications of
// 40 recipes, each with 20 proofs carrying 2,000-byte diffs (1.7 MB each),
// then the run's end. Before the bound, the book carried 3.4 MB into its
// next run, the server refused it, and the book never got past that task.
func TestRecipeBookBoundOnServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	c, err := client.Dial(client.Options{HostPort: temporaltest.Start(t), Logger: temporaltest.Quiet{}, DataConverter: DataConverter()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Minutes, not seconds: under -race on a loaded 2-core machine the
	// two 1.7 MB signals take most of one (alone, unloaded: 6 s).
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// The book's one workflow task decodes two 1.7 MB signals: a few tens
	// of milliseconds in a normal build, but over the SDK's 1 s deadlock
	// detector in a race-built test on a loaded 2-core machine, where the
	// task panicked and was retried forever before the client's
	// DataConverter left decoding out of the detector's budget (without it,
	// at load 13: the book never continued as new within the 4 minutes).
	// The worker keeps the SDK's default detector.
	nw := tworker.New(c, NightQueue, tworker.Options{})
	registerNight(nw, &Workflows{}, c)
	if err := nw.Start(); err != nil {
		t.Fatal(err)
	}
	defer nw.Stop()
	const book = "book-bound"
	run, err := StartBook(ctx, c, book, 2)
	if err != nil {
		t.Fatal(err)
	}
	for n := range 2 {
		bc := BookChanges{Night: fmt.Sprintf("n%d", n)}
		for i := range 40 {
			bc.Adopt = append(bc.Adopt, testRecipe(fmt.Sprintf("rule_%d_%02d", n, i), i, nightshift.RecipeActive, 20, 2000))
		}
		if err := PublishToBook(ctx, c, book, bc); err != nil {
			t.Fatalf("publication %d: %v", n, err)
		}
	}
	for {
		d, err := c.DescribeWorkflowExecution(ctx, book, "")
		if err != nil {
			t.Fatal(err)
		}
		if d.WorkflowExecutionInfo.GetExecution().GetRunId() != run.GetRunID() {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the book did not continue as new after its second publication: %v", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	got, err := Recipes(ctx, c, book, recipes.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 80 {
		t.Fatalf("the book's next run has %d recipes, want 80", len(got))
	}
	for _, r := range got {
		if len(r.Proofs) != 20 || r.Proofs[0].Changes != nil || r.Proofs[0].Host != "h000" {
			t.Fatalf("recipe %s: %d proofs, first %+v; want 20 without their changes", r.Key.Rule, len(r.Proofs), r.Proofs[0])
		}
	}
}
