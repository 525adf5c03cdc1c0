package distill_test

import (
	"fmt"

	nightshift "github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/distill"
)

// The README's sample line (its section "Nightshift"): a sed whose
// expression is cut short, and the re-check that still finds root logins
// permitted. TestREADMELine fails when the README quotes
// anything but this Example's output.
func Example_readme() {
	d := distill.New(distill.Config{})
	s := d.Summarize(distill.Turn{
		Number: 4,
		Steps: []distill.Step{{
			Action:   nightshift.ActionRan,
			Tool:     nightshift.ToolApply,
			Command:  `sed -i 's/^#\?PermitRootLogin.*/PermitRootLogin no' /etc/ssh/sshd_config`,
			ExitCode: 1,
			Stderr:   "sed: -e expression #1, char 42: unterminated `s' command\n",
		}},
		Check:       nightshift.CheckFail,
		CheckOutput: "PermitRootLogin yes\n",
	})
	fmt.Println(s.Line())
	// Output:
	// [Turn 4: ran `sed -i 's/^#\?PermitRootLogin.*/PermitRootLogin no' /etc/ssh/sshd_config` — exit 1: "sed: -e expression #1, char 42: unterminated `s' command"; re-check failed: "PermitRootLogin yes"]
}
