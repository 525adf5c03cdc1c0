package distill_test

import (
	"fmt"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/distill"
)

func Example() {
	d := distill.New(distill.Config{})
	turn := distill.Turn{
		Number: 4,
		Steps: []distill.Step{{
			Action:   nightshift.ActionRan,
			Tool:     nightshift.ToolApply,
			Command:  `sudo apt-get install -y aide`,
			ExitCode: 100,
			Stdout: "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 812 (unattended-upgr)\n" +
				"E: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), is another process using it?\n",
		}},
		Check: nightshift.CheckFail,
	}
	s := d.Summarize(turn)
	fmt.Println(s.Line())
	fmt.Println(distill.Merge([]distill.Summary{s}))
	fmt.Println(distill.Canonical(`sed  -i "s/a/b/"  /etc/f`))
	fmt.Println(distill.Targets(`echo 'PermitRootLogin no' | sudo tee -a /etc/ssh/sshd_config && sudo systemctl restart ssh`))
	// Output:
	// [Turn 4: ran `sudo apt-get install -y aide` — exit 100: "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 812 (unattended-upgr)"; re-check failed]
	// [Turn 4: ran apt-get install aide — re-check failed every time; dpkg lock held]
	// sed -i s/a/b/ /etc/f
	// [/etc/ssh/sshd_config ssh]
}
