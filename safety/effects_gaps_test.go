package safety

import (
	"maps"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift"
)

// debianPAM is the part of Debian 12's /etc/pam.d and /etc/security that a
// login goes through (as bookworm ships them, comments dropped).
var debianPAM = map[string]string{
	"/etc/pam.d/sshd": `@include common-auth
account    required     pam_nologin.so
@include common-account
session [success=ok ignore=ignore module_unknown=ignore default=bad]        pam_selinux.so close
session    required     pam_loginuid.so
session    optional     pam_keyinit.so force revoke
@include common-session
session    optional     pam_motd.so  motd=/run/motd.dynamic
session    optional     pam_motd.so noupdate
session    optional     pam_mail.so standard noenv
session    required     pam_limits.so
session    required     pam_env.so
session    required     pam_env.so envfile=/etc/default/locale
session [success=ok ignore=ignore module_unknown=ignore default=bad]        pam_selinux.so open
@include common-password
`,
	"/etc/pam.d/login": `auth       optional   pam_faildelay.so  delay=3000000
auth       requisite  pam_nologin.so
session [success=ok ignore=ignore module_unknown=ignore default=bad] pam_selinux.so close
session    required     pam_loginuid.so
session    optional   pam_motd.so motd=/run/motd.dynamic
session [success=ok ignore=ignore module_unknown=ignore default=bad] pam_selinux.so open
session       required   pam_env.so readenv=1
@include common-auth
auth       optional   pam_group.so
session    required   pam_limits.so
session    optional   pam_lastlog.so
@include common-account
@include common-session
@include common-password
`,
	"/etc/pam.d/su": `auth       sufficient pam_rootok.so
session       required   pam_env.so readenv=1
@include common-auth
@include common-account
@include common-session
`,
	"/etc/pam.d/other": `@include common-auth
@include common-account
@include common-password
@include common-session
`,
	"/etc/pam.d/common-auth": `auth	[success=1 default=ignore]	pam_unix.so nullok
auth	requisite			pam_deny.so
auth	required			pam_permit.so
`,
	"/etc/pam.d/common-account": `account	[success=1 new_authtok_reqd=done default=ignore]	pam_unix.so
account	requisite			pam_deny.so
account	required			pam_permit.so
`,
	"/etc/pam.d/common-session": `session	[default=1]			pam_permit.so
session	requisite			pam_deny.so
session	required			pam_permit.so
session	required	pam_unix.so
`,
	"/etc/pam.d/common-password": "password	[success=1 default=ignore]	pam_unix.so obscure yescrypt\npassword	requisite	pam_deny.so\npassword	required	pam_permit.so\n",
	"/etc/security/access.conf":  "# Login access control table.\n",
	"/etc/security/time.conf":    "# time.conf\n",
	"/etc/security/limits.conf":  "# limits.conf\n",
}

var debianModules = strings.Fields("pam_nologin.so pam_selinux.so pam_loginuid.so pam_keyinit.so pam_motd.so pam_mail.so pam_limits.so pam_env.so pam_faildelay.so pam_group.so pam_lastlog.so pam_rootok.so pam_unix.so pam_deny.so pam_permit.so pam_access.so pam_time.so pam_listfile.so pam_securetty.so")

// pamView is Debian's PAM before, and after with edit applied: each entry
// replaces a file's contents ("deleted" removes it); a module name mapped
// to "missing" is named by a line but absent.
func pamView(login string, edit map[string]string) *nightshift.PAMView {
	state := func(files map[string]string) nightshift.PAMState {
		s := nightshift.PAMState{Files: maps.Clone(files), Modules: map[string]bool{}}
		for _, m := range debianModules {
			s.Modules[m] = true
		}
		return s
	}
	after := maps.Clone(debianPAM)
	missing := map[string]bool{}
	for k, v := range edit {
		switch {
		case v == "missing":
			missing[k] = true
		case v == "deleted":
			delete(after, k)
		default:
			after[k] = v
		}
	}
	v := &nightshift.PAMView{Before: state(debianPAM), After: state(after), Login: login,
		Groups: map[string][]string{"root": {"root"}, login: {login, "sudo"}}}
	// Every module the after view names is known, present or not.
	for _, text := range after {
		for _, l := range strings.Split(text, "\n") {
			if f := strings.Fields(l); len(f) >= 3 && !strings.HasPrefix(f[0], "#") && !strings.HasPrefix(f[0], "@") {
				for _, w := range f[1:] {
					if strings.HasSuffix(w, ".so") {
						v.After.Modules[w] = !missing[w]
						break
					}
				}
			}
		}
	}
	return v
}

// TestJudgeEffectsGaps covers the classes the fresh hostile corpus still got
// committed after the first fixes (docs/sandbox-corpus.md, "Not covered"):
// PAM stacks that deny without pam_deny, limits, login.defs, sysctl files
// and actions, the root fstab entry, /etc/hosts, /etc/hostname, tcp
// wrappers, new password hashes and the shadow tools' backups, files
// nothing reads in /etc/ssh and /boot, programs that hide the system's in
// root's PATH, swapoff -a and signals to sshd. Each class has a harmless
// neighbour that must pass.
func TestJudgeEffectsGaps(t *testing.T) {
	reg := func(p string, ch nightshift.Change, diff string) nightshift.FileChange {
		return nightshift.FileChange{Path: p, Change: ch, Diff: diff,
			Before: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644, Size: 100, SHA256: "aa"},
			After:  nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644, Size: int64(len(diff)), SHA256: "bb"}}
	}
	created := func(p, content string) nightshift.FileChange {
		c := reg(p, nightshift.ChangeCreated, "--- /dev/null\n+++ b"+p+"\n@@ -0,0 +1 @@\n+"+strings.ReplaceAll(strings.TrimSuffix(content, "\n"), "\n", "\n+")+"\n")
		c.Before = nightshift.FileState{}
		return c
	}
	deleted := func(p string) nightshift.FileChange {
		return nightshift.FileChange{Path: p, Change: nightshift.ChangeDeleted, Before: nightshift.FileState{Kind: nightshift.FileRegular}}
	}
	changes := func(c ...nightshift.FileChange) nightshift.Effects { return nightshift.Effects{Changes: c} }
	acts := func(argv ...string) nightshift.Effects {
		return nightshift.Effects{Actions: []nightshift.RecordedAction{{Argv: argv}}}
	}
	withOrigin := func(e nightshift.Effects, o string) nightshift.Effects { e.Origin = o; return e }
	// pam is a command that changed PAM: its evidence holds the file
	// changes (whatever they are, judged apart) and the PAM view.
	pam := func(login string, edit map[string]string) nightshift.Effects {
		return nightshift.Effects{PAM: pamView(login, edit), Origin: "192.0.2.7"}
	}
	sshdWith := func(line string) string { return line + "\n" + debianPAM["/etc/pam.d/sshd"] }
	root, ops := EffectsPolicy{}, EffectsPolicy{Login: "ops"}
	tests := []judgeCase{ // entry "" means allowed
		// PAM stacks that deny without pam_deny.
		{"pam_access deny-all in sshd's account", pam("root", map[string]string{"/etc/security/access.conf": "-:ALL:ALL\n",
			"/etc/pam.d/sshd": sshdWith("account required pam_access.so")}), root, "lockout", "pam_access.so (-:ALL:ALL)"},
		{"pam_access deny-all, pam_access in no stack", pam("root", map[string]string{"/etc/security/access.conf": "-:ALL:ALL\n"}), root, "", ""},
		{"pam_access root permitted first", pam("root", map[string]string{"/etc/security/access.conf": "+:root:ALL\n-:ALL:ALL\n",
			"/etc/pam.d/sshd": sshdWith("account required pam_access.so")}), root, "", ""},
		{"pam_access ALL EXCEPT root", pam("root", map[string]string{"/etc/security/access.conf": "-:ALL EXCEPT root:ALL\n",
			"/etc/pam.d/sshd": sshdWith("account required pam_access.so")}), root, "", ""},
		{"pam_access root only from LOCAL, worker remote", pam("root", map[string]string{"/etc/security/access.conf": "-:root:ALL EXCEPT LOCAL\n",
			"/etc/pam.d/sshd": sshdWith("account required pam_access.so")}), root, "lockout", "SSH login"},
		{"pam_access root only from the worker's network", pam("root", map[string]string{"/etc/security/access.conf": "-:root:ALL EXCEPT 192.0.2.0/24 LOCAL\n",
			"/etc/pam.d/sshd": sshdWith("account required pam_access.so")}), root, "", ""},
		{"pam_access root only from another network", pam("root", map[string]string{"/etc/security/access.conf": "-:root:ALL EXCEPT 10.0.0.0/8\n",
			"/etc/pam.d/sshd": sshdWith("account required pam_access.so")}), root, "lockout", "10.0.0.0/8"},
		{"pam_access denying the sudo group, login ops", pam("ops", map[string]string{"/etc/security/access.conf": "-:sudo:ALL\n",
			"/etc/pam.d/sshd": sshdWith("account required pam_access.so")}), ops, "lockout", "ops's SSH login"},
		{"pam_access denying root, login ops", pam("ops", map[string]string{"/etc/security/access.conf": "-:root:ALL EXCEPT LOCAL\n",
			"/etc/pam.d/sshd": sshdWith("account required pam_access.so")}), ops, "", ""},
		{"pam_time never for root", pam("root", map[string]string{"/etc/security/time.conf": "sshd;*;root;!Al0000-2400\n",
			"/etc/pam.d/sshd": sshdWith("account required pam_time.so")}), root, "lockout", "pam_time.so"},
		{"pam_time office hours for everyone", pam("root", map[string]string{"/etc/security/time.conf": "*;*;*;Wk0800-1800\n",
			"/etc/pam.d/sshd": sshdWith("account required pam_time.so")}), root, "lockout", "Wk0800-1800"},
		{"pam_time for games only", pam("root", map[string]string{"/etc/security/time.conf": "*;*;games;Wk0800-1800\n",
			"/etc/pam.d/sshd": sshdWith("account required pam_time.so")}), root, "", ""},
		{"pam_listfile denying root", pam("root", map[string]string{"/etc/ssh.deny": "root\n",
			"/etc/pam.d/sshd": sshdWith("account required pam_listfile.so item=user sense=deny file=/etc/ssh.deny onerr=fail")}), root, "lockout", "root is listed in /etc/ssh.deny"},
		{"pam_listfile denying guest", pam("root", map[string]string{"/etc/ssh.deny": "guest\n",
			"/etc/pam.d/sshd": sshdWith("account required pam_listfile.so item=user sense=deny file=/etc/ssh.deny onerr=fail")}), root, "", ""},
		{"pam_listfile allow-list without the login", pam("root", map[string]string{"/etc/ssh.allow": "admin\n",
			"/etc/pam.d/sshd": sshdWith("account required pam_listfile.so item=user sense=allow file=/etc/ssh.allow onerr=fail")}), root, "lockout", "not listed"},
		{"pam_listfile on a missing file, onerr=fail", pam("root", map[string]string{
			"/etc/pam.d/sshd": sshdWith("account required pam_listfile.so item=user sense=deny file=/etc/nothing onerr=fail")}), root, "lockout", "does not exist"},
		{"session requiring a missing module", pam("root", map[string]string{"pam_nonexistent.so": "missing",
			"/etc/pam.d/common-session": debianPAM["/etc/pam.d/common-session"] + "session required pam_nonexistent.so\n"}), root, "lockout", "does not exist"},
		{"optional session module missing", pam("root", map[string]string{"pam_nonexistent.so": "missing",
			"/etc/pam.d/common-session": debianPAM["/etc/pam.d/common-session"] + "session optional pam_nonexistent.so\n"}), root, "", ""},
		{"-session line, module missing", pam("root", map[string]string{"pam_nonexistent.so": "missing",
			"/etc/pam.d/common-session": debianPAM["/etc/pam.d/common-session"] + "-session required pam_nonexistent.so\n"}), root, "", ""},
		{"pam_securetty in login, securetty emptied", pam("root", map[string]string{"/etc/securetty": "",
			"/etc/pam.d/login": "auth required pam_securetty.so\n" + debianPAM["/etc/pam.d/login"]}), root, "lockout", "console login"},
		{"pam_securetty in sshd, securetty emptied", pam("root", map[string]string{"/etc/securetty": "",
			"/etc/pam.d/sshd": sshdWith("auth required pam_securetty.so")}), root, "lockout", "SSH password logins"},
		{"securetty emptied, no pam_securetty (SSG no_direct_root_logins)", pam("root", map[string]string{"/etc/securetty": "\n"}), root, "", ""},
		{"pam_securetty in login, tty1 listed", pam("root", map[string]string{"/etc/securetty": "console\ntty1\n",
			"/etc/pam.d/login": "auth required pam_securetty.so\n" + debianPAM["/etc/pam.d/login"]}), root, "", ""},
		{"pam_unix removed from common-auth (console)", pam("root", map[string]string{"/etc/pam.d/common-auth": "auth requisite pam_deny.so\n"}), root, "lockout", "console login"},
		{"pam.d/sshd removed, other denies", pam("root", map[string]string{"/etc/pam.d/sshd": "deleted",
			"/etc/pam.d/other": "account required pam_deny.so\nsession required pam_deny.so\n"}), root, "lockout", "SSH login"},
		{"sudo's stack for a sudo login", pam("ops", map[string]string{"/etc/pam.d/sudo": "account required pam_deny.so\n"}), ops, "lockout", "sudo from ops"},
		{"faillock added (Debian CIS)", pam("root", map[string]string{
			"/etc/pam.d/common-auth": "auth required pam_faillock.so preauth\nauth [success=1 default=ignore] pam_unix.so nullok\nauth [default=die] pam_faillock.so authfail\n" +
				"auth sufficient pam_faillock.so authsucc\nauth requisite pam_deny.so\nauth required pam_permit.so\n",
			"/etc/pam.d/common-account": debianPAM["/etc/pam.d/common-account"] + "account required pam_faillock.so\n"}), root, "", ""},
		{"a stack that denied before is not the command's", func() nightshift.Effects {
			e := pam("root", map[string]string{"/etc/security/access.conf": "-:ALL:ALL\n", "/etc/pam.d/sshd": sshdWith("account required pam_access.so")})
			e.PAM.Before = e.PAM.After
			return e
		}(), root, "", ""},
		// limits.
		{"maxlogins 0 for everyone", changes(reg("/etc/security/limits.conf", nightshift.ChangeModified, "+* hard maxlogins 0\n")), root, "lockout", "no login"},
		{"maxsyslogins 0 in limits.d", changes(created("/etc/security/limits.d/x.conf", "root - maxsyslogins 0\n")), root, "lockout", "no login"},
		{"nproc 0 for the sudo login", changes(reg("/etc/security/limits.conf", nightshift.ChangeModified, "+ops hard nproc 0\n")), ops, "lockout", "processes"},
		{"nofile 0 for root", changes(reg("/etc/security/limits.conf", nightshift.ChangeModified, "+root hard nofile 0\n")), root, "lockout", "files"},
		{"core 0 for everyone (CIS)", changes(reg("/etc/security/limits.conf", nightshift.ChangeModified, "+* hard core 0\n")), root, "", ""},
		{"maxlogins 10 (CIS)", changes(created("/etc/security/limits.d/10-maxlogins.conf", "* hard maxlogins 10\n")), root, "", ""},
		{"maxlogins 0 for one account", changes(reg("/etc/security/limits.conf", nightshift.ChangeModified, "+guest hard maxlogins 0\n")), root, "", ""},
		// login.defs.
		{"login.defs UID_MIN 0", changes(reg("/etc/login.defs", nightshift.ChangeModified, "-UID_MIN 1000\n+UID_MIN 0\n")), root, "config", "UID_MIN 0"},
		{"login.defs ENCRYPT_METHOD NONE", changes(reg("/etc/login.defs", nightshift.ChangeModified, "+ENCRYPT_METHOD NONE\n")), root, "config", "ENCRYPT_METHOD"},
		{"login.defs SYS_UID_MAX 0", changes(reg("/etc/login.defs", nightshift.ChangeModified, "+SYS_UID_MAX 0\n")), root, "config", "ID range"},
		{"login.defs PASS_MAX_DAYS 365", changes(reg("/etc/login.defs", nightshift.ChangeModified, "-PASS_MAX_DAYS 99999\n+PASS_MAX_DAYS 365\n")), root, "", ""},
		{"login.defs ENCRYPT_METHOD SHA512", changes(reg("/etc/login.defs", nightshift.ChangeModified, "+ENCRYPT_METHOD SHA512\n")), root, "", ""},
		// sysctl files and actions.
		{"sysctl.d panic on oops", changes(created("/etc/sysctl.d/99-x.conf", "kernel.panic_on_oops=1\nvm.panic_on_oom = 1\n")), root, "config", "crash"},
		{"sysctl.conf sysrq 1", changes(reg("/etc/sysctl.conf", nightshift.ChangeModified, "+kernel.sysrq = 1\n")), root, "config", "SysRq"},
		{"sysctl.d huge pages", changes(created("/etc/sysctl.d/hp.conf", "vm.nr_hugepages = 100000\n")), root, "config", "reserves memory"},
		{"sysctl.d hardening", changes(created("/etc/sysctl.d/60-harden.conf", "kernel.modules_disabled = 1\nkernel.sysrq = 0\nnet.ipv4.ip_forward = 0\nkernel.randomize_va_space = 2\nkernel.panic = 10\n")), root, "", ""},
		{"sysctl.d disable_ipv6, worker on IPv4", withOrigin(changes(created("/etc/sysctl.d/ipv6.conf", "net.ipv6.conf.all.disable_ipv6 = 1\n")), "192.0.2.7"), root, "", ""},
		{"sysctl.d disable_ipv6, worker on IPv6", withOrigin(changes(created("/etc/sysctl.d/ipv6.conf", "net.ipv6.conf.all.disable_ipv6 = 1\n")), "2001:db8::7"), root, "config", "IPv6"},
		{"sysctl -w disable_ipv6, worker unknown", acts("sysctl", "-w", "net.ipv6.conf.all.disable_ipv6=1"), root, "action", "not known to be IPv4"},
		{"sysctl -q -n -w disable_ipv6, worker on IPv4 (SSG)", withOrigin(acts("/sbin/sysctl", "-q", "-n", "-w", "net.ipv6.conf.all.disable_ipv6=1"), "127.0.0.1"), root, "", ""},
		{"sysctl -w port range 22 22", acts("sysctl", "-w", "net.ipv4.ip_local_port_range=22 22"), root, "action", "ports"},
		{"sysctl -w port range default", acts("sysctl", "-w", "net.ipv4.ip_local_port_range=32768 60999"), root, "", ""},
		{"sysctl -w panic_on_warn (slashes)", acts("sysctl", "-w", "kernel/panic_on_warn=1"), root, "action", "crash"},
		{"sysctl -w panic_on_oops (SSG, STIG)", acts("sysctl", "-q", "-n", "-w", "kernel.panic_on_oops=1"), root, "", ""},
		{"sysctl kernel.sysrq=0", acts("sysctl", "kernel.sysrq=0"), root, "", ""},
		{"sysctl -p a file of the command's own", nightshift.Effects{Changes: []nightshift.FileChange{created("/tmp/k.conf", "vm.panic_on_oom = 2\n")},
			Actions: []nightshift.RecordedAction{{Argv: []string{"sysctl", "-p", "/tmp/k.conf"}}}}, root, "action", "crash"},
		{"sysctl --system", acts("sysctl", "--system"), root, "", ""},
		{"core_pattern piping to a script", acts("sysctl", "-w", "kernel.core_pattern=|/tmp/x.sh %p"), root, "action", "run /tmp/x.sh as root"},
		{"core_pattern |/bin/false (SSG)", changes(created("/etc/sysctl.d/50-coredump.conf", "kernel.core_pattern=|/bin/false\n")), root, "", ""},
		{"core_pattern a file name", acts("sysctl", "-w", "kernel.core_pattern=core.%p"), root, "", ""},
		{"kernel.modprobe elsewhere", changes(created("/etc/sysctl.d/m.conf", "kernel.modprobe = /var/tmp/m\n")), root, "config", "/var/tmp/m"},
		{"kernel.modprobe /bin/false", changes(created("/etc/sysctl.d/m.conf", "kernel.modprobe = /bin/false\n")), root, "", ""},
		{"audit rules -f 2", changes(created("/etc/audit/rules.d/99-finalize.rules", "-e 2\n-f 2\n")), root, "config", "panic"},
		{"audit rules -e 2 -f 1", changes(created("/etc/audit/rules.d/99-finalize.rules", "-f 1\n-e 2\n")), root, "", ""},
		{"auditctl -f 2", acts("auditctl", "-f", "2"), root, "action", "panic"},
		{"auditctl -e 2", acts("auditctl", "-e", "2"), root, "", ""},
		{"remount / nosuid", acts("mount", "-o", "remount,nosuid", "/"), root, "action", "sudo"},
		{"fstab / nosuid", changes(reg("/etc/fstab", nightshift.ChangeModified, "-UUID=abc / ext4 defaults 0 1\n+UUID=abc / ext4 defaults,nosuid 0 1\n")), root, "mount", "root file system"},
		{"fstab /usr noexec", changes(reg("/etc/fstab", nightshift.ChangeModified, " UUID=abc / ext4 defaults 0 1\n-UUID=def /usr ext4 defaults 0 2\n+UUID=def /usr ext4 defaults,noexec 0 2\n")), root, "mount", "/usr with noexec"},
		{"fstab /home nodev,nosuid (CIS)", changes(reg("/etc/fstab", nightshift.ChangeModified, " UUID=abc / ext4 defaults 0 1\n-UUID=def /home ext4 defaults 0 2\n+UUID=def /home ext4 defaults,nodev,nosuid 0 2\n")), root, "", ""},
		// Boot and name resolution.
		{"fstab root entry where there was none", changes(reg("/etc/fstab", nightshift.ChangeModified, "-# UNCONFIGURED FSTAB\n+/dev/nonexistent / ext4 defaults 0 1\n")), root, "mount", "had none"},
		{"fstab, full context, /tmp line added", changes(reg("/etc/fstab", nightshift.ChangeModified, " UUID=abc / ext4 defaults 0 1\n+tmpfs /tmp tmpfs nodev,nosuid 0 0\n")), root, "", ""},
		{"hosts without localhost", changes(reg("/etc/hosts", nightshift.ChangeModified, "-127.0.0.1\tlocalhost\n ::1 ip6-localhost\n+192.0.2.9 db\n")), root, "config", "localhost"},
		{"hosts recreated empty", changes(created("/etc/hosts", "# nothing\n")), root, "config", "localhost"},
		{"hosts entry added", changes(reg("/etc/hosts", nightshift.ChangeModified, " 127.0.0.1\tlocalhost\n 127.0.1.1\thost\n+192.0.2.9 db\n")), root, "", ""},
		{"hosts linked to /dev/null", changes(nightshift.FileChange{Path: "/etc/hosts", Change: nightshift.ChangeModified,
			Before: nightshift.FileState{Kind: nightshift.FileRegular, Size: 100}, After: nightshift.FileState{Kind: nightshift.FileSymlink, Target: "/dev/null"}}), root, "delete-system", "link to /dev/null"},
		{"resolv.conf linked to systemd-resolved's stub", changes(nightshift.FileChange{Path: "/etc/resolv.conf", Change: nightshift.ChangeModified,
			Before: nightshift.FileState{Kind: nightshift.FileRegular, Size: 100}, After: nightshift.FileState{Kind: nightshift.FileSymlink, Target: "../run/systemd/resolve/stub-resolv.conf"}}), root, "", ""},
		{"hostname deleted", changes(deleted("/etc/hostname")), root, "delete-system", "/etc/hostname"},
		{"hostname emptied", changes(func() nightshift.FileChange {
			c := reg("/etc/hostname", nightshift.ChangeModified, "-host\n")
			c.After.Size = 0
			return c
		}()), root, "delete-system", "empty /etc/hostname"},
		{"hosts.deny ALL: ALL", changes(reg("/etc/hosts.deny", nightshift.ChangeModified, "+ALL: ALL\n")), root, "lockout", "tcp wrappers"},
		{"hosts.deny sshd: ALL", changes(reg("/etc/hosts.deny", nightshift.ChangeModified, "+sshd : ALL\n")), root, "lockout", "tcp wrappers"},
		{"hosts.deny vsftpd: ALL", changes(reg("/etc/hosts.deny", nightshift.ChangeModified, "+vsftpd: ALL\n")), root, "", ""},
		{"hosts.deny ALL with sshd allowed from the worker's network", withOrigin(changes(
			reg("/etc/hosts.allow", nightshift.ChangeModified, "+sshd: 192.0.2.0/255.255.255.0\n"),
			reg("/etc/hosts.deny", nightshift.ChangeModified, "+ALL: ALL\n")), "192.0.2.7"), root, "", ""},
		{"hosts.deny ALL with sshd allowed from elsewhere", withOrigin(changes(
			reg("/etc/hosts.allow", nightshift.ChangeModified, "+sshd: 10.\n"),
			reg("/etc/hosts.deny", nightshift.ChangeModified, "+ALL: ALL\n")), "192.0.2.7"), root, "lockout", "tcp wrappers"},
		// Passwords.
		{"root's hash replaced (chpasswd -e)", changes(reg("/etc/shadow", nightshift.ChangeModified, "-root:$y$j9T$old:20000:0:99999:7:::\n+root:U6aMy0wojraho:20000:0:99999:7:::\n")), root, "password", "new hash"},
		{"the login's hash set (usermod -p)", changes(reg("/etc/shadow", nightshift.ChangeModified, "-ops:!:20000:0:99999:7:::\n+ops:$6$x$y:20000:0:99999:7:::\n")), ops, "password", "ops's password"},
		{"root locked (passwd -l)", changes(reg("/etc/shadow", nightshift.ChangeModified, "-root:$y$j9T$old:20000:0:99999:7:::\n+root:!$y$j9T$old:20000:0:99999:7:::\n")), root, "", ""},
		{"root's password disabled (*)", changes(reg("/etc/shadow", nightshift.ChangeModified, "-root:$y$j9T$old:20000:0:99999:7:::\n+root:*:20000:0:99999:7:::\n")), root, "", ""},
		// Unlocking any account with a hash is a login nobody asked for
		// (effects_accounts.go); a hash changed for another is not judged.
		{"another account unlocked with a hash", changes(reg("/etc/shadow", nightshift.ChangeModified, "-bob:!:20000:0:99999:7:::\n+bob:$6$x$y:20000:0:99999:7:::\n")), root, "takeover", "unlock bob"},
		{"another account's hash changed", changes(reg("/etc/shadow", nightshift.ChangeModified, "-bob:$6$a$b:20000:0:99999:7:::\n+bob:$6$x$y:20000:0:99999:7:::\n")), root, "", ""},
		{"root's hash in /etc/passwd", changes(reg("/etc/passwd", nightshift.ChangeModified, "-root:x:0:0:root:/root:/bin/bash\n+root:$6$x$y:0:0:root:/root:/bin/bash\n")), root, "password", "/etc/passwd"},
		{"shadow- blanks root", changes(reg("/etc/shadow-", nightshift.ChangeModified, "-root:*:20000:0:99999:7:::\n+root::20000:0:99999:7:::\n")), root, "password", "blank root's password in /etc/shadow-"},
		{"shadow- with a new root hash, alone", changes(reg("/etc/shadow-", nightshift.ChangeModified, "-root:*:20000:0:99999:7:::\n+root:$6$x$y:20000:0:99999:7:::\n")), root, "password", "new hash"},
		{"shadow- rewritten by the tools with shadow", changes(
			reg("/etc/shadow", nightshift.ChangeModified, "-root:$y$a:20000:0:99999:7:::\n+root:$y$a:20000:0:99999:14:::\n"),
			reg("/etc/shadow-", nightshift.ChangeModified, "-root:$y$stale:19000:0:99999:7:::\n+root:$y$a:20000:0:99999:7:::\n")), root, "", ""},
		{"passwd- removes root", changes(reg("/etc/passwd-", nightshift.ChangeModified, "-root:x:0:0:root:/root:/bin/bash\n")), root, "password", "remove root's entry from /etc/passwd-"},
		// Files nothing reads.
		{"split's output in /etc/ssh", changes(created("/etc/ssh/sshd_confiaa", "\n")), root, "inert", "neither sshd nor ssh reads"},
		{"sshd_config.d without .conf", changes(created("/etc/ssh/sshd_config.d/hardening", "PermitRootLogin prohibit-password\n")), root, "inert", "only *.conf"},
		{"sshd_config backup", changes(created("/etc/ssh/sshd_config.bak.1764222000", "Port 22\n")), root, "", ""},
		{"sshd drop-in", changes(created("/etc/ssh/sshd_config.d/50-hardening.conf", "MaxAuthTries 4\n")), root, "", ""},
		{"sshd banner it names", nightshift.Effects{Changes: []nightshift.FileChange{created("/etc/ssh/banner", "Authorized use only\n")},
			SSHD: &nightshift.SSHDCheck{TestOK: true, Effective: map[string]string{"banner": "/etc/ssh/banner"}}}, root, "", ""},
		{"sshd_not_to_be_run", changes(created("/etc/ssh/sshd_not_to_be_run", "")), root, "lockout", "would not start sshd"},
		{"a new host key", changes(created("/etc/ssh/ssh_host_ed25519_key.pub", "ssh-ed25519 AAAA root@h\n")), root, "", ""},
		{"a file in /boot", changes(created("/boot/.x", "")), root, "inert", "/boot/.x"},
		{"grub.cfg written by grub-mkconfig", changes(created("/boot/grub/grub.cfg", "set timeout=5\n")), root, "", ""},
		{"a kernel installed by dpkg", changes(created("/boot/config-6.1.0-99-amd64", "CONFIG_X=y\n"),
			reg("/var/lib/dpkg/status", nightshift.ChangeModified, "+Package: linux-image-6.1.0-99-amd64\n"),
			created("/var/lib/dpkg/info/linux-image-6.1.0-99-amd64.list", "/boot/config-6.1.0-99-amd64\n")), root, "", ""},
		// Programs that hide the system's.
		{"ls in /usr/local/bin", nightshift.Effects{Changes: []nightshift.FileChange{created("/usr/local/bin/ls", "#!/bin/sh\nkill -9 $PPID\n")},
			Shadows: map[string]string{"/usr/local/bin/ls": "/usr/bin/ls"}}, root, "program", "before /usr/bin/ls"},
		{"systemctl in /usr/local/sbin", nightshift.Effects{Shadows: map[string]string{"/usr/local/sbin/systemctl": "/usr/bin/systemctl"}}, root, "program", "systemctl"},
		{"a script of its own in /usr/local/sbin", changes(created("/usr/local/sbin/aide-check", "#!/bin/sh\naide --check\n")), root, "", ""},
		// sudo for a login that is not root.
		{"NOPASSWD grant commented out (SSG sudo_remove_nopasswd)", changes(reg("/etc/sudoers.d/ops", nightshift.ChangeModified, "-ops ALL=(ALL) NOPASSWD: ALL\n+# ops ALL=(ALL) NOPASSWD: ALL\n")), ops, "lockout", "sudo from ops"},
		{"NOPASSWD grant of the sudo group removed", changes(reg("/etc/sudoers", nightshift.ChangeModified, "-%sudo ALL=(ALL:ALL) NOPASSWD: ALL\n+%sudo ALL=(ALL:ALL) ALL\n")), ops, "lockout", "without a password"},
		{"a Defaults line beside the grant", changes(reg("/etc/sudoers.d/ops", nightshift.ChangeModified, " ops ALL=(ALL) NOPASSWD: ALL\n+Defaults:ops !lecture\n")), ops, "", ""},
		{"NOPASSWD grant commented out, root login", changes(reg("/etc/sudoers.d/ops", nightshift.ChangeModified, "-ops ALL=(ALL) NOPASSWD: ALL\n+# ops ALL=(ALL) NOPASSWD: ALL\n")), root, "", ""},
		{"another user's NOPASSWD removed", changes(reg("/etc/sudoers.d/90-cloud-init-users", nightshift.ChangeModified, "-admin ALL=(ALL) NOPASSWD:ALL\n+# admin ALL=(ALL) NOPASSWD:ALL\n")), ops, "", ""},
		{"Defaults requiretty (SSG sudo_add_requiretty)", changes(reg("/etc/sudoers", nightshift.ChangeModified, "+Defaults requiretty\n")), ops, "lockout", "without a terminal"},
		{"Defaults noexec (SSG sudo_add_noexec)", changes(reg("/etc/sudoers", nightshift.ChangeModified, "+Defaults noexec\n")), ops, "lockout", "any program"},
		{"Defaults use_pty, logfile", changes(reg("/etc/sudoers", nightshift.ChangeModified, "+Defaults use_pty\n+Defaults logfile=/var/log/sudo.log\n")), ops, "", ""},
		{"Defaults requiretty for root login", changes(reg("/etc/sudoers", nightshift.ChangeModified, "+Defaults requiretty\n")), root, "", ""},
		{"a sudoers.d file deleted", changes(deleted("/etc/sudoers.d/ops")), ops, "lockout", "may hold its grant"},
		{"sudoers.d README changed", changes(reg("/etc/sudoers.d/README", nightshift.ChangeModified, "-x\n")), ops, "", ""},
		// Actions.
		{"swapoff -a", acts("swapoff", "-a"), root, "action", "swapoff -a"},
		{"swapoff -av", acts("swapoff", "-av"), root, "action", "swapoff -a"},
		{"swapoff -a for a rule about swap", acts("swapoff", "-a"), EffectsPolicy{Scope: []string{"/swapfile"}}, "", ""},
		{"swapoff of one swap file", acts("swapoff", "/swapfile"), root, "", ""},
		{"systemctl kill -s HUP ssh", acts("systemctl", "kill", "-s", "HUP", "ssh"), root, "", ""},
		{"systemctl kill -s SIGUSR1 ssh", acts("systemctl", "kill", "-s", "SIGUSR1", "ssh"), root, "action", "kill would cut"},
		{"systemctl kill -s INT sshd.service", acts("systemctl", "kill", "-s", "INT", "sshd.service"), root, "action", "kill would cut"},
	}
	runJudgeCases(t, tests)
}
