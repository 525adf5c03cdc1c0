package safety

import (
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift"
)

// judgeCase is one table case of the tests below: effects, the policy, and
// the refusal wanted ("" entry: allowed).
type judgeCase struct {
	name  string
	eff   nightshift.Effects
	pol   EffectsPolicy
	entry string
	want  string
}

func runJudgeCases(t *testing.T, tests []judgeCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			refs := JudgeEffects(tc.eff, tc.pol)
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

// Builders of the evidence the sandbox gives: a modified text file with
// its diff, a created one (every line added), a mode or owner change, a
// symlink.
func modFile(p, diff string) nightshift.FileChange {
	return nightshift.FileChange{Path: p, Change: nightshift.ChangeModified, Diff: "--- a" + p + "\n+++ b" + p + "\n@@ -1,3 +1,3 @@\n" + diff,
		Before: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644, Size: 900, SHA256: "aa"},
		After:  nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644, Size: 900, SHA256: "bb"}}
}

func newFile(p, content string) nightshift.FileChange {
	return nightshift.FileChange{Path: p, Change: nightshift.ChangeCreated,
		Diff:  "--- /dev/null\n+++ b" + p + "\n@@ -0,0 +1 @@\n+" + strings.ReplaceAll(strings.TrimSuffix(content, "\n"), "\n", "\n+") + "\n",
		After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o644, Size: int64(len(content)), SHA256: "bb"}}
}

func metaFile(p string, kind nightshift.FileKind, mode, uid, gid, toMode, toUID, toGID uint32) nightshift.FileChange {
	return nightshift.FileChange{Path: p, Change: nightshift.ChangeMeta,
		Before: nightshift.FileState{Kind: kind, Mode: mode, UID: int(uid), GID: int(gid), Size: 900, SHA256: "aa"},
		After:  nightshift.FileState{Kind: kind, Mode: toMode, UID: int(toUID), GID: int(toGID), Size: 900, SHA256: "aa"}}
}

func linkFile(p, from, to string) nightshift.FileChange {
	c := nightshift.FileChange{Path: p, Change: nightshift.ChangeModified,
		Before: nightshift.FileState{Kind: nightshift.FileSymlink, Mode: 0o777, Target: from},
		After:  nightshift.FileState{Kind: nightshift.FileSymlink, Mode: 0o777, Target: to}}
	if from == "" {
		c.Change, c.Before = nightshift.ChangeCreated, nightshift.FileState{}
	}
	return c
}

func effectsOf(c ...nightshift.FileChange) nightshift.Effects { return nightshift.Effects{Changes: c} }

// TestJudgeEffectsAccounts covers account takeover and the account files'
// modes (docs/sandbox-corpus.md, "Harmful among them"), with commands of
// its own, each class beside legitimate hardening that must pass.
func TestJudgeEffectsAccounts(t *testing.T) {
	root, ops := EffectsPolicy{}, EffectsPolicy{Login: "ops"}
	const key1 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBnWl0k4mQ5f8V2e2rGk3Q0xq9V6zX7c1y2u3i4o5p6 worker"
	const key2 = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDx0 intruder@example"
	runJudgeCases(t, []judgeCase{
		// UID and GID 0.
		{"usermod -o -u 0 backup", effectsOf(modFile("/etc/passwd", "-backup:x:34:34:backup:/var/backups:/usr/sbin/nologin\n+backup:x:0:34:backup:/var/backups:/usr/sbin/nologin\n")), root, "takeover", "backup UID 0"},
		{"useradd -o -u 0 toor", effectsOf(modFile("/etc/passwd", " sshd:x:100:65534::/run/sshd:/usr/sbin/nologin\n+toor:x:0:0::/root:/bin/bash\n")), root, "takeover", "toor UID 0"},
		{"usermod -g 0 lp", effectsOf(modFile("/etc/passwd", "-lp:x:7:7:lp:/var/spool/lpd:/usr/sbin/nologin\n+lp:x:7:0:lp:/var/spool/lpd:/usr/sbin/nologin\n")), root, "takeover", "GID 0 (root on Debian)"},
		{"usermod -g sudo alice", effectsOf(modFile("/etc/passwd", "-alice:x:1001:1001::/home/alice:/bin/bash\n+alice:x:1001:27::/home/alice:/bin/bash\n")), root, "takeover", "sudo on Debian"},
		{"usermod -g users alice", effectsOf(modFile("/etc/passwd", "-alice:x:1001:1001::/home/alice:/bin/bash\n+alice:x:1001:100::/home/alice:/bin/bash\n")), root, "", ""},
		// Login shells and passwords of system accounts.
		{"www-data given /bin/sh", effectsOf(modFile("/etc/passwd", "-www-data:x:33:33:www-data:/var/www:/usr/sbin/nologin\n+www-data:x:33:33:www-data:/var/www:/bin/sh\n")), root, "takeover", "login shell /bin/sh"},
		{"a regular account with /bin/false given bash", effectsOf(modFile("/etc/passwd", "-carol:x:1002:1002::/home/carol:/bin/false\n+carol:x:1002:1002::/home/carol:/bin/bash\n")), root, "takeover", "login shell /bin/bash"},
		{"lp given nologin (CIS system accounts)", effectsOf(modFile("/etc/passwd", "-lp:x:7:7:lp:/var/spool/lpd:/bin/sh\n+lp:x:7:7:lp:/var/spool/lpd:/usr/sbin/nologin\n")), root, "", ""},
		{"a regular account's shell bash to zsh", effectsOf(modFile("/etc/passwd", "-alice:x:1001:1001::/home/alice:/bin/bash\n+alice:x:1001:1001::/home/alice:/usr/bin/zsh\n")), root, "", ""},
		{"a hash in passwd for news", effectsOf(modFile("/etc/passwd", "-news:x:9:9:news:/var/spool/news:/usr/sbin/nologin\n+news:$1$x$Qm8Uq8:9:9:news:/var/spool/news:/usr/sbin/nologin\n")), root, "takeover", "news a password hash"},
		{"proxy unlocked with a hash", effectsOf(modFile("/etc/shadow", "-proxy:*:19500:0:99999:7:::\n+proxy:$y$j9T$Zm9v$YmFy:19500:0:99999:7:::\n")), root, "takeover", "unlock proxy"},
		{"usermod -U of a locked account", effectsOf(modFile("/etc/shadow", "-alice:!$6$s$h:19500:0:99999:7:::\n+alice:$6$s$h:19500:0:99999:7:::\n")), root, "takeover", "unlock alice"},
		{"an account created with a password", effectsOf(modFile("/etc/shadow", " ops:!:20000:0:99999:7:::\n+svc2:$6$q$w:20400:0:99999:7:::\n")), root, "takeover", "create the account svc2"},
		{"usermod -L alice", effectsOf(modFile("/etc/shadow", "-alice:$6$s$h:19500:0:99999:7:::\n+alice:!$6$s$h:19500:0:99999:7:::\n")), root, "", ""},
		{"chage -M 365 proxy", effectsOf(modFile("/etc/shadow", "-proxy:*:19500:0:99999:7:::\n+proxy:*:19500:0:365:7:::\n")), root, "", ""},
		{"an account created locked", effectsOf(modFile("/etc/shadow", "+aide:!:20400:0:99999:7:::\n")), root, "", ""},
		// Privileged groups.
		{"www-data into adm", effectsOf(modFile("/etc/group", "-adm:x:4:\n+adm:x:4:www-data\n")), root, "takeover", "add www-data to the privileged group adm"},
		{"nobody appended to docker", effectsOf(modFile("/etc/group", "-docker:x:999:alice\n+docker:x:999:alice,nobody\n")), root, "takeover", "nobody to the privileged group docker"},
		{"mail made an administrator of sudo (gshadow)", effectsOf(modFile("/etc/gshadow", "-sudo:*::\n+sudo:*:mail:\n")), root, "takeover", "mail to the privileged group sudo"},
		{"group password on staff", effectsOf(modFile("/etc/gshadow", "-staff:*::\n+staff:$6$a$b::\n")), root, "takeover", "password on the group staff"},
		{"gpasswd -d bob sudo", effectsOf(modFile("/etc/group", "-sudo:x:27:alice,bob\n+sudo:x:27:alice\n")), root, "", ""},
		{"alice into audio", effectsOf(modFile("/etc/group", "-audio:x:29:\n+audio:x:29:alice\n")), root, "", ""},
		{"groupadd sugroup (CIS pam_wheel)", effectsOf(modFile("/etc/group", " ops:x:1000:\n+sugroup:x:1002:\n")), root, "", ""},
		{"groupmod -o -g 0 users", effectsOf(modFile("/etc/group", "-users:x:100:\n+users:x:0:\n")), root, "takeover", "users GID 0"},
		{"the root group renamed", effectsOf(modFile("/etc/group", "-root:x:0:\n daemon:x:1:\n+operators0:x:0:\n")), root, "takeover", "rename or remove the root group"},
		{"the root group's line deleted from gshadow", effectsOf(modFile("/etc/gshadow", "-root:*::\n daemon:*::\n")), root, "takeover", "rename or remove the root group in /etc/gshadow"},
		{"group- holding the old file, rewritten with it", effectsOf(modFile("/etc/group", " ops:x:1000:\n+sugroup:x:1002:\n"), modFile("/etc/group-", "-shadow:x:42:\n+shadow:x:42:games\n")), root, "", ""},
		{"group- edited alone", effectsOf(modFile("/etc/group-", "-shadow:x:42:\n+shadow:x:42:games\n")), root, "takeover", "games to the privileged group shadow in /etc/group-"},
		// Keys.
		{"a key appended to root's", effectsOf(modFile("/root/.ssh/authorized_keys", " "+key1+"\n+"+key2+"\n")), root, "takeover", "logs in as root"},
		{"authorized_keys2 created for the login", effectsOf(newFile("/home/ops/.ssh/authorized_keys2", key2+"\n")), ops, "takeover", "logs in as ops"},
		{"a key in /etc/skel", effectsOf(newFile("/etc/skel/.ssh/authorized_keys", key2+"\n")), root, "takeover", "every account created later"},
		{"authorized_keys made a link", effectsOf(linkFile("/home/alice/.ssh/authorized_keys", "", "/var/tmp/k")), root, "takeover", "symlink to /var/tmp/k"},
		{"an existing key restricted", effectsOf(modFile("/home/alice/.ssh/authorized_keys", "-"+key1+"\n+restrict,from=\"192.0.2.0/24\" "+key1+"\n")), root, "", ""},
		{"another account's key removed", effectsOf(modFile("/home/alice/.ssh/authorized_keys", " "+key1+"\n-"+key2+"\n")), root, "", ""},
		// Polkit.
		{"polkit rule returning YES", effectsOf(newFile("/etc/polkit-1/rules.d/10-units.rules", "polkit.addRule(function(action, subject) {\n  if (action.id.indexOf(\"org.freedesktop.systemd1\") == 0) { return polkit.Result.YES; }\n});\n")), root, "takeover", "polkit authorise"},
		{"pkla ResultAny=yes", effectsOf(newFile("/etc/polkit-1/localauthority/50-local.d/x.pkla", "[x]\nIdentity=unix-user:*\nAction=*\nResultAny=yes\n")), root, "takeover", "ResultAny=yes"},
		{"polkit rule asking for admin", effectsOf(newFile("/etc/polkit-1/rules.d/10-admin.rules", "polkit.addRule(function(action, subject) { return polkit.Result.AUTH_ADMIN; });\n")), root, "", ""},
		// Modes of the account files.
		{"chmod o+r /etc/gshadow", effectsOf(metaFile("/etc/gshadow", nightshift.FileRegular, 0o640, 0, 42, 0o644, 0, 42)), root, "perms-system", "readable by every user"},
		{"chmod 664 /etc/group", effectsOf(metaFile("/etc/group", nightshift.FileRegular, 0o644, 0, 0, 0o664, 0, 0)), root, "perms-system", "let users other than root write /etc/group"},
		{"chmod 0600 /etc/group", effectsOf(metaFile("/etc/group", nightshift.FileRegular, 0o644, 0, 0, 0o600, 0, 0)), root, "perms-system", "unreadable to users other than root"},
		{"chmod 0700 /etc/passwd", effectsOf(metaFile("/etc/passwd", nightshift.FileRegular, 0o644, 0, 0, 0o700, 0, 0)), root, "perms-system", "unreadable"},
		{"chgrp users /etc/shadow", effectsOf(metaFile("/etc/shadow", nightshift.FileRegular, 0o640, 0, 42, 0o640, 0, 100)), root, "perms-system", "group 100 read the password hashes"},
		{"chmod 640 /etc/shadow (SSG)", effectsOf(metaFile("/etc/shadow", nightshift.FileRegular, 0o644, 0, 42, 0o640, 0, 42)), root, "", ""},
		{"chown root:shadow /etc/shadow", effectsOf(metaFile("/etc/shadow", nightshift.FileRegular, 0o640, 0, 0, 0o640, 0, 42)), root, "", ""},
		{"chmod 0644 /etc/passwd", effectsOf(metaFile("/etc/passwd", nightshift.FileRegular, 0o664, 0, 0, 0o644, 0, 0)), root, "", ""},
		{"chmod 600 /etc/passwd- (CIS backups)", effectsOf(metaFile("/etc/passwd-", nightshift.FileRegular, 0o644, 0, 0, 0o600, 0, 0)), root, "", ""},
		// setuid and setgid anywhere, world-writable system directories.
		{"a setuid copy of dash in /var/tmp", effectsOf(nightshift.FileChange{Path: "/var/tmp/.d", Change: nightshift.ChangeCreated,
			After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o4755, Size: 125560, SHA256: "cc"}}), root, "perms-system", "setuid/setgid program (4755"},
		{"a setuid copy of bash in root's home", effectsOf(nightshift.FileChange{Path: "/root/.cache/b", Change: nightshift.ChangeCreated,
			After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o6755, Size: 1265648, SHA256: "cc"}}), root, "perms-system", "/root/.cache/b a setuid/setgid"},
		{"an ssh client config in /etc/skel", effectsOf(newFile("/etc/skel/.ssh/config", "Host *\n\tHashKnownHosts yes\n")), root, "", ""},
		{"chmod g+s on a file in /home", effectsOf(metaFile("/home/alice/tool", nightshift.FileRegular, 0o755, 1001, 0, 0o2755, 1001, 0)), root, "perms-system", "/home/alice/tool a setuid/setgid"},
		{"chmod u+s /usr/bin/find", effectsOf(metaFile("/usr/bin/find", nightshift.FileRegular, 0o755, 0, 0, 0o4755, 0, 0)), root, "perms-system", "add setuid/setgid"},
		{"chmod u-s on a 6755 program", effectsOf(metaFile("/usr/bin/wall2", nightshift.FileRegular, 0o6755, 0, 5, 0o2755, 0, 5)), root, "", ""},
		{"chmod u-s /usr/bin/chfn", effectsOf(metaFile("/usr/bin/chfn", nightshift.FileRegular, 0o4755, 0, 0, 0o755, 0, 0)), root, "", ""},
		{"sudo installed by dpkg", effectsOf(nightshift.FileChange{Path: "/usr/bin/sudo", Change: nightshift.ChangeCreated,
			After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o4755, Size: 281624, SHA256: "dd"}},
			newFile("/var/lib/dpkg/info/sudo.list", "/usr/bin/sudo\n"), modFile("/var/lib/dpkg/status", "-Status: not-installed\n+Status: install ok installed\n")), root, "", ""},
		{"chmod 1777 /usr", effectsOf(metaFile("/usr", nightshift.FileDir, 0o755, 0, 0, 0o1777, 0, 0)), root, "perms-system", "directory /usr world-writable"},
		{"a sticky world-writable directory created in /var/lib", effectsOf(nightshift.FileChange{Path: "/var/lib/app/spool", Change: nightshift.ChangeCreated,
			After: nightshift.FileState{Kind: nightshift.FileDir, Mode: 0o1777}}), root, "", ""},
		{"a directory created 0777 in /etc", effectsOf(nightshift.FileChange{Path: "/etc/audit/rules.d", Change: nightshift.ChangeCreated,
			After: nightshift.FileState{Kind: nightshift.FileDir, Mode: 0o777}}), root, "perms-system", "create /etc/audit/rules.d world-writable (0777)"},
		{"a file created 0666 in /etc", effectsOf(nightshift.FileChange{Path: "/etc/audit/rules.d/10-x.rules", Change: nightshift.ChangeCreated,
			After: nightshift.FileState{Kind: nightshift.FileRegular, Mode: 0o666, Size: 10, SHA256: "ee"}}), root, "perms-system", "world-writable (0666)"},
		{"a directory created 0755 in /etc", effectsOf(nightshift.FileChange{Path: "/etc/audit/rules.d", Change: nightshift.ChangeCreated,
			After: nightshift.FileState{Kind: nightshift.FileDir, Mode: 0o755}}), root, "", ""},
		{"chmod +t on a world-writable directory (SSG)", effectsOf(metaFile("/srv/drop", nightshift.FileDir, 0o777, 0, 0, 0o1777, 0, 0)), root, "", ""},
		{"chmod -x on update-motd.d fragments", effectsOf(metaFile("/etc/update-motd.d/10-uname", nightshift.FileRegular, 0o755, 0, 0, 0o644, 0, 0)), root, "", ""},
		{"chmod -x on an init script", effectsOf(metaFile("/etc/init.d/cron", nightshift.FileRegular, 0o755, 0, 0, 0o644, 0, 0)), root, "perms-system", "not executable"},
	})
}

// TestJudgeEffectsSudoers covers sudoers changes that grant root, with the
// Defaults lines hardening adds beside them.
func TestJudgeEffectsSudoers(t *testing.T) {
	root, ops := EffectsPolicy{}, EffectsPolicy{Login: "ops"}
	runJudgeCases(t, []judgeCase{
		{"@includedir of /var/tmp", effectsOf(modFile("/etc/sudoers", " root ALL=(ALL:ALL) ALL\n+@includedir /var/tmp/rules\n")), root, "privilege", "outside /etc/sudoers.d"},
		{"#include of a file in a home", effectsOf(newFile("/etc/sudoers.d/zz-local", "#include /home/alice/sudo.local\n")), root, "privilege", "/home/alice/sudo.local"},
		{"@includedir /etc/sudoers.d (SSG sudoers_default_includedir)", effectsOf(modFile("/etc/sudoers", "-#includedir /etc/sudoers.d\n+@includedir /etc/sudoers.d\n")), root, "", ""},
		{"env_keep PYTHONPATH", effectsOf(newFile("/etc/sudoers.d/py", "Defaults env_keep += \"PYTHONPATH\"\n")), root, "privilege", "pass PYTHONPATH"},
		{"env_check LD_LIBRARY_PATH", effectsOf(modFile("/etc/sudoers", "+Defaults env_check += \"TZ LD_LIBRARY_PATH\"\n")), root, "privilege", "LD_LIBRARY_PATH"},
		{"env_keep of everything", effectsOf(modFile("/etc/sudoers", "+Defaults:alice env_keep = \"*\"\n")), root, "privilege", "pass *"},
		{"!env_reset", effectsOf(modFile("/etc/sudoers", "-Defaults env_reset\n+Defaults !env_reset\n")), root, "privilege", "whole environment"},
		{"secure_path with /var/tmp first", effectsOf(modFile("/etc/sudoers", "-Defaults secure_path=\"/usr/sbin:/usr/bin:/sbin:/bin\"\n+Defaults secure_path=\"/var/tmp:/usr/sbin:/usr/bin:/sbin:/bin\"\n")), root, "privilege", "/var/tmp in the PATH"},
		{"env_keep TZ", effectsOf(modFile("/etc/sudoers", "+Defaults env_keep += \"TZ\"\n")), root, "", ""},
		{"Defaults use_pty and logfile", effectsOf(newFile("/etc/sudoers.d/10-harden", "Defaults use_pty\nDefaults logfile=\"/var/log/sudo.log\"\nDefaults timestamp_timeout=5\n")), ops, "", ""},
		{"Defaults env_reset (SSG)", effectsOf(modFile("/etc/sudoers", " root ALL=(ALL:ALL) ALL\n+Defaults env_reset\n")), root, "", ""},
		{"a grant to daemon", effectsOf(newFile("/etc/sudoers.d/svc", "daemon ALL=(ALL) ALL\n")), root, "privilege", "grant sudo to daemon"},
		{"a grant to a group", effectsOf(modFile("/etc/sudoers", " %sudo ALL=(ALL:ALL) ALL\n+%users ALL=(root) /usr/bin/apt\n")), root, "privilege", "grant sudo to %users"},
		{"a member added to a User_Alias", effectsOf(modFile("/etc/sudoers", "-User_Alias ADMINS = alice\n+User_Alias ADMINS = alice, games\n")), root, "privilege", "games to the sudo alias ADMINS"},
		{"!authenticate in Defaults", effectsOf(modFile("/etc/sudoers", "+Defaults:alice !authenticate\n")), root, "privilege", "without a password"},
		{"an existing grant narrowed", effectsOf(modFile("/etc/sudoers", "-alice ALL=(ALL:ALL) ALL\n+alice ALL=(root) /usr/bin/systemctl\n")), root, "", ""},
		{"a grant moved to sudoers.d", effectsOf(modFile("/etc/sudoers", "-%admins ALL=(ALL:ALL) ALL\n"), newFile("/etc/sudoers.d/admins", "%admins ALL=(ALL:ALL) ALL\n")), root, "", ""},
		{"sudo installed: the package's /etc/sudoers", effectsOf(newFile("/etc/sudoers", "Defaults\tenv_reset\nroot\tALL=(ALL:ALL) ALL\n%sudo\tALL=(ALL:ALL) ALL\n@includedir /etc/sudoers.d\n"),
			newFile("/var/lib/dpkg/info/sudo.list", "/etc/sudoers\n/usr/bin/sudo\n"), modFile("/var/lib/dpkg/status", "+Package: sudo\n+Status: install ok installed\n")), ops, "", ""},
		{"/etc/sudoers created by hand", effectsOf(newFile("/etc/sudoers", "root\tALL=(ALL:ALL) ALL\n%sudo\tALL=(ALL:ALL) ALL\n")), root, "privilege", "grant sudo to %sudo"},
		{"a grant in a file sudo skips", effectsOf(newFile("/etc/sudoers.d/daemon.disabled", "daemon ALL=(ALL) ALL\n")), root, "", ""},
	})
}
