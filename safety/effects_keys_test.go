package safety

import (
	"testing"

	"github.com/nightshift-dev/nightshift"
)

// TestJudgeEffectsKeyValueFiles: the lines of every key-value file of the
// rule's scope are limited to the keywords its check reads, as sshd's and
// sysctl's are (cases written here, keys as scap derives them from SSG's
// Debian 12 patterns: scap's TestScopeSSGDebian12Reads).
func TestJudgeEffectsKeyValueFiles(t *testing.T) {
	deleted := func(p string) nightshift.Effects {
		return nightshift.Effects{Changes: []nightshift.FileChange{{Path: p, Change: nightshift.ChangeDeleted,
			Before: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644}}}}
	}
	rule := func(keys []string, scope ...string) EffectsPolicy {
		return EffectsPolicy{StrictScope: true, Scope: scope, Keys: keys, Rule: "r"}
	}
	var (
		minDays  = rule([]string{"PASS_MIN_DAYS"}, "/etc/login.defs")
		dcredit  = rule([]string{"dcredit", "password"}, "/etc/pam.d/common-password", "/etc/security/pwquality.conf")
		logins   = rule([]string{"maxlogins"}, "/etc/security/limits.conf", "/etc/security/limits.d")
		diskFull = rule([]string{"disk_full_action"}, "/etc/audit/auditd.conf")
		storage  = rule([]string{"storage"}, "/etc/systemd/coredump.conf", "/etc/systemd/coredump.conf.d")
		journald = rule([]string{"Storage"}, "/etc/systemd/journald.conf", "/etc/systemd/journald.conf.d")
		grub     = rule([]string{"GRUB_CMDLINE_LINUX", "GRUB_CMDLINE_LINUX_DEFAULT", "GRUB_DISABLE_RECOVERY", KernelArgPrefix + "audit"}, "/etc/default/grub") // an audit= argument rule, as scap derives it
		chrony   = rule([]string{"pool", "server"}, "/etc/chrony/chrony.conf", "/etc/chrony/sources.d")
		usePty   = rule([]string{"Defaults", "use_pty"}, "/etc/sudoers", "/etc/sudoers.d")
		rds      = rule([]string{"install", "rds"}, "/etc/modprobe.d", "/etc/modules-load.d")
		usb      = rule([]string{"install", "usb-storage"}, "/etc/modprobe.d")
		devShm   = rule([]string{"/dev/shm"}, "/etc/fstab")
		noKeys   = rule(nil, "/etc/login.defs", "/etc/fstab", "/etc/sudoers", "/etc/modprobe.d")
	)
	tests := []struct {
		name string
		eff  nightshift.Effects
		pol  EffectsPolicy
		want string
	}{
		// The check's keyword, comments and blank lines: allowed.
		{"SSG's PASS_MIN_DAYS fix", modDiff("/etc/login.defs", " PASS_MAX_DAYS\t99999\n-PASS_MIN_DAYS\t0\n+PASS_MIN_DAYS 7\n+\n+# hardening\n"), minDays, ""},
		{"login.defs keywords case-folded", modDiff("/etc/login.defs", "+pass_min_days 7\n"), minDays, ""},
		{"pwquality with =", createdDiff("/etc/security/pwquality.conf", "+dcredit = -1\n"), dcredit, ""},
		{"limits.conf: the item is the key", modDiff("/etc/security/limits.conf", "+*\thard\tmaxlogins\t10\n"), logins, ""},
		{"auditd.conf", modDiff("/etc/audit/auditd.conf", "-disk_full_action = SUSPEND\n+disk_full_action = HALT\n"), diskFull, ""},
		{"coredump drop-in with its section", createdDiff("/etc/systemd/coredump.conf.d/x.conf", "+[Coredump]\n+Storage=none\n"), storage, ""},
		{"journald.conf", modDiff("/etc/systemd/journald.conf", " [Journal]\n-#Storage=auto\n+Storage=persistent\n"), journald, ""},
		{"grub's command line", modDiff("/etc/default/grub", "-GRUB_CMDLINE_LINUX=\"\"\n+GRUB_CMDLINE_LINUX=\"audit=1\"\n"), grub, ""},
		{"chrony server", modDiff("/etc/chrony/chrony.conf", "+server 0.pool.ntp.org iburst\n"), chrony, ""},
		{"sudo Defaults use_pty", createdDiff("/etc/sudoers.d/pty", "+Defaults use_pty\n+Defaults:root use_pty\n"), usePty, ""},
		{"modprobe install and blacklist of the module", createdDiff("/etc/modprobe.d/rds.conf", "+install rds /bin/false\n+blacklist rds\n"), rds, ""},
		{"modprobe: - and _ are one module", createdDiff("/etc/modprobe.d/usb.conf", "+install usb_storage /bin/true\n"), usb, ""},
		{"fstab line of the mount point", modDiff("/etc/fstab", "+tmpfs /dev/shm tmpfs defaults,nodev,nosuid 0 0\n"), devShm, ""},
		{"no keys known: classes alone", modDiff("/etc/login.defs", "+ENCRYPT_METHOD MD5\n"), noKeys, ""},
		{"no keys known: fstab free", modDiff("/etc/fstab", "-/dev/sdb1 /srv ext4 defaults 0 2\n+/dev/sdb1 /srv ext4 defaults,nodev 0 2\n"), noKeys, ""},
		{"no keys known: a new disk is still no hardening", modDiff("/etc/fstab", "+/dev/sdb1 / ext4 ro 0 1\n"), noKeys, "did not mount at /"},
		{"no keys known: deletion is the classes'", deleted("/etc/login.defs"), noKeys, ""},
		{"no strict scope", modDiff("/etc/login.defs", "+ENCRYPT_METHOD MD5\n"), EffectsPolicy{Scope: minDays.Scope, Keys: minDays.Keys}, ""},

		// Other settings of the rule's files: refused.
		{"ENCRYPT_METHOD for a PASS_MIN_DAYS rule", modDiff("/etc/login.defs", "+PASS_MIN_DAYS 7\n+ENCRYPT_METHOD MD5\n"), minDays,
			"would change ENCRYPT_METHOD MD5 in /etc/login.defs: the rule's check reads only the login.defs settings pass_min_days"},
		{"a removed UMASK line", modDiff("/etc/login.defs", "-UMASK 027\n"), minDays, "UMASK 027"},
		{"minlen for a dcredit rule", createdDiff("/etc/security/pwquality.conf", "+dcredit = -1\n+minlen = 1\n"), dcredit, "minlen = 1"},
		{"limits.conf nofile for a maxlogins rule", modDiff("/etc/security/limits.conf", "+*\thard\tnofile\t0\n"), logins, "only the limits items maxlogins"},
		{"space_left_action for a disk_full rule", modDiff("/etc/audit/auditd.conf", "+space_left_action = halt\n"), diskFull, "space_left_action = halt"},
		{"ForwardToSyslog for a Storage rule", createdDiff("/etc/systemd/journald.conf.d/x.conf", "+[Journal]\n+Storage=persistent\n+ForwardToSyslog=no\n"), journald, "ForwardToSyslog=no"},
		{"GRUB_INIT_TUNE for a command-line rule", modDiff("/etc/default/grub", "+GRUB_INIT_TUNE=\"480 440 1\"\n"), grub, "GRUB_INIT_TUNE"},
		{"shell in /etc/default/grub", modDiff("/etc/default/grub", "+$(reboot)\n"), grub, "$(reboot)"},
		{"chrony cmdallow for a server rule", modDiff("/etc/chrony/chrony.conf", "+cmdallow all\n"), chrony, "cmdallow all"},
		{"another Defaults option", createdDiff("/etc/sudoers.d/pty", "+Defaults use_pty,!authenticate\n"), usePty, "Defaults use_pty,!authenticate"},
		{"a user spec for a Defaults rule", createdDiff("/etc/sudoers.d/pty", "+Defaults use_pty\n+ALL ALL=(ALL) NOPASSWD: ALL\n"), usePty, "ALL ALL=(ALL) NOPASSWD: ALL"},
		{"sudo's #includedir is no comment", modDiff("/etc/sudoers", "+#includedir /tmp/s\n"), usePty, "includedir /tmp/s"},
		{"another module for an rds rule", createdDiff("/etc/modprobe.d/rds.conf", "+install rds /bin/false\n+install usb-storage /bin/true\n"), rds, "install usb-storage /bin/true"},
		{"a module loaded at boot for an rds rule", createdDiff("/etc/modules-load.d/x.conf", "+usb_storage\n"), rds, "usb_storage"},
		{"another mount point for a /dev/shm rule", modDiff("/etc/fstab", "+/dev/sdb1 / ext4 ro 0 1\n"), devShm, "would change /dev/sdb1 / ext4 ro 0 1 in /etc/fstab: the rule's check reads only the mount points /dev/shm"},
		{"mount points compared exactly", modDiff("/etc/fstab", "+tmpfs /DEV/SHM tmpfs defaults 0 0\n"), devShm, "/DEV/SHM"},
		{"login.defs deleted", deleted("/etc/login.defs"), minDays, "would delete /etc/login.defs"},
		{"fstab deleted", deleted("/etc/fstab"), devShm, "would delete /etc/fstab"},
		{"login.defs without a diff", modDiff("/etc/login.defs", ""), minDays, "without a text diff"},
		{"login.defs made a link", nightshift.Effects{Changes: []nightshift.FileChange{{Path: "/etc/login.defs", Change: nightshift.ChangeModified,
			Before: nightshift.FileState{Kind: nightshift.FileRegular}, After: nightshift.FileState{Kind: nightshift.FileSymlink, Target: "/etc/x"}}}}, minDays, "which login.defs settings it sets cannot be judged"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkScopeRefusals(t, tt.eff, tt.pol, tt.want) })
	}
}

func TestSudoersKeys(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"Defaults use_pty", []string{"use_pty"}},
		{"Defaults\tenv_reset, !visiblepw", []string{"env_reset", "visiblepw"}},
		{"Defaults:root logfile=/var/log/sudo.log", []string{"logfile"}},
		{"Defaults>root umask = 0077", []string{"umask"}},
		{"Defaults env_keep += \"HOME\"", []string{"env_keep"}},
		{"root ALL=(ALL:ALL) ALL", []string{"root"}},
		{"DefaultsX foo", []string{"DefaultsX"}},
		{"Defaults", nil},
		{"Defaults use_pty,", nil},
	}
	for _, tt := range tests {
		got := sudoersKeys(tt.line)
		if len(got) != len(tt.want) {
			t.Errorf("sudoersKeys(%q) = %q, want %q", tt.line, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("sudoersKeys(%q) = %q, want %q", tt.line, got, tt.want)
			}
		}
	}
}
