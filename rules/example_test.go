package rules_test

import (
	"context"
	"fmt"

	"github.com/nightshift-dev/nightshift/rules"

	"github.com/nightshift-dev/nightshift"
)

func Example() {
	set, err := rules.Parse("sshd.yaml", []byte(`
rules:
  - id: sshd_disable_root_login
    title: Disable SSH root login
    check: "grep -Eq '^[[:space:]]*PermitRootLogin[[:space:]]+no' /etc/ssh/sshd_config"
    banned: ['systemctl (restart|stop) ssh']
    max_attempts: 20
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	rule, _ := set.Get("sshd_disable_root_login")

	// The worker's ban list: the built-in bans plus the rule's own.
	bans, err := rule.BanList(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, cmd := range []string{
		`sed -i 's/^#\?PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config`,
		`sshd -t && sudo systemctl restart ssh`,
		`bash -c "sleep 1; /sbin/reboot"`,
	} {
		if ban, banned := bans.Match(cmd); banned {
			fmt.Printf("banned: %s (%s)\n", ban.Construct, ban.Reason)
		} else {
			fmt.Println("allowed:", cmd)
		}
	}

	// Evaluate the check through a nightshift.Runner (sshexec's client in
	// production; here one whose grep finds no match).
	res, err := rule.Evaluate(context.Background(), exitRunner{code: 1})
	fmt.Println(res.Status, res.Detail, err)

	// Validation errors name the file, line and field.
	_, err = rules.Parse("typo.yaml", []byte("rules:\n  - id: x\n    check: 'true'\n    max_attemps: 3\n"))
	fmt.Println(err)
	// Output:
	// allowed: sed -i 's/^#\?PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config
	// banned: systemctl restart ssh (matches an added ban pattern)
	// banned: reboot (takes the host down)
	// fail exit 1: not compliant <nil>
	// typo.yaml:4: rules[0].max_attemps: unknown field (did you mean "max_attempts"?) (a rule has id, title, description, check, banned, hints, max_attempts, paths, units, sysctl, keys, recipes)
}

// exitRunner answers every command with an exit code and stdout.
type exitRunner struct {
	code   int
	stdout string
}

func (r exitRunner) Run(context.Context, string) (nightshift.Exec, error) {
	return nightshift.Exec{ExitCode: r.code, Stdout: r.stdout}, nil
}
