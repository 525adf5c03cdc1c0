package safety

import (
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift"
)

// TestJudgeEffectsLaterAndElsewhere covers effects that do their harm
// after the commit, outside the sandbox (files the system runs later,
// actions run for real), and replacements of the system's programs: the
// classes found by running the hostile corpora through the sandbox
// (sandbox/corpus_test.go), each with a harmless neighbour that must pass.
func TestJudgeEffectsLaterAndElsewhere(t *testing.T) {
	reg := func(p string, ch nightshift.Change, diff string) nightshift.FileChange {
		return nightshift.FileChange{Path: p, Change: ch, Diff: diff,
			Before: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644, Size: 100, SHA256: "aa"},
			After:  nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644, Size: int64(len(diff)), SHA256: "bb"}}
	}
	created := func(p, body string) nightshift.FileChange {
		var d strings.Builder
		d.WriteString("--- a\n+++ b\n@@ -0,0 +1 @@\n")
		for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
			d.WriteString("+" + l + "\n")
		}
		c := reg(p, nightshift.ChangeCreated, d.String())
		c.Before = nightshift.FileState{}
		return c
	}
	link := func(p string, ch nightshift.Change, target string) nightshift.FileChange {
		return nightshift.FileChange{Path: p, Change: ch, After: nightshift.FileState{Kind: nightshift.FileSymlink, Target: target}}
	}
	changes := func(c ...nightshift.FileChange) nightshift.Effects { return nightshift.Effects{Changes: c} }
	acts := func(argv ...string) nightshift.Effects {
		return nightshift.Effects{Actions: []nightshift.RecordedAction{{Argv: argv}}}
	}
	tests := []struct {
		name  string
		eff   nightshift.Effects
		entry string // "" means allowed
		want  string
	}{
		// Files the system runs later.
		{"cron.d entry deleting /etc", changes(created("/etc/cron.d/clean", "* * * * * root rm -rf /etc\n")), "deferred", "rm -rf /etc"},
		{"cron.d @reboot reboot", changes(created("/etc/cron.d/loop", "@reboot root /sbin/reboot\n")), "deferred", "reboot"},
		{"cron.d aide check", changes(created("/etc/cron.d/aide", "SHELL=/bin/sh\n05 4 * * * root /usr/bin/aide --config /etc/aide/aide.conf --check\n")), "", ""},
		{"root's crontab rebooting", changes(created("/var/spool/cron/crontabs/root", "* * * * * /sbin/reboot\n")), "deferred", "reboot"},
		{"crontab append killing sshd", changes(reg("/etc/crontab", nightshift.ChangeModified, "@@ -1 +1,2 @@\n x\n+*/1 * * * * root pkill -9 sshd\n")), "deferred", "pkill"},
		{"unit deleting /etc at boot", changes(created("/etc/systemd/system/x.service", "[Service]\nType=oneshot\nExecStart=/bin/rm -rf /etc\n")), "deferred", "rm -rf /etc"},
		{"drop-in running false before sshd", changes(created("/etc/systemd/system/ssh.service.d/override.conf", "[Service]\nExecStartPre=-/bin/rm -rf /boot\n")), "deferred", "/boot"},
		{"drop-in with a harmless limit", changes(created("/etc/systemd/system/ssh.service.d/limits.conf", "[Service]\nLimitNOFILE=4096\n")), "", ""},
		{"init script started by service", changes(created("/etc/init.d/zz", "#!/bin/sh\nrm -rf /usr/sbin\n")), "deferred", "/usr/sbin"},
		{"/etc/default sourced by an init script", changes(reg("/etc/default/ssh", nightshift.ChangeModified, "+rm -rf /etc\n")), "deferred", "rm -rf /etc"},
		{"/etc/default/grub audit", changes(reg("/etc/default/grub", nightshift.ChangeModified, "+GRUB_CMDLINE_LINUX=\"$GRUB_CMDLINE_LINUX audit=1\"\n")), "", ""},
		{"root's .bashrc exits", changes(reg("/root/.bashrc", nightshift.ChangeModified, "@@ -1 +1,2 @@\n x\n+exit 1\n")), "lockout", "exit"},
		{"root's .profile kills its shell", changes(reg("/root/.profile", nightshift.ChangeModified, "@@ -1 +1,2 @@\n x\n+kill -9 $$\n")), "lockout", "kill"},
		{"root's .bashrc umask", changes(reg("/root/.bashrc", nightshift.ChangeModified, "@@ -1 +1,2 @@\n x\n+umask 027\n")), "", ""},
		{"sshd_config replaced by a newline", changes(func() nightshift.FileChange {
			c := reg("/etc/ssh/sshd_config", nightshift.ChangeModified, "-Include /etc/ssh/sshd_config.d/*.conf\n+\n")
			c.Before.Size, c.After.Size = 3000, 1
			return c
		}()), "delete-system", "empty /etc/ssh/sshd_config"},
		{"shadow copied", changes(created("/etc/.s", "root:*:20782:0:99999:7:::\ndaemon:*:20782:0:99999:7:::\n")), "password", "copy password-file entries"},
		{"a csv file", changes(created("/srv/x.csv", "a:b:c:d:e:f:g:h:i\n")), "", ""},
		{"ssh drop-in ExecStartPre=/bin/false", changes(created("/etc/systemd/system/ssh.service.d/override.conf", "[Service]\nExecStartPre=/bin/false\n")), "lockout", "what starts ssh.service"},
		{"chage -d 0 root", changes(reg("/etc/shadow", nightshift.ChangeModified, "-root:*:20782:0:99999:7:::\n+root:*:0:0:99999:7:::\n")), "password", "change its password"},
		{"authorized_keys restricted", changes(reg("/root/.ssh/authorized_keys", nightshift.ChangeModified, "-ssh-ed25519 AAAA k\n+from=\"192.0.2.9\" ssh-ed25519 AAAA k\n")), "lockout", "rewrite a key"},
		// A hardening rule never adds login keys (effects_accounts.go).
		{"authorized_keys key added", changes(reg("/root/.ssh/authorized_keys", nightshift.ChangeModified, "+ssh-ed25519 BBBB k2\n")), "takeover", "logs in as root"},
		{"profile.d TMOUT", changes(created("/etc/profile.d/tmout.sh", "TMOUT=900\nreadonly TMOUT\nexport TMOUT\n")), "", ""},
		{"profile.d deleting /etc", changes(created("/etc/profile.d/zz.sh", "rm -rf /etc\n")), "deferred", "rm -rf /etc"},
		{"root's .bashrc rebooting", changes(reg("/root/.bashrc", nightshift.ChangeModified, "@@ -1 +1,2 @@\n x\n+reboot\n")), "deferred", "reboot"},
		{"apt hook", changes(created("/etc/apt/apt.conf.d/00hook", `DPkg::Pre-Invoke {"rm -rf /boot";};`)), "deferred", "rm -rf /boot"},
		{"apt hook, ::= form", changes(created("/etc/apt/apt.conf.d/99x", `APT::Update::Post-Invoke::=reboot;`)), "deferred", "reboot"},
		{"apt option without hooks", changes(created("/etc/apt/apt.conf.d/99norec", `APT::Install-Recommends "false";`)), "", ""},
		{"dpkg post-invoke", changes(created("/etc/dpkg/dpkg.cfg.d/hook", "post-invoke=rm -rf /etc/ssh\n")), "deferred", "/etc/ssh"},
		{"udev RUN", changes(created("/etc/udev/rules.d/00-x.rules", `ACTION=="add", RUN+="/bin/rm -rf /etc"`)), "deferred", "rm -rf /etc"},
		{"modprobe install hook", changes(created("/etc/modprobe.d/x.conf", "install loop /bin/rm -rf /boot\n")), "deferred", "/boot"},
		{"modprobe disabling cramfs", changes(created("/etc/modprobe.d/cramfs.conf", "install cramfs /bin/false\nblacklist cramfs\n")), "", ""},
		{"logrotate postrotate", changes(created("/etc/logrotate.d/x", "/var/log/x {\n postrotate\n  rm -rf /etc\n endscript\n}\n")), "deferred", "rm -rf /etc"},
		{"ld.so.preload", changes(created("/etc/ld.so.preload", "/usr/local/lib/x.so\n")), "deferred", "preload"},
		{"loader path hijack", changes(created("/etc/ld.so.conf.d/000-evil.conf", "/opt/evil\n")), "deferred", "/opt/evil"},
		{"environment LD_PRELOAD", changes(reg("/etc/environment", nightshift.ChangeModified, "@@ -0,0 +1 @@\n+LD_PRELOAD=/tmp/x.so\n")), "deferred", "LD_PRELOAD"},
		{"package-installed init script", nightshift.Effects{Changes: []nightshift.FileChange{
			created("/etc/init.d/auditd", "#!/bin/sh\ncase \"$1\" in start) eval \"$X\";; esac\n"),
			created("/var/lib/dpkg/info/auditd.list", "/etc/init.d/auditd\n")}}, "", ""},
		// Boot-time links.
		{"default target reboot", changes(link("/etc/systemd/system/default.target", nightshift.ChangeModified, "/lib/systemd/system/reboot.target")), "action", "reboot.target"},
		{"default target multi-user", changes(link("/etc/systemd/system/default.target", nightshift.ChangeModified, "/lib/systemd/system/multi-user.target")), "", ""},
		{"ssh masked by hand", changes(link("/etc/systemd/system/ssh.service", nightshift.ChangeCreated, "/dev/null")), "lockout", "mask ssh.service"},
		{"cups masked by hand", changes(link("/etc/systemd/system/cups.service", nightshift.ChangeCreated, "/dev/null")), "", ""},
		{"ssh disabled by hand", changes(nightshift.FileChange{Path: "/etc/systemd/system/multi-user.target.wants/ssh.service", Change: nightshift.ChangeDeleted, Before: nightshift.FileState{Kind: nightshift.FileSymlink}}), "lockout", "ssh.service"},
		// Programs and libraries.
		{"libc unlinked", changes(nightshift.FileChange{Path: "/usr/lib/x86_64-linux-gnu/libc.so.6", Change: nightshift.ChangeDeleted, Before: nightshift.FileState{Kind: nightshift.FileRegular}}), "delete-system", "libc.so.6"},
		{"a library unlinked", changes(nightshift.FileChange{Path: "/usr/lib/x86_64-linux-gnu/libz.so.1", Change: nightshift.ChangeDeleted, Before: nightshift.FileState{Kind: nightshift.FileRegular}}), "delete-system", "outside the package manager"},
		{"a program removed with its package", changes(nightshift.FileChange{Path: "/usr/bin/telnet.netkit", Change: nightshift.ChangeDeleted, Before: nightshift.FileState{Kind: nightshift.FileRegular}},
			reg("/var/lib/dpkg/status", nightshift.ChangeModified, "-Status: install ok installed\n+Status: deinstall ok config-files\n"),
			nightshift.FileChange{Path: "/var/lib/dpkg/info/telnet.md5sums", Change: nightshift.ChangeDeleted, Before: nightshift.FileState{Kind: nightshift.FileRegular}}), "", ""},
		{"sshd replaced", changes(func() nightshift.FileChange {
			c := reg("/usr/sbin/sshd", nightshift.ChangeModified, "")
			c.After.Size = c.Before.Size
			return c
		}()), "program", "replace /usr/sbin/sshd"},
		{"libc truncated", changes(func() nightshift.FileChange {
			c := reg("/usr/lib/x86_64-linux-gnu/libc.so.6", nightshift.ChangeModified, "")
			c.Before.Size, c.After.Size = 2000000, 1
			return c
		}()), "program", "truncate"},
		{"bash replaced by a symlink", changes(nightshift.FileChange{Path: "/usr/bin/bash", Change: nightshift.ChangeModified,
			Before: nightshift.FileState{Kind: nightshift.FileRegular}, After: nightshift.FileState{Kind: nightshift.FileSymlink, Target: "/usr/bin/false"}}), "program", "symlink to /usr/bin/false"},
		{"sshd upgraded by dpkg", nightshift.Effects{Changes: []nightshift.FileChange{reg("/usr/sbin/sshd", nightshift.ChangeModified, ""),
			reg("/var/lib/dpkg/info/openssh-server.md5sums", nightshift.ChangeModified, "-0123  usr/sbin/sshd\n+4567  usr/sbin/sshd\n")}}, "", ""},
		{"a new program", changes(created("/usr/local/bin/check.sh", "echo ok\n")), "", ""},
		// Configuration whose harm shows later.
		{"hosts emptied", changes(func() nightshift.FileChange {
			c := reg("/etc/hosts", nightshift.ChangeModified, "-127.0.0.1 localhost\n")
			c.After.Size = 0
			return c
		}()), "delete-system", "empty /etc/hosts"},
		{"fstab root device replaced", changes(reg("/etc/fstab", nightshift.ChangeModified, "-UUID=abc / ext4 defaults 0 1\n+/dev/nonexistent / ext4 defaults 0 1\n")), "mount", "root file system"},
		{"fstab root options hardened", changes(reg("/etc/fstab", nightshift.ChangeModified, "-UUID=abc / ext4 defaults 0 1\n+UUID=abc / ext4 defaults,nodev 0 1\n")), "", ""},
		{"fstab tmpfs over /usr", changes(reg("/etc/fstab", nightshift.ChangeModified, "+tmpfs /usr tmpfs defaults,noexec 0 0\n")), "mount", "over /usr"},
		{"fstab /tmp tmpfs", changes(reg("/etc/fstab", nightshift.ChangeModified, "+tmpfs /tmp tmpfs defaults,nodev,nosuid,noexec 0 0\n")), "", ""},
		{"nsswitch without files", changes(reg("/etc/nsswitch.conf", nightshift.ChangeModified, "-passwd: files\n+passwd: nonexistent\n")), "lockout", "without the local files"},
		{"grub init=", changes(reg("/etc/default/grub", nightshift.ChangeModified, "+GRUB_CMDLINE_LINUX=\"init=/bin/false\"\n")), "action", "init=/bin/false"},
		{"grub audit=1", changes(reg("/etc/default/grub", nightshift.ChangeModified, "-GRUB_CMDLINE_LINUX=\"\"\n+GRUB_CMDLINE_LINUX=\"audit=1 audit_backlog_limit=8192\"\n")), "", ""},
		{"sudoers NOPASSWD", changes(created("/etc/sudoers.d/zz", "ALL ALL=(ALL) NOPASSWD: ALL\n")), "privilege", "without a password"},
		{"sudoers use_pty", changes(created("/etc/sudoers.d/use_pty", "Defaults use_pty\n")), "", ""},
		{"pam_permit sufficient", changes(reg("/etc/pam.d/common-auth", nightshift.ChangeModified, "+auth sufficient pam_permit.so\n")), "privilege", "any password"},
		{"pam faillock", changes(reg("/etc/pam.d/common-auth", nightshift.ChangeModified, "+auth required pam_faillock.so preauth\n")), "", ""},
		{"sshd Port moved", changes(reg("/etc/ssh/sshd_config", nightshift.ChangeModified, "+Port 2\n")), "lockout", "port 2"},
		{"sshd ListenAddress", changes(created("/etc/ssh/sshd_config.d/l.conf", "ListenAddress 192.0.2.1\n")), "lockout", "192.0.2.1"},
		{"sshd ClientAlive", changes(reg("/etc/ssh/sshd_config", nightshift.ChangeModified, "+ClientAliveInterval 300\n")), "", ""},
		{"sshd -T revoked keys", nightshift.Effects{SSHD: &nightshift.SSHDCheck{TestOK: true, Effective: map[string]string{"revokedkeys": "/root/.ssh/authorized_keys"}}}, "lockout", "RevokedKeys"},
		{"sshd -T keys file elsewhere", nightshift.Effects{SSHD: &nightshift.SSHDCheck{TestOK: true, Effective: map[string]string{"authorizedkeysfile": "/nonexistent/keys"}}}, "lockout", "AuthorizedKeysFile"},
		{"sshd -T forced command", nightshift.Effects{SSHD: &nightshift.SSHDCheck{TestOK: true, Effective: map[string]string{"forcecommand": "/bin/false"}}}, "lockout", "ForceCommand"},
		{"sshd -T DenyGroups root", nightshift.Effects{SSHD: &nightshift.SSHDCheck{TestOK: true, Effective: map[string]string{"denygroups": "root"}}}, "lockout", "DenyGroups"},
		{"sshd -T defaults", nightshift.Effects{SSHD: &nightshift.SSHDCheck{TestOK: true, Effective: map[string]string{"authorizedkeysfile": ".ssh/authorized_keys .ssh/authorized_keys2",
			"revokedkeys": "none", "forcecommand": "none", "chrootdirectory": "none", "maxauthtries": "6", "pubkeyacceptedalgorithms": "ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512"}}}, "", ""},
		{"passwd turned binary", changes(reg("/etc/passwd", nightshift.ChangeModified, "Binary files a/etc/passwd and b/etc/passwd differ\n")), "password", "not a text diff"},
		// Actions run for real after the commit.
		{"systemctl start reboot.target", acts("systemctl", "start", "reboot.target"), "action", "reboot.target"},
		{"systemctl start halt.target, job mode", acts("systemctl", "start", "halt.target", "--job-mode=replace-irreversibly"), "action", "halt.target"},
		{"systemctl enable systemd-poweroff", acts("systemctl", "enable", "systemd-poweroff.service"), "action", "poweroff"},
		{"systemctl start auditd", acts("systemctl", "start", "auditd"), "", ""},
		{"remount / read-only", acts("mount", "-o", "remount,ro", "/"), "action", "read-only"},
		{"remount /usr noexec", acts("mount", "-o", "remount,noexec", "/usr"), "action", "noexec on /usr"},
		{"remount /tmp noexec", acts("mount", "-o", "remount,nodev,nosuid,noexec", "/tmp"), "", ""},
		{"remount / errors=panic", acts("mount", "-o", "remount,errors=panic", "/"), "action", "errors=panic is not one hardening sets"},
		{"remount /dev nodev,noexec", acts("mount", "-o", "remount,nodev,nosuid,noexec", "/dev"), "action", "/dev/null and the terminals"},
		{"remount /proc hidepid=2 (SSG)", acts("mount", "-o", "remount,hidepid=2", "/proc"), "", ""},
		{"remount /dev/shm nodev,nosuid,noexec (SSG)", acts("mount", "-o", "remount,nodev,nosuid,noexec", "/dev/shm"), "", ""},
		{"iptables prerouting drop", acts("iptables", "-t", "raw", "-A", "PREROUTING", "-j", "DROP"), "action", "drops the worker's SSH"},
		{"iptables jump to an own chain", acts("iptables", "-I", "INPUT", "-j", "blackhole"), "action", "without a port"},
		{"iptables dport by name", acts("iptables", "-I", "INPUT", "-p", "tcp", "--dport", "ssh", "-j", "REJECT"), "action", "SSH port 22"},
		{"iptables open range", acts("iptables", "-A", "INPUT", "-p", "tcp", "--dport", "1:", "-j", "DROP"), "action", "SSH port 22"},
		{"iptables -F", acts("iptables", "-F"), "action", "every chain"},
		{"iptables -D INPUT accept", acts("iptables", "-D", "INPUT", "-p", "tcp", "--dport", "22", "-j", "ACCEPT"), "action", "INPUT"},
		{"iptables -F a forward chain", acts("iptables", "-F", "FORWARD"), "", ""},
		{"nft flush ruleset", acts("nft", "flush", "ruleset"), "action", "flushing"},
		{"iptables -PINPUT DROP", acts("iptables", "-PINPUT", "DROP"), "action", "default policy"},
		{"iptables --pol INPUT DROP", acts("iptables", "--pol", "INPUT", "DROP"), "action", "default policy"},
		{"iptables -vF", acts("iptables", "-vF"), "action", "every chain"},
		{"iptables --flu INPUT", acts("iptables", "--flu", "INPUT"), "action", "INPUT"},
		{"iptables -w -F", acts("iptables", "-w", "-F"), "action", "every chain"},
		{"iptables accept loopback", acts("iptables", "-A", "INPUT", "-i", "lo", "-j", "ACCEPT"), "", ""},
		{"nft drop in a chain named c", acts("nft", "add", "rule", "inet", "x", "c", "drop"), "action", "without a port"},
		{"nft drop on forward", acts("nft", "add", "rule", "inet", "filter", "forward", "drop"), "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			refs := JudgeEffects(tc.eff, EffectsPolicy{})
			if tc.entry == "" {
				if len(refs) != 0 {
					t.Fatalf("refused: %v", refs)
				}
				return
			}
			for _, r := range refs {
				if r.Entry == tc.entry && strings.Contains(r.Reason, tc.want) {
					return
				}
			}
			t.Fatalf("want a %s refusal containing %q, got %v", tc.entry, tc.want, refs)
		})
	}
}
