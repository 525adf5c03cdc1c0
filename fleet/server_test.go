package fleet_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/nightshift-dev/nightshift/fleet"
	"github.com/nightshift-dev/nightshift/internal/temporaltest"
	"github.com/nightshift-dev/nightshift/served"

	"github.com/nightshift-dev/nightshift"
)

// A night of more hosts than HostsPerRun on a real Temporal dev server:
// it continues as new once, Fetch follows its runs and reads every host's
// result from the host workflows, status counts every task, and today's
// code replays both runs' histories. With NIGHTSHIFT_RECORD_FLEET_HISTORY
// set, the histories become testdata/replay/can%2F…@runN.json.gz.
func TestNightContinuesAsNewOnServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	addr := temporaltest.Start(t)
	const nRules, nHosts = 2, 3
	n := startNight(t, nightOptions{rules: nRules, hosts: nHosts})
	n.Night.NoLessons, n.Night.HostsPerRun, n.Night.ParallelHosts = false, 2, 2
	c, err := client.Dial(client.Options{HostPort: addr, Logger: temporaltest.Quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- fleet.Serve(sctx, fleet.ServeConfig{Client: c, Activities: n.activities(), ModelSlots: 2,
			Workflows: &fleet.Workflows{LoadModel: func(string) (*served.Model, error) { return n.Model, nil }}})
	}()
	defer func() { stop(); <-done }()

	const id = "can"
	run, err := fleet.Start(ctx, c, id, n.Night)
	if err != nil {
		t.Fatal(err)
	}
	first := run.GetRunID() // Get follows the runs, and moves it
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	res, err := fleet.Fetch(ctx, c, id)
	if err != nil {
		t.Fatal(err)
	}
	if res.Runs != 2 || !res.InChildren || len(res.HostRuns) != nHosts {
		t.Fatalf("result: %d runs, InChildren %v, %d host results; want 2, true, %d", res.Runs, res.InChildren, len(res.HostRuns), nHosts)
	}
	st, running, err := fleet.Describe(ctx, c, id)
	if err != nil || running || st.Finished != nRules*nHosts {
		t.Fatalf("Describe: %+v running %v err %v; want %d tasks ended", st, running, err, nRules*nHosts)
	}
	for _, x := range fleet.Report(res).Results {
		if x.Outcome == nightshift.RuleInterrupted {
			t.Errorf("%s on %s interrupted", x.Rule, x.Host)
		}
	}

	// Both runs of the night and a host workflow replay with today's code.
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	runs := []struct{ id, run, file string }{
		{id, first, url.PathEscape(id) + "@run1"},
		{id, d.WorkflowExecutionInfo.Execution.GetRunId(), url.PathEscape(id) + "@run2"},
		{fleet.HostWorkflowID(id, "h02"), "", url.PathEscape(fleet.HostWorkflowID(id, "h02"))},
	}
	if runs[0].run == runs[1].run {
		t.Fatal("the night did not continue as new")
	}
	for _, r := range runs {
		h := history(t, c, r.id, r.run)
		wf := &fleet.Workflows{LoadModel: func(string) (*served.Model, error) { return n.Model, nil }}
		if err := fleet.Replay(wf, r.id, h, temporaltest.Quiet{}); err != nil {
			t.Errorf("replay of %s run %s: %v", r.id, r.run, err)
		}
		record(t, r.file, h)
	}
}

func history(t *testing.T, c client.Client, id, run string) *historypb.History {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, e)
	}
	return h
}

// devServer starts a Temporal dev server for the test and dials it; the
// client is closed when the test ends.
func devServer(t *testing.T) client.Client {
	t.Helper()
	addr := temporaltest.Start(t)
	c, err := client.Dial(client.Options{HostPort: addr, Logger: temporaltest.Quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
