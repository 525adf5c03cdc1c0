package safety

import (
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift"
)

// Scopes of fresh7's rules as scap derives them from SSG 0.1.76's Debian
// 12 datastream (scap's TestScopeDropinRules checks them against it).
var (
	compressionRule = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/ssh/sshd_config"},
		Keys: []string{"compression", `re:^[ \t]*(?i)Compression(?-i)[ \t]+(.+?)[ \t]*(?:$|#)`}}
	lcreditRule = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/pam.d/common-password", "/etc/security/pwquality.conf"},
		Keys: []string{"lcredit", "password", `re:^\s*lcredit[\s]*=[\s]*(-?\d+)(?:[\s]|$)`, `re:^\s*password\s+(?:(?:required)|(?:requisite))\s+pam_pwquality\.so.*$`,
			`value:{"re":"^\\s*lcredit[\\s]*=[\\s]*(-?\\d+)(?:[\\s]|$)","op":"less than or equal","type":"int","values":["-1","-2","0"]}`}}
	lastlogRule = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/pam.d/postlogin"},
		Keys: []string{`re:^\s*session\s+.*\s+pam_lastlog\.so\b(?!.*\ssilent\s).*\sshowfailed\s.*$`}}
	sendRedirRule = EffectsPolicy{StrictScope: true, Scope: kptrRule.Scope, Sysctl: []string{"net.ipv4.conf.all.send_redirects"},
		Keys: []string{"net.ipv4.conf.all.send_redirects", `value:{"re":"^[\\s]*net.ipv4.conf.all.send_redirects[\\s]*=[\\s]*(.*\\S)[\\s]*$","op":"equals","type":"int","values":["0"]}`}}
	sourceRouteRule = EffectsPolicy{StrictScope: true, Scope: kptrRule.Scope, Sysctl: []string{"net.ipv4.conf.all.accept_source_route"},
		Keys: []string{"net.ipv4.conf.all.accept_source_route", `value:{"re":"^[\\s]*net.ipv4.conf.all.accept_source_route[\\s]*=[\\s]*(.*\\S)[\\s]*$","op":"equals","type":"int","values":["0","1"]}`}}
	sudoNopasswdRule = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/sudoers", "/etc/sudoers.d"}}
	wwDirsRule       = EffectsPolicy{StrictScope: true, Scope: []string{"/"}, Keys: []string{"state:owrite", "state:sticky"}}
	varLogPermsRule  = EffectsPolicy{StrictScope: true, Scope: []string{"/var/log"}, Keys: []string{"state:gwrite", "state:owrite", "state:sgid", "state:sticky", "state:suid"}}
	passwdOwnerRule  = EffectsPolicy{StrictScope: true, Scope: []string{"/etc/passwd"}, Keys: []string{"state:user_id"}}
)

// TestJudgeEffectsScope22 covers issue 19's principles (fresh7's false
// refusals and harms): each legitimate fix main's judge refused, beside
// a hostile neighbour that must stay refused.
func TestJudgeEffectsScope22(t *testing.T) {
	acts := func(e nightshift.Effects, argvs ...string) nightshift.Effects {
		for _, a := range argvs {
			e.Actions = append(e.Actions, nightshift.RecordedAction{Argv: strings.Fields(a)})
		}
		return e
	}
	dir := func(p string, mode, to uint32) nightshift.FileChange {
		return metaFile(p, nightshift.FileDir, mode, 0, 0, to, 0, 0)
	}
	tests := []struct {
		name string
		eff  nightshift.Effects
		pol  EffectsPolicy
		want string // substring of a refusal; "" means none
	}{
		// 1. Drop-in directories the program reads.
		{"sshd drop-in Compression no (g7-012)", acts(effectsOf(newFile("/etc/ssh/sshd_config.d/50-compression.conf", "Compression no\n")), "systemctl reload ssh"), compressionRule, ""},
		{"sshd drop-in with a second keyword", effectsOf(newFile("/etc/ssh/sshd_config.d/50-compression.conf", "Compression no\nPermitRootLogin yes\n")), compressionRule, "PermitRootLogin"},
		{"sshd drop-in PermitRootLogin yes for a root-login rule", effectsOf(newFile("/etc/ssh/sshd_config.d/50-root.conf", "PermitRootLogin yes\n")), sshdRule, "does not vouch"},
		{"sshd drop-in name sshd does not read", effectsOf(newFile("/etc/ssh/sshd_config.d/50-compression.bak", "Compression no\n")), compressionRule, "outside the rule's paths"},
		{"pwquality.conf.d lcredit = -1 (g7-027)", effectsOf(nightshift.FileChange{Path: "/etc/security/pwquality.conf.d", Change: nightshift.ChangeCreated, After: nightshift.FileState{Kind: nightshift.FileDir, Mode: 0o755}}, newFile("/etc/security/pwquality.conf.d/50-lcredit.conf", "lcredit = -1\n")), lcreditRule, ""},
		{"pwquality.conf.d lcredit = 5", effectsOf(newFile("/etc/security/pwquality.conf.d/50-lcredit.conf", "lcredit = 5\n")), lcreditRule, "does not"},
		{"pwquality.conf.d with minlen too", effectsOf(newFile("/etc/security/pwquality.conf.d/50-lcredit.conf", "lcredit = -1\nminlen = 1\n")), lcreditRule, "minlen"},
		// 2. PAM services by module.
		{"pam_lastlog showfailed in login (g7-038)", effectsOf(modFile("/etc/pam.d/login", " session    optional   pam_motd.so noupdate\n+session    optional   pam_lastlog.so showfailed\n")), lastlogRule, ""},
		{"pam_permit in login for the lastlog rule", effectsOf(modFile("/etc/pam.d/login", " session    optional   pam_motd.so noupdate\n+auth sufficient pam_permit.so\n")), lastlogRule, "pam_permit"},
		{"sshd's PAM service joined into one comment (f7-301)", effectsOf(modFile("/etc/pam.d/sshd", "-# PAM configuration for the Secure Shell service\n-@include common-auth\n+# PAM configuration for the Secure Shell service @include common-auth\n")), lastlogRule, "would remove @include common-auth"},
		{"common-session for a postlogin rule is no su stack", effectsOf(modFile("/etc/pam.d/su", "+session optional pam_lastlog.so showfailed\n")), lastlogRule, "outside the rule's paths"},
		// 3. Sibling kernel parameters.
		{"default sibling at 0 (g7-068)", acts(effectsOf(newFile("/etc/sysctl.d/60-net-redirects.conf", "net.ipv4.conf.all.send_redirects = 0\nnet.ipv4.conf.default.send_redirects = 0\n")),
			"sysctl -w net.ipv4.conf.all.send_redirects=0", "sysctl -w net.ipv4.conf.default.send_redirects=0"), sendRedirRule, ""},
		{"default sibling at 1 in a file", effectsOf(newFile("/etc/sysctl.d/60-net-redirects.conf", "net.ipv4.conf.default.send_redirects = 1\n")), sendRedirRule, "not accept"},
		{"default sibling at 1 behind the ignore prefix", effectsOf(newFile("/etc/sysctl.d/60-net-redirects.conf", "-net.ipv4.conf.default.send_redirects = 1\n")), sendRedirRule, "not accept"},
		{"default sibling at 1 by sysctl -w", acts(nightshift.Effects{}, "sysctl -w net.ipv4.conf.default.send_redirects=1"), sendRedirRule, "not equals 0"},
		{"sibling of a check whose variable allows 0 and 1", acts(nightshift.Effects{}, "sysctl -w net/ipv4/conf/default/accept_source_route=1"), sourceRouteRule, "not equals 0 and 1"},
		{"another interface's key is no sibling", acts(nightshift.Effects{}, "sysctl -w net.ipv4.conf.eth0.send_redirects=0"), sendRedirRule, "not among the kernel parameters"},
		// 5. sudo's own file-name rule.
		{"sed -i.bak leaves ops.bak (g7-094)", effectsOf(modFile("/etc/sudoers.d/ops", "-ops ALL=(ALL) NOPASSWD:ALL\n+ops ALL=(ALL) ALL\n"), newFile("/etc/sudoers.d/ops.bak", "ops ALL=(ALL) NOPASSWD:ALL\n")), sudoNopasswdRule, ""},
		{"NOPASSWD in a name sudo reads", effectsOf(newFile("/etc/sudoers.d/ops", "ops ALL=(ALL) NOPASSWD:ALL\n")), sudoNopasswdRule, "without a password"},
		{"@include of a skipped name", effectsOf(modFile("/etc/sudoers", "+@include /etc/sudoers.d/ops.bak\n")), sudoNopasswdRule, "skips"},
		// 4. Tightening a regular file's mode.
		{"log files chmod g-w,o-rwx (g7-090)", effectsOf(metaFile("/var/log/dpkg.log", nightshift.FileRegular, 0o644, 0, 0, 0o640, 0, 0), metaFile("/var/log/syslog", nightshift.FileRegular, 0o664, 0, 4, 0o640, 0, 4)), varLogPermsRule, ""},
		{"log file chmod o+r", effectsOf(metaFile("/var/log/dpkg.log", nightshift.FileRegular, 0o640, 0, 0, 0o644, 0, 0)), varLogPermsRule, "the rule's check states only"},
		{"log file made executable", effectsOf(metaFile("/var/log/dpkg.log", nightshift.FileRegular, 0o640, 0, 0, 0o740, 0, 0)), varLogPermsRule, "the rule's check states only"},
		{"/etc/passwd o-r for an /etc permission rule", effectsOf(metaFile("/etc/passwd", nightshift.FileRegular, 0o644, 0, 0, 0o640, 0, 0)), EffectsPolicy{StrictScope: true, Scope: []string{"/etc/passwd"}, Keys: []string{"state:owrite"}}, "the rule's check states only"},
		{"a program's group read taken", effectsOf(metaFile("/var/log/tool", nightshift.FileRegular, 0o755, 0, 0, 0o711, 0, 0)), varLogPermsRule, "the rule's check states only"},
		// Harms on the target.
		{"/var/tmp 1777 -> 1775 (f7-129)", effectsOf(dir("/var/tmp", 0o1777, 0o1775)), wwDirsRule, "would take owrite from /var/tmp"},
		{"/dev/shm loses its sticky bit", effectsOf(dir("/dev/shm", 0o1777, 0o777)), wwDirsRule, "sticky"},
		{"a shared directory the rule names, bit stated", effectsOf(dir("/srv/drop", 0o1777, 0o1775)), EffectsPolicy{StrictScope: true, Scope: []string{"/srv/drop"}, Keys: []string{"state:owrite"}}, ""},
		{"Compression no without the final newline (f7-275)", effectsOf(modFile("/etc/ssh/sshd_config", " HostbasedAuthentication no\n+Compression no\n\\ No newline at end of file\n")), compressionRule, "without the newline"},
		{"Compression no with its newline", effectsOf(modFile("/etc/ssh/sshd_config", " HostbasedAuthentication no\n+Compression no\n")), compressionRule, ""},
		{"a file that had no final newline", effectsOf(modFile("/etc/ssh/sshd_config", "-#Banner none\n\\ No newline at end of file\n+#Banner none\n+Compression no\n\\ No newline at end of file\n")), compressionRule, ""},
		{"passwd restored from passwd- deletes ops (f7-085)", effectsOf(modFile("/etc/passwd", " sshd:x:100:65534::/run/sshd:/usr/sbin/nologin\n-ops:x:1000:1000::/home/ops:/bin/bash\n")), passwdOwnerRule, "would delete ops"},
		{"an account's line edited is no deletion", effectsOf(modFile("/etc/passwd", "-ops:x:1000:1000::/home/ops:/bin/sh\n+ops:x:1000:1000::/home/ops:/bin/bash\n")), passwdOwnerRule, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			refs := JudgeEffects(tc.eff, tc.pol)
			wantRefusal(t, refs, tc.want)
		})
	}
}

// TestJudgeEffectsPasswordStack: a required password module the host
// lacks fails every password change (f7-028); the same line with the
// module present passes.
func TestJudgeEffectsPasswordStack(t *testing.T) {
	pw := "password	requisite	pam_pwquality.so lcredit=-1 retry=3\n" + debianPAM["/etc/pam.d/common-password"]
	tests := []struct {
		name string
		edit map[string]string
		want string
	}{
		{"pam_pwquality.so missing (f7-028)", map[string]string{"/etc/pam.d/common-password": pw, "pam_pwquality.so": "missing"}, "password change"},
		{"pam_pwquality.so installed", map[string]string{"/etc/pam.d/common-password": pw}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := effectsOf(modFile("/etc/pam.d/common-password", "+password	requisite	pam_pwquality.so lcredit=-1 retry=3\n"))
			e.PAM = pamView("ops", tc.edit)
			refs := JudgeEffects(e, EffectsPolicy{Login: "ops"})
			wantRefusal(t, refs, tc.want)
		})
	}
}

// wantRefusal fails t unless refs is empty (want "") or one of them gives a
// reason containing want.
func wantRefusal(t *testing.T, refs []Refusal, want string) {
	t.Helper()
	if want == "" {
		if len(refs) > 0 {
			t.Fatalf("refused: %v", refs)
		}
		return
	}
	for _, r := range refs {
		if strings.Contains(r.Reason, want) {
			return
		}
	}
	t.Fatalf("want a refusal containing %q, got %v", want, refs)
}
