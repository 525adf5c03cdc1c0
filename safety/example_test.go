package safety_test

import (
	"fmt"

	"github.com/nightshift-dev/nightshift"
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

// JudgeEffects judges what a command did in the sandbox: deleting 1,532
// files under /usr is refused however the command was written.
func ExampleJudgeEffects() {
	e := nightshift.Effects{Changes: []nightshift.FileChange{
		{Path: "/usr/share/doc", Change: nightshift.ChangeDeleted, Entries: 1531, Before: nightshift.FileState{Kind: nightshift.FileDir}},
		{Path: "/etc/sysctl.d/99-hardening.conf", Change: nightshift.ChangeCreated, After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644}},
	}}
	for _, r := range safety.JudgeEffects(e, safety.EffectsPolicy{Login: "root", Scope: []string{"/etc/sysctl.d"}}) {
		fmt.Println(r)
	}
	// Output:
	// would delete 1,532 files under /usr (delete-system)
}

// With StrictScope, the rule's paths are default-deny on the host's
// control surfaces: a drop-in for ssh.service written for an sshd rule
// is refused without the judge knowing what the drop-in does.
func ExampleJudgeEffects_strictScope() {
	e := nightshift.Effects{Changes: []nightshift.FileChange{
		{Path: "/etc/ssh/sshd_config", Change: nightshift.ChangeModified, Before: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644}, After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644}},
		{Path: "/etc/systemd/system/ssh.service.d/x.conf", Change: nightshift.ChangeCreated, After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644}},
	}}
	pol := safety.EffectsPolicy{Login: "root", Scope: []string{"/etc/ssh/sshd_config"}, StrictScope: true}
	for _, r := range safety.JudgeEffects(e, pol) {
		fmt.Println(r)
	}
	fmt.Println(safety.ControlSurface("/home/alice/.bashrc"), safety.ControlSurface("/var/log/syslog") == "")
	// Output:
	// would change /etc/systemd/system/ssh.service.d/x.conf, outside the rule's paths /etc/ssh/sshd_config (scope)
	// /home/*/.* true
}
