package shell_test

import (
	"fmt"

	"github.com/nightshift-dev/nightshift/shell"
)

func Example() {
	an := shell.Analyze(`cd /etc && for f in ssh/sshd_config issue; do sudo timeout 5 cp "$f" /root/"$f".bak; done`, shell.Config{})
	for _, c := range an.Commands {
		fmt.Printf("%v in %s via %v\n", c, c.Dir, c.Via)
	}
	an = shell.Analyze(`echo 'reboot' | bash`, shell.Config{})
	fmt.Println(an.Problems[0].Reason)
	// Output:
	// cd /etc in /root via []
	// sudo timeout 5 cp ssh/sshd_config /root/ssh/sshd_config.bak in /etc via []
	// timeout 5 cp ssh/sshd_config /root/ssh/sshd_config.bak in /etc via [sudo]
	// cp ssh/sshd_config /root/ssh/sshd_config.bak in /etc via [sudo timeout]
	// sudo timeout 5 cp issue /root/issue.bak in /etc via []
	// timeout 5 cp issue /root/issue.bak in /etc via [sudo]
	// cp issue /root/issue.bak in /etc via [sudo timeout]
	// a shell started by bash reads its commands from a pipe, which cannot be checked
}
