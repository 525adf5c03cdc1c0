package fleet

import (
	"github.com/nightshift-dev/nightshift/orchestrate"
	"github.com/nightshift-dev/nightshift/report"
)

// Report builds the report of a night from its result
// (orchestrate.Report), in the order of the night's rules then hosts: the
// same report a `worker run` of the same inputs gives. A night still
// running ends now in the report.
func Report(r NightResult) *report.Run {
	g := orchestrate.Grid{Name: r.Name, Model: r.Model, Started: r.Started, Ended: r.Ended, Rules: r.Rules, Hosts: r.Hosts}
	for _, hr := range r.HostRuns {
		g.Tasks = append(g.Tasks, hr.Tasks...)
	}
	return orchestrate.Report(g)
}
