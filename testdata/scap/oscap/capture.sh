#!/usr/bin/env bash
# Captures real `oscap xccdf eval --progress` runs for the scap and ssgfix tests:
# NAME.stdout, NAME.stderr and NAME.exit for each case, and the bash fixes
# `oscap xccdf generate fix` makes from an evaluation's results (the command
# internal/ssgfix.Command builds).
#
#   capture.sh 'ssh -i KEY -p PORT root@127.0.0.1' [host]
#
# The first argument runs a command on a Debian 12 target made by
# internal/debtarget (fail, pass and error cases); with "host" the cases are
# run on this machine instead (no linux-base: notapplicable).
set -euo pipefail
cd "$(dirname "$0")"
run=$1
DS=/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml
P=xccdf_org.ssgproject.content_profile_anssi_bp28_high
R=xccdf_org.ssgproject.content_rule_
capture() {
	local name=$1
	shift
	set +e
	$run "$*" >"$name.stdout" 2>"$name.stderr"
	echo $? >"$name.exit"
	set -e
}
if [ "${2:-}" = host ]; then
	capture notapplicable "oscap xccdf eval --skip-valid --progress --profile $P --rule ${R}sshd_disable_root_login --rule ${R}accounts_tmout ${DS_HOST:-$DS}"
	exit
fi
capture fail-many "oscap xccdf eval --skip-valid --progress --profile $P --rule ${R}sshd_disable_root_login --rule ${R}accounts_tmout --rule ${R}no_direct_root_logins --rule ${R}sysctl_kernel_kptr_restrict $DS"
capture unknown-profile "oscap xccdf eval --skip-valid --progress --profile nosuchprofile --rule ${R}accounts_tmout $DS"
capture unknown-rule "oscap xccdf eval --skip-valid --progress --profile $P --rule ${R}nosuchrule $DS"
capture missing-datastream "oscap xccdf eval --skip-valid --progress --profile $P --rule ${R}accounts_tmout /nonexistent/ds.xml"
# SSG's own remediation text for accounts_tmout (0.1.76).
$run "echo 'typeset -xr TMOUT=600' > /etc/profile.d/tmout.sh" >/dev/null
capture pass-and-fail "oscap xccdf eval --skip-valid --progress --profile $P --rule ${R}accounts_tmout --rule ${R}sshd_disable_root_login $DS"
fixrules=""
for r in accounts_tmout sshd_disable_root_login package_audit_installed aide_periodic_cron_checking grub2_password; do
	fixrules="$fixrules --rule $R$r"
done
capture generate-fix "f=\$(mktemp) && cd /tmp && oscap xccdf eval --skip-valid --results \"\$f\" --profile $P$fixrules $DS >/dev/null 2>&1; oscap xccdf generate fix --fix-type bash --result-id xccdf_org.open-scap_testresult_$P \"\$f\"; rc=\$?; rm -f \"\$f\"; exit \$rc"
