package report_test

import (
	"fmt"
	"os"
	"time"

	"github.com/nightshift-dev/nightshift/report"

	"github.com/nightshift-dev/nightshift"
)

func Example() {
	exit := 0
	start := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC)
	run := &report.Run{
		Name:     "nightly",
		Started:  start,
		Finished: start.Add(90 * time.Second),
		Results: []report.TaskResult{
			{Rule: "sshd_disable_root_login", Host: "web01", Outcome: nightshift.RuleFixed, Duration: 40 * time.Second,
				Attempts: []report.Attempt{{Number: 1, PromptTokens: 3120, Limit: 14336, Check: "pass",
					Commands: []report.Command{{Command: "sed -i 's/^PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config", Action: "ran", ExitCode: &exit, Check: "pass"}}}}},
			{Rule: "grub2_audit_argument", Host: "web01", Outcome: nightshift.RuleNotApplicable, Reason: "no GRUB 2"},
		},
	}
	s := report.NewSummary(run)
	fmt.Println(s.Totals.Results, "results,", s.Totals.Passed, "passed,", s.Totals.Outcomes[nightshift.RuleNotApplicable], "not applicable")

	// The HTML report goes to a file with report.WriteHTML; JUnit XML:
	if err := report.WriteJUnit(os.Stdout, run); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 2 results, 1 passed, 1 not applicable
	// <?xml version="1.0" encoding="UTF-8"?>
	// <testsuites name="nightly" tests="2" failures="0" errors="0" time="90.000">
	//   <testsuite name="web01" tests="2" failures="0" errors="0" skipped="1" time="40.000" timestamp="2026-11-21T23:00:00" hostname="web01" id="0">
	//     <testcase name="sshd_disable_root_login" classname="web01" time="40.000" status="fixed">
	//       <system-out><![CDATA[sshd_disable_root_login on web01: fixed
	// attempt 1: prompt 3120 of 14336 tokens, check pass
	//   $ sed -i 's/^PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config
	//     ran, exit 0, check pass
	// ]]></system-out>
	//     </testcase>
	//     <testcase name="grub2_audit_argument" classname="web01" time="0.000" status="notapplicable">
	//       <skipped>the rule does not apply to this host: no GRUB 2</skipped>
	//       <system-out><![CDATA[grub2_audit_argument on web01: notapplicable (no GRUB 2)
	// ]]></system-out>
	//     </testcase>
	//   </testsuite>
	// </testsuites>
}
