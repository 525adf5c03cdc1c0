package safety

import (
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift"
)

// TestJudgeBootEffects: systemd, boot, logging, audit, firewall and kernel
// settings whose harm shows at the next boot, reload or unit start, as
// commands written here (not the corpus's) leave them, and the hardening
// next to them that must stay allowed.
func TestJudgeBootEffects(t *testing.T) {
	created := func(p, content string) nightshift.FileChange {
		return nightshift.FileChange{Path: p, Change: nightshift.ChangeCreated,
			Diff:  "--- /dev/null\n+++ b" + p + "\n@@ -0,0 +1 @@\n+" + strings.ReplaceAll(strings.TrimSuffix(content, "\n"), "\n", "\n+") + "\n",
			After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644, Size: int64(len(content))}}
	}
	modified := func(p, diff string) nightshift.FileChange {
		return nightshift.FileChange{Path: p, Change: nightshift.ChangeModified, Diff: diff,
			Before: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644, Size: 100, SHA256: "aa"},
			After:  nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644, Size: 120, SHA256: "bb"}}
	}
	link := func(p, target string) nightshift.FileChange {
		return nightshift.FileChange{Path: p, Change: nightshift.ChangeCreated, After: nightshift.FileState{Kind: nightshift.FileSymlink, Target: target}}
	}
	deleted := func(p string) nightshift.FileChange {
		return nightshift.FileChange{Path: p, Change: nightshift.ChangeDeleted, Before: nightshift.FileState{Kind: nightshift.FileSymlink}}
	}
	changes := func(c ...nightshift.FileChange) nightshift.Effects {
		return nightshift.Effects{Changes: c, Origin: "192.0.2.7"}
	}
	acts := func(argv ...string) nightshift.Effects {
		return nightshift.Effects{Actions: []nightshift.RecordedAction{{Argv: argv}}, Origin: "192.0.2.7"}
	}
	root := EffectsPolicy{}
	tests := []judgeCase{ // entry "" means allowed
		// Drop-ins of the SSH units.
		{"ssh.service drop-in: ConditionFileNotEmpty", changes(created("/etc/systemd/system/ssh.service.d/10-x.conf", "[Unit]\nConditionFileNotEmpty=/etc/nothing\n")), root, "lockout", "ConditionFileNotEmpty"},
		{"sshd.service drop-in: IPAddressAllow only", changes(created("/etc/systemd/system/sshd.service.d/ip.conf", "[Service]\nIPAddressDeny=any\nIPAddressAllow=10.0.0.0/8\n")), root, "lockout", "IPAddressDeny=any"},
		{"ssh.service drop-in: SocketBindDeny", changes(created("/etc/systemd/system/ssh.service.d/b.conf", "[Service]\nSocketBindDeny=ipv4:tcp\n")), root, "lockout", "SocketBindDeny"},
		{"ssh.service drop-in: Group", changes(created("/etc/systemd/system/ssh.service.d/g.conf", "[Service]\nGroup=nogroup\n")), root, "lockout", "Group=nogroup"},
		{"ssh.service drop-in: ProtectHome", changes(created("/etc/systemd/system/ssh.service.d/p.conf", "[Service]\nProtectHome=yes\n")), root, "lockout", "ProtectHome"},
		{"ssh.socket drop-in: ListenStream moved", changes(created("/etc/systemd/system/ssh.socket.d/l.conf", "[Socket]\nListenStream=\nListenStream=127.0.0.9:22\n")), root, "lockout", "ListenStream"},
		{"ssh.service drop-in: Environment LD_PRELOAD", changes(created("/etc/systemd/system/ssh.service.d/e.conf", "[Service]\nEnvironment=LD_PRELOAD=/tmp/x.so\n")), root, "lockout", "Environment"},
		{"ssh.service rewritten by an openssh-server upgrade", changes(modified("/lib/systemd/system/ssh.service", " [Unit]\n-ConditionPathExists=!/etc/ssh/sshd_not_to_be_run\n+ConditionPathExists=!/etc/ssh/sshd_not_to_be_run\n+ConditionPathExists=/usr/sbin/sshd\n"),
			modified("/var/lib/dpkg/info/openssh-server.md5sums", "-0123  lib/systemd/system/ssh.service\n+4567  lib/systemd/system/ssh.service\n")), root, "", ""},
		{"ssh.service rewritten by hand", changes(modified("/lib/systemd/system/ssh.service", " [Unit]\n+ConditionPathExists=/nonexistent\n")), root, "lockout", "ConditionPathExists"},
		{"ssh.service drop-in: Restart=always (allowed)", changes(created("/etc/systemd/system/ssh.service.d/r.conf", "[Service]\nRestart=always\nRestartSec=5\n")), root, "", ""},
		{"ssh.service drop-in: Environment LANG (allowed)", changes(created("/etc/systemd/system/ssh.service.d/e.conf", "[Service]\nEnvironment=LANG=C.UTF-8\n")), root, "", ""},
		{"a target conflicting with sshd", changes(created("/etc/systemd/system/basic.target.d/c.conf", "[Unit]\nConflicts=sshd.service\n")), root, "lockout", "conflict with sshd.service"},
		{"a unit conflicting with something else", changes(created("/etc/systemd/system/chronyd.service.d/c.conf", "[Unit]\nConflicts=systemd-timesyncd.service\n")), root, "", ""},
		// Consoles, rc links.
		{"serial-getty masked", changes(link("/etc/systemd/system/serial-getty@ttyS0.service", "/dev/null")), root, "lockout", "no console login"},
		{"ctrl-alt-del.target masked (SSG)", changes(link("/etc/systemd/system/ctrl-alt-del.target", "/dev/null")), root, "", ""},
		{"rc links of ssh removed", changes(deleted("/etc/rc3.d/S02ssh"), deleted("/etc/rc5.d/S02ssh")), root, "lockout", "under sysvinit"},
		{"rc links of rsync removed", changes(deleted("/etc/rc3.d/S02rsync")), root, "", ""},
		// Manager settings.
		{"DefaultLimitNPROC tiny", changes(created("/etc/systemd/system.conf.d/n.conf", "[Manager]\nDefaultLimitNPROC=10\n")), root, "config", "DefaultLimitNPROC=10"},
		{"DefaultLimitNOFILE tiny in system.conf", changes(modified("/etc/systemd/system.conf", " [Manager]\n-#DefaultLimitNOFILE=1024:524288\n+DefaultLimitNOFILE=16:16\n")), root, "config", "open almost no files"},
		{"DefaultEnvironment LD_PRELOAD", changes(created("/etc/systemd/system.conf.d/e.conf", "[Manager]\nDefaultEnvironment=\"LD_PRELOAD=/opt/x.so\"\n")), root, "config", "every service"},
		{"DefaultLimitCORE=0 (hardening)", changes(created("/etc/systemd/system.conf.d/core.conf", "[Manager]\nDefaultLimitCORE=0\nDefaultLimitNOFILE=65536\n")), root, "", ""},
		// Logging and audit.
		{"journald Storage=none", changes(created("/etc/systemd/journald.conf.d/s.conf", "[Journal]\nStorage=none\n")), root, "config", "Storage=none"},
		{"journald Storage=persistent (SSG)", changes(modified("/etc/systemd/journald.conf", " [Journal]\n-#Storage=auto\n+Storage=persistent\n+Compress=yes\n")), root, "", ""},
		{"rsyslog discards auth", changes(created("/etc/rsyslog.d/01-q.conf", "auth,authpriv.* ~\n")), root, "config", "discard"},
		{"rsyslog bare stop", changes(created("/etc/rsyslog.d/00-q.conf", "stop\n")), root, "config", "stop processing"},
		{"rsyslog filter stop for one program (allowed)", changes(created("/etc/rsyslog.d/30-noisy.conf", ":programname, isequal, \"noisyd\" stop\n")), root, "", ""},
		{"rsyslog remote logging (SSG)", changes(created("/etc/rsyslog.d/60-remote.conf", "*.* @@logs.example.net:514\n")), root, "", ""},
		{"audit rules -e 0", changes(created("/etc/audit/rules.d/zz.rules", "-e 0\n")), root, "config", "auditing would be off"},
		{"audit rules -D late", changes(created("/etc/audit/rules.d/99-flush.rules", "-D\n")), root, "config", "deletes every audit rule"},
		{"audit rules never,task", changes(created("/etc/audit/rules.d/50-q.rules", "-a never,task\n")), root, "config", "no process"},
		{"audit rules never,exit in a rules file", changes(created("/etc/audit/rules.d/00-q.rules", "-a never,exit -F arch=b64 -S all\n")), root, "config", "hides what it matches"},
		{"audit rules exclude", changes(created("/etc/audit/rules.d/10-q.rules", "-a exclude,always -F msgtype=EXECVE\n")), root, "config", "hides what it matches"},
		{"audit rules rate limit", changes(created("/etc/audit/rules.d/10-r.rules", "-r 1\n")), root, "config", "drop audit records"},
		{"audit rules (SSG) and -e 2", changes(created("/etc/audit/rules.d/50-time.rules", "-a always,exit -F arch=b64 -S adjtimex,settimeofday -k audit_time_rules\n-w /etc/localtime -p wa -k audit_time_rules\n"),
			created("/etc/audit/rules.d/99-finalize.rules", "-e 2\n")), root, "", ""},
		{"auditctl -D", acts("auditctl", "-D"), root, "action", "deletes every audit rule"},
		{"auditctl -e 0", acts("auditctl", "-e", "0"), root, "action", "turns auditing off"},
		{"auditctl -w (SSG)", acts("auditctl", "-w", "/etc/passwd", "-p", "wa", "-k", "identity"), root, "", ""},
		{"augenrules' auditctl -R", acts("auditctl", "-R", "/etc/audit/audit.rules"), root, "", ""},
		// Unit verbs.
		{"systemctl mask auditd", acts("systemctl", "mask", "auditd"), root, "action", "record"},
		{"systemctl stop systemd-journald.socket", acts("systemctl", "stop", "systemd-journald.socket"), root, "action", "record"},
		{"systemctl disable rsyslog", acts("systemctl", "disable", "--now", "rsyslog.service"), root, "action", "record"},
		{"systemctl stop user.slice", acts("systemctl", "stop", "user.slice"), root, "action", "user.slice"},
		{"systemctl stop multi-user.target", acts("systemctl", "stop", "multi-user.target"), root, "action", "services"},
		{"systemctl stop 'getty@*'", acts("systemctl", "stop", "getty@*"), root, "action", "logins"},
		// systemctl matches unit globs with fnmatch: POSIX classes and
		// bracket expressions Go's path.Match reads otherwise.
		{"systemctl stop 's[[:alpha:]]h'", acts("systemctl", "stop", "s[[:alpha:]]h"), root, "action", "ssh"},
		{"systemctl stop 's[!x]h.service'", acts("systemctl", "stop", "s[!x]h.service"), root, "action", "ssh"},
		{"systemctl mask 'a[[:lower:]]ditd'", acts("systemctl", "mask", "a[[:lower:]]ditd"), root, "action", "record"},
		{"systemctl enable --now auditd (SSG)", acts("systemctl", "enable", "--now", "auditd.service"), root, "", ""},
		{"systemctl mask ctrl-alt-del.target (SSG)", acts("systemctl", "mask", "ctrl-alt-del.target"), root, "", ""},
		{"systemctl disable --now avahi-daemon (SSG)", acts("systemctl", "disable", "--now", "avahi-daemon.service"), root, "", ""},
		// The boot's firewall.
		{"rules.v4: REJECT policy-like last rule, no ssh accept", changes(created("/etc/iptables/rules.v4", "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -i lo -j ACCEPT\n-A INPUT -j REJECT\nCOMMIT\n")), root, "lockout", "-A INPUT -j REJECT"},
		{"rules.v4: DROP policy, ssh accepted only from elsewhere", changes(created("/etc/iptables/rules.v4", "*filter\n:INPUT DROP [0:0]\n-A INPUT -s 10.0.0.0/8 -p tcp --dport 22 -j ACCEPT\nCOMMIT\n")), root, "lockout", "policy DROP"},
		{"rules.v6: negated protocol", changes(created("/etc/iptables/rules.v6", "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT ! -p icmpv6 -j DROP\nCOMMIT\n")), root, "lockout", "! -p icmpv6"},
		{"rules.v4: DROP policy with ssh accepted (CIS)", changes(created("/etc/iptables/rules.v4", "*filter\n:INPUT DROP [0:0]\n:FORWARD DROP [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -i lo -j ACCEPT\n-A INPUT -s 127.0.0.0/8 -j DROP\n-A INPUT -m state --state ESTABLISHED,RELATED -j ACCEPT\n-A INPUT -p tcp -m tcp --dport 22 -m state --state NEW -j ACCEPT\nCOMMIT\n")), root, "", ""},
		{"nftables.conf: drop policy, no ssh", changes(created("/etc/nftables.conf", "#!/usr/sbin/nft -f\nflush ruleset\ntable inet filter {\n  chain input {\n    type filter hook input priority 0; policy drop;\n    ct state established,related accept\n    iif lo accept\n  }\n}\n")), root, "lockout", "policy drop"},
		{"nftables.conf: drop policy, ssh in a set (CIS)", changes(created("/etc/nftables.conf", "flush ruleset\ntable inet filter {\n  chain input {\n    type filter hook input priority 0; policy drop;\n    ct state established,related accept\n    iif lo accept\n    tcp dport { 22, 443 } accept\n  }\n  chain forward { type filter hook forward priority 0; policy drop; }\n}\n")), root, "", ""},
		{"nftables.conf: one-line input chain, drop policy", changes(created("/etc/nftables.conf", "flush ruleset\ntable inet t {\n\tchain c { type filter hook input priority 0; policy drop; }\n}\n")), root, "lockout", "chain c's policy drop"},
		{"nftables.conf: Debian's default (accept)", changes(created("/etc/nftables.conf", "#!/usr/sbin/nft -f\n\nflush ruleset\n\ntable inet filter {\n\tchain input {\n\t\ttype filter hook input priority filter;\n\t}\n\tchain forward {\n\t\ttype filter hook forward priority filter;\n\t}\n\tchain output {\n\t\ttype filter hook output priority filter;\n\t}\n}\n")), root, "", ""},
		{"nftables.conf: negated drop", changes(created("/etc/nftables.conf", "table ip f {\n chain c {\n  type filter hook prerouting priority -300;\n  meta l4proto != udp drop\n }\n}\n")), root, "lockout", "!= udp drop"},
		{"iptables action: negated protocol", acts("iptables", "-A", "INPUT", "!", "-p", "icmp", "-j", "REJECT"), root, "action", "negation"},
		{"iptables action: negated port, drops the rest of TCP", acts("iptables", "-A", "INPUT", "-p", "tcp", "!", "--dport", "80", "-j", "DROP"), root, "action", "negation"},
		{"iptables action: negated, udp only (allowed)", acts("iptables", "-A", "INPUT", "-p", "udp", "!", "--dport", "53", "-j", "DROP"), root, "", ""},
		// Networks, kernel command line, crypttab.
		{"networkd ActivationPolicy=down", changes(created("/etc/systemd/network/10-all.network", "[Match]\nName=e*\n[Link]\nActivationPolicy=down\n")), root, "lockout", "ActivationPolicy=down"},
		{"networkd ARP off", changes(created("/etc/systemd/network/10-all.link", "[Match]\nOriginalName=*\n[Link]\nARP=no\n")), root, "lockout", "ARP off"},
		{"networkd DHCP (allowed)", changes(created("/etc/systemd/network/20-wired.network", "[Match]\nName=en*\n[Network]\nDHCP=yes\n")), root, "", ""},
		{"kernel cmdline: another root", changes(created("/etc/kernel/cmdline", "root=UUID=deadbeef-0000 ro quiet\n")), root, "action", "another root device"},
		{"kernel cmdline: init replaced", changes(modified("/etc/kernel/cmdline", "-root=/dev/sda1 ro\n+root=/dev/sda1 ro init=/bin/sh\n")), root, "action", "init=/bin/sh"},
		{"kernel cmdline: audit=1 added (SSG)", changes(modified("/etc/kernel/cmdline", "-root=/dev/sda1 ro\n+root=/dev/sda1 ro audit=1 audit_backlog_limit=8192\n")), root, "", ""},
		{"grub: audit=0", changes(modified("/etc/default/grub", "-GRUB_CMDLINE_LINUX=\"\"\n+GRUB_CMDLINE_LINUX=\"audit=0\"\n")), root, "action", "audit off"},
		{"grub: mitigations=off", changes(modified("/etc/default/grub", "-GRUB_CMDLINE_LINUX_DEFAULT=\"quiet\"\n+GRUB_CMDLINE_LINUX_DEFAULT=\"quiet mitigations=off\"\n")), root, "action", "mitigations"},
		{"grub: audit=1 and page_poison (SSG)", changes(modified("/etc/default/grub", "-GRUB_CMDLINE_LINUX=\"\"\n+GRUB_CMDLINE_LINUX=\"audit=1 audit_backlog_limit=8192 page_poison=1 slub_debug=P pti=on\"\n")), root, "", ""},
		{"crypttab entry without nofail", changes(modified("/etc/crypttab", "+data /dev/disk/by-uuid/1234 none luks\n")), root, "action", "stops the boot"},
		{"crypttab entry with nofail", changes(modified("/etc/crypttab", "+data /dev/disk/by-uuid/1234 /etc/keys/data luks,nofail\n")), root, "", ""},
		// Kernel parameters that weaken the host.
		{"sysctl -w randomize_va_space=1", acts("sysctl", "-w", "kernel.randomize_va_space=1"), root, "action", "randomisation"},
		{"sysctl -w protected_hardlinks=0", acts("sysctl", "-w", "fs.protected_hardlinks=0"), root, "action", "link and file races"},
		{"sysctl -w tcp_rmem tiny", acts("sysctl", "-w", "net.ipv4.tcp_rmem=64 64 64"), root, "action", "too small"},
		{"sysctl -w nf_conntrack_max=16", acts("sysctl", "-w", "net.netfilter.nf_conntrack_max=16"), root, "action", "connection tracking"},
		{"sysctl.d ptrace_scope=0", changes(created("/etc/sysctl.d/90-dbg.conf", "kernel.yama.ptrace_scope = 0\n")), root, "config", "kernel hardening"},
		{"sysctl.d udp_mem tiny", changes(created("/etc/sysctl.d/90-mem.conf", "net.ipv4.udp_mem = 1 2 3\n")), root, "config", "memory for sockets"},
		{"sysctl -w randomize_va_space=2 (SSG)", acts("sysctl", "-w", "kernel.randomize_va_space=2"), root, "", ""},
		{"sysctl.d SSG hardening", changes(created("/etc/sysctl.d/99-ssg.conf", "kernel.randomize_va_space = 2\nfs.protected_symlinks = 1\nfs.protected_hardlinks = 1\nfs.suid_dumpable = 0\nkernel.kptr_restrict = 1\nkernel.dmesg_restrict = 1\nkernel.yama.ptrace_scope = 1\nkernel.perf_event_paranoid = 2\nnet.ipv4.tcp_syncookies = 1\nkernel.unprivileged_bpf_disabled = 1\n")), root, "", ""},
	}
	runJudgeCases(t, tests)
}
