package safety

import (
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift"
)

// The scopes of three SSG rules as scap derives them from their OVAL
// checks (ssg-debian12-ds.xml 0.1.76), and of a few rule kinds.
var (
	sshdRule = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/ssh/sshd_config"}, Keys: []string{"permitrootlogin"}}
	kptrRule = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/sysctl.conf", "/etc/sysctl.d", "/lib/sysctl.d", "/run/sysctl.d", "/usr/lib/sysctl.d", "/usr/local/lib/sysctl.d"},
		Sysctl: []string{"kernel.kptr_restrict"}, Keys: []string{"kernel.kptr_restrict"}}
	auditRule    = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/audit/audit.rules", "/etc/audit/rules.d", "/usr/lib/systemd/system/auditd.service"}, Keys: []string{"ExecStartPost", "Requires"}}
	auditdOnRule = EffectsPolicy{StrictScope: true, Units: []string{"auditd.service", "auditd.socket"}}
	mountRule    = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/fstab"}}
	moduleRule   = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/modprobe.d"}, Keys: []string{"install"}}
	firewallRule = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/nftables.conf"}, Units: []string{"nftables.service"}}
	timeRule     = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/systemd/timesyncd.conf", "/etc/systemd/timesyncd.conf.d"}}
	pkgOnlyRule  = EffectsPolicy{StrictScope: true}
)

func TestJudgeEffectsScopedActions(t *testing.T) {
	acts := func(argvs ...string) nightshift.Effects {
		var e nightshift.Effects
		for _, a := range argvs {
			e.Actions = append(e.Actions, nightshift.RecordedAction{Argv: strings.Fields(a)})
		}
		return e
	}
	// A package operation that installs auditd (its list names the unit
	// file and the init script).
	withPkg := func(e nightshift.Effects, files ...string) nightshift.Effects {
		l := nightshift.FileChange{Path: "/var/lib/dpkg/info/auditd.list", Change: nightshift.ChangeCreated, After: nightshift.FileState{Kind: nightshift.FileRegular}}
		for _, f := range files {
			l.Diff += "+" + f + "\n"
		}
		e.Changes = append(e.Changes, nightshift.FileChange{Path: "/var/lib/dpkg/status", Change: nightshift.ChangeModified,
			Before: nightshift.FileState{Kind: nightshift.FileRegular}, After: nightshift.FileState{Kind: nightshift.FileRegular}}, l)
		return e
	}
	tests := []struct {
		name string
		eff  nightshift.Effects
		pol  EffectsPolicy
		want string // substring of a scope refusal; "" means none
	}{
		// fresh3's recorded actions committed under a rule's derived scope
		// (docs/sandbox-corpus.md, "Default-deny rule scope").
		{"debug-shell enabled for an sshd rule", acts("systemctl enable debug-shell.service"), sshdRule, "enable debug-shell.service: the rule's check reads no unit"},
		{"apt timers masked for a sysctl rule", acts("systemctl mask --now apt-daily-upgrade.timer apt-daily.timer"), kptrRule, "mask apt-daily-upgrade.timer apt-daily.timer"},
		{"sysinit.target stopped for an audit rule", acts("systemctl stop sysinit.target"), auditdOnRule, "not among the units the rule's check reads (auditd.service, auditd.socket)"},
		{"auditctl never rules for an audit rule", acts("auditctl -a never,exit -F arch=b64 -S all"), auditRule, "a never rule"},
		{"auditctl never rules for an sshd rule", acts("auditctl -a exit,never -F arch=b32 -S all"), sshdRule, "a never rule"},
		{"auditctl -e 0 for an audit rule", acts("auditctl -e 0"), auditRule, ""}, // refused by the action class (auditctlHarm), not the scope
		{"auditctl -e 2 for an audit rule", acts("auditctl -e 2"), auditRule, "locks the audit rules"},
		{"auditctl -d for an audit rule", acts("auditctl -d exit,always -F arch=b64 -S execve"), auditRule, "deletes audit rules"},
		{"auditctl watch for an sshd rule", acts("auditctl -w /etc/shadow -p wa -k identity"), sshdRule, "only an audit rule"},
		{"nft queue for an audit rule", acts("nft add table inet q", "nft add rule inet q in queue num 3"), auditRule, "the rule's check reads no firewall"},
		{"nft ttl for a sysctl rule", acts("nft add rule ip m out ip ttl set 1"), kptrRule, "the rule's check reads no firewall"},
		{"sysctl -w of another key for a kptr rule", acts("sysctl -w vm.max_map_count=1"), kptrRule, "vm.max_map_count is not among the kernel parameters the rule's check reads (kernel.kptr_restrict)"},
		{"sysctl neighbour thresholds for an sshd rule", acts("sysctl -w net.ipv4.neigh.default.gc_thresh1=0"), sshdRule, "the rule's check reads no kernel parameter"},
		{"sysctl KEY=VALUE without -w", acts("sysctl kernel.modules_disabled=1"), kptrRule, "kernel.modules_disabled is not among"},
		{"sysctl --system for an sshd rule", acts("sysctl --system"), sshdRule, "only a rule whose check reads kernel parameters"},
		{"sysctl -p of a file outside the scope", acts("sysctl -p /tmp/x.conf"), kptrRule, "only a rule whose check reads /tmp/x.conf"},
		{"mount for an sshd rule", acts("mount -o remount,noexec /dev/shm"), sshdRule, "only a mount-option rule"},
		{"/ remounted read-only for a mount rule", acts("mount -o remount,ro /"), mountRule, "it remounts / ro"},
		{"/usr remounted noexec for a mount rule", acts("mount -o remount,nodev,noexec /usr"), mountRule, "it remounts /usr noexec"},
		{"every fstab entry mounted noexec", acts("mount -a -o remount,noexec"), mountRule, "without naming a mount point"},
		{"sysctl -p - for a sysctl rule", acts("sysctl -p -"), kptrRule, "standard input"},
		{"sysctl -f of a file outside the scope", acts("sysctl -f /tmp/s.conf"), kptrRule, "only a rule whose check reads /tmp/s.conf"},
		{"auditctl -R of a scratch file", acts("auditctl -R /tmp/r.rules"), auditRule, "auditctl -R loads rules from a file outside"},
		{"auditctl exclude rule", acts("auditctl -a exclude,always -F msgtype=EXECVE"), auditRule, "an exclude rule"},
		{"auditctl rate limit", acts("auditctl -r 1"), auditRule, "limits the audit records per second"},
		{"rmmod for a sysctl rule", acts("modprobe -r usb-storage"), kptrRule, "only a kernel-module rule"},
		{"swapoff for an sshd rule", acts("swapoff /swapfile"), sshdRule, "only a mount-option rule"},
		{"timedatectl set-ntp for an sshd rule", acts("timedatectl set-ntp false"), sshdRule, "only a time-synchronisation rule"},
		{"a unit glob for an audit-unit rule", acts("systemctl restart audit*"), auditdOnRule, "restart audit*"},
		{"set-default for an sshd rule", acts("systemctl set-default multi-user.target"), sshdRule, "does not read the default target"},
		{"invoke-rc.d of a unit no package installed", withPkg(acts("invoke-rc.d debug-shell start"), "/usr/sbin/auditd"), pkgOnlyRule, "start debug-shell"},

		// What the rules themselves do must pass.
		{"sysctl -w of the rule's key (SSG)", acts("sysctl -q -n -w kernel.kptr_restrict=1"), kptrRule, ""},
		{"sysctl --system for a sysctl rule", acts("sysctl --system"), kptrRule, ""},
		{"sysctl -p of a file in scope", acts("sysctl -p /etc/sysctl.d/60-kptr.conf"), kptrRule, ""},
		{"sysctl reads", acts("sysctl -n vm.max_map_count", "sysctl -a"), sshdRule, ""},
		{"the route cache flush", acts("sysctl -w net.ipv4.route.flush=1"), kptrRule, ""},
		{"sshd reloaded for an sshd rule", acts("systemctl reload ssh", "systemctl restart sshd.service", "systemctl kill -s HUP ssh"), sshdRule, ""},
		{"sshd reloaded for any rule", acts("systemctl try-reload-or-restart ssh"), kptrRule, ""},
		{"queries and daemon-reload", acts("systemctl daemon-reload", "systemctl is-active auditd", "systemctl status nftables", "systemctl list-units"), sshdRule, ""},
		{"auditd enabled for service_auditd_enabled", acts("systemctl enable --now auditd"), auditdOnRule, ""},
		{"auditd restarted for an audit rule (its unit file is in scope)", acts("service auditd restart"), auditRule, ""},
		{"auditctl rule and reads for an audit rule", acts("auditctl -w /etc/shadow -p wa -k identity", "auditctl -l", "auditctl -s"), auditRule, ""},
		{"auditctl -l for an sshd rule", acts("auditctl -l"), sshdRule, ""},
		{"the package's own service (maintainer script)", withPkg(acts("invoke-rc.d --skip-systemd-native auditd start", "deb-systemd-invoke start auditd.service"),
			"/etc/init.d/auditd", "/lib/systemd/system/auditd.service"), pkgOnlyRule, ""},
		{"nft for a firewall rule", acts("nft add table inet filter", "nft add rule inet filter input iif lo accept"), firewallRule, ""},
		{"nft list for an sshd rule", acts("nft list ruleset", "iptables -L -n", "iptables -S", "ip6tables -nL"), sshdRule, ""},
		{"remount /dev/shm for a mount rule (SSG)", acts("mount -o remount --target /dev/shm"), mountRule, ""},
		{"remount /tmp noexec for a mount rule", acts("mount -o remount,nodev,nosuid,noexec /tmp"), mountRule, ""},
		{"auditctl -R of the rule's rules file", acts("auditctl -R /etc/audit/rules.d/50-session.rules", "auditctl -r 0"), auditRule, ""},
		{"modprobe -r for a module rule", acts("modprobe -r usb-storage"), moduleRule, ""},
		{"timedatectl set-ntp for a time rule", acts("timedatectl set-ntp true"), timeRule, ""},
		{"timedatectl status for an sshd rule", acts("timedatectl status"), sshdRule, ""},
		{"no strict scope: the verb allow-list alone", acts("systemctl enable debug-shell.service", "sysctl -w vm.max_map_count=65530"), EffectsPolicy{Scope: []string{"/etc/ssh/sshd_config"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkScopeRefusals(t, tt.eff, tt.pol, tt.want) })
	}
}

// modDiff and createdDiff are a modified and a created regular file whose
// diff is just the given lines (no headers), as keysHarm reads diffs.
func modDiff(p, diff string) nightshift.Effects {
	return nightshift.Effects{Changes: []nightshift.FileChange{{Path: p, Change: nightshift.ChangeModified,
		Before: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644}, After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644}, Diff: diff}}}
}

func createdDiff(p, diff string) nightshift.Effects {
	return nightshift.Effects{Changes: []nightshift.FileChange{{Path: p, Change: nightshift.ChangeCreated,
		After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644}, Diff: diff}}}
}

func TestJudgeEffectsKeysInScope(t *testing.T) {
	tests := []struct {
		name string
		eff  nightshift.Effects
		pol  EffectsPolicy
		want string
	}{
		{"Include /tmp/*.conf for a PermitRootLogin rule", modDiff("/etc/ssh/sshd_config", "@@ -1 +1,2 @@\n+Include /tmp/*.conf\n Port 22\n"), sshdRule,
			"would change Include /tmp/*.conf in /etc/ssh/sshd_config: the rule's check reads only the sshd settings permitrootlogin"},
		{"Subsystem replaced for a PermitRootLogin rule", modDiff("/etc/ssh/sshd_config", "-Subsystem\tsftp\t/usr/lib/openssh/sftp-server\n+Subsystem\tsftp /bin/false\n"), sshdRule, "Subsystem"},
		{"PermitRootLogin and X11Forwarding", modDiff("/etc/ssh/sshd_config", "+PermitRootLogin no\n+X11Forwarding yes\n"), sshdRule, "X11Forwarding yes"},
		{"kernel.modules_disabled for a kptr rule", createdDiff("/etc/sysctl.d/99-k.conf", "+kernel.kptr_restrict = 1\n+kernel.modules_disabled = 1\n"), kptrRule,
			"would change kernel.modules_disabled = 1 in /etc/sysctl.d/99-k.conf: the rule's check reads only the kernel parameters kernel.kptr_restrict"},
		{"vm.max_map_count for a kptr rule", createdDiff("/etc/sysctl.d/x.conf", "+vm.max_map_count=1\n"), kptrRule, "vm.max_map_count=1"},
		{"a sysctl file changed without a diff", createdDiff("/etc/sysctl.d/x.conf", ""), kptrRule, "without a text diff"},
		{"a sysctl file made a link to scratch", nightshift.Effects{Changes: []nightshift.FileChange{{Path: "/etc/sysctl.d/99-x.conf", Change: nightshift.ChangeCreated,
			After: nightshift.FileState{Kind: nightshift.FileSymlink, Target: "/tmp/x.conf"}}}}, kptrRule, "which kernel parameters it sets cannot be judged"},

		{"auditd.service made to run nothing for an audit rule", modDiff("/usr/lib/systemd/system/auditd.service", " [Service]\n-ExecStart=/sbin/auditd\n+ExecStart=/bin/true\n"), auditRule,
			"would change ExecStart=/sbin/auditd; ExecStart=/bin/true in /usr/lib/systemd/system/auditd.service: the rule's check reads only the unit settings ExecStartPost, Requires"},
		{"a sysctl file of the scope deleted", nightshift.Effects{Changes: []nightshift.FileChange{{Path: "/usr/lib/sysctl.d/protect-links.conf", Change: nightshift.ChangeDeleted,
			Before: nightshift.FileState{Kind: nightshift.FileRegular}}}}, kptrRule, "would delete /usr/lib/sysctl.d/protect-links.conf"},

		// SSG's own fixes: their keyword only, comments and blank lines.
		{"augenrules in auditd.service", modDiff("/usr/lib/systemd/system/auditd.service", " [Service]\n+ExecStartPost=-/sbin/augenrules --load\n"), auditRule, ""},
		{"a sysctl file a package installs", nightshift.Effects{Changes: []nightshift.FileChange{
			{Path: "/var/lib/dpkg/status", Change: nightshift.ChangeModified, Before: nightshift.FileState{Kind: nightshift.FileRegular}, After: nightshift.FileState{Kind: nightshift.FileRegular}},
			{Path: "/var/lib/dpkg/info/procps.list", Change: nightshift.ChangeModified, Before: nightshift.FileState{Kind: nightshift.FileRegular}, After: nightshift.FileState{Kind: nightshift.FileRegular}, Diff: "+/usr/lib/sysctl.d/50-pid-max.conf\n"},
			{Path: "/usr/lib/sysctl.d/50-pid-max.conf", Change: nightshift.ChangeCreated, After: nightshift.FileState{Kind: nightshift.FileRegular}, Diff: "+kernel.pid_max = 4194304\n"}}}, kptrRule, ""},
		{"SSG's PermitRootLogin fix", modDiff("/etc/ssh/sshd_config", "-#PermitRootLogin prohibit-password\n+PermitRootLogin no\n+\n"), sshdRule, ""},
		{"keywords case-insensitively, with =", modDiff("/etc/ssh/sshd_config", "+PERMITROOTLOGIN=no # hardening\n"), sshdRule, ""},
		{"SSG's sysctl fix comments the key out elsewhere", modDiff("/etc/sysctl.conf", "-kernel.kptr_restrict = 0\n+# kernel.kptr_restrict = 0\n+kernel.kptr_restrict = 1\n"), kptrRule, ""},
		{"a sysctl.d line with -", createdDiff("/etc/sysctl.d/x.conf", "+-kernel.kptr_restrict = 2\n"), kptrRule, ""},
		// judge21: sysctl applies the slash form, the check's patterns
		// (dots) do not read it.
		{"a sysctl.d line in the slash form", createdDiff("/etc/sysctl.d/x.conf", "+-kernel/kptr_restrict = 2\n"), kptrRule,
			"would set -kernel/kptr_restrict = 2 in /etc/sysctl.d/x.conf in the slash form: the check reads kernel parameters written with dots (kernel.kptr_restrict)"},
		{"no keys known: lines not limited", modDiff("/etc/ssh/sshd_config", "+X11Forwarding no\n"), EffectsPolicy{StrictScope: true, Scope: []string{"/etc/ssh/sshd_config"}}, ""},
		{"no strict scope", modDiff("/etc/ssh/sshd_config", "+X11Forwarding no\n"), EffectsPolicy{Scope: []string{"/etc/ssh/sshd_config"}, Keys: []string{"permitrootlogin"}}, ""},
		{"a file outside the scope is the scope's business", modDiff("/etc/sysctl.conf", "+vm.swappiness=10\n"), sshdRule, "outside the rule's paths"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkScopeRefusals(t, tt.eff, tt.pol, tt.want) })
	}
}

func TestJudgeEffectsSSHFiles(t *testing.T) {
	file := func(p string, ch nightshift.Change, diff string) nightshift.FileChange {
		c := nightshift.FileChange{Path: p, Change: ch, After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644}, Diff: diff}
		if ch != nightshift.ChangeCreated {
			c.Before = nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644}
		}
		return c
	}
	dir := nightshift.FileChange{Path: "/etc/ssh/sshd_config", Change: nightshift.ChangeModified,
		Before: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644}, After: nightshift.FileState{Kind: nightshift.FileDir, Mode: 0o755}}
	tests := []struct {
		name string
		c    nightshift.FileChange
		want string // substring of a refusal; "" means none of sshFilesHarm's
	}{
		{"sshd_config replaced by a directory (fresh2)", dir, "would make /etc/ssh/sshd_config a directory"},
		{"TrustedUserCAKeys in a drop-in sshd does not read yet (fresh2 f2-trusted-ca)", file("/etc/ssh/sshd_config.d/00-ca.conf", nightshift.ChangeCreated, "+TrustedUserCAKeys /etc/ssh/ca.pub\n"), "TrustedUserCAKeys /etc/ssh/ca.pub"},
		{"AuthorizedKeysCommand", file("/etc/ssh/sshd_config", nightshift.ChangeModified, "+AuthorizedKeysCommand /usr/local/bin/k\n"), "without a key in authorized_keys"},
		{"Include of /tmp", file("/etc/ssh/sshd_config", nightshift.ChangeModified, "+Include /tmp/*.conf\n"), "would make sshd include /tmp/*.conf"},
		{"Subsystem sftp /bin/false (fresh3)", file("/etc/ssh/sshd_config", nightshift.ChangeModified, "-Subsystem sftp /usr/lib/openssh/sftp-server\n+Subsystem\tsftp /bin/false\n"), "would make sshd run /bin/false for the sftp subsystem"},
		{"AuthorizedKeysFile in /var/tmp", file("/etc/ssh/sshd_config.d/k.conf", nightshift.ChangeCreated, "+AuthorizedKeysFile /var/tmp/%u .ssh/authorized_keys\n"), "would read authorized keys from /var/tmp/%u"},
		{"ssh_config.d ProxyCommand (fresh2)", file("/etc/ssh/ssh_config.d/x.conf", nightshift.ChangeCreated, "+Host *\n+\tProxyCommand sh -c \"rm -rf /etc/ssh\"\n"), "would make root's ssh client run ProxyCommand"},
		{"root's ~/.ssh/config LocalCommand", file("/root/.ssh/config", nightshift.ChangeCreated, "+PermitLocalCommand yes\n+LocalCommand /tmp/x\n"), "LocalCommand /tmp/x"},
		{"ssh_config Match exec", file("/etc/ssh/ssh_config", nightshift.ChangeModified, "+Match exec \"/tmp/x\"\n"), "Match exec"},
		{"pam_exec session hook (fresh2)", file("/etc/pam.d/common-session", nightshift.ChangeModified, "+session optional pam_exec.so /usr/local/sbin/s\n"), "pam_exec is not hardening"},
		{"pam_exec expose_authtok (fresh3)", file("/etc/pam.d/common-auth", nightshift.ChangeModified, "+auth optional pam_exec.so quiet expose_authtok /usr/local/sbin/pam-audit\n"), "would make PAM run a program"},

		{"Include of a drop-in directory of /etc/ssh", file("/etc/ssh/sshd_config", nightshift.ChangeModified, "+Include /etc/ssh/sshd_config.d/*.conf\n+Include hardening.conf\n"), ""},
		{"internal-sftp and sftp-server with options", file("/etc/ssh/sshd_config", nightshift.ChangeModified, "+Subsystem sftp internal-sftp\n+Subsystem sftp /usr/lib/openssh/sftp-server -f AUTHPRIV -l INFO\n"), ""},
		{"AuthorizedKeysFile relative, %h and /etc/ssh", file("/etc/ssh/sshd_config", nightshift.ChangeModified, "+AuthorizedKeysFile .ssh/authorized_keys %h/.ssh/k /etc/ssh/keys/%u\n"), ""},
		{"TrustedUserCAKeys none, comments", file("/etc/ssh/sshd_config", nightshift.ChangeModified, "+TrustedUserCAKeys none\n+# AuthorizedKeysCommand /x\n"), ""},
		{"ssh_config hardening", file("/etc/ssh/ssh_config.d/h.conf", nightshift.ChangeCreated, "+Host *\n+\tCiphers aes256-gcm@openssh.com\n+\tProxyCommand none\n"), ""},
		{"the sshd_config.d directory made", nightshift.FileChange{Path: "/etc/ssh/sshd_config.d", Change: nightshift.ChangeCreated, After: nightshift.FileState{Kind: nightshift.FileDir, Mode: 0o755}}, ""},
		{"pam_exec commented out, other modules", file("/etc/pam.d/common-auth", nightshift.ChangeModified, "+# auth optional pam_exec.so /x\n+auth required pam_faillock.so preauth\n"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkReasons(t, sshFilesHarm(tt.c), tt.want)
			// And through JudgeEffects.
			if all := JudgeEffects(nightshift.Effects{Changes: []nightshift.FileChange{tt.c}}, EffectsPolicy{}); tt.want != "" && len(all) == 0 {
				t.Errorf("JudgeEffects allowed it")
			}
		})
	}
}

func TestJudgeEffectsLaterHarm(t *testing.T) {
	created := func(p, diff string) nightshift.FileChange {
		return nightshift.FileChange{Path: p, Change: nightshift.ChangeCreated, After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644}, Diff: diff}
	}
	tests := []struct {
		name string
		c    nightshift.FileChange
		want string
	}{
		{"protect-links.conf masked", created("/etc/sysctl.d/protect-links.conf", "+# local\n"), "replaces the distribution's protect-links.conf"},
		{"systemd's 50-default.conf masked at runtime", created("/run/sysctl.d/50-default.conf", "+kernel.kptr_restrict = 1\n"), "replaces the distribution's 50-default.conf"},
		{"auditd.service running a /var/tmp script", created("/etc/systemd/system/auditd.service.d/x.conf", "+[Service]\n+ExecStartPost=-/var/tmp/uh\n"), "run /var/tmp/uh (ExecStartPost)"},
		{"a unit running from /home", created("/etc/systemd/system/x.service", "+[Service]\n+ExecStart=/home/ops/bin/x --now\n"), "run /home/ops/bin/x"},
		{"an audit rules file linked to /tmp", nightshift.FileChange{Path: "/etc/audit/rules.d/99-x.rules", Change: nightshift.ChangeCreated,
			After: nightshift.FileState{Kind: nightshift.FileSymlink, Target: "../../../tmp/r.rules"}}, "a link to ../../../tmp/r.rules"},
		{"a link in /usr/local/bin to /dev/shm", nightshift.FileChange{Path: "/usr/local/bin/ls", Change: nightshift.ChangeCreated,
			After: nightshift.FileState{Kind: nightshift.FileSymlink, Target: "/dev/shm/x"}}, "a link to /dev/shm/x"},
		{"Debian's sysctl.d link to sysctl.conf", nightshift.FileChange{Path: "/etc/sysctl.d/99-sysctl.conf", Change: nightshift.ChangeCreated,
			After: nightshift.FileState{Kind: nightshift.FileSymlink, Target: "../sysctl.conf"}}, ""},
		{"a link in /tmp to /etc", nightshift.FileChange{Path: "/tmp/e", Change: nightshift.ChangeCreated,
			After: nightshift.FileState{Kind: nightshift.FileSymlink, Target: "/etc"}}, ""},
		{"an SSG sysctl.d file", created("/etc/sysctl.d/99-sysctl.conf", "+kernel.kptr_restrict = 1\n"), ""},
		{"a unit running a system program", created("/etc/systemd/system/auditd.service.d/x.conf", "+[Service]\n+ExecStartPost=-/sbin/augenrules --load\n"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkReasons(t, laterHarm(tt.c), tt.want)
		})
	}
}
