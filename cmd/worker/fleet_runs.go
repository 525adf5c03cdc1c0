package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/nightshift-dev/nightshift/fleet"
	"github.com/nightshift-dev/nightshift/report"

	"github.com/nightshift-dev/nightshift"
)

const fleetStatusUsage = `Usage:
  worker fleet status --temporal ADDR RUN

Prints how far night RUN got: rules × hosts ended, outcomes, and each host's
state (waiting, running, done, unreachable, stopped). Exit 0 when it has
ended, 1 while it runs.
`

const fleetStatusExamples = `
Examples:
  worker fleet status tonight
  worker fleet status --temporal temporal.internal:7233 --namespace nights tonight
`

const fleetReportUsage = `Usage:
  worker fleet report --temporal ADDR RUN [--html FILE] [--junit FILE] [--json-report FILE]

Writes the reports of night RUN — the same JSON summary, JUnit XML and HTML
report 'worker run' writes — from its result (while it runs: from what has
ended; the rest is reported interrupted) and prints its summary.
`

const fleetReportExamples = `
Examples:
  worker fleet report tonight
  worker fleet report tonight --html night.html --junit night.xml --json-report night.json
`

const fleetCancelUsage = `Usage:
  worker fleet cancel --temporal ADDR RUN
  worker fleet cancel --temporal ADDR --schedule ID

Cancels night RUN: no more hosts start, running hosts stop after their
current step, and the night ends with what was done ('worker fleet report'
still works). With --schedule, deletes the schedule ID (nights it started
are not touched).
`

const fleetCancelExamples = `
Examples:
  worker fleet cancel tonight
  worker fleet cancel --schedule nightly
`

func oneRun(fs *flags, usage, examples string, args []string) (string, error) {
	rest, err := parseFleetFlags(fs, usage, examples, args)
	if err != nil {
		return "", err
	}
	if len(rest) != 1 {
		return "", usagef("%s: give exactly one RUN", strings.TrimPrefix(fs.Name(), "worker "))
	}
	return rest[0], nil
}

func runFleetStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var tf temporalFlags
	fs := newFlags(cmdFleetStatus, stderr)
	bindTemporalFlags(fs, &tf)
	id, err := oneRun(fs, fleetStatusUsage, fleetStatusExamples, args)
	if err != nil {
		return err
	}
	c, err := tf.dial(ctx, stderr)
	if err != nil {
		return err
	}
	defer c.Close()
	st, running, err := fleet.Describe(ctx, c, id)
	if err != nil {
		return err
	}
	state := "ended"
	if running {
		state = "running"
	}
	fmt.Fprintf(stdout, "night %s (%s): %s, %d of %d rules × hosts ended\n", id, st.Name, state, st.Finished, st.Total)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, o := range sortedByName(st.Outcomes) {
		fmt.Fprintf(tw, "  %s\t%d\n", o, st.Outcomes[o])
	}
	for _, h := range sortedKeys(st.Hosts) {
		fmt.Fprintf(tw, "  host %s\t%s\n", h, st.Hosts[h])
	}
	tw.Flush()
	if running {
		return &stillRunning{id}
	}
	return nil
}

// stillRunning: status of a night that has not ended, exit 1.
type stillRunning struct{ id string }

func (e *stillRunning) Error() string { return "night " + e.id + " is still running" }
func (e *stillRunning) ExitCode() int { return exitNotFixed }

// sortedByName returns the outcomes of m in the order of their names.
func sortedByName[V any](m map[nightshift.RuleStatus]V) []nightshift.RuleStatus {
	ks := make([]nightshift.RuleStatus, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b nightshift.RuleStatus) int { return strings.Compare(a.String(), b.String()) })
	return ks
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func runFleetReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var tf temporalFlags
	m := &runMeta{}
	fs := newFlags(cmdFleetReport, stderr)
	bindTemporalFlags(fs, &tf)
	fs.bind("json-report", &m.JSONReport)
	fs.bind("junit", &m.JUnit)
	fs.bind("html", &m.HTML)
	id, err := oneRun(fs, fleetReportUsage, fleetReportExamples, args)
	if err != nil {
		return err
	}
	if err := checkOutputs(m); err != nil {
		return err
	}
	c, err := tf.dial(ctx, stderr)
	if err != nil {
		return err
	}
	defer c.Close()
	res, err := fleet.Fetch(ctx, c, id)
	if err != nil {
		return err
	}
	return finishFleetReport(id, m, res, stdout)
}

// finishFleetReport writes the reports m names, prints the summary and
// returns the exit status 'worker run' would: not fixed when some rule is.
func finishFleetReport(id string, m *runMeta, res fleet.NightResult, stdout io.Writer) error {
	rep := fleet.Report(res)
	if err := writeReports(m, rep); err != nil {
		return err
	}
	st := fleet.StatusOf(res)
	fmt.Fprintf(stdout, "night %s: %d of %d rules × hosts finished\n", id, st.Finished, st.Total)
	s := report.NewSummary(rep)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, o := range nightshift.RuleStatuses() {
		if n := s.Totals.Outcomes[o]; n > 0 {
			fmt.Fprintf(tw, "  %s\t%d\n", o, n)
		}
	}
	tw.Flush()
	bad := 0
	for _, x := range rep.Results {
		if !x.Outcome.Passed() {
			bad++
		}
	}
	// A rule × host with no result (its host never started: the night was
	// cancelled first, or has not reached it) is not fixed either.
	total := max(st.Total, len(rep.Results))
	bad += total - len(rep.Results)
	if bad > 0 {
		return &notFixed{bad, total}
	}
	return nil
}

func runFleetCancel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var tf temporalFlags
	var schedule string
	fs := newFlags(cmdFleetCancel, stderr)
	bindTemporalFlags(fs, &tf)
	fs.bind("schedule", &schedule)
	rest, err := parseFleetFlags(fs, fleetCancelUsage, fleetCancelExamples, args)
	if err != nil {
		return err
	}
	if (schedule == "") == (len(rest) != 1) || len(rest) > 1 {
		return usagef("fleet cancel: give exactly one RUN, or --schedule ID")
	}
	c, err := tf.dial(ctx, stderr)
	if err != nil {
		return err
	}
	defer c.Close()
	if schedule != "" {
		if err := fleet.Unschedule(ctx, c, schedule); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "schedule %s deleted\n", schedule)
		return nil
	}
	if err := fleet.Cancel(ctx, c, rest[0]); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "night %s: cancel requested\n", rest[0])
	return nil
}
