// Package report turns the results of a batch run (rules × hosts) into a
// JSON summary, JUnit XML for CI dashboards and a self-contained HTML report.
//
// The input is the plain data model in this package (Run, TaskResult,
// Attempt, Command), with each rule × host's outcome a nightshift.RuleStatus;
// the caller fills it from the worker's outcomes and events, so report does
// not import worker. A Collector builds a Run from those facts
// as they arrive, in the worker's order (commands, then the attempt's end
// with its prompt tokens and limit, then the rule's outcome).
//
// # Outputs
//
//   - WriteJSON writes a Summary: version 1 of a documented format whose
//     field names are stable (new fields may be added; none is renamed or
//     removed without a new version).
//   - WriteJUnit writes JUnit XML valid against the Jenkins/Ant JUnit schema
//     (testdata/report/jenkins-junit.xsd): one <testsuite> per host, one
//     <testcase> per rule × host. A rule not fixed or given up is a
//     <failure>; a check error, failure, unreachable host or interruption is
//     an <error>; a rule that does not apply is <skipped>; fixed and
//     compliant rules pass. Commands with their exit codes and check results
//     go to <system-out>.
//   - WriteHTML writes one HTML file with no external assets (inline CSS and
//     SVG, no script): outcome totals, a rules × hosts matrix, and per rule
//     its outcome on each host, a chart of prompt tokens per attempt against
//     the limit, and each attempt's commands, exit codes and checks.
//
// Everything that comes from commands, models or inputs is escaped for its
// context (html/template for HTML, encoding/xml for JUnit; characters XML
// cannot carry are replaced by U+FFFD). Outputs are deterministic: the same
// Run gives the same bytes.
//
// # Concurrency
//
// The functions only read the Run they are given; they may be called
// concurrently on the same Run as long as no one modifies it meanwhile.
// A Collector is safe for concurrent use, and Collector.Run returns a deep
// copy.
package report
