package safety

import (
	"testing"

	"github.com/nightshift-dev/nightshift"
)

// Policies of SSG 0.1.76 Debian 12 rules as package scap derives them
// (scap's TestScopeSSGDebian12LinePatterns and TestScopeSSGDebian12Values
// check the derivation against the real datastream); the patterns are
// the checks' own.
var (
	// audit_rules_dac_modification_chmod: the b64 chmod line.
	chmodAuditRule = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/audit/audit.rules", "/etc/audit/rules.d", "/usr/lib/systemd/system/auditd.service"},
		Keys: []string{"ExecStartPost", "Requires", LinePatternPrefix + `^(ExecStartPost=\-\/sbin\/augenrules.*$|Requires=augenrules.service)`,
			LinePatternPrefix + `^[\s]*-a[\s]+always,exit[\s]+(?:.*-F[\s]+arch=b64[\s]+)(?:.*(-S[\s]+chmod[\s]+|([\s]+|[,])chmod([\s]+|[,]))).*(-F\s+auid>=1000[\s]+-F\s+auid!=(?:4294967295|unset))[\s]+(-k[\s]+|-F[\s]+key=)[\S]+[\s]*$`}}
	// accounts_password_pam_minlen: pwquality.conf's minlen and the
	// pam_pwquality line.
	minlenRule = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/pam.d/common-password", "/etc/security/pwquality.conf", "/etc/security/pwquality.conf.d"},
		Keys: []string{"minlen", "password", LinePatternPrefix + `^\s*minlen[\s]*=[\s]*(-?\d+)(?:[\s]|$)`,
			LinePatternPrefix + `^\s*password\s+(?:(?:required)|(?:requisite))\s+pam_pwquality\.so.*$`}}
	// accounts_umask_etc_profile.
	profileRule = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/profile"}, Keys: []string{"umask", LinePatternPrefix + `^[\s]*umask[\s]+([^#\s]*)`}}
	// A rule with a pattern Go cannot read (a back-reference).
	unreadableRule = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/profile"}, Keys: []string{LinePatternPrefix + `^(a)\1`}}
)

func TestJudgeEffectsLinesServeTheCheck(t *testing.T) {
	tests := []struct {
		name string
		eff  nightshift.Effects
		pol  EffectsPolicy
		want string
	}{
		// fresh5's audit leftovers: lines the check does not look for.
		{"-S all for a chmod audit rule", createdDiff("/etc/audit/rules.d/30-perm.rules", "+-a always,exit -F arch=b64 -S all -k perm_mod\n"), chmodAuditRule,
			"would add -a always,exit -F arch=b64 -S all -k perm_mod to /etc/audit/rules.d/30-perm.rules: the rule's check looks for no such line"},
		{"-e 2 for a chmod audit rule", createdDiff("/etc/audit/rules.d/00-x.rules", "+-e 2\n"), chmodAuditRule, "would add -e 2"},
		{"-D for a chmod audit rule", createdDiff("/etc/audit/rules.d/00-x.rules", "+-D\n"), chmodAuditRule, "would add -D"},
		{"a never rule for a chmod audit rule", createdDiff("/etc/audit/rules.d/00-x.rules", "+-a never,exit -F arch=b64 -S chmod -F auid>=1000 -F auid!=unset -k perm_mod\n"), chmodAuditRule, "would add -a never"},
		{"a watch removed (-W)", createdDiff("/etc/audit/rules.d/60-mac.rules", "+-W /etc/apparmor.d/ -p wa -k MAC-policy\n"), chmodAuditRule, "would add -W"},
		{"an existing audit line deleted", modDiff("/etc/audit/rules.d/audit.rules", "--w /etc/passwd -p wa -k identity\n"), chmodAuditRule,
			"would remove -w /etc/passwd -p wa -k identity from /etc/audit/rules.d/audit.rules"},
		// PAM stacks: the module the check names.
		{"pam_cracklib for a pam_pwquality rule", modDiff("/etc/pam.d/common-password", "+password\trequisite\t\t\tpam_cracklib.so minlen=14 retry=3\n"), minlenRule,
			"would add password\trequisite\t\t\tpam_cracklib.so minlen=14 retry=3 to /etc/pam.d/common-password"},
		{"pam_unix's line removed", modDiff("/etc/pam.d/common-password", "-password\t[success=1 default=ignore]\tpam_unix.so obscure yescrypt\n"), minlenRule, "would remove password"},
		// Profile scripts: an umask rule does not empty /etc/profile.
		{"/etc/profile replaced by its umask", modDiff("/etc/profile", "-# /etc/profile: system-wide .profile\n-if [ \"$(id -u)\" -eq 0 ]; then\n-  PATH=\"/usr/sbin:/usr/bin\"\n-fi\n+umask 027\n"), profileRule,
			`would remove if [ "$(id -u)" -eq 0 ]; then; PATH="/usr/sbin:/usr/bin"; fi from /etc/profile`},
		{"a line sourced from scratch", modDiff("/etc/profile", "+umask 027\n+. /var/tmp/x\n"), profileRule, "would add . /var/tmp/x"},

		// SSG's own fixes: the lines their checks look for.
		{"SSG's chmod audit line", createdDiff("/etc/audit/rules.d/perm_mod.rules", "+-a always,exit -F arch=b64 -S chmod,fchmod,fchmodat -F auid>=1000 -F auid!=unset -F key=perm_mod\n"), chmodAuditRule, ""},
		{"SSG's pam_pwquality line, edited in place", modDiff("/etc/pam.d/common-password", "-password\trequisite\t\t\tpam_pwquality.so retry=3\n+password\trequisite\t\t\tpam_pwquality.so retry=3 minlen=14\n"), minlenRule, ""},
		{"an edit keeping the first word and half the words", modDiff("/etc/profile", "-umask 022 # default\n+umask 027\n"), profileRule, ""},
		{"comments and blank lines are free", modDiff("/etc/profile", "-# old\n+# new\n+\n+umask 027\n"), profileRule, ""},
		{"a pattern Go cannot read: lines judged by the classes", modDiff("/etc/profile", "+anything\n"), unreadableRule, ""},
		{"no patterns: lines judged by the classes", modDiff("/etc/profile", "+anything\n"), EffectsPolicy{StrictScope: true, Scope: []string{"/etc/profile"}}, ""},
		{"no strict scope", modDiff("/etc/profile", "+anything\n"), EffectsPolicy{Scope: []string{"/etc/profile"}, Keys: profileRule.Keys}, ""},
		// A key-value file with the rule's keywords is keysHarm's.
		{"pwquality.conf goes by keyword", modDiff("/etc/security/pwquality.conf", "+minlen = 14\n"), minlenRule, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkReasons(t, JudgeEffects(tt.eff, tt.pol), tt.want) })
	}
}

func TestJudgeEffectsModesInScope(t *testing.T) {
	meta := func(p string, kind nightshift.FileKind, mode, mode2 uint32, uid, uid2, gid, gid2 int) nightshift.Effects {
		return nightshift.Effects{Changes: []nightshift.FileChange{{Path: p, Change: nightshift.ChangeMeta,
			Before: nightshift.FileState{Kind: kind, Mode: mode, UID: uid, GID: gid}, After: nightshift.FileState{Kind: kind, Mode: mode2, UID: uid2, GID: gid2}}}}
	}
	binDirs := []string{"/bin", "/sbin", "/usr/bin", "/usr/libexec", "/usr/local/bin", "/usr/local/sbin", "/usr/sbin"}
	// file_permissions_binary_dirs: a filter state of gwrite and owrite.
	binFiles := EffectsPolicy{StrictScope: true, Scope: binDirs, Keys: []string{FileStatePrefix + "gwrite", FileStatePrefix + "owrite"}}
	// dir_permissions_binary_dirs states the special bits too.
	dirs := EffectsPolicy{StrictScope: true, Scope: binDirs, Keys: []string{FileStatePrefix + "gwrite", FileStatePrefix + "owrite", FileStatePrefix + "sgid", FileStatePrefix + "sticky", FileStatePrefix + "suid"}}
	// file_owner_var_log: user_id.
	varLog := EffectsPolicy{StrictScope: true, Scope: []string{"/var/log"}, Keys: []string{FileStatePrefix + "user_id"}}
	tests := []struct {
		name string
		eff  nightshift.Effects
		pol  EffectsPolicy
		want string
	}{
		{"setuid stripped from chfn (chmod -R 755)", meta("/usr/bin/chfn", nightshift.FileRegular, 0o4755, 0o755, 0, 0, 0, 0), binFiles,
			"would change /usr/bin/chfn (mode 4755 -> 0755): the rule's check states only the mode bits gwrite, owrite of its files"},
		{"/usr/sbin made 0700", meta("/usr/sbin", nightshift.FileDir, 0o755, 0o700, 0, 0, 0, 0), dirs, "would change /usr/sbin (mode 0755 -> 0700)"},
		{"/var/log's files given to root's group", meta("/var/log/wtmp", nightshift.FileRegular, 0o664, 0o664, 0, 0, 43, 0), varLog,
			"would change /var/log/wtmp (group 43 -> 0): the rule's check states only the owner of its files"},
		{"world write removed", meta("/usr/bin/x", nightshift.FileRegular, 0o777, 0o755, 0, 0, 0, 0), binFiles, ""},
		{"owner set to root", meta("/var/log/syslog", nightshift.FileRegular, 0o640, 0o640, 104, 0, 4, 4), varLog, ""},
		{"a rule whose check states no file", meta("/usr/bin/chfn", nightshift.FileRegular, 0o4755, 0o755, 0, 0, 0, 0), EffectsPolicy{StrictScope: true, Scope: binDirs}, ""},
		{"outside the scope is scopeHarm's", meta("/etc/shadow", nightshift.FileRegular, 0o640, 0o600, 0, 0, 42, 42), varLog, "outside the rule's paths"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkScopeRefusals(t, tt.eff, tt.pol, tt.want) })
	}
}

func TestJudgeEffectsValuesTowardTheCheck(t *testing.T) {
	// sshd_set_login_grace_time: upper bound var_sshd_set_login_grace_time,
	// lower bound a literal 0.
	grace := `^[\s]*(?i)LoginGraceTime[\s]+(\d+)[\s]*(?:#.*)?$`
	graceRule := EffectsPolicy{StrictScope: true, Scope: []string{"/etc/ssh/sshd_config"}, Keys: []string{"logingracetime", LinePatternPrefix + grace,
		ValueCheck{Pattern: grace, Operation: "greater than", Datatype: "int", Values: []string{"0"}}.Key(),
		ValueCheck{Pattern: grace, Operation: "less than or equal", Datatype: "int", Values: []string{"30", "60"}}.Key()}}
	// mount_option_tmp_nosuid: the options field must match nosuid.
	fstab := `^[\s]*(?!#)[\S]+[\s]+/tmp[\s]+[\S]+[\s]+([\S]+)`
	tmpRule := EffectsPolicy{StrictScope: true, Scope: []string{"/etc/fstab"}, Keys: []string{"/tmp", LinePatternPrefix + fstab,
		ValueCheck{Pattern: fstab, Operation: "pattern match", Values: []string{"nosuid"}}.Key()}}
	tests := []struct {
		name string
		eff  nightshift.Effects
		pol  EffectsPolicy
		want string
	}{
		{"LoginGraceTime 0", modDiff("/etc/ssh/sshd_config", "-#LoginGraceTime 2m\n+LoginGraceTime 0\n"), graceRule,
			"would set LoginGraceTime 0 (the check wants greater than 0) in /etc/ssh/sshd_config: a value the rule's check does not accept"},
		{"LoginGraceTime 600", modDiff("/etc/ssh/sshd_config", "+LoginGraceTime 600\n"), graceRule, "the check wants less than or equal 30 or 60"},
		{"an fstab line without the option", modDiff("/etc/fstab", "+tmpfs /tmp tmpfs defaults,nodev,noexex 0 0\n"), tmpRule, "the check wants pattern match nosuid"},
		{"SSG's LoginGraceTime", modDiff("/etc/ssh/sshd_config", "+LoginGraceTime 60\n"), graceRule, ""},
		{"a value any of the XCCDF value's choices accepts", modDiff("/etc/ssh/sshd_config", "+LoginGraceTime 30\n"), graceRule, ""},
		{"SSG's fstab line", modDiff("/etc/fstab", "+tmpfs /tmp tmpfs defaults,nosuid 0 0\n"), tmpRule, ""},
		{"an unchanged line is not the command's", modDiff("/etc/ssh/sshd_config", " LoginGraceTime 0\n+# note\n"), graceRule, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkScopeRefusals(t, tt.eff, tt.pol, tt.want) })
	}
}

func TestJudgeEffectsValuePaths(t *testing.T) {
	banner := EffectsPolicy{StrictScope: true, Scope: []string{"/etc/ssh/sshd_config"}, Keys: []string{"banner"}}
	sudoLog := EffectsPolicy{StrictScope: true, Scope: []string{"/etc/sudoers", "/etc/sudoers.d"}, Keys: []string{"Defaults", "logfile"}}
	aide := EffectsPolicy{StrictScope: true, Scope: []string{"/etc/aide/aide.conf", "/etc/aide/aide.conf.d", "/var/lib/aide"}}
	tests := []struct {
		name string
		eff  nightshift.Effects
		pol  EffectsPolicy
		want string
	}{
		{"Banner naming the host's private key", modDiff("/etc/ssh/sshd_config", "+Banner /etc/ssh/ssh_host_ed25519_key\n"), banner,
			"would set Banner /etc/ssh/ssh_host_ed25519_key in /etc/ssh/sshd_config: its value names /etc/ssh/ssh_host_ed25519_key, a file whose content is a secret"},
		{"sudo's log in sudoers.d", createdDiff("/etc/sudoers.d/logfile", "+Defaults logfile=/etc/sudoers.d/sudolog\n"), sudoLog,
			"its value names /etc/sudoers.d/sudolog, a file in a directory another program reads whole as its configuration"},
		{"AIDE's database written over the shadow file", createdDiff("/etc/aide/aide.conf", "+database_out=file:/etc/shadow\n"), aide, "its value names /etc/shadow"},
		{"SSG's Banner", modDiff("/etc/ssh/sshd_config", "+Banner /etc/issue.net\n"), banner, ""},
		{"a host key is a HostKey's business", modDiff("/etc/ssh/sshd_config", "+HostKey /etc/ssh/ssh_host_ed25519_key\n"), EffectsPolicy{StrictScope: true, Scope: banner.Scope, Keys: []string{"hostkey"}}, ""},
		{"SSG's sudo log", createdDiff("/etc/sudoers.d/logfile", "+Defaults logfile=/var/log/sudo.log\n"), sudoLog, ""},
		{"SSG's AIDE database", createdDiff("/etc/aide/aide.conf", "+database_out=file:/var/lib/aide/aide.db.new\n"), aide, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Refusal
			for _, r := range JudgeEffects(tt.eff, tt.pol) {
				if r.Entry == "config" {
					got = append(got, r)
				}
			}
			checkReasons(t, got, tt.want)
		})
	}
}

func TestModprobeAlternativeConfig(t *testing.T) {
	module := EffectsPolicy{StrictScope: true, Scope: []string{"/etc/modprobe.d"}, Keys: []string{"install", "tipc"}}
	act := func(argv ...string) nightshift.Effects {
		return nightshift.Effects{Actions: []nightshift.RecordedAction{{Argv: argv}}}
	}
	tests := []struct {
		name string
		eff  nightshift.Effects
		want string
	}{
		{"modprobe -r -C FILE", act("modprobe", "-r", "-C", "/tmp/tipc-off.conf", "tipc"),
			"would run modprobe -r -C /tmp/tipc-off.conf tipc: modprobe -C reads its commands from a file other than the system's configuration"},
		{"modprobe --config=FILE", act("modprobe", "--config=/tmp/x.conf", "tipc"), "modprobe --config=/tmp/x.conf reads its commands"},
		{"modprobe -r", act("modprobe", "-r", "tipc"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkScopeRefusals(t, tt.eff, module, tt.want) })
	}
}
