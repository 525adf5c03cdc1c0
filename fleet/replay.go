package fleet

import (
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// newReplayer returns a workflow replayer with the night and host workflows
// of wf registered under their names. Replaying the recorded history of a
// night (or host) with it fails when the code no longer takes the steps the
// history recorded — a change that would break nights running when it is
// deployed (guard such a change with workflow.GetVersion).
func newReplayer(wf *Workflows) worker.WorkflowReplayer {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(wf.night, workflow.RegisterOptions{Name: nightWorkflowName})
	r.RegisterWorkflowWithOptions(wf.host, workflow.RegisterOptions{Name: hostWorkflowName})
	r.RegisterWorkflowWithOptions(wf.book, workflow.RegisterOptions{Name: bookWorkflowName})
	return r
}

// Replay replays the history of workflow id (a night or a host) with wf's
// code. The id matters for nights: their children's ids derive from it.
func Replay(wf *Workflows, id string, h *historypb.History, logger log.Logger) error {
	return newReplayer(wf).ReplayWorkflowHistoryWithOptions(logger, h,
		worker.ReplayWorkflowHistoryOptions{OriginalExecution: workflow.Execution{ID: id}})
}
