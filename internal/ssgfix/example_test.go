package ssgfix_test

import (
	"fmt"

	"github.com/nightshift-dev/nightshift/internal/ssgfix"
)

func ExampleParse() {
	// The shape of `oscap xccdf generate fix --fix-type bash` output.
	script := `#!/usr/bin/env bash
###############################################################################
# BEGIN fix (1 / 2) for 'xccdf_org.ssgproject.content_rule_sshd_disable_root_login'
###############################################################################
(>&2 echo "Remediating rule 1/2: 'xccdf_org.ssgproject.content_rule_sshd_disable_root_login'")
sed -i 's/^#*PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config
# END fix for 'xccdf_org.ssgproject.content_rule_sshd_disable_root_login'
###############################################################################
# BEGIN fix (2 / 2) for 'xccdf_org.ssgproject.content_rule_grub2_password'
###############################################################################
(>&2 echo "FIX FOR THIS RULE 'xccdf_org.ssgproject.content_rule_grub2_password' IS MISSING!")
# END fix for 'xccdf_org.ssgproject.content_rule_grub2_password'
`
	fixes, err := ssgfix.Parse(script)
	fmt.Println(len(fixes), err)
	fmt.Println(fixes["sshd_disable_root_login"])
	// Output:
	// 1 <nil>
	// sed -i 's/^#*PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config
}
