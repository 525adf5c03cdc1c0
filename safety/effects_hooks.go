package safety

import (
	"path"
	"regexp"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// Places the system reads code or settings from later, outside the
// sandbox, that effects_deferred.go does not cover. Where a hardening rule
// never writes (shell completions, DHCP client hooks, the initramfs's
// scripts, ifupdown's interface commands, generators of every kind, user
// units, Python's start-up hooks, git's program
// settings), any content is refused: the sandbox cannot see what it will
// run. Where it may (anacrontab, /etc/skel's dotfiles), the commands go
// through the static ban check as cron's do. Settings are judged by
// meaning: the initramfs's BOOT and ROOT, a Debian alternative pointed at
// a program not registered for it, the CA bundle emptied, PATH or LD_*
// for every session in pam_env.conf, a PAM file or a system library
// directory replaced by something else.

// neverWritten are where a hardening rule writes nothing: files there run
// as root later (at an interactive shell, a DHCP lease, the next boot, a
// session's start).
var neverWritten = []struct{ dir, what string }{
	{"/etc/bash_completion.d", "every interactive bash sources it"},
	{"/usr/share/bash-completion/completions", "every interactive bash sources it"},
	{"/usr/local/share/bash-completion/completions", "every interactive bash sources it"},
	{"/etc/dhcp/dhclient-enter-hooks.d", "dhclient runs it at every lease"},
	{"/etc/dhcp/dhclient-exit-hooks.d", "dhclient runs it at every lease"},
	{"/etc/dhcp/dhclient-enter-hooks", "dhclient runs it at every lease"},
	{"/etc/dhcp/dhclient-exit-hooks", "dhclient runs it at every lease"},
	{"/etc/initramfs-tools/scripts", "the initramfs runs it at every boot"},
	{"/etc/initramfs-tools/hooks", "update-initramfs runs it at the next kernel or package update"},
	{"/usr/share/initramfs-tools/scripts", "the initramfs runs it at every boot"},
	{"/usr/share/initramfs-tools/hooks", "update-initramfs runs it at the next kernel or package update"},
	{"/etc/systemd/system-generators", "systemd runs it at every boot and daemon-reload"},
	{"/usr/local/lib/systemd/system-generators", "systemd runs it at every boot and daemon-reload"},
	{"/etc/systemd/system-environment-generators", "systemd runs it at every boot and daemon-reload"},
	{"/usr/lib/systemd/system-environment-generators", "systemd runs it at every boot and daemon-reload"},
	{"/lib/systemd/system-environment-generators", "systemd runs it at every boot and daemon-reload"},
	{"/etc/systemd/user-environment-generators", "systemd runs it for every user session"},
	{"/usr/lib/systemd/user-environment-generators", "systemd runs it for every user session"},
	{"/etc/systemd/user-generators", "systemd runs it for every user session"},
	{"/usr/lib/systemd/user-generators", "systemd runs it for every user session"},
	{"/etc/systemd/user", "systemd runs it in every user's session, root's too"},
	{"/usr/lib/systemd/user", "systemd runs it in every user's session, root's too"},
	{"/etc/X11/Xsession.d", "every graphical session sources it"},
	{"/etc/ppp/ip-up.d", "pppd runs it at every connection"},
	{"/etc/resolvconf/update.d", "resolvconf runs it at every DNS change"},
}

// gitProgramKeys are git settings whose value git runs (or reads code
// from).
var gitProgramKeys = strings.Fields("fsmonitor pager editor sshcommand hookspath askpass gitproxy helper external textconv command driver clean smudge process program packobjectshook cmd uploadpack receivepack path browser")

var (
	gitSection   = regexp.MustCompile(`^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]`)
	shellAssign  = regexp.MustCompile(`^(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*=(?:"[^"$` + "`" + `\\]*"|'[^']*'|[^\s;&|$` + "`" + `()<>'"]*)\s*(?:#.*)?$`)
	ifupdownCmds = map[string]bool{"pre-up": true, "up": true, "post-up": true, "down": true, "pre-down": true, "post-down": true}
)

// contentLines are the added lines that are neither blank nor comments.
func contentLines(diff string) []string {
	var out []string
	for _, l := range addedLines(diff) {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			out = append(out, t)
		}
	}
	return out
}

// hooksHarm judges one created or changed file among the places above.
func hooksHarm(e nightshift.Effects, c nightshift.FileChange, owned map[string]bool, pol EffectsPolicy) []Refusal {
	var out []Refusal
	bad := func(entry, reason string) { out = append(out, Refusal{Entry: entry, Reason: reason}) }
	if r := libDirRepointed(c); r != "" {
		bad("delete-system", r)
	}
	if under(c.Path, "/etc/pam.d") && c.Path != "/etc/pam.d" && c.Change != nightshift.ChangeDeleted && c.After.Kind != nightshift.FileRegular && c.After.Kind != nightshift.FileSymlink && c.After.Kind != nightshift.FileNone {
		bad("lockout", "would replace "+c.Path+" with a "+c.After.Kind.String()+": Linux-PAM could not read it and would run /etc/pam.d/other instead of its stack")
	}
	if c.Path == "/etc/ssl/certs/ca-certificates.crt" && !owned[c.Path] {
		switch {
		case c.Change == nightshift.ChangeDeleted:
			bad("config", "would delete the CA bundle "+c.Path+": TLS connections (apt over https, the host's agents) would fail")
		case c.Change == nightshift.ChangeModified && (c.After.Kind != nightshift.FileRegular || c.After.Size < c.Before.Size/2):
			bad("config", "would empty or replace the CA bundle "+c.Path+": TLS connections (apt over https, the host's agents) would fail")
		}
	}
	if c.Change != nightshift.ChangeCreated && c.Change != nightshift.ChangeModified || owned[c.Path] || c.After.Kind == nightshift.FileDir {
		return out
	}
	if under(c.Path, "/etc/alternatives") && c.Path != "/etc/alternatives" {
		if r := alternativeHarm(e, c); r != "" {
			bad("deferred", r)
		}
		return out
	}
	for _, w := range neverWritten {
		if !under(c.Path, w.dir) || c.Path == w.dir && c.After.Kind == nightshift.FileDir {
			continue
		}
		t := c.After.Target
		if !path.IsAbs(t) {
			t = path.Join(path.Dir(c.Path), t)
		}
		switch {
		case c.After.Kind == nightshift.FileSymlink && w.dir == "/etc/systemd/user" && (under(t, "/usr/lib/systemd/user") || under(t, "/lib/systemd/user") || t == "/dev/null"):
			// deb-systemd-helper enabling (or masking) a package's user
			// unit: the unit is the package's.
		case c.After.Kind == nightshift.FileSymlink:
			bad("deferred", "would link "+c.Path+" to "+c.After.Target+" ("+w.what+", outside the sandbox): a hardening rule writes nothing there")
		case len(contentLines(c.Diff)) > 0 || c.Diff == "" && c.After.Size > 0:
			what := ""
			if l := contentLines(c.Diff); len(l) > 0 {
				what = ": " + textcutHead(strings.Join(l, "; "), 80)
			}
			bad("deferred", "would install "+c.Path+" ("+w.what+", as root, outside the sandbox)"+what+"; a hardening rule writes nothing there")
		}
		return out
	}
	if c.After.Kind != nightshift.FileRegular {
		return out
	}
	base := path.Base(c.Path)
	switch {
	case base == "sitecustomize.py" || base == "usercustomize.py":
		bad("deferred", "would install "+c.Path+", which every Python program runs at its start (as root too), outside the sandbox")
	case strings.HasSuffix(base, ".pth") && (strings.Contains(c.Path, "/dist-packages") || strings.Contains(c.Path, "/site-packages")):
		for _, l := range contentLines(c.Diff) {
			if strings.HasPrefix(l, "import ") || strings.HasPrefix(l, "import\t") {
				bad("deferred", "would install "+c.Path+", whose import line every Python program runs at its start: "+textcutHead(l, 80))
				break
			}
		}
	case c.Path == "/etc/gitconfig" || c.Path == "/root/.gitconfig" || c.Path == path.Join(pol.LoginHome, ".gitconfig") || c.Path == "/root/.config/git/config" ||
		c.Path == path.Join(pol.LoginHome, ".config/git/config") || c.Path == "/etc/skel/.gitconfig":
		for _, r := range gitHarm(c) {
			bad("deferred", r)
		}
	case c.Path == "/etc/anacrontab":
		for _, l := range contentLines(c.Diff) {
			if cronEnv(l) {
				continue
			}
			f := strings.Fields(l)
			cmd := l
			if len(f) > 3 {
				cmd = strings.Join(f[3:], " ")
			}
			out = append(out, banLater(c.Path, "anacron runs it as root", cmd)...)
		}
	case under(c.Path, "/etc/skel") && strings.HasPrefix(base, "."):
		if cmd := strings.Join(addedLines(c.Diff), "\n"); strings.TrimSpace(cmd) != "" && base != ".gitconfig" {
			out = append(out, banLater(c.Path, "every account created later runs it at its login", cmd)...)
		}
	case c.Path == "/etc/initramfs-tools/initramfs.conf" || under(c.Path, "/etc/initramfs-tools/conf.d") || c.Path == "/etc/initramfs-tools/update-initramfs.conf":
		for _, l := range contentLines(c.Diff) {
			k, v, _ := strings.Cut(l, "=")
			v = strings.Trim(v, `"'`)
			switch {
			case !shellAssign.MatchString(l):
				bad("deferred", "would add "+textcutHead(l, 80)+" to "+c.Path+", which mkinitramfs sources as shell: it would run as root at the next initramfs update, outside the sandbox")
			case k == "BOOT" && v != "local":
				bad("config", "would make the initramfs boot with BOOT="+v+" ("+c.Path+"): the next boot would not mount the local root file system")
			case k == "ROOT" || k == "RESUME" && v != "none" && v != "auto" && v != "":
				bad("config", "would make the initramfs use "+l+" ("+c.Path+") at the next boot instead of the kernel command line's")
			}
		}
	case c.Path == "/etc/network/interfaces" || under(c.Path, "/etc/network/interfaces.d"):
		for _, l := range contentLines(c.Diff) {
			f := strings.Fields(l)
			switch {
			case ifupdownCmds[f[0]]:
				bad("deferred", "would make ifupdown run "+textcutHead(strings.Join(f[1:], " "), 80)+" as root whenever an interface comes up or goes down ("+f[0]+" in "+c.Path+"), outside the sandbox")
			case (f[0] == "source" || f[0] == "source-directory") && len(f) > 1 && !under(path.Clean(f[1]), "/etc/network"):
				bad("deferred", "would make ifupdown read "+f[1]+" ("+c.Path+"), whose contents cannot be judged")
			}
		}
	case c.Path == "/etc/security/pam_env.conf" || c.Path == "/etc/default/locale" || c.Path == path.Join(pol.LoginHome, ".pam_environment") || c.Path == "/root/.pam_environment":
		for _, l := range contentLines(c.Diff) {
			v := strings.Fields(strings.TrimPrefix(l, "export "))[0]
			v, _, _ = strings.Cut(v, "=")
			if unsafeEnvVar(v) && !containsStr([]string{"TMPDIR", "EDITOR", "VISUAL", "PAGER"}, v) {
				bad("deferred", "would set "+v+" for every login session ("+textcutHead(l, 80)+" in "+c.Path+"): programs run by root's sessions, the worker's commands among them, would load or run what it names")
			}
		}
	}
	return out
}

// banLater judges a command a file will run later through the static ban
// check (which refuses what it cannot analyse).
func banLater(p, how, cmd string) []Refusal {
	var bl *BanList
	if ban, banned := bl.Match(cmd); banned {
		what := ban.Construct
		if what == "" {
			what = cmd
		}
		return []Refusal{{Entry: "deferred", Reason: "would install " + p + " (" + how + ", outside the sandbox): " + firstLineOf(what) + ": " + ban.Reason}}
	}
	return nil
}

// gitHarm refuses git settings whose value git runs, in a git
// configuration every git command of root reads.
func gitHarm(c nightshift.FileChange) []string {
	var out []string
	section := ""
	for _, l := range strings.Split(c.Diff, "\n") {
		var s string
		added := false
		switch {
		case strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "@@") || strings.HasPrefix(l, "-"):
			continue
		case strings.HasPrefix(l, "+"):
			s, added = l[1:], true
		case strings.HasPrefix(l, " "):
			s = l[1:]
		default:
			continue
		}
		if m := gitSection.FindStringSubmatch(s); m != nil {
			section = strings.ToLower(m[1])
			s = s[len(m[0]):]
		}
		t := strings.TrimSpace(s)
		if !added || t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, ";") {
			continue
		}
		k, v, _ := strings.Cut(t, "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		key := section + "." + k
		switch {
		case section == "alias" && strings.HasPrefix(strings.Trim(v, `"`), "!"),
			strings.HasPrefix(section, "include"),
			section == "pager",
			k == "fsmonitor" && !truthy(v) && strings.ToLower(v) != "false",
			k != "fsmonitor" && containsStr(gitProgramKeys, k),
			key == "safe.directory" && strings.Trim(v, `"`) == "*",
			key == "protocol.ext.allow" || key == "protocol.allow" && v == "always":
			out = append(out, "would set git's "+key+" = "+textcutHead(v, 60)+" in "+c.Path+": git would run or load it for root's git commands, outside the sandbox")
		}
	}
	return out
}

// alternativeHarm judges a Debian alternative's link: it must point at a
// program registered for it (named like it, or listed in the alternatives
// database the same command changed), never at false, true or nologin.
func alternativeHarm(e nightshift.Effects, c nightshift.FileChange) string {
	name := path.Base(c.Path)
	if c.After.Kind != nightshift.FileSymlink {
		return "would replace the alternative " + c.Path + " with a " + c.After.Kind.String() + " (alternatives are symlinks update-alternatives manages)"
	}
	t := c.After.Target
	tb := path.Base(t)
	switch tb {
	case "false", "true", "nologin", "yes", "sleep", "sync":
		return "would point the alternative " + name + " at " + t + ": every program, script and cron job that runs " + name + " would run " + tb + " instead"
	}
	for _, o := range e.Changes {
		if o.Path == "/var/lib/dpkg/alternatives/"+name && (strings.Contains(o.Diff, "\n+"+t+"\n") || strings.Contains(o.Diff, "\n "+t+"\n")) {
			return ""
		}
	}
	stem := strings.SplitN(name, ".", 2)[0]
	if strings.Contains(tb, stem) || strings.Contains(stem, strings.SplitN(tb, ".", 2)[0]) {
		return ""
	}
	return "would point the alternative " + name + " at " + t + ", which is not registered for it: every program that runs " + name + " would run " + tb + " instead (use update-alternatives --set with a registered choice)"
}

// libDirs are the directories (or their merged-/usr links) every program's
// loader and libraries come from.
var libDirs = strings.Fields("/bin /sbin /lib /lib32 /lib64 /libx32 /usr /usr/bin /usr/sbin /usr/lib /usr/lib32 /usr/lib64 /usr/libexec /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu /etc /var /boot")

// libDirRepointed refuses one of libDirs replaced by a symlink, or its
// link pointed elsewhere.
func libDirRepointed(c nightshift.FileChange) string {
	if c.Change != nightshift.ChangeModified || !containsStr(libDirs, c.Path) {
		return ""
	}
	if c.Before.Kind == c.After.Kind && c.Before.Target == c.After.Target {
		return ""
	}
	from := c.Before.Kind.String()
	if c.Before.Kind == nightshift.FileSymlink {
		from = "link to " + c.Before.Target
	}
	to := c.After.Kind.String()
	if c.After.Kind == nightshift.FileSymlink {
		to = "link to " + c.After.Target
	}
	return "would replace " + c.Path + " (" + from + ") with a " + to + ": every program's loader, libraries or configuration come from it"
}
