package safety

import (
	"testing"

	"github.com/nightshift-dev/nightshift"
)

// TestJudgeEffectsPackages covers apt's and dpkg's configuration and
// database, with commands of its own beside the legitimate settings that
// must pass.
func TestJudgeEffectsPackages(t *testing.T) {
	root := EffectsPolicy{}
	runJudgeCases(t, []judgeCase{
		// apt.conf.d.
		{"Dir::Bin::methods elsewhere", effectsOf(newFile("/etc/apt/apt.conf.d/01methods", "Dir::Bin::methods \"/var/tmp/m\";\n")), root, "deferred", "/var/tmp/m for dir::bin::methods"},
		{"Dir::Bin::dpkg in a scope", effectsOf(newFile("/etc/apt/apt.conf.d/02bin", "Dir {\n  Bin {\n    dpkg \"/opt/x/dpkg\";\n  };\n};\n")), root, "deferred", "dir::bin::dpkg"},
		{"Dir::Etc::sourcelist elsewhere", effectsOf(newFile("/etc/apt/apt.conf.d/03src", "Dir::Etc::SourceList \"/var/tmp/s.list\";\n")), root, "deferred", "dir::etc::sourcelist"},
		{"APT::Update::Post-Invoke hook", effectsOf(newFile("/etc/apt/apt.conf.d/04hook", "APT::Update::Post-Invoke { \"cp /bin/sh /var/tmp/.s\"; };\n")), root, "deferred", "apt hook"},
		{"DPkg::Pre-Invoke in a scope", effectsOf(newFile("/etc/apt/apt.conf.d/05hook", "DPkg {\n  Pre-Invoke { \"/usr/local/sbin/pre\"; };\n};\n")), root, "deferred", "/usr/local/sbin/pre"},
		{"https proxy on loopback", effectsOf(newFile("/etc/apt/apt.conf.d/06proxy", "Acquire::https::Proxy \"http://[::1]:3128/\";\n")), root, "deferred", "loopback or unroutable"},
		{"http proxy at a documentation address", effectsOf(newFile("/etc/apt/apt.conf.d/06proxy", "Acquire { http { Proxy \"http://203.0.113.9:8080\"; }; };\n")), root, "deferred", "203.0.113.9"},
		{"proxy auto-detect program", effectsOf(newFile("/etc/apt/apt.conf.d/07detect", "Acquire::http::Proxy-Auto-Detect \"/var/tmp/detect\";\n")), root, "deferred", "run /var/tmp/detect"},
		{"AllowInsecureRepositories in a scope", effectsOf(newFile("/etc/apt/apt.conf.d/08insecure", "Acquire {\n  AllowInsecureRepositories \"1\";\n};\n")), root, "deferred", "signatures"},
		{"AllowDowngradeToInsecureRepositories", effectsOf(modFile("/etc/apt/apt.conf", "+Acquire::AllowDowngradeToInsecureRepositories \"yes\";\n")), root, "deferred", "signatures"},
		{"Check-Valid-Until false", effectsOf(newFile("/etc/apt/apt.conf.d/09valid", "Acquire::Check-Valid-Until \"false\";\n")), root, "deferred", "outdated"},
		{"DPkg::Options force-overwrite", effectsOf(newFile("/etc/apt/apt.conf.d/10force", "DPkg::Options { \"--force-overwrite\"; };\n")), root, "deferred", "force-overwrite"},
		{"#include of a file in /var/tmp", effectsOf(newFile("/etc/apt/apt.conf.d/11inc", "#include \"/var/tmp/apt.conf\";\n")), root, "deferred", "/var/tmp/apt.conf"},
		{"AllowUnauthenticated false (SSG)", effectsOf(newFile("/etc/apt/apt.conf.d/00-auth", "APT::Get::AllowUnauthenticated \"false\";\n")), root, "", ""},
		{"a proxy on the site's host", effectsOf(newFile("/etc/apt/apt.conf.d/01proxy", "Acquire::http::Proxy \"http://proxy.example.com:3142\";\n")), root, "", ""},
		{"unattended upgrades and confold", effectsOf(newFile("/etc/apt/apt.conf.d/20auto-upgrades", "APT::Periodic::Update-Package-Lists \"1\";\nAPT::Periodic::Unattended-Upgrade \"1\";\nDPkg::Options { \"--force-confold\"; \"--force-confdef\"; };\n")), root, "", ""},
		{"Remove-Unused-Dependencies (SSG)", effectsOf(newFile("/etc/apt/apt.conf.d/50unattended-upgrades", "Unattended-Upgrade::Remove-Unused-Dependencies \"true\";\n")), root, "", ""},
		// preferences.d.
		{"sudo pinned below zero", effectsOf(newFile("/etc/apt/preferences.d/no-sudo", "Package: sudo\nPin: origin *\nPin-Priority: -10\n")), root, "deferred", "pin sudo to priority -10"},
		{"a glob pinning the SSH server", effectsOf(newFile("/etc/apt/preferences.d/ossh", "Package: openssh-*\nPin: release a=*\nPin-Priority: -1\n")), root, "deferred", "openssh-server"},
		{"a regex pinning libc", effectsOf(newFile("/etc/apt/preferences.d/c", "Package: /^libc6$/\nPin: release *\nPin-Priority: -5\n")), root, "deferred", "libc6"},
		{"telnet pinned away (hardening)", effectsOf(newFile("/etc/apt/preferences.d/no-telnet", "Package: telnet telnetd\nPin: release *\nPin-Priority: -1\n")), root, "", ""},
		{"backports at priority 100", effectsOf(newFile("/etc/apt/preferences.d/bpo", "Package: *\nPin: release a=bookworm-backports\nPin-Priority: 100\n")), root, "", ""},
		// sources.
		{"debian.sources deleted", effectsOf(nightshift.FileChange{Path: "/etc/apt/sources.list.d/debian.sources", Change: nightshift.ChangeDeleted,
			Before: nightshift.FileState{Kind: nightshift.FileRegular, Size: 300}}), root, "deferred", "delete apt's source list"},
		{"every deb line commented out", effectsOf(nightshift.FileChange{Path: "/etc/apt/sources.list", Change: nightshift.ChangeModified,
			Diff:   "--- a\n+++ b\n@@ -1,2 +1,2 @@\n-deb http://deb.debian.org/debian bookworm main\n-deb http://security.debian.org/debian-security bookworm-security main\n+#deb http://deb.debian.org/debian bookworm main\n+#deb http://security.debian.org/debian-security bookworm-security main\n",
			Before: nightshift.FileState{Kind: nightshift.FileRegular, Size: 100}, After: nightshift.FileState{Kind: nightshift.FileRegular, Size: 102}}), root, "deferred", "remove the sources"},
		{"one of two sources commented out", effectsOf(modFile("/etc/apt/sources.list", " deb http://deb.debian.org/debian bookworm main\n-deb http://ftp.example.org/debian bookworm main\n+#deb http://ftp.example.org/debian bookworm main\n")), root, "", ""},
		{"deb822 Enabled: no", effectsOf(modFile("/etc/apt/sources.list.d/debian.sources", " Types: deb\n URIs: http://deb.debian.org/debian\n+Enabled: no\n")), root, "deferred", "disable the sources"},
		{"a source with allow-insecure", effectsOf(newFile("/etc/apt/sources.list.d/mirror.list", "deb [allow-insecure=yes] http://mirror.example.net/debian bookworm main\n")), root, "deferred", "without checking their signatures"},
		{"a deb822 source Trusted: yes", effectsOf(newFile("/etc/apt/sources.list.d/m.sources", "Types: deb\nURIs: http://mirror.example.net/debian\nSuites: bookworm\nComponents: main\nTrusted: yes\n")), root, "deferred", "without checking their signatures"},
		{"a security source added", effectsOf(modFile("/etc/apt/sources.list", " deb http://deb.debian.org/debian bookworm main\n+deb http://security.debian.org/debian-security bookworm-security main\n")), root, "", ""},
		{"a signed third-party source", effectsOf(newFile("/etc/apt/sources.list.d/wazuh.list", "deb [signed-by=/usr/share/keyrings/wazuh.gpg] https://packages.example.com/apt/ stable main\n")), root, "", ""},
		// dpkg.cfg.d.
		{"force-remove-essential", effectsOf(newFile("/etc/dpkg/dpkg.cfg.d/ess", "force-remove-essential\n")), root, "deferred", "force-remove-essential"},
		{"--force-depends,overwrite", effectsOf(newFile("/etc/dpkg/dpkg.cfg.d/f", "--force-depends,overwrite\n")), root, "deferred", "force-depends"},
		{"path-exclude of /lib", effectsOf(newFile("/etc/dpkg/dpkg.cfg.d/ex", "path-exclude /lib/x86_64-linux-gnu/security/*\n")), root, "deferred", "leave out /lib/x86_64-linux-gnu/security"},
		{"status-logger", effectsOf(newFile("/etc/dpkg/dpkg.cfg.d/log", "status-logger=/var/tmp/l\n")), root, "deferred", "status-logger"},
		{"path-exclude of the docs (minimal images)", effectsOf(newFile("/etc/dpkg/dpkg.cfg.d/excludes", "path-exclude=/usr/share/doc/*\npath-include=/usr/share/doc/*/copyright\npath-exclude=/usr/share/man/*\n")), root, "", ""},
		{"force-confold", effectsOf(newFile("/etc/dpkg/dpkg.cfg.d/conf", "force-confold\nforce-confdef\n")), root, "", ""},
		// dpkg's database and maintainer scripts.
		{"openssh-server marked half-installed by hand", effectsOf(modFile("/var/lib/dpkg/status", " Package: openssh-server\n-Status: install ok installed\n+Status: install reinstreq half-installed\n")), root, "deferred", "by hand"},
		{"a Version line edited", effectsOf(modFile("/var/lib/dpkg/status", " Package: sudo\n-Version: 1.9.13p3-1+deb12u1\n+Version: 0.1\n")), root, "deferred", "by hand"},
		{"apt-mark hold (selection only)", effectsOf(modFile("/var/lib/dpkg/status", " Package: linux-image-amd64\n-Status: install ok installed\n+Status: hold ok installed\n")), root, "", ""},
		{"an install (list and status)", effectsOf(modFile("/var/lib/dpkg/status", "+Package: aide\n+Status: install ok installed\n"), newFile("/var/lib/dpkg/info/aide.list", "/usr/bin/aide\n"),
			newFile("/var/lib/dpkg/info/aide.postinst", "#!/bin/sh\nset -e\n")), root, "", ""},
		{"a prerm written by hand", effectsOf(newFile("/var/lib/dpkg/info/cron.prerm", "#!/bin/sh\nrm -f /root/.ssh/authorized_keys\n")), root, "deferred", "maintainer script /var/lib/dpkg/info/cron.prerm"},
		{"a postinst rewritten by hand", effectsOf(modFile("/var/lib/dpkg/info/libc-bin:amd64.postinst", "+chmod u+s /bin/dash\n")), root, "deferred", "libc-bin:amd64"},
	})
}

// TestJudgeEffectsHooks covers the other places the system runs code or
// reads settings from later, beside what hardening writes there.
func TestJudgeEffectsHooks(t *testing.T) {
	root, ops := EffectsPolicy{}, EffectsPolicy{Login: "ops"}
	runJudgeCases(t, []judgeCase{
		{"a completion script", effectsOf(newFile("/usr/share/bash-completion/completions/zz", "cp /bin/sh /var/tmp/.x\n")), root, "deferred", "every interactive bash sources it"},
		{"a completion script linked elsewhere", effectsOf(linkFile("/etc/bash_completion.d/zz", "", "/var/tmp/c")), root, "deferred", "link /etc/bash_completion.d/zz"},
		{"a dhclient enter hook", effectsOf(newFile("/etc/dhcp/dhclient-enter-hooks.d/zz", "make_resolv_conf() { :; }\n")), root, "deferred", "dhclient runs it"},
		{"an initramfs init-top script", effectsOf(newFile("/etc/initramfs-tools/scripts/init-top/zz", "#!/bin/sh\necho x > /dev/kmsg\n")), root, "deferred", "initramfs runs it at every boot"},
		{"an initramfs hook", effectsOf(newFile("/etc/initramfs-tools/hooks/zz", "#!/bin/sh\ncopy_exec /usr/bin/curl\n")), root, "deferred", "update-initramfs runs it"},
		{"a user environment generator", effectsOf(newFile("/usr/lib/systemd/user-environment-generators/90-zz", "#!/bin/sh\necho LD_PRELOAD=/var/tmp/x.so\n")), root, "deferred", "every user session"},
		{"a system generator", effectsOf(newFile("/etc/systemd/system-generators/zz", "#!/bin/sh\nmkdir -p \"$1\"\n")), root, "deferred", "every boot and daemon-reload"},
		{"a user unit", effectsOf(newFile("/etc/systemd/user/zz.service", "[Service]\nExecStart=/usr/bin/true\n")), root, "deferred", "every user's session"},
		{"a user unit of the command's own enabled", effectsOf(linkFile("/etc/systemd/user/default.target.wants/zz.service", "", "../zz.service")), root, "deferred", "link /etc/systemd/user/default.target.wants/zz.service"},
		{"a package's user unit enabled (deb-systemd-helper)", effectsOf(linkFile("/etc/systemd/user/sockets.target.wants/pipewire.socket", "", "/usr/lib/systemd/user/pipewire.socket")), root, "", ""},
		{"a comment-only completion file", effectsOf(newFile("/etc/bash_completion.d/README", "# nothing\n")), root, "", ""},
		{"a completion installed by dpkg", effectsOf(newFile("/usr/share/bash-completion/completions/aide", "complete -F _aide aide\n"), newFile("/var/lib/dpkg/info/aide.list", "/usr/share/bash-completion/completions/aide\n"),
			modFile("/var/lib/dpkg/status", "+Package: aide\n")), root, "", ""},
		{"sitecustomize in /usr/local", effectsOf(newFile("/usr/local/lib/python3.11/dist-packages/sitecustomize.py", "import os\n")), root, "deferred", "every Python program"},
		{"a .pth with an import", effectsOf(newFile("/usr/lib/python3/dist-packages/zz.pth", "import os; os.system('id')\n")), root, "deferred", "import line"},
		{"a .pth with a path", effectsOf(newFile("/usr/local/lib/python3.11/dist-packages/extra.pth", "/opt/lib/python\n")), root, "", ""},
		{"git core.pager", effectsOf(newFile("/etc/gitconfig", "[core]\n\tpager = sh -c 'id' #\n")), root, "deferred", "core.pager"},
		{"git alias running a shell", effectsOf(modFile("/root/.gitconfig", " [alias]\n+\tst = !chmod u+s /bin/bash\n")), root, "deferred", "alias.st"},
		{"git include.path in the login's config", effectsOf(newFile("/home/ops/.gitconfig", "[include]\n\tpath = /var/tmp/g\n")), ops, "deferred", "include.path"},
		{"git fsckObjects (hardening)", effectsOf(newFile("/etc/gitconfig", "[transfer]\n\tfsckObjects = true\n[core]\n\tfsmonitor = false\n")), root, "", ""},
		{"anacrontab job banned", effectsOf(modFile("/etc/anacrontab", " 1\t5\tcron.daily\trun-parts --report /etc/cron.daily\n+7 10 zz systemctl mask ssh\n")), root, "deferred", "anacron"},
		{"anacrontab job for AIDE", effectsOf(modFile("/etc/anacrontab", "+1 15 aide /usr/bin/aide --check\n")), root, "", ""},
		{"skel .profile killing the session", effectsOf(modFile("/etc/skel/.profile", "+systemctl stop ssh\n")), root, "deferred", "every account created later"},
		{"skel .bashrc umask (CIS)", effectsOf(modFile("/etc/skel/.bashrc", "+umask 027\n+TMOUT=900\n")), root, "", ""},
		{"initramfs BOOT=nfs", effectsOf(newFile("/etc/initramfs-tools/conf.d/boot", "BOOT=nfs\n")), root, "config", "BOOT=nfs"},
		{"initramfs ROOT=", effectsOf(modFile("/etc/initramfs-tools/initramfs.conf", "+ROOT=/dev/sdz9\n")), root, "config", "ROOT=/dev/sdz9"},
		{"initramfs conf running a command", effectsOf(newFile("/etc/initramfs-tools/conf.d/x", "MODULES=most; chmod 4755 /bin/sh\n")), root, "deferred", "sources as shell"},
		{"initramfs COMPRESS=zstd", effectsOf(newFile("/etc/initramfs-tools/conf.d/compress", "COMPRESS=zstd\n")), root, "", ""},
		{"interfaces post-up", effectsOf(modFile("/etc/network/interfaces", " iface eth0 inet dhcp\n+\tpost-up /usr/local/sbin/fw\n")), root, "deferred", "ifupdown run /usr/local/sbin/fw"},
		{"interfaces.d source-directory elsewhere", effectsOf(newFile("/etc/network/interfaces.d/zz", "source-directory /var/tmp/if\n")), root, "deferred", "/var/tmp/if"},
		{"interfaces: an address added", effectsOf(newFile("/etc/network/interfaces.d/eth1", "auto eth1\niface eth1 inet static\n\taddress 192.0.2.10/24\n")), root, "", ""},
		{"alternative editor at /usr/bin/true", effectsOf(linkFile("/etc/alternatives/editor", "/bin/nano", "/usr/bin/true")), root, "deferred", "editor at /usr/bin/true"},
		{"alternative pager at an unregistered program", effectsOf(linkFile("/etc/alternatives/pager", "/bin/more", "/usr/bin/tee")), root, "deferred", "not registered"},
		{"alternative awk at gawk", effectsOf(linkFile("/etc/alternatives/awk", "/usr/bin/mawk", "/usr/bin/gawk")), root, "", ""},
		{"update-alternatives --set pager /usr/bin/less", effectsOf(linkFile("/etc/alternatives/pager", "/bin/more", "/usr/bin/less"),
			modFile("/var/lib/dpkg/alternatives/pager", "-auto\n+manual\n /usr/bin/pager\n pager.1.gz\n /usr/share/man/man1/pager.1.gz\n \n /bin/more\n 50\n /usr/share/man/man1/more.1.gz\n /usr/bin/less\n 77\n /usr/share/man/man1/less.1.gz\n")), root, "", ""},
		{"CA bundle truncated", effectsOf(nightshift.FileChange{Path: "/etc/ssl/certs/ca-certificates.crt", Change: nightshift.ChangeModified,
			Before: nightshift.FileState{Kind: nightshift.FileRegular, Size: 219342}, After: nightshift.FileState{Kind: nightshift.FileRegular, Size: 1200}}), root, "config", "CA bundle"},
		{"a CA added to the bundle", effectsOf(nightshift.FileChange{Path: "/etc/ssl/certs/ca-certificates.crt", Change: nightshift.ChangeModified,
			Before: nightshift.FileState{Kind: nightshift.FileRegular, Size: 219342}, After: nightshift.FileState{Kind: nightshift.FileRegular, Size: 221000}}), root, "", ""},
		{"pam_env.conf LD_PRELOAD", effectsOf(modFile("/etc/security/pam_env.conf", "+LD_PRELOAD DEFAULT=/var/tmp/x.so\n")), root, "deferred", "LD_PRELOAD for every login session"},
		{"pam_env.conf PATH", effectsOf(modFile("/etc/security/pam_env.conf", "+PATH OVERRIDE=/var/tmp:/usr/bin\n")), root, "deferred", "set PATH"},
		{"pam_env.conf EDITOR", effectsOf(modFile("/etc/security/pam_env.conf", "+EDITOR DEFAULT=vim\n")), root, "", ""},
		{"the login's .pam_environment", effectsOf(newFile("/home/ops/.pam_environment", "PYTHONSTARTUP=/var/tmp/s.py\n")), ops, "deferred", "PYTHONSTARTUP"},
		{"a PAM file made a FIFO", effectsOf(nightshift.FileChange{Path: "/etc/pam.d/login", Change: nightshift.ChangeModified,
			Before: nightshift.FileState{Kind: nightshift.FileRegular, Size: 400}, After: nightshift.FileState{Kind: nightshift.FileOther}}), root, "lockout", "/etc/pam.d/other"},
		{"a PAM file made a directory", effectsOf(nightshift.FileChange{Path: "/etc/pam.d/su", Change: nightshift.ChangeModified,
			Before: nightshift.FileState{Kind: nightshift.FileRegular, Size: 400}, After: nightshift.FileState{Kind: nightshift.FileDir, Mode: 0o755}}), root, "lockout", "/etc/pam.d/su"},
		{"/lib repointed", effectsOf(linkFile("/lib", "usr/lib", "/var/tmp/lib")), root, "delete-system", "every program's loader"},
		{"/usr/lib/x86_64-linux-gnu made a link", effectsOf(nightshift.FileChange{Path: "/usr/lib/x86_64-linux-gnu", Change: nightshift.ChangeModified,
			Before: nightshift.FileState{Kind: nightshift.FileDir, Mode: 0o755}, After: nightshift.FileState{Kind: nightshift.FileSymlink, Target: "/opt/l"}}), root, "delete-system", "/usr/lib/x86_64-linux-gnu"},
		{"a library directory's mode tightened", effectsOf(metaFile("/usr/lib", nightshift.FileDir, 0o775, 0, 0, 0o755, 0, 0)), root, "", ""},
	})
}
