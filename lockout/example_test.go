package lockout_test

import (
	"fmt"

	"github.com/nightshift-dev/nightshift/lockout"
)

// A worker that logs in as root must not fix sshd_disable_root_login: the
// rule ends needs_access_change with the change and the reason.
func ExampleRequiresAccessChange() {
	if ch, ok := lockout.RequiresAccessChange("sshd_disable_root_login", "root"); ok {
		fmt.Println("needs_access_change:", ch.Change)
	}
	_, ok := lockout.RequiresAccessChange("sshd_disable_root_login", "ops")
	fmt.Println("as ops:", ok)
	// Output:
	// needs_access_change: PermitRootLogin no in /etc/ssh/sshd_config
	// as ops: false
}
