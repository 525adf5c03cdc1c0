package safety_test

import (
	"fmt"

	"github.com/nightshift-dev/nightshift/safety"
)

func Example() {
	// The built-in table plus a rule's own pattern.
	bans, err := safety.NewBanList([]string{`systemctl (restart|stop) ssh`})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, cmd := range []string{
		`sed -i 's/^#\?PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config && sshd -t && systemctl reload ssh`,
		`for d in /etc /usr; do rm -rf "$d"; done`,
		"true\r#; reboot",
		`systemctl -q restart ss[h]`,
	} {
		if ban, banned := bans.Match(cmd); banned {
			fmt.Printf("blocked (%s): %s\n", ban.Entry, ban.Construct)
		} else {
			fmt.Println("allowed")
		}
	}
	// Output:
	// allowed
	// blocked (delete-system): rm -rf /etc
	// blocked (unanalysable): "true\r#; reboot"
	// blocked (pattern): systemctl restart ssh
}
