package fleet

import (
	"context"

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
	registerNight(w, wf)
	registerModel(w, a)
}

func HostWorkflowID(night, host string) string { return hostWorkflowID(night, host) }

func (a *Activities) Probe(ctx context.Context, in ProbeInput) (nightshift.Exec, error) {
	return a.probe(ctx, in)
}

func (a *Activities) Command(ctx context.Context, in CommandInput) (CommandResult, error) {
	return a.command(ctx, in)
}
