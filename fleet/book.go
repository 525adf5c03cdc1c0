package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/nightshift-dev/nightshift/recipes"

	"github.com/nightshift-dev/nightshift"
)

// The recipe book: a long-lived workflow per fleet (per book id in a
// namespace) that keeps the recipes every night proved, so that the next
// night starts with them.
const (
	// DefaultBook is the workflow id of a namespace's recipe book when a
	// night names none (Night.Book).
	DefaultBook = "nightshift-recipe-book"

	bookWorkflowName = "nightshift.RecipeBook"
	// bookReadActivity starts the book when it does not run yet and
	// returns its recipes (on the night queue, whose workers hold a
	// Temporal client).
	bookReadActivity = "nightshift.ReadRecipeBook"
	// bookPublishSignal carries a BookChanges from a night to the book.
	bookPublishSignal = "publish"
	// bookRecipesQuery answers the book's recipes a recipes.Filter selects.
	bookRecipesQuery = "recipes"
	// bookSetStateUpdate pins, retires or activates a recipe (a
	// SetRecipeState); rejected, before anything is recorded, for an
	// unknown recipe or state.
	bookSetStateUpdate = "set-state"

	// versionNightBook: the night reads the fleet's recipe book when it
	// starts (its recipes, demotions and retirements included, are the
	// night's before its seed) and publishes each host's recipe changes
	// to it as the host ends.
	versionNightBook = "night-book"

	// bookChangesPerRun is how many publications and state changes one
	// run of the book takes before it continues as new (or fewer, when
	// the server suggests it), so that its history stays bounded.
	bookChangesPerRun = 500

	errTypeNoBook        = "NoBook"         // this worker has no Temporal client to reach the book
	errTypeRecipeUnknown = "RecipeNotFound" // a state change for a recipe the book does not have
)

// ErrNoBook is wrapped when a recipe book does not run (no night of the
// fleet has started since it was created, or it was terminated).
var ErrNoBook = errors.New("no recipe book")

// BookChanges is what a night publishes to its recipe book: the recipes of
// its seed (Night.Recipes) that the book did not have when the night read
// it (Adopt; the book keeps its own state for those it has since), and a
// host's changes (RecipeChange), in the order the host made them.
type BookChanges struct {
	Night   string              `json:"night"`
	Adopt   []nightshift.Recipe `json:"adopt,omitempty"`
	Changes []RecipeChange      `json:"changes,omitempty"`
}

// bookInput is the input of the book workflow: its recipes, carried when
// it continues as new (empty when it starts).
type bookInput struct {
	Recipes []nightshift.Recipe `json:"recipes,omitempty"`
	Runs    int                 `json:"runs,omitempty"` // runs before this one
	// PerRun is how many changes a run takes before it continues as new
	// (0: bookChangesPerRun).
	PerRun int `json:"per_run,omitempty"`
}

// setStateRequest is the argument of bookSetStateUpdate: recipes.Store's
// SetState.
type setStateRequest struct {
	ID    string                 `json:"id"`
	Key   *nightshift.RecipeKey  `json:"key,omitempty"` // nil: every key of ID
	State nightshift.RecipeState `json:"state"`
}

// book is the recipe book workflow. Its state is a recipes.Memory on the
// workflow's clock, changed by nights' publications (the same merge as a
// night's, applyChanges) and operators' state changes (the same SetState),
// and read by nights (the read activity's query) and operators: one
// implementation of proving, demoting and ranking for journals, nights and
// books. It never ends on its own; after bookChangesPerRun changes it
// continues as new with its recipes.
func (f *Workflows) book(ctx workflow.Context, in bookInput) error {
	mem := recipes.NewMemory(func() time.Time { return workflow.Now(ctx).UTC() })
	if err := mem.Load(in.Recipes...); err != nil {
		workflow.GetLogger(ctx).Error("the recipe book's carried recipes refused; it starts empty", "err", err)
	}
	wctx := wfContext{ctx}
	bounded := workflow.GetVersion(ctx, versionBookBound, workflow.DefaultVersion, 1) >= 1
	changes, per := 0, in.PerRun
	if per <= 0 {
		per = bookChangesPerRun
	}
	if err := workflow.SetQueryHandler(ctx, bookRecipesQuery, func(f recipes.Filter) ([]nightshift.Recipe, error) {
		return mem.List(wctx, f)
	}); err != nil {
		return err
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, bookSetStateUpdate,
		func(_ workflow.Context, r setStateRequest) ([]nightshift.Recipe, error) {
			if err := mem.SetState(wctx, r.ID, r.Key, r.State); err != nil {
				return nil, temporal.NewNonRetryableApplicationError(err.Error(), errTypeRecipeUnknown, nil)
			}
			changes++
			return mem.List(wctx, recipes.Filter{ID: r.ID})
		},
		workflow.UpdateHandlerOptions{Validator: func(r setStateRequest) error {
			if _, err := r.State.MarshalText(); err != nil {
				return temporal.NewNonRetryableApplicationError(fmt.Sprintf("recipe %s: %v", r.ID, err), errTypeRecipeUnknown, nil)
			}
			have, _ := mem.List(wctx, recipes.Filter{ID: r.ID}) // a Memory store: no error
			for _, x := range have {
				if r.Key == nil || x.Key == *r.Key {
					return nil
				}
			}
			return temporal.NewNonRetryableApplicationError(fmt.Sprintf("recipe %s: %v", r.ID, recipes.ErrNotFound), errTypeRecipeUnknown, nil)
		}}); err != nil {
		return err
	}
	pub := workflow.GetSignalChannel(ctx, bookPublishSignal)
	apply := func(bc BookChanges) {
		if bounded {
			bc = bookChanges(bc)
		}
		adopt(ctx, mem, bc.Adopt)
		applyChanges(ctx, mem, bc.Changes)
		changes++
	}
	for {
		full := func() bool { return changes >= per || workflow.GetInfo(ctx).GetContinueAsNewSuggested() }
		if err := workflow.Await(ctx, func() bool { return pub.Len() > 0 || full() }); err != nil {
			return nil // cancelled: an operator ended the book
		}
		var bc BookChanges
		for pub.ReceiveAsync(&bc) {
			apply(bc)
			bc = BookChanges{}
		}
		if !full() {
			continue
		}
		// Finish the state changes in flight, take the publications that
		// came meanwhile, then start a new run with the recipes.
		if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
			return nil
		}
		for pub.ReceiveAsync(&bc) {
			apply(bc)
			bc = BookChanges{}
		}
		all, _ := mem.List(wctx, recipes.Filter{})
		if bounded {
			all = boundForNextRun(ctx, all)
		}
		return workflow.NewContinueAsNewError(ctx, bookWorkflowName, bookInput{Recipes: all, Runs: in.Runs + 1, PerRun: in.PerRun})
	}
}

// applyChanges applies a host's changes to mem, in order. A change mem
// refuses (a failed replay of a recipe it does not have) is logged and
// skipped: recipes only save model calls.
func applyChanges(ctx workflow.Context, mem *recipes.Memory, changes []RecipeChange) {
	wctx := wfContext{ctx}
	for _, c := range changes {
		var err error
		if c.Proof != nil {
			_, err = mem.Prove(wctx, nightshift.Recipe{Key: c.Key, Commands: c.Commands, Check: c.Check}, *c.Proof)
		} else {
			err = mem.Fail(wctx, c.Failed, c.Key, c.Reason)
		}
		if err != nil {
			workflow.GetLogger(ctx).Warn("a host's recipe change refused", "key", c.Key.String(), "err", err)
		}
	}
}

// adopt loads into mem the recipes of rs it does not have (by ID and key),
// as they are; those it has keep mem's state.
func adopt(ctx workflow.Context, mem *recipes.Memory, rs []nightshift.Recipe) []nightshift.Recipe {
	var out []nightshift.Recipe
	for _, r := range rs {
		have, _ := mem.List(wfContext{ctx}, recipes.Filter{ID: r.ID, Rule: r.Key.Rule}) // a Memory store: no error
		known := false
		for _, x := range have {
			known = known || x.Key == r.Key
		}
		if known {
			continue
		}
		if err := mem.Load(r); err != nil {
			workflow.GetLogger(ctx).Warn("a seed recipe refused", "recipe", r.ID, "err", err)
			continue
		}
		out = append(out, r)
	}
	return out
}

// readBook reads the night's recipe book (the read activity starts it when
// it does not run) and reports whether it could: a night whose workers
// cannot reach it runs on its own recipes, as nights did before the book.
func readBook(ctx workflow.Context, book string) ([]nightshift.Recipe, bool) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumAttempts: 5,
			NonRetryableErrorTypes: []string{errTypeNoBook}},
	})
	var rs []nightshift.Recipe
	if err := workflow.ExecuteActivity(actx, bookReadActivity, book).Get(ctx, &rs); err != nil {
		workflow.GetLogger(ctx).Warn("the recipe book cannot be read; the night keeps its recipes to itself", "book", book, "err", rootMessage(err))
		return nil, false
	}
	return rs, true
}

// publisher sends a night's changes to its recipe book and knows how many
// are not delivered yet.
type publisher struct {
	book, night string // "" book: none
	pending     int
}

// publish signals bc to the book. The signal is sent even when the night
// is being cancelled (what its hosts proved stays proved); a failure (the
// book was terminated) is logged.
func (p *publisher) publish(ctx workflow.Context, bc BookChanges) {
	if p.book == "" {
		return
	}
	bc.Night = p.night
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	fut := workflow.SignalExternalWorkflow(dctx, p.book, "", bookPublishSignal, bc)
	p.pending++
	workflow.Go(dctx, func(g workflow.Context) {
		defer func() { p.pending-- }()
		if err := fut.Get(g, nil); err != nil {
			workflow.GetLogger(g).Warn("recipes not published to the recipe book", "book", p.book, "err", err)
		}
	})
}

// wait returns when every publication has been delivered (or failed): a
// night that ended has its changes in its book.
func (p *publisher) wait(ctx workflow.Context) {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	_ = workflow.Await(dctx, func() bool { return p.pending == 0 }) // a disconnected context is never cancelled
}

// bookReader is the read activity: it holds the client of the worker's
// Temporal frontend.
type bookReader struct{ c client.Client }

// read starts book when no run of it is open (a book is created by the
// first night that reads it) and returns its recipes without their proofs
// (a night proves its own; the book keeps the evidence).
func (b bookReader) read(ctx context.Context, book string) ([]nightshift.Recipe, error) {
	if b.c == nil {
		return nil, temporal.NewNonRetryableApplicationError("this worker has no Temporal client for the recipe book", errTypeNoBook, nil)
	}
	if _, err := b.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: book, TaskQueue: NightQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING}, bookWorkflowName, bookInput{}); err != nil {
		return nil, fmt.Errorf("start recipe book %s: %w", book, err)
	}
	rs, err := queryBook(ctx, b.c, book, recipes.Filter{})
	if err != nil {
		return nil, err
	}
	for i := range rs {
		rs[i].Proofs = nil
	}
	return rs, nil
}

func queryBook(ctx context.Context, c client.Client, book string, f recipes.Filter) ([]nightshift.Recipe, error) {
	v, err := c.QueryWorkflow(ctx, book, "", bookRecipesQuery, f)
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil, fmt.Errorf("%w %s: %w", ErrNoBook, book, err)
		}
		return nil, fmt.Errorf("fleet: query recipe book %s: %w", book, err)
	}
	var rs []nightshift.Recipe
	if err := v.Get(&rs); err != nil {
		return nil, fmt.Errorf("fleet: recipe book %s: %w", book, err)
	}
	return rs, nil
}

// Recipes returns the recipes of the recipe book book (DefaultBook when
// empty) that f selects, in recipes.Store.List's order, with their proofs.
// A book that does not run is ErrNoBook.
func Recipes(ctx context.Context, c client.Client, book string, f recipes.Filter) ([]nightshift.Recipe, error) {
	if book == "" {
		book = DefaultBook
	}
	if err := checkBookRuns(ctx, c, book); err != nil {
		return nil, err
	}
	return queryBook(ctx, c, book, f)
}

// SetRecipeState pins, retires or reactivates recipe id in book (DefaultBook
// when empty) for key, or for every key it is stored under when key is
// nil, as recipes.Store.SetState does; nights started after it replay
// accordingly. It returns the recipe under each of its keys. An id the book
// does not have is recipes.ErrNotFound; a book that does not run, ErrNoBook.
func SetRecipeState(ctx context.Context, c client.Client, book, id string, key *nightshift.RecipeKey, state nightshift.RecipeState) ([]nightshift.Recipe, error) {
	if book == "" {
		book = DefaultBook
	}
	if err := checkBookRuns(ctx, c, book); err != nil {
		return nil, err
	}
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: book, UpdateName: bookSetStateUpdate,
		Args: []any{setStateRequest{ID: id, Key: key, State: state}}, WaitForStage: client.WorkflowUpdateStageCompleted})
	var out []nightshift.Recipe
	if err == nil {
		err = h.Get(ctx, &out)
	}
	var ae *temporal.ApplicationError
	switch {
	case err == nil:
		return out, nil
	case errors.As(err, &ae) && ae.Type() == errTypeRecipeUnknown:
		keys := "any key"
		if key != nil {
			keys = key.String()
		}
		return nil, fmt.Errorf("recipe book %s: recipe %s for %s: %w", book, id, keys, recipes.ErrNotFound)
	default:
		return nil, fmt.Errorf("fleet: recipe book %s: set recipe %s %s: %w", book, id, state, err)
	}
}

// checkBookRuns says ErrNoBook when book has no open run.
func checkBookRuns(ctx context.Context, c client.Client, book string) error {
	d, err := c.DescribeWorkflowExecution(ctx, book, "")
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return fmt.Errorf("%w %s (a fleet night creates it when it starts)", ErrNoBook, book)
		}
		return fmt.Errorf("fleet: recipe book %s: %w", book, err)
	}
	if d.WorkflowExecutionInfo.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return fmt.Errorf("%w %s: it ended %s (the next fleet night starts it again, empty)", ErrNoBook, book, d.WorkflowExecutionInfo.GetStatus())
	}
	return nil
}
