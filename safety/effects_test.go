package safety

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift"
)

func TestJudgeEffects(t *testing.T) {
	file := func(p string, ch nightshift.Change, before, after uint32, diff string) nightshift.FileChange {
		return nightshift.FileChange{Path: p, Change: ch, Diff: diff,
			Before: nightshift.FileState{Kind: nightshift.FileRegular, Mode: before}, After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: after, Size: 10}}
	}
	act := func(argv ...string) nightshift.RecordedAction { return nightshift.RecordedAction{Argv: argv} }
	many := func(n int, dir string) []nightshift.FileChange {
		var out []nightshift.FileChange
		for i := range n {
			out = append(out, file(fmt.Sprintf("%s/f%d", dir, i), nightshift.ChangeCreated, 0, 0o644, ""))
		}
		return out
	}
	dir := func(p string, before, after uint32) nightshift.FileChange {
		return nightshift.FileChange{Path: p, Change: nightshift.ChangeMeta,
			Before: nightshift.FileState{Kind: nightshift.FileDir, Mode: before}, After: nightshift.FileState{Kind: nightshift.FileDir, Mode: after}}
	}
	del := func(p string, kind nightshift.FileKind, entries int) nightshift.FileChange {
		return nightshift.FileChange{Path: p, Change: nightshift.ChangeDeleted, Entries: entries, Before: nightshift.FileState{Kind: kind}}
	}
	sshd := func(login string, eff map[string]string) *nightshift.SSHDCheck {
		return &nightshift.SSHDCheck{Login: login, TestOK: true, Effective: eff}
	}
	acts := func(argv ...string) nightshift.Effects {
		return nightshift.Effects{Actions: []nightshift.RecordedAction{act(argv...)}}
	}
	changes := func(c ...nightshift.FileChange) nightshift.Effects { return nightshift.Effects{Changes: c} }
	tests := []struct {
		name  string
		eff   nightshift.Effects
		pol   EffectsPolicy
		entry string // "" means allowed
		want  string // substring of the first reason
	}{
		{"sshd_config edit with reload", nightshift.Effects{
			Changes: []nightshift.FileChange{file("/etc/ssh/sshd_config", nightshift.ChangeModified, 0o644, 0o644, "-X yes\n+X no\n")},
			Actions: []nightshift.RecordedAction{act("systemctl", "reload", "ssh")},
			SSHD:    sshd("root", map[string]string{"permitrootlogin": "prohibit-password"})}, EffectsPolicy{}, "", ""},
		{"PermitRootLogin no for a root worker", nightshift.Effects{SSHD: sshd("root", map[string]string{"permitrootlogin": "no"})}, EffectsPolicy{}, "lockout", "PermitRootLogin no"},
		{"PermitRootLogin no for a sudo worker", nightshift.Effects{SSHD: sshd("ops", map[string]string{"permitrootlogin": "no"})}, EffectsPolicy{Login: "ops"}, "", ""},
		{"DenyUsers root", nightshift.Effects{SSHD: sshd("root", map[string]string{"denyusers": "ro*"})}, EffectsPolicy{}, "lockout", "DenyUsers ro*"},
		{"AllowUsers without the login", nightshift.Effects{SSHD: sshd("root", map[string]string{"allowusers": "alice bob"})}, EffectsPolicy{}, "lockout", "AllowUsers"},
		{"AllowUsers with the login", nightshift.Effects{SSHD: sshd("root", map[string]string{"allowusers": "alice root@10.0.0.1"})}, EffectsPolicy{}, "", ""},
		{"keys off", nightshift.Effects{SSHD: sshd("root", map[string]string{"pubkeyauthentication": "no"})}, EffectsPolicy{}, "lockout", "PubkeyAuthentication no"},
		{"two factors", nightshift.Effects{SSHD: sshd("root", map[string]string{"authenticationmethods": "publickey,password"})}, EffectsPolicy{}, "lockout", "AuthenticationMethods"},
		{"sshd -t fails", nightshift.Effects{SSHD: &nightshift.SSHDCheck{TestOK: false, TestOutput: "/etc/ssh/sshd_config line 3: Bad configuration option: Foo"}}, EffectsPolicy{}, "lockout", "Bad configuration option"},
		{"rm -rf /usr/share/doc", changes(del("/usr/share/doc", nightshift.FileDir, 1532)), EffectsPolicy{}, "delete-system", "would delete 1,533 files under /usr"},
		{"rm /etc/cron.d/old", changes(del("/etc/cron.d/old", nightshift.FileRegular, 0)), EffectsPolicy{}, "", ""},
		{"rm -rf /etc/ssh", changes(del("/etc/ssh", nightshift.FileDir, 12)), EffectsPolicy{}, "delete-system", "would delete /etc/ssh (12 entries)"},
		{"rm -rf /etc", changes(del("/etc", nightshift.FileDir, 900)), EffectsPolicy{}, "delete-system", "which holds"},
		{"rm /etc/pam.d/sshd", changes(del("/etc/pam.d/sshd", nightshift.FileRegular, 0)), EffectsPolicy{}, "delete-system", "/etc/pam.d/sshd"},
		{"chmod 000 sshd_config", changes(file("/etc/ssh/sshd_config", nightshift.ChangeMeta, 0o644, 0, "")), EffectsPolicy{}, "perms-system", "unreadable"},
		{"chmod 0600 sshd_config", changes(file("/etc/ssh/sshd_config", nightshift.ChangeMeta, 0o644, 0o600, "")), EffectsPolicy{}, "", ""},
		{"chmod 0640 shadow", changes(file("/etc/shadow", nightshift.ChangeMeta, 0o644, 0o640, "")), EffectsPolicy{}, "", ""},
		{"chmod o+w passwd", changes(file("/etc/passwd", nightshift.ChangeMeta, 0o644, 0o646, "")), EffectsPolicy{}, "perms-system", "world-writable"},
		{"chmod u+s", changes(file("/usr/bin/find", nightshift.ChangeMeta, 0o755, 0o4755, "")), EffectsPolicy{}, "perms-system", "setuid"},
		{"chmod 0777 ~", changes(dir("/root", 0o700, 0o777)), EffectsPolicy{}, "perms-system", "world-writable"},
		{"chmod 0770 ~ (StrictModes)", changes(dir("/root", 0o700, 0o770)), EffectsPolicy{}, "lockout", "StrictModes"},
		{"chmod 000 /usr/bin", changes(dir("/usr/bin", 0o755, 0)), EffectsPolicy{}, "perms-system", "unreadable"},
		{"chmod 0644 /usr/bin", changes(dir("/usr/bin", 0o755, 0o644)), EffectsPolicy{}, "perms-system", "unusable"},
		{"bulk chmod", changes(append(many(150, "/usr/lib/y")[:0], func() []nightshift.FileChange {
			var out []nightshift.FileChange
			for i := range 150 {
				out = append(out, file(fmt.Sprintf("/usr/lib/y/%d", i), nightshift.ChangeMeta, 0o644, 0o640, ""))
			}
			return out
		}()...)...), EffectsPolicy{}, "perms-system", "150 files under /usr"},
		{"blank root password", changes(file("/etc/shadow", nightshift.ChangeModified, 0o640, 0o640, "-root:$y$j9T$abc:19000:0:99999:7:::\n+root::19000:0:99999:7:::\n")), EffectsPolicy{}, "password", "blank root's password"},
		{"expire root", changes(file("/etc/shadow", nightshift.ChangeModified, 0o640, 0o640, "-root:*:19000:0:99999:7:::\n+root:*:19000:0:99999:7::1:\n")), EffectsPolicy{}, "password", "expire root"},
		// A maximum age whose expiry is more than ExpiryBound days off (the
		// last change ten days ago); one already past is a lockout.
		{"password aging", changes(file("/etc/shadow", nightshift.ChangeModified, 0o640, 0o640, fmt.Sprintf("-root:*:%[1]d:0:99999:7:::\n+root:*:%[1]d:1:60:7:::\n", time.Now().Unix()/86400-10))), EffectsPolicy{}, "", ""},
		{"password aging already expired", changes(file("/etc/shadow", nightshift.ChangeModified, 0o640, 0o640, "-root:*:19000:0:99999:7:::\n+root:*:19000:1:60:7:::\n")), EffectsPolicy{}, "password", "would make root's password or account expire on day 19060"},
		{"remove root", changes(file("/etc/passwd", nightshift.ChangeModified, 0o644, 0o644, "-root:x:0:0:root:/root:/bin/bash\n")), EffectsPolicy{}, "password", "remove root's entry"},
		{"nologin shell", changes(file("/etc/passwd", nightshift.ChangeModified, 0o644, 0o644, "-root:x:0:0:root:/root:/bin/bash\n+root:x:0:0:root:/root:/usr/sbin/nologin\n")), EffectsPolicy{}, "password", "refuses logins"},
		{"nologin for a service account", changes(file("/etc/passwd", nightshift.ChangeModified, 0o644, 0o644, "-games:x:5:60:games:/usr/games:/bin/sh\n+games:x:5:60:games:/usr/games:/usr/sbin/nologin\n")), EffectsPolicy{}, "", ""},
		{"shadow without diff", changes(file("/etc/shadow", nightshift.ChangeModified, 0o640, 0o640, "")), EffectsPolicy{}, "password", "could not be captured"},
		{"device node", changes(nightshift.FileChange{Path: "/root/sda", Change: nightshift.ChangeCreated, After: nightshift.FileState{Kind: nightshift.FileDevice}}), EffectsPolicy{}, "device", "/root/sda"},
		{"touch /etc/nologin", changes(file("/etc/nologin", nightshift.ChangeCreated, 0, 0o644, "")), EffectsPolicy{}, "lockout", "/etc/nologin"},
		{"pam_deny", changes(file("/etc/pam.d/sshd", nightshift.ChangeModified, 0o644, 0o644, "+auth requisite pam_deny.so\n")), EffectsPolicy{}, "lockout", "pam_deny.so"},
		{"pam_faillock", changes(file("/etc/pam.d/common-auth", nightshift.ChangeModified, 0o644, 0o644, "+auth required pam_faillock.so preauth\n")), EffectsPolicy{}, "", ""},
		{"rm authorized_keys", changes(del("/root/.ssh/authorized_keys", nightshift.FileRegular, 0)), EffectsPolicy{}, "lockout", "login keys"},
		{"empty authorized_keys of a sudo login", changes(nightshift.FileChange{Path: "/home/ops/.ssh/authorized_keys", Change: nightshift.ChangeModified,
			Before: nightshift.FileState{Kind: nightshift.FileRegular, Size: 90}, After: nightshift.FileState{Kind: nightshift.FileRegular}}), EffectsPolicy{Login: "ops"}, "lockout", "empty"},
		{"stop ssh", acts("systemctl", "stop", "ssh"), EffectsPolicy{}, "action", "stop would cut"},
		{"mask ssh.service", acts("systemctl", "--now", "mask", "ssh.service"), EffectsPolicy{}, "action", "mask"},
		{"disable with a glob", acts("systemctl", "disable", "ss*"), EffectsPolicy{}, "action", "disable"},
		{"enable auditd", acts("systemctl", "enable", "--now", "auditd"), EffectsPolicy{}, "", ""},
		{"restart ssh", acts("systemctl", "restart", "ssh"), EffectsPolicy{}, "", ""},
		{"start cron, isolating it", acts("systemctl", "start", "--job-mode=isolate", "cron.service"), EffectsPolicy{}, "action", "--job-mode=isolate"},
		{"start cron, job mode isolate in two words", acts("systemctl", "--job-mode", "isolate", "start", "cron"), EffectsPolicy{}, "action", "--job-mode=isolate"},
		{"start cron, flushing the queue", acts("systemctl", "start", "--job-mode=flush", "cron"), EffectsPolicy{}, "action", "--job-mode=flush"},
		{"start cron, job mode replace", acts("systemctl", "start", "--job-mode=replace", "cron"), EffectsPolicy{}, "", ""},
		{"restart on another root", acts("systemctl", "--root=/mnt", "disable", "ssh"), EffectsPolicy{}, "action", "--root"},
		{"restart on another host", acts("systemctl", "-H", "root@10.0.0.2", "restart", "cron"), EffectsPolicy{}, "action", "-H"},
		{"ignoring inhibitors, run together", acts("systemctl", "-qi", "restart", "cron"), EffectsPolicy{}, "action", "-i"},
		{"quiet, forced and now, run together", acts("systemctl", "-qf", "enable", "--now", "--no-block", "auditd"), EffectsPolicy{}, "", ""},
		{"a signal attached to -s", acts("systemctl", "kill", "-sHUP", "--kill-whom=main", "ssh"), EffectsPolicy{}, "", ""},
		{"stop telnet via service", acts("service", "telnet", "stop"), EffectsPolicy{}, "", ""},
		{"service ssh stop", acts("service", "ssh", "stop"), EffectsPolicy{}, "action", "stop"},
		{"invoke-rc.d from a postinst", acts("invoke-rc.d", "auditd", "restart"), EffectsPolicy{}, "", ""},
		{"reboot", acts("reboot"), EffectsPolicy{}, "action", "never reboots"},
		{"systemctl poweroff", acts("systemctl", "poweroff"), EffectsPolicy{}, "action", "poweroff"},
		{"systemctl isolate", acts("systemctl", "isolate", "rescue.target"), EffectsPolicy{}, "action", "isolate"},
		{"sysctl -w", acts("sysctl", "-w", "kernel.randomize_va_space=2"), EffectsPolicy{}, "", ""},
		{"iptables drop all input", acts("iptables", "-I", "INPUT", "-j", "DROP"), EffectsPolicy{}, "action", "without a port"},
		{"iptables drop 22", acts("iptables", "-A", "INPUT", "-p", "tcp", "--dport", "22", "-j", "DROP"), EffectsPolicy{}, "action", "SSH port 22"},
		{"iptables drop a range with 22", acts("iptables", "-A", "INPUT", "-p", "tcp", "--dport", "1:1024", "-j", "REJECT"), EffectsPolicy{}, "action", "SSH port 22"},
		{"iptables drop 23", acts("iptables", "-A", "INPUT", "-p", "tcp", "--dport", "23", "-j", "DROP"), EffectsPolicy{}, "", ""},
		{"iptables policy drop", acts("iptables", "-P", "INPUT", "DROP"), EffectsPolicy{}, "action", "default policy"},
		{"iptables-restore", acts("iptables-restore", "/etc/iptables/rules.v4"), EffectsPolicy{}, "action", "cannot judge"},
		{"nft drop 22", acts("nft", "add", "rule", "inet", "filter", "input", "tcp", "dport", "22", "drop"), EffectsPolicy{}, "action", "SSH port 22"},
		{"nft drop 2222 on a 2222 worker", acts("nft", "add", "rule", "inet", "filter", "input", "tcp", "dport", "2222", "drop"), EffectsPolicy{SSHPort: 2222}, "action", "SSH port 2222"},
		{"nft accept", acts("nft", "add", "rule", "inet", "filter", "input", "tcp", "dport", "22", "accept"), EffectsPolicy{}, "", ""},
		{"nft -f", acts("nft", "-f", "/etc/nftables.conf"), EffectsPolicy{}, "action", "from a file"},
		{"ip link down", acts("ip", "link", "set", "eth0", "down"), EffectsPolicy{}, "action", "interfaces"},
		{"modprobe load", acts("modprobe", "dccp"), EffectsPolicy{}, "action", "load kernel modules"},
		{"modprobe -r usb-storage", acts("modprobe", "-r", "usb-storage"), EffectsPolicy{}, "", ""},
		{"rmmod virtio_net", acts("rmmod", "virtio_net"), EffectsPolicy{}, "action", "network"},
		{"remount /tmp", acts("mount", "-o", "remount,nodev", "/tmp"), EffectsPolicy{}, "", ""},
		{"mount tmpfs over /etc/ssh", acts("mount", "-t", "tmpfs", "none", "/etc/ssh"), EffectsPolicy{}, "action", "remounts"},
		{"busctl", acts("busctl", "call", "org.freedesktop.systemd1"), EffectsPolicy{}, "action", "cannot judge"},
		{"timedatectl set-ntp", acts("timedatectl", "set-ntp", "true"), EffectsPolicy{}, "", ""},
		// Classes of legitimate administration judged with the command's
		// other actions (judgeActions).
		{"set-default multi-user", acts("systemctl", "set-default", "multi-user.target"), EffectsPolicy{}, "", ""},
		{"set-default rescue", acts("systemctl", "set-default", "rescue.target"), EffectsPolicy{}, "action", "set-default"},
		{"set-default poweroff", acts("systemctl", "set-default", "poweroff.target"), EffectsPolicy{}, "action", "set-default"},
		{"ip route flush cache", acts("ip", "route", "flush", "cache"), EffectsPolicy{}, "", ""},
		{"ip -6 r flush cache", acts("ip", "-6", "r", "flush", "cache"), EffectsPolicy{}, "", ""},
		{"ip route flush (routes)", acts("ip", "route", "flush", "table", "main"), EffectsPolicy{}, "action", "routes"},
		{"ip route flush all", acts("ip", "route", "flush", "all"), EffectsPolicy{}, "action", "routes"},
		{"ip -batch route flush cache", acts("ip", "-batch", "/tmp/x", "route", "flush", "cache"), EffectsPolicy{}, "action", "routes"},
		{"kill HUP ssh main", acts("systemctl", "kill", "--kill-whom=main", "-s", "HUP", "ssh"), EffectsPolicy{}, "", ""},
		{"kill SIGHUP sshd.service main (old option)", acts("systemctl", "kill", "--kill-who", "main", "--signal=SIGHUP", "sshd.service"), EffectsPolicy{}, "", ""},
		{"kill HUP ssh, every process", acts("systemctl", "kill", "-s", "HUP", "ssh"), EffectsPolicy{}, "", ""},
		{"kill USR1 ssh (sshd has no handler: it ends)", acts("systemctl", "kill", "-s", "USR1", "ssh"), EffectsPolicy{}, "action", "kill would cut"},
		{"kill ssh (TERM)", acts("systemctl", "kill", "ssh"), EffectsPolicy{}, "action", "kill would cut"},
		{"kill STOP ssh", acts("systemctl", "kill", "--signal=STOP", "ssh.service"), EffectsPolicy{}, "action", "kill would cut"},
		{"kill TERM ssh main", acts("systemctl", "kill", "--kill-whom=main", "-s", "TERM", "ssh"), EffectsPolicy{}, "action", "kill would cut"},
		{"kill HUP dbus main", acts("systemctl", "kill", "--kill-whom=main", "-s", "HUP", "dbus"), EffectsPolicy{}, "action", "kill would cut"},
		{"ssh socket to service", nightshift.Effects{Actions: []nightshift.RecordedAction{
			act("systemctl", "disable", "--now", "ssh.socket"), act("systemctl", "enable", "--now", "ssh.service")}}, EffectsPolicy{}, "", ""},
		{"ssh service to socket", nightshift.Effects{Actions: []nightshift.RecordedAction{
			act("systemctl", "disable", "--now", "ssh.service"), act("systemctl", "enable", "--now", "ssh.socket")}}, EffectsPolicy{}, "", ""},
		{"ssh socket stopped, service only enabled", nightshift.Effects{Actions: []nightshift.RecordedAction{
			act("systemctl", "disable", "--now", "ssh.socket"), act("systemctl", "enable", "ssh.service")}}, EffectsPolicy{}, "action", "ssh.socket"},
		{"ssh socket stopped after the service started", nightshift.Effects{Actions: []nightshift.RecordedAction{
			act("systemctl", "enable", "--now", "ssh.service"), act("systemctl", "disable", "--now", "ssh.socket")}}, EffectsPolicy{}, "action", "ssh.socket"},
		{"ssh socket disabled, service started not enabled", nightshift.Effects{Actions: []nightshift.RecordedAction{
			act("systemctl", "disable", "ssh.socket"), act("systemctl", "start", "ssh.service")}}, EffectsPolicy{}, "action", "ssh.socket"},
		{"both ssh units stopped", nightshift.Effects{Actions: []nightshift.RecordedAction{
			act("systemctl", "stop", "ssh.socket"), act("systemctl", "stop", "ssh.service")}}, EffectsPolicy{}, "action", "ssh"},
		{"ssh and networking stopped, ssh service started", nightshift.Effects{Actions: []nightshift.RecordedAction{
			act("systemctl", "stop", "ssh.socket", "networking"), act("systemctl", "start", "ssh.service")}}, EffectsPolicy{}, "action", "networking"},
		{"CIS loopback iptables", nightshift.Effects{Actions: []nightshift.RecordedAction{
			act("iptables", "-A", "INPUT", "-i", "lo", "-j", "ACCEPT"), act("iptables", "-A", "INPUT", "-s", "127.0.0.0/8", "-j", "DROP")}}, EffectsPolicy{}, "", ""},
		{"CIS loopback ip6tables", nightshift.Effects{Actions: []nightshift.RecordedAction{
			act("ip6tables", "-I", "INPUT", "-i", "lo", "-j", "ACCEPT"), act("ip6tables", "-A", "INPUT", "-s", "::1", "-j", "DROP")}}, EffectsPolicy{}, "", ""},
		{"loopback drop without the accept", acts("iptables", "-A", "INPUT", "-s", "127.0.0.0/8", "-j", "DROP"), EffectsPolicy{}, "action", "without a port"},
		{"loopback drop before the accept", nightshift.Effects{Actions: []nightshift.RecordedAction{
			act("iptables", "-A", "INPUT", "-s", "127.0.0.0/8", "-j", "DROP"), act("iptables", "-A", "INPUT", "-i", "lo", "-j", "ACCEPT")}}, EffectsPolicy{}, "action", "without a port"},
		{"negated loopback drop", nightshift.Effects{Actions: []nightshift.RecordedAction{
			act("iptables", "-A", "INPUT", "-i", "lo", "-j", "ACCEPT"), act("iptables", "-A", "INPUT", "!", "-s", "127.0.0.0/8", "-j", "DROP")}}, EffectsPolicy{}, "action", "without a port"},
		{"ip6tables accept for an iptables drop", nightshift.Effects{Actions: []nightshift.RecordedAction{
			act("ip6tables", "-A", "INPUT", "-i", "lo", "-j", "ACCEPT"), act("iptables", "-A", "INPUT", "-s", "127.0.0.0/8", "-j", "DROP")}}, EffectsPolicy{}, "action", "without a port"},
		{"CIS loopback nft", nightshift.Effects{Actions: []nightshift.RecordedAction{
			act("nft", "add", "rule", "inet", "filter", "input", "iif", "lo", "accept"),
			act("nft", "add", "rule", "inet", "filter", "input", "ip", "saddr", "127.0.0.0/8", "counter", "drop")}}, EffectsPolicy{}, "", ""},
		{"nft loopback drop in another chain than the accept", nightshift.Effects{Actions: []nightshift.RecordedAction{
			act("nft", "add", "rule", "inet", "filter", "forward", "iif", "lo", "accept"),
			act("nft", "add", "rule", "inet", "filter", "input", "ip", "saddr", "127.0.0.0/8", "counter", "drop")}}, EffectsPolicy{}, "action", "without a port"},
		{"nft drop of a wider source", nightshift.Effects{Actions: []nightshift.RecordedAction{
			act("nft", "add", "rule", "inet", "filter", "input", "iif", "lo", "accept"),
			act("nft", "add", "rule", "inet", "filter", "input", "ip", "saddr", "0.0.0.0/0", "drop")}}, EffectsPolicy{}, "action", "without a port"},
		{"300 new files outside scope", changes(many(300, "/usr/lib/x")...), EffectsPolicy{Scope: []string{"/etc/sysctl.d"}}, "scope", "300 paths"},
		{"30 new files outside a declared scope", changes(many(30, "/etc/x")...), EffectsPolicy{Scope: []string{"/etc/sysctl.d"}}, "scope", "outside the rule's paths"},
		{"30 new files inside the scope", changes(many(30, "/etc/sysctl.d")...), EffectsPolicy{Scope: []string{"/etc/sysctl.d"}}, "", ""},
		{"a new setuid program", changes(nightshift.FileChange{Path: "/usr/local/bin/rootsh", Change: nightshift.ChangeCreated,
			After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o4755}}), EffectsPolicy{}, "perms-system", "setuid"},
		{"a package's setuid program", changes(nightshift.FileChange{Path: "/usr/bin/sudo", Change: nightshift.ChangeCreated,
			After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o4755}}, file("/var/lib/dpkg/info/sudo.list", nightshift.ChangeCreated, 0, 0o644, "+/usr/bin/sudo\n")), EffectsPolicy{}, "", ""},
		{"a sysctl.d file under /usr/lib replaced", changes(file("/usr/lib/sysctl.d/99-protect-links.conf", nightshift.ChangeModified, 0o644, 0o644, "-fs.protected_fifos = 1\n+fs.protected_fifos = 2\n")), EffectsPolicy{}, "", ""},
		{"a library replaced", changes(nightshift.FileChange{Path: "/usr/lib/x86_64-linux-gnu/libpam.so.0.85.1", Change: nightshift.ChangeModified,
			Before: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644, SHA256: "a"}, After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644, SHA256: "b"}}), EffectsPolicy{}, "program", "system program or library"},
		{"scratch and caches", changes(append(many(300, "/var/cache/apt/archives"), many(10, "/etc/aide")...)...), EffectsPolicy{}, "", ""},
		{"a package's files", changes(append(many(300, "/usr/share/aide"), file("/var/lib/dpkg/info/aide.list", nightshift.ChangeCreated, 0, 0o644,
			func() string {
				var b strings.Builder
				for i := range 300 {
					fmt.Fprintf(&b, "+/usr/share/aide/f%d\n", i)
				}
				return b.String()
			}()))...), EffectsPolicy{}, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := JudgeEffects(tc.eff, tc.pol)
			if tc.entry == "" {
				if len(got) > 0 {
					t.Fatalf("refused: %v", got)
				}
				return
			}
			if len(got) == 0 {
				t.Fatalf("allowed, want %s refusal containing %q", tc.entry, tc.want)
			}
			if got[0].Entry != tc.entry || !strings.Contains(got[0].Reason, tc.want) {
				t.Fatalf("got %v, want %s containing %q", got, tc.entry, tc.want)
			}
		})
	}
}
