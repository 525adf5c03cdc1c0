package fleet

import (
	"context"

	"go.temporal.io/sdk/client"
	tworker "go.temporal.io/sdk/worker"

	"github.com/nightshift-dev/nightshift"
)

// What the external tests reach of the workflows and activities, which are
// not part of the client or serve API.
const (
	NightWorkflowName = nightWorkflowName
	UndoWorkflowName  = undoWorkflowName
	CommandActivity   = commandActivity
	ModelActivity     = modelActivity
)

type (
	CommandInput  = commandInput
	CommandResult = commandResult
	ProbeInput    = probeInput
)

// Register registers every queue's workflows and activities on one test
// environment, with Serve's own registrations.
func Register(w tworker.Registry, wf *Workflows, a *Activities) {
	registerZone(w, wf, a)
	registerNight(w, wf, nil)
	registerModel(w, a)
}

// NightWorker is a worker of the night queue alone (nights, undo, recipe
// books), for tests whose recipe book outlives the serve processes of
// their nights.
func NightWorker(c client.Client, wf *Workflows) tworker.Worker {
	w := tworker.New(c, NightQueue, tworker.Options{})
	registerNight(w, wf, c)
	return w
}

// StartBook starts recipe book id, continuing as new after perRun changes.
func StartBook(ctx context.Context, c client.Client, id string, perRun int) (client.WorkflowRun, error) {
	return c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: NightQueue}, bookWorkflowName, bookInput{PerRun: perRun})
}

func HostWorkflowID(night, host string) string { return hostWorkflowID(night, host) }

func (a *Activities) Probe(ctx context.Context, in ProbeInput) (nightshift.Exec, error) {
	return a.probe(ctx, in)
}

func (a *Activities) Command(ctx context.Context, in CommandInput) (CommandResult, error) {
	return a.command(ctx, in)
}

// PublishToBook signals bc to book, as a night does as each host ends.
func PublishToBook(ctx context.Context, c client.Client, book string, bc BookChanges) error {
	return c.SignalWorkflow(ctx, book, "", bookPublishSignal, bc)
}
