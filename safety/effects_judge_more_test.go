package safety

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift"
)

func metaChange(p string, kind nightshift.FileKind, mode, mode2 uint32, uid, uid2 int) nightshift.FileChange {
	return nightshift.FileChange{Path: p, Change: nightshift.ChangeMeta,
		Before: nightshift.FileState{Kind: kind, Mode: mode, UID: uid}, After: nightshift.FileState{Kind: kind, Mode: mode2, UID: uid2}}
}

func TestJudgeEffectsModesTaken(t *testing.T) {
	binDirs := []string{"/bin", "/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin", "/usr/sbin"}
	// dir_permissions_binary_dirs states the special bits (of directories).
	dirs := EffectsPolicy{StrictScope: true, Scope: binDirs, Keys: []string{FileStatePrefix + "gwrite", FileStatePrefix + "owrite", FileStatePrefix + "sgid", FileStatePrefix + "sticky", FileStatePrefix + "suid"}}
	// rsyslog_files_permissions.
	var rsyslogStates []string
	for _, s := range strings.Fields("gexec gwrite oexec oread owrite sgid sticky suid uexec") {
		rsyslogStates = append(rsyslogStates, FileStatePrefix+s)
	}
	logs := EffectsPolicy{StrictScope: true, Scope: []string{"/etc/rsyslog.conf", "/etc/rsyslog.d", "/var/log"}, Keys: rsyslogStates}
	apt := EffectsPolicy{StrictScope: true, Scope: []string{"/etc/apt/apt.conf", "/etc/apt/apt.conf.d"}, Keys: []string{"allowunauthenticated"}}
	owners := EffectsPolicy{StrictScope: true, Scope: []string{"/etc/apt/apt.conf.d"}, Keys: []string{FileStatePrefix + "user_id"}}
	one := func(c ...nightshift.FileChange) nightshift.Effects { return nightshift.Effects{Changes: c} }
	tests := []struct {
		name string
		eff  nightshift.Effects
		pol  EffectsPolicy
		want string
	}{
		{"setuid cleared under /usr/bin", one(metaChange("/usr/bin/passwd", nightshift.FileRegular, 0o4755, 0o755, 0, 0), metaChange("/usr/bin/chage", nightshift.FileRegular, 0o2755, 0o755, 0, 0)), dirs,
			"would clear the setuid or setgid bit of /usr/bin/passwd (4755 -> 0755), /usr/bin/chage (2755 -> 0755)"},
		{"/var/log made 0640", one(metaChange("/var/log", nightshift.FileDir, 0o755, 0o640, 0, 0)), logs, "would take the search bit of directory /var/log (0755 -> 0640)"},
		{"a home made 0640", one(metaChange("/home/ops", nightshift.FileDir, 0o750, 0o640, 1000, 1000)), EffectsPolicy{StrictScope: true, Scope: []string{"/home/*"}, Keys: rsyslogStates}, "search bit of directory /home/ops"},
		{"an apt.conf.d file owned by uid 1000", nightshift.Effects{Changes: []nightshift.FileChange{{Path: "/etc/apt/apt.conf.d/60noauth", Change: nightshift.ChangeCreated,
			After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644, UID: 1000}, Diff: "+APT::Get::AllowUnauthenticated \"false\";\n"}}}, apt, "would give /etc/apt/apt.conf.d/60noauth (owner 1000) to a user other than root"},
		// Neighbours.
		{"group- and world-write taken from a binary directory", one(metaChange("/usr/local/bin", nightshift.FileDir, 0o777, 0o755, 0, 0)), dirs, ""},
		{"a log file made 0640", one(metaChange("/var/log/syslog", nightshift.FileRegular, 0o644, 0o640, 0, 0)), logs, ""},
		{"a log directory made 0750", one(metaChange("/var/log/apt", nightshift.FileDir, 0o755, 0o750, 0, 0)), logs, ""},
		{"setuid cleared where the scope names the file and the check states suid", one(metaChange("/usr/bin/at", nightshift.FileRegular, 0o4755, 0o755, 0, 0)),
			EffectsPolicy{StrictScope: true, Scope: []string{"/usr/bin/at"}, Keys: []string{FileStatePrefix + "suid"}}, ""},
		{"an owner rule gives a file back to root", one(metaChange("/etc/apt/apt.conf.d/x", nightshift.FileRegular, 0o644, 0o644, 1000, 0)), owners, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkReasons(t, JudgeEffects(tt.eff, tt.pol), tt.want) })
	}
}

func TestJudgeEffectsWritablePlaces(t *testing.T) {
	pwq := EffectsPolicy{StrictScope: true, Scope: []string{"/etc/pam.d/common-password", "/etc/security/pwquality.conf"}}
	logrotate := EffectsPolicy{StrictScope: true, Scope: []string{"/etc/logrotate.conf", "/etc/cron.daily/logrotate"}}
	ns := EffectsPolicy{StrictScope: true, Scope: []string{"/etc/security/namespace.conf", "/tmp/tmp-inst"}}
	tests := []struct {
		name string
		eff  nightshift.Effects
		pol  EffectsPolicy
		want string
	}{
		{"pwquality's dictionary in /var/tmp", modDiff("/etc/pam.d/common-password", "+password\trequisite\tpam_pwquality.so retry=3 dictpath=/var/tmp/pw_dict\n"), pwq,
			"its value names /var/tmp/pw_dict, in /var/tmp, which users other than root can write"},
		{"logrotate includes /var/tmp", modDiff("/etc/logrotate.conf", "+include /var/tmp/logrotate.d\n"), logrotate, "its value names /var/tmp/logrotate.d"},
		{"a keyring in /dev/shm", modDiff("/etc/pam.d/common-password", "+password\trequired\tpam_x.so key=/dev/shm/k\n"), pwq, "in /dev/shm"},
		{"a file in a user's home", modDiff("/etc/logrotate.conf", "+include /home/ops/rotate\n"), logrotate, "in a home"},
		{"the system dictionary", modDiff("/etc/pam.d/common-password", "+password\trequisite\tpam_pwquality.so retry=3 dictpath=/usr/share/cracklib/pw_dict\n"), pwq, ""},
		{"logrotate includes its own directory", modDiff("/etc/logrotate.conf", "+include /etc/logrotate.d\n"), logrotate, ""},
		{"polyinstantiated /tmp: the rule's own place", modDiff("/etc/security/namespace.conf", "+/tmp     /tmp/tmp-inst/        level      root,adm\n"), ns, ""},
		{"fstab names /tmp as a mount point", modDiff("/etc/fstab", "+tmpfs /tmp tmpfs defaults,nodev 0 0\n"), EffectsPolicy{StrictScope: true, Scope: []string{"/etc/fstab"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkReasons(t, JudgeEffects(tt.eff, tt.pol), tt.want) })
	}
}

func TestJudgeEffectsApplyOwnConfig(t *testing.T) {
	logind := EffectsPolicy{StrictScope: true, Scope: []string{"/etc/systemd/logind.conf"}, Keys: []string{"StopIdleSessionSec"}}
	edit := modDiff("/etc/systemd/logind.conf", "+StopIdleSessionSec=900\n")
	with := func(e nightshift.Effects, argv ...string) nightshift.Effects {
		e.Actions = append(e.Actions, nightshift.RecordedAction{Argv: argv})
		return e
	}
	var states []string
	for _, s := range strings.Fields("gexec gwrite oexec oread owrite sgid sticky suid uexec") {
		states = append(states, FileStatePrefix+s)
	}
	rsyslog := EffectsPolicy{StrictScope: true, Scope: []string{"/etc/rsyslog.conf", "/etc/rsyslog.d", "/var/log"},
		Keys: append(states, LinePatternPrefix+`^(?:include\([\n\s]*file="([^\s;]+)".*|\$IncludeConfig[\s]+([^\s;]+))$`)}
	tests := []struct {
		name string
		eff  nightshift.Effects
		pol  EffectsPolicy
		want string
	}{
		{"logind restarted after logind.conf", with(edit, "systemctl", "restart", "systemd-logind"), logind, ""},
		{"logind reloaded after logind.conf", with(edit, "systemctl", "reload", "systemd-logind.service"), logind, ""},
		{"logind stopped after logind.conf", with(edit, "systemctl", "stop", "systemd-logind"), logind, "would run systemctl stop systemd-logind"},
		{"logind restarted without a change to its configuration", with(nightshift.Effects{}, "systemctl", "restart", "systemd-logind"), logind, "would run systemctl restart systemd-logind"},
		{"another unit restarted", with(edit, "systemctl", "restart", "cron"), logind, "would run systemctl restart cron"},
		{"$FileCreateMode 0640", createdDiff("/etc/rsyslog.d/00-filemode.conf", "+$FileCreateMode 0640\n"), rsyslog, ""},
		{"$FileCreateMode 0644", createdDiff("/etc/rsyslog.d/00-filemode.conf", "+$FileCreateMode 0644\n"), rsyslog, "would add $FileCreateMode 0644"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkReasons(t, JudgeEffects(tt.eff, tt.pol), tt.want) })
	}
}

func TestJudgeEffectsExpiry(t *testing.T) {
	today := int(time.Now().Unix() / 86400)
	shadow := func(old, new string) nightshift.Effects {
		return modDiff("/etc/shadow", "-"+old+"\n+"+new+"\n")
	}
	line := func(user string, last, max int, expire string) string {
		return fmt.Sprintf("%s:*:%d:0:%d:7::%s:", user, last, max, expire)
	}
	tests := []struct {
		name string
		eff  nightshift.Effects
		want string
	}{
		{"chage -d today -M 1 root", shadow(line("root", today-10, 99999, ""), line("root", today, 1, "")), "would make root's password or account expire on day " + fmt.Sprint(today+1)},
		{"the account expires in a week", shadow(line("root", today-10, 99999, ""), line("root", today-10, 99999, fmt.Sprint(today+7))), "would make root's password or account expire"},
		{"the password already past its maximum age", shadow(line("root", today-400, 99999, ""), line("root", today-400, 365, "")), "would make root's password or account expire"},
		{"a year's maximum age", shadow(line("root", today-10, 99999, ""), line("root", today-10, 365, "")), ""},
		{"another account's aging", shadow(line("ops2", today-10, 99999, ""), line("ops2", today, 1, "")), ""},
		{"already expiring before the command", shadow(line("root", today-10, 20, ""), line("root", today-10, 15, "")), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkReasons(t, JudgeEffects(tt.eff, EffectsPolicy{}), tt.want) })
	}
}

func TestJudgeEffectsPAMWeakened(t *testing.T) {
	common := func(f, text string) map[string]string { return map[string]string{f: text} }
	auth := debianPAM["/etc/pam.d/common-auth"]
	account := debianPAM["/etc/pam.d/common-account"]
	password := debianPAM["/etc/pam.d/common-password"]
	tests := []struct {
		name  string
		login string
		edit  map[string]string
		want  string
	}{
		// fresh6's PAM changes, as its sed commands leave Debian's files.
		{"sufficient pam_faillock authsucc before pam_unix", "root", common("/etc/pam.d/common-auth", "auth\tsufficient\t\t\tpam_faillock.so authsucc\n"+auth),
			"would accept a wrong password for SSH password logins as root: PAM auth stack of sshd no longer denies it (pam_faillock.so (sufficient)"},
		{"pam_unix replaced by pam_faillock preauth", "root", common("/etc/pam.d/common-auth", strings.Replace(auth, "pam_unix.so nullok", "pam_faillock.so preauth deny=3", 1)),
			"would accept a wrong password for root's console login"},
		{"an account sufficient at the top", "root", common("/etc/pam.d/common-account", "account\tsufficient\t\t\tpam_faillock.so\n"+account),
			"would skip pam_unix's account checks (expired and locked accounts) for root's SSH login"},
		{"a sufficient pam_pwquality before pam_unix", "root", common("/etc/pam.d/common-password", "password\tsufficient\t\t\tpam_pwquality.so minlen=14\n"+password),
			"would end the PAM password stack of passwd before pam_unix stores the new password"},
		{"pam_unix hashing with md5", "root", common("/etc/pam.d/common-password", strings.Replace(password, "pam_unix.so obscure yescrypt", "pam_unix.so obscure md5 remember=5", 1)),
			"would hash new passwords with md5 instead of yescrypt"},
		{"pam_wheel in sudo without a wheel group", "ops", common("/etc/pam.d/sudo", "auth       required   pam_wheel.so\n@include common-auth\n@include common-account\n@include common-session\n"),
			"would take sudo from ops where sudo asks for its password: PAM auth stack of sudo would deny it: pam_wheel.so (ops is not in group wheel)"},
		// SSG's faillock and pwquality lines, and a stronger hash.
		{"SSG's pam_faillock preauth, authfail and authsucc", "root", common("/etc/pam.d/common-auth",
			"auth\trequired\tpam_faillock.so preauth\n"+strings.Replace(auth, "pam_unix.so nullok\n", "pam_unix.so nullok\nauth\t[default=die]\tpam_faillock.so authfail\nauth\tsufficient\tpam_faillock.so authsucc\n", 1)), ""},
		{"SSG's pam_faillock account line after pam_unix", "root", common("/etc/pam.d/common-account", account+"account\trequired\tpam_faillock.so\n"), ""},
		{"SSG's requisite pam_pwquality", "root", common("/etc/pam.d/common-password", "password\trequisite\tpam_pwquality.so retry=3\n"+password), ""},
		{"pam_unix with remember and sha512", "root", common("/etc/pam.d/common-password", strings.Replace(password, "pam_unix.so obscure yescrypt", "pam_unix.so obscure sha512 remember=5", 1)), ""},
		{"pam_wheel for su, root's login", "root", common("/etc/pam.d/su", "auth       required   pam_wheel.so\n"+debianPAM["/etc/pam.d/su"]), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := pamView(tt.login, tt.edit)
			for _, m := range []string{"pam_faillock.so", "pam_pwquality.so", "pam_wheel.so"} {
				v.Before.Modules[m], v.After.Modules[m] = true, true
			}
			checkReasons(t, JudgeEffects(nightshift.Effects{PAM: v}, EffectsPolicy{Login: tt.login}), tt.want)
		})
	}
}
