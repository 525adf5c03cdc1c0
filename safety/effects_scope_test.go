package safety

import (
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift"
)

func TestJudgeEffectsStrictScope(t *testing.T) {
	file := func(p string, ch nightshift.Change) nightshift.FileChange {
		c := nightshift.FileChange{Path: p, Change: ch, After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644, Size: 10}}
		if ch != nightshift.ChangeCreated {
			c.Before = nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644}
		}
		return c
	}
	mkdir := func(p string) nightshift.FileChange {
		return nightshift.FileChange{Path: p, Change: nightshift.ChangeCreated, After: nightshift.FileState{Kind: nightshift.FileDir, Mode: 0o755}}
	}
	link := func(p, target string) nightshift.FileChange {
		return nightshift.FileChange{Path: p, Change: nightshift.ChangeCreated, After: nightshift.FileState{Kind: nightshift.FileSymlink, Target: target}}
	}
	// A package operation: dpkg's status and the package's file list.
	pkg := func(list ...string) []nightshift.FileChange {
		l := file("/var/lib/dpkg/info/auditd.list", nightshift.ChangeCreated)
		for _, p := range list {
			l.Diff += "+" + p + "\n"
		}
		return []nightshift.FileChange{file("/var/lib/dpkg/status", nightshift.ChangeModified), l}
	}
	sshd := []string{"/etc/ssh/sshd_config"}
	strict := func(scope ...string) EffectsPolicy { return EffectsPolicy{Scope: scope, StrictScope: true} }
	named := func(rule, note string) EffectsPolicy {
		return EffectsPolicy{StrictScope: true, Rule: rule, ScopeNote: note}
	}
	ch := func(c ...nightshift.FileChange) nightshift.Effects { return nightshift.Effects{Changes: c} }
	tests := []struct {
		name string
		eff  nightshift.Effects
		pol  EffectsPolicy
		want string // substring of the scope refusal; "" means no scope refusal
	}{
		{"sshd_config for an sshd rule", ch(file("/etc/ssh/sshd_config", nightshift.ChangeModified)), strict(sshd...), ""},
		{"ssh.service drop-in for an sshd rule", ch(mkdir("/etc/systemd/system/ssh.service.d"), file("/etc/systemd/system/ssh.service.d/x.conf", nightshift.ChangeCreated)), strict(sshd...),
			"would change /etc/systemd/system/ssh.service.d and /etc/systemd/system/ssh.service.d/x.conf, outside the rule's paths /etc/ssh/sshd_config"},
		{"the same drop-in, no strict scope", ch(file("/etc/systemd/system/ssh.service.d/x.conf", nightshift.ChangeCreated)), EffectsPolicy{Scope: sshd}, ""},
		{"apt hook for a sysctl rule", ch(file("/etc/apt/apt.conf.d/99x", nightshift.ChangeCreated)), strict("/etc/sysctl.d"), "/etc/apt/apt.conf.d/99x, outside the rule's paths /etc/sysctl.d"},
		{"openssh template", ch(file("/usr/share/openssh/sshd_config", nightshift.ChangeModified)), strict(sshd...), "/usr/share/openssh/sshd_config"},
		{"/etc/default/ssh", ch(file("/etc/default/ssh", nightshift.ChangeModified)), strict(sshd...), "/etc/default/ssh"},
		{"root's bashrc", ch(file("/root/.bashrc", nightshift.ChangeModified)), strict(sshd...), "/root/.bashrc"},
		{"a user's authorized_keys", ch(file("/home/alice/.ssh/authorized_keys", nightshift.ChangeCreated)), strict(sshd...), "/home/alice/.ssh/authorized_keys"},
		{"a user's document: outside scratch, so refused under a strict scope", ch(file("/home/alice/notes.txt", nightshift.ChangeCreated)), strict(sshd...), "/home/alice/notes.txt"},
		{"a user's document, no strict scope", ch(file("/home/alice/notes.txt", nightshift.ChangeCreated)), EffectsPolicy{Scope: sshd}, ""},
		{"crontab", ch(file("/var/spool/cron/crontabs/root", nightshift.ChangeCreated)), strict(sshd...), "/var/spool/cron/crontabs/root"},
		{"a link in /usr/local/bin", ch(link("/usr/local/bin/ls", "/tmp/x")), strict(sshd...), "/usr/local/bin/ls"},
		{"deleting in /boot", ch(nightshift.FileChange{Path: "/boot/grub/custom.cfg", Change: nightshift.ChangeDeleted, Before: nightshift.FileState{Kind: nightshift.FileRegular}}), strict(sshd...), "/boot/grub/custom.cfg"},
		{"mode change of /etc/shadow for an sshd rule", ch(nightshift.FileChange{Path: "/etc/shadow", Change: nightshift.ChangeMeta,
			Before: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o640}, After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o600}}), strict(sshd...), "/etc/shadow"},
		{"scratch places", ch(file("/tmp/x", nightshift.ChangeCreated), file("/var/tmp/y", nightshift.ChangeCreated), file("/var/cache/z", nightshift.ChangeCreated),
			file("/dev/shm/w", nightshift.ChangeCreated)), strict(sshd...), ""},
		// Run 5 and fresh3 under a rule's scope: files off the old control
		// surfaces (logs, service state, spools, /srv, /run).
		{"the journal replaced by a file", ch(nightshift.FileChange{Path: "/var/log/journal", Change: nightshift.ChangeModified,
			Before: nightshift.FileState{Kind: nightshift.FileDir, Mode: 0o755}, After: nightshift.FileState{Kind: nightshift.FileRegular}}), strict(sshd...), "/var/log/journal"},
		{"wtmp made a link to /dev/null", ch(link("/var/log/wtmp", "/dev/null")), strict(sshd...), "/var/log/wtmp"},
		{"dpkg.log made a link, even beside a package operation", ch(append(pkg("/usr/sbin/auditd"), file("/usr/sbin/auditd", nightshift.ChangeCreated),
			link("/var/log/dpkg.log", "/etc/pam.d/common-account"))...), strict(), "/var/log/dpkg.log"},
		{"dpkg.log appended by a package operation", ch(append(pkg("/usr/sbin/auditd"), file("/usr/sbin/auditd", nightshift.ChangeCreated),
			file("/var/log/dpkg.log", nightshift.ChangeModified), file("/var/lib/pam/seen", nightshift.ChangeModified), file("/var/cache/debconf/config.dat", nightshift.ChangeModified))...), strict(), ""},
		{"debconf's answers without a package operation", ch(file("/var/cache/debconf/config.dat", nightshift.ChangeModified)), strict(sshd...), "/var/cache/debconf/config.dat"},
		{"service state in /var/lib", ch(file("/var/lib/systemd/timers/stamp-x", nightshift.ChangeCreated)), strict(sshd...), "/var/lib/systemd/timers/stamp-x"},
		{"a spool and /srv", ch(file("/var/spool/mail/root", nightshift.ChangeModified), file("/srv/www/index.html", nightshift.ChangeCreated)), strict(sshd...), "/var/spool/mail/root and /srv/www/index.html"},
		{"runtime units in /run", ch(file("/run/systemd/system/x.service", nightshift.ChangeCreated)), strict(sshd...), "/run/systemd/system/x.service"},
		{"root's user units in /run/user", ch(file("/run/user/0/systemd/user/x.service", nightshift.ChangeCreated)), strict(sshd...), "/run/user/0/systemd/user/x.service"},
		{"a log written with no strict scope", ch(file("/var/log/x.log", nightshift.ChangeModified)), EffectsPolicy{Scope: sshd}, ""},
		{"mkdir -p on the way to the scope", ch(mkdir("/etc/audit"), mkdir("/etc/audit/rules.d"), file("/etc/audit/rules.d/x.rules", nightshift.ChangeCreated)), strict("/etc/audit/rules.d"), ""},
		{"an empty strict scope refuses any control-surface change", ch(file("/etc/motd", nightshift.ChangeModified)), strict(), "would change /etc/motd: the rule has no paths: its check reads no files"},
		// The reason names the rule and says what its author can do.
		{"a YAML rule without paths", ch(file("/etc/foo.conf", nightshift.ChangeModified)), named("my_rule", "declares no paths (add paths: to the rule)"),
			"would change /etc/foo.conf: rule my_rule declares no paths (add paths: to the rule)"},
		{"a YAML rule without paths, off the control surfaces", ch(file("/srv/x", nightshift.ChangeCreated)), named("my_rule", "declares no paths (add paths: to the rule)"),
			"would change /srv/x: rule my_rule declares no paths (add paths: to the rule) (with a strict scope only scratch places are free"},
		{"an SCAP rule without an OVAL check", ch(file("/etc/iptables/rules.v4", nightshift.ChangeCreated)), named("set_iptables_default_rule", "has no OVAL check to derive its paths from"),
			"would change /etc/iptables/rules.v4: rule set_iptables_default_rule has no OVAL check to derive its paths from"},
		{"a rule without paths, scratch only", ch(file("/tmp/x", nightshift.ChangeCreated)), named("my_rule", "declares no paths"), ""},
		// Patterns: one component matched by path.Match, trees below.
		{"homes pattern: a home's dotfile", ch(file("/home/ann/.bashrc", nightshift.ChangeModified)), strict("/home/*/.*"), ""},
		{"homes pattern: under a dot-directory", ch(file("/home/ann/.ssh/config", nightshift.ChangeModified)), strict("/home/*/.*"), ""},
		{"homes pattern: not a dotfile", ch(file("/home/ann/notes", nightshift.ChangeModified)), strict("/home/*/.*"), "would change /home/ann/notes, outside the rule's paths /home/*/.*"},
		{"homes pattern: the home itself", ch(nightshift.FileChange{Path: "/home/ann", Change: nightshift.ChangeMeta,
			Before: nightshift.FileState{Kind: nightshift.FileDir, Mode: 0o755}, After: nightshift.FileState{Kind: nightshift.FileDir, Mode: 0o750}}), strict("/home/*/.*"), "/home/ann, outside"},
		{"homes tree pattern: the home and its files", ch(nightshift.FileChange{Path: "/home/ann", Change: nightshift.ChangeMeta,
			Before: nightshift.FileState{Kind: nightshift.FileDir, Mode: 0o755}, After: nightshift.FileState{Kind: nightshift.FileDir, Mode: 0o750}}, file("/home/ann/notes", nightshift.ChangeModified)), strict("/home/*"), ""},
		{"homes tree pattern: not /home's siblings", ch(file("/homeless/x", nightshift.ChangeCreated), file("/root/.bashrc", nightshift.ChangeModified)), strict("/home/*"), "/homeless/x and /root/.bashrc"},
		{"a pattern does not cross a /", ch(file("/etc/a/b.conf", nightshift.ChangeCreated)), strict("/etc/*.conf"), "/etc/a/b.conf"},
		{"mkdir -p on the way to a pattern", ch(mkdir("/home/bob"), file("/home/bob/.profile", nightshift.ChangeCreated)), strict("/home/*/.*"), ""},
		{"package install: owned files and maintainer-script outputs", ch(append(pkg("/etc/audit/auditd.conf", "/usr/sbin/auditd"),
			file("/etc/audit/auditd.conf", nightshift.ChangeCreated), file("/usr/sbin/auditd", nightshift.ChangeCreated),
			link("/etc/systemd/system/multi-user.target.wants/auditd.service", "/lib/systemd/system/auditd.service"))...), strict(), ""},
		{"package install with an extra file", ch(append(pkg("/usr/sbin/auditd"), file("/usr/sbin/auditd", nightshift.ChangeCreated),
			file("/etc/sudoers.d/x", nightshift.ChangeCreated))...), strict(), "/etc/sudoers.d/x"},
		{"maintainer-script paths without a package operation", ch(link("/etc/systemd/system/multi-user.target.wants/evil.service", "/tmp/evil.service")), strict(), "multi-user.target.wants/evil.service"},
		{"three and more", ch(file("/etc/a", nightshift.ChangeCreated), file("/etc/b", nightshift.ChangeCreated), file("/etc/c", nightshift.ChangeCreated), file("/etc/d", nightshift.ChangeCreated)), strict(sshd...),
			"would change /etc/a, /etc/b and 2 other paths, outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkScopeRefusals(t, tt.eff, tt.pol, tt.want) })
	}
}

func TestValidScopePath(t *testing.T) {
	tests := []struct{ path, want string }{
		{"/etc/ssh/sshd_config", ""},
		{"/home/*", ""},
		{"/home/*/.*", ""},
		{"/home/[a-z]*/.bashrc", ""},
		{"/", "not a clean absolute path below /"},
		{"etc/x", "not a clean absolute path"},
		{"/etc/../x", "not a clean absolute path"},
		{"/*", "the first component of a pattern must be literal"},
		{"/*/x", "the first component of a pattern must be literal"},
		{"/home/[a", "not a path.Match pattern"},
	}
	for _, tt := range tests {
		err := ValidScopePath(tt.path)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("ValidScopePath(%q) = %v", tt.path, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("ValidScopePath(%q) = %v, want %q", tt.path, err, tt.want)
		}
	}
}

func TestControlSurface(t *testing.T) {
	tests := []struct{ path, want string }{
		{"/etc/ssh/sshd_config", "/etc"},
		{"/usr/local/bin/x", "/usr"},
		{"/usr/share/openssh/sshd_config", "/usr"},
		{"/lib/systemd/system/ssh.service", "/lib"},
		{"/var/lib/dpkg/info/x.postinst", "/var/lib/dpkg"},
		{"/var/lib/systemd/linger/alice", "/var/lib/systemd/linger"},
		{"/root/.ssh/authorized_keys", "/root"},
		{"/home/alice/.profile", "/home/*/.*"},
		{"/home/alice/src/main.go", ""},
		{"/home/.hidden", ""},
		{"/var/log/syslog", ""},
		{"/tmp/x", ""},
		{"/etcetera", ""},
		{"/srv/www/index.html", ""},
	}
	for _, tt := range tests {
		if got := ControlSurface(tt.path); got != tt.want {
			t.Errorf("ControlSurface(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// checkScopeRefusals judges eff under pol and checks its "scope" refusals
// with checkReasons.
func checkScopeRefusals(t *testing.T, eff nightshift.Effects, pol EffectsPolicy, want string) {
	t.Helper()
	var scope []Refusal
	for _, r := range JudgeEffects(eff, pol) {
		if r.Entry == "scope" {
			scope = append(scope, r)
		}
	}
	checkReasons(t, scope, want)
}

// checkReasons checks refusals: none when want is empty, else one whose
// reason contains want.
func checkReasons(t *testing.T, refs []Refusal, want string) {
	t.Helper()
	var got []string
	for _, r := range refs {
		got = append(got, r.Reason)
	}
	switch {
	case want == "" && len(got) > 0:
		t.Errorf("refused: %q", got)
	case want != "" && !strings.Contains(strings.Join(got, "\n"), want):
		t.Errorf("refusals %q, want one containing %q", got, want)
	}
}
