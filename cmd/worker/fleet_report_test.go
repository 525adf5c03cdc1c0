package main

import (
	"bytes"
	"errors"
	"testing"

	"github.com/nightshift-dev/nightshift/fleet"
	"github.com/nightshift-dev/nightshift/orchestrate"
)

// TestFleetReportCountsUnstartedHosts: a night cancelled before its hosts
// started has no results for them, and its report still exits "not
// fixed" for every rule × host it never reached (before, with no result
// to count, it exited 0: seen in readme_fleet.txtar run without -race,
// where the cancel came before the host workflows started).
func TestFleetReportCountsUnstartedHosts(t *testing.T) {
	res := fleet.NightResult{Name: "tonight", Rules: []orchestrate.RuleRef{{ID: "a"}, {ID: "b"}}, Hosts: []string{"web1", "web2"}}
	var out bytes.Buffer
	err := finishFleetReport("tonight", &runMeta{}, res, &out)
	var nf *notFixed
	if !errors.As(err, &nf) || nf.n != 4 || nf.total != 4 {
		t.Fatalf("finishFleetReport = %v, want 4 of 4 rules not fixed\n%s", err, out.String())
	}
	if got := out.String(); got != "night tonight: 0 of 4 rules × hosts finished\n" {
		t.Errorf("stdout = %q", got)
	}
}
