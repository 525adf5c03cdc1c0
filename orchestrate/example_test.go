package orchestrate_test

import (
	"fmt"
	"time"

	"github.com/nightshift-dev/nightshift/orchestrate"

	"github.com/nightshift-dev/nightshift"
)

// Example builds the report of a night of two rules on two hosts: one
// task fixed at its second attempt, one compliant, one not finished and
// one never started.
func Example() {
	start := time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)
	fixed := orchestrate.Task{Rule: "sshd_disable_root_login", Host: "web-1", Finished: true,
		Outcome: nightshift.Outcome{Rule: "sshd_disable_root_login", Status: nightshift.RuleFixed, Attempts: 2}}
	fixed.AddCommand(1, orchestrate.CommandEntry("sed -i 's/^PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config",
		nightshift.ActionRan, nightshift.Exec{ExitCode: 2, Stderr: "sed: can't read /etc/ssh/sshd_config: No such file"}, "", 0))
	fixed.Checked(1, nightshift.CheckFail)
	fixed.EndAttempt(1, 2100, 12000, nightshift.CheckFail, false)
	fixed.AddCommand(2, orchestrate.CommandEntry("echo 'PermitRootLogin no' > /etc/ssh/sshd_config.d/10-root.conf",
		nightshift.ActionRan, nightshift.Exec{}, "", 0))
	fixed.Checked(2, nightshift.CheckPass)
	fixed.EndAttempt(2, 2600, 12000, nightshift.CheckPass, false)

	run := orchestrate.Report(orchestrate.Grid{Name: "nightly", Model: "qwen3", Started: start, Ended: start.Add(time.Hour),
		Rules: []orchestrate.RuleRef{{ID: "sshd_disable_root_login"}, {ID: "accounts_tmout"}},
		Hosts: []string{"web-1", "web-2"},
		Tasks: []orchestrate.Task{
			fixed,
			{Rule: "sshd_disable_root_login", Host: "web-2", Finished: true, Outcome: nightshift.Outcome{Status: nightshift.RuleCompliant}},
			{Rule: "accounts_tmout", Host: "web-1"},
		}})
	for _, r := range run.Results {
		fmt.Printf("%s on %s: %s (%d attempts)\n", r.Rule, r.Host, r.Outcome, len(r.Attempts))
		for _, a := range r.Attempts {
			for _, c := range a.Commands {
				fmt.Printf("  attempt %d: exit %d, check %s\n", a.Number, *c.ExitCode, c.Check)
			}
		}
	}
	fmt.Println("not started:", run.NotStarted)
	// Output:
	// sshd_disable_root_login on web-1: fixed (2 attempts)
	//   attempt 1: exit 2, check fail
	//   attempt 2: exit 0, check pass
	// sshd_disable_root_login on web-2: compliant (0 attempts)
	// accounts_tmout on web-1: interrupted (0 attempts)
	// not started: 1
}
