package safety

import (
	"path"
	"regexp"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// The sandbox sees what a command does while it runs. A file it leaves
// where the system runs code later — a cron entry, a systemd unit, an init
// script, a package manager's hook, a login script — runs outside any
// sandbox: at the next boot, login, apt run, or as soon as a recorded
// action (systemctl start, service, modprobe) is run for real after the
// commit. Such files are judged by what they will run: the commands in
// their added lines go through the static ban check (BanList.Match, which
// refuses what it cannot analyse), and a few files are refused by kind
// (a library preloaded into every program, a search path for the loader).

// deferredKind is how a file's contents are run later.
type deferredKind uint8

const (
	deferNone      deferredKind = iota
	deferScript                 // the added lines are shell
	deferCron                   // system crontab lines: 5 time fields, a user, a command
	deferCronUser               // a user's crontab: 5 time fields, a command
	deferUnit                   // systemd unit: Exec*= values
	deferApt                    // apt configuration: the quoted commands of *-Invoke and Pre-Install-Pkgs
	deferDpkg                   // dpkg configuration: pre-invoke= / post-invoke=
	deferUdev                   // udev rules: RUN and PROGRAM values
	deferModprobe               // install and remove commands
	deferLogrotate              // scripts between *rotate / *action and endscript
	deferPreload                // /etc/ld.so.preload
	deferLdPath                 // /etc/ld.so.conf(.d): the loader's search path
	deferEnv                    // /etc/environment, read by PAM for every session
)

var scriptDirs = strings.Fields(`/etc/default /etc/cron.hourly /etc/cron.daily /etc/cron.weekly /etc/cron.monthly /etc/cron.yearly
	/etc/init.d /etc/rc.d /etc/profile.d /etc/update-motd.d /etc/systemd/system-generators /usr/lib/systemd/system-generators
	/lib/systemd/system-generators /etc/systemd/system-shutdown /usr/lib/systemd/system-shutdown /lib/systemd/system-shutdown
	/etc/network/if-up.d /etc/network/if-down.d /etc/network/if-pre-up.d /etc/network/if-post-down.d
	/etc/NetworkManager/dispatcher.d /etc/kernel/postinst.d /etc/kernel/preinst.d /etc/kernel/postrm.d /etc/kernel/prerm.d`)

var hookScripts = strings.Fields(`/etc/rc.local /etc/rc.d/rc.local /etc/profile /etc/bash.bashrc /etc/bash.bash_logout
	/etc/ssh/sshrc /etc/zsh/zshenv /etc/zsh/zprofile /etc/zsh/zshrc /etc/csh.login /etc/environment.d`)

var loginDotfiles = strings.Fields(".bashrc .profile .bash_profile .bash_login .bash_logout .zshenv .zprofile .zshrc .ssh/rc")

func deferredKindOf(p string, pol EffectsPolicy) deferredKind {
	dir, base := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	switch {
	case p == "/etc/ld.so.preload":
		return deferPreload
	case p == "/etc/ld.so.conf" || dir == "/etc/ld.so.conf.d":
		return deferLdPath
	case p == "/etc/environment":
		return deferEnv
	case p == "/etc/crontab" || dir == "/etc/cron.d":
		return deferCron
	case under(p, "/var/spool/cron"):
		return deferCronUser
	case p == "/etc/apt/apt.conf" || dir == "/etc/apt/apt.conf.d":
		return deferApt
	case p == "/etc/dpkg/dpkg.cfg" || dir == "/etc/dpkg/dpkg.cfg.d":
		return deferDpkg
	case strings.HasSuffix(base, ".rules") && (dir == "/etc/udev/rules.d" || dir == "/lib/udev/rules.d" || dir == "/usr/lib/udev/rules.d" || dir == "/run/udev/rules.d"):
		return deferUdev
	case dir == "/etc/modprobe.d" || dir == "/lib/modprobe.d" || dir == "/usr/lib/modprobe.d" || dir == "/run/modprobe.d" || p == "/etc/modprobe.conf":
		return deferModprobe
	case p == "/etc/logrotate.conf" || dir == "/etc/logrotate.d":
		return deferLogrotate
	case isUnitPath(p):
		return deferUnit
	}
	if _, ok := underAny(p, scriptDirs); ok {
		return deferScript
	}
	for _, f := range hookScripts {
		if p == f {
			return deferScript
		}
	}
	for _, home := range []string{pol.LoginHome, "/root"} {
		for _, f := range loginDotfiles {
			if p == path.Join(home, f) {
				return deferScript
			}
		}
	}
	return deferNone
}

// unitDirs are where systemd reads units and drop-ins.
var unitDirs = strings.Fields("/etc/systemd/system /run/systemd/system /lib/systemd/system /usr/lib/systemd/system /etc/systemd/user /usr/lib/systemd/user /lib/systemd/user /usr/local/lib/systemd/system")

func isUnitPath(p string) bool {
	if _, ok := underAny(p, unitDirs); !ok {
		return false
	}
	switch path.Ext(p) {
	case ".service", ".socket", ".timer", ".path", ".mount", ".automount", ".swap", ".target":
		return true
	case ".conf":
		return strings.HasSuffix(path.Dir(p), ".d")
	}
	return false
}

// addedLines are the lines a change adds (a created file's contents).
func addedLines(diff string) []string {
	var out []string
	for _, l := range strings.Split(diff, "\n") {
		if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
			out = append(out, l[1:])
		}
	}
	return out
}

var (
	aptInvoke  = regexp.MustCompile(`(?i)(invoke|pre-install-pkgs)`)
	aptQuoted  = regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`)
	aptAssign  = regexp.MustCompile(`(?i)(?:invoke|pre-install-pkgs)[^=]*::=\s*(.*)$`)
	udevRun    = regexp.MustCompile(`(?:RUN|PROGRAM|IMPORT\{program\})\s*\+?=+\s*"((?:[^"\\]|\\.)*)"`)
	unitExec   = regexp.MustCompile(`^\s*Exec[A-Za-z]*\s*=\s*(.*)$`)
	rotateOpen = regexp.MustCompile(`^\s*(prerotate|postrotate|firstaction|lastaction|preremove)\s*$`)
)

// deferredCommands extracts from a file's added lines the commands the
// system will run later, and says what kind of hook they are in.
func deferredCommands(kind deferredKind, lines []string) (cmds []string) {
	switch kind {
	case deferScript:
		if s := strings.TrimSpace(strings.Join(lines, "\n")); s != "" {
			cmds = append(cmds, strings.Join(lines, "\n"))
		}
	case deferCron, deferCronUser:
		skip := 5
		if kind == deferCron {
			skip = 6
		}
		for _, l := range lines {
			l = strings.TrimSpace(l)
			if l == "" || strings.HasPrefix(l, "#") || cronEnv(l) {
				continue
			}
			f := strings.Fields(l)
			n := skip
			if strings.HasPrefix(f[0], "@") {
				n = skip - 4
			}
			if len(f) <= n {
				cmds = append(cmds, l) // malformed: judged whole
				continue
			}
			cmds = append(cmds, strings.Join(f[n:], " "))
		}
	case deferUnit:
		for _, l := range lines {
			if m := unitExec.FindStringSubmatch(l); m != nil {
				cmds = append(cmds, strings.TrimLeft(strings.TrimSpace(m[1]), "@-:+!|"))
			}
		}
	case deferApt:
		for _, l := range lines {
			if !aptInvoke.MatchString(l) {
				continue
			}
			if m := aptAssign.FindStringSubmatch(l); m != nil {
				cmds = append(cmds, strings.Trim(strings.TrimSpace(m[1]), `";`))
				continue
			}
			for _, m := range aptQuoted.FindAllStringSubmatch(l, -1) {
				cmds = append(cmds, strings.ReplaceAll(m[1], `\"`, `"`))
			}
		}
	case deferDpkg:
		for _, l := range lines {
			k, v, ok := strings.Cut(strings.TrimSpace(l), "=")
			if !ok {
				k, v, _ = strings.Cut(strings.TrimSpace(l), " ")
			}
			if strings.HasSuffix(strings.TrimSpace(k), "invoke") {
				cmds = append(cmds, strings.TrimSpace(v))
			}
		}
	case deferUdev:
		for _, l := range lines {
			for _, m := range udevRun.FindAllStringSubmatch(l, -1) {
				cmds = append(cmds, m[1])
			}
		}
	case deferModprobe:
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) >= 3 && (f[0] == "install" || f[0] == "remove") {
				cmds = append(cmds, strings.Join(f[2:], " "))
			}
		}
	case deferLogrotate:
		var cur []string
		in := false
		for _, l := range lines {
			switch {
			case rotateOpen.MatchString(l):
				in, cur = true, nil
			case in && strings.TrimSpace(l) == "endscript":
				in = false
				cmds = append(cmds, strings.Join(cur, "\n"))
			case in:
				cur = append(cur, l)
			}
		}
		if in {
			cmds = append(cmds, strings.Join(cur, "\n"))
		}
	case deferNone, deferPreload, deferLdPath, deferEnv:
	default:
		// Every kind is listed above.
	}
	return cmds
}

func cronEnv(l string) bool {
	k, _, ok := strings.Cut(l, "=")
	return ok && !strings.ContainsAny(k, " \t*")
}

// standardLibDirs are the loader's own search directories.
var standardLibDirs = strings.Fields("/lib /lib64 /usr/lib /usr/lib64 /usr/local/lib /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /usr/local/lib/x86_64-linux-gnu /lib/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu /lib/i386-linux-gnu /usr/lib/i386-linux-gnu /usr/lib/x86_64-linux-gnu/libfakeroot")

// deferredHarm judges a created or changed file the system will run (or
// load into every program) later, outside the sandbox. Files the package
// manager's own lists say it installed are left to the package.
func deferredHarm(c nightshift.FileChange, owned map[string]bool, pol EffectsPolicy) []Refusal {
	if c.Change != nightshift.ChangeCreated && c.Change != nightshift.ChangeModified {
		return nil
	}
	if owned[c.Path] || c.After.Kind == nightshift.FileDir {
		return nil
	}
	kind := deferredKindOf(c.Path, pol)
	if kind == deferNone {
		return nil
	}
	var out []Refusal
	bad := func(reason string) { out = append(out, Refusal{Entry: "deferred", Reason: reason}) }
	if c.After.Kind == nightshift.FileSymlink {
		if kind == deferUnit {
			// systemctl enable links units to units; a link to a file
			// outside the unit directories brings in an unjudged unit.
			t := c.After.Target
			if _, ok := underAny(path.Join(path.Dir(c.Path), t), unitDirs); ok || t == "/dev/null" || (!path.IsAbs(t) && !strings.Contains(t, "/")) {
				return nil
			}
			if _, ok := underAny(t, unitDirs); ok {
				return nil
			}
			bad("would link the unit " + c.Path + " to " + t + ", outside systemd's unit directories, whose contents cannot be judged")
			return out
		}
		if kind != deferLdPath && kind != deferEnv {
			bad("would make " + c.Path + ", which the system runs later outside the sandbox, a symlink to " + c.After.Target + ", whose contents cannot be judged")
		}
		return out
	}
	if c.After.Kind != nightshift.FileRegular {
		return out
	}
	if c.Diff == "" && c.After.Size > 0 {
		bad("would write " + c.Path + ", which the system runs later outside the sandbox; its diff could not be captured to judge")
		return out
	}
	lines := addedLines(c.Diff)
	switch kind {
	case deferPreload:
		for _, l := range lines {
			if s := strings.TrimSpace(l); s != "" && !strings.HasPrefix(s, "#") {
				bad("would preload " + s + " into every program (/etc/ld.so.preload)")
			}
		}
		return out
	case deferLdPath:
		for _, l := range lines {
			s := strings.TrimSpace(l)
			if s == "" || strings.HasPrefix(s, "#") || strings.HasPrefix(s, "include ") {
				continue
			}
			std := false
			for _, d := range standardLibDirs {
				std = std || path.Clean(s) == d
			}
			if !std {
				bad("would add " + s + " to the dynamic loader's search path (" + c.Path + "): its libraries would replace the system's")
			}
		}
		return out
	case deferEnv:
		for _, l := range lines {
			k, _, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "export ")), "=")
			if ok && (strings.HasPrefix(k, "LD_") || k == "BASH_ENV" || k == "ENV" || k == "PATH" || k == "SHELLOPTS" || k == "PS4" || k == "PROMPT_COMMAND") {
				bad("would set " + k + " for every login session (/etc/environment)")
			}
		}
		return out
	default:
		// The other kinds hold commands, judged below.
	}
	if kind == deferScript && sessionScript(c.Path, pol) {
		for _, l := range lines {
			for _, w := range strings.FieldsFunc(l, func(r rune) bool { return strings.ContainsRune(" \t;&|(){}`$", r) }) {
				switch w {
				case "exit", "logout", "kill", "pkill", "killall", "exec", "suspend":
					out = append(out, Refusal{Entry: "lockout", Reason: "would add " + strings.TrimSpace(l) + " to " + c.Path + ", which every login session (the worker's SSH commands too) runs: " + w + " ends or replaces the session"})
				}
			}
		}
	}
	if kind == deferUnit {
		for _, a := range accessUnits {
			if strings.Contains(a, ".") && (path.Base(c.Path) == a || path.Base(path.Dir(c.Path)) == a+".d") {
				for _, l := range lines {
					if unitExec.MatchString(l) {
						out = append(out, Refusal{Entry: "lockout", Reason: "would change what starts " + a + " (" + strings.TrimSpace(l) + " in " + c.Path + ")"})
					}
				}
			}
		}
	}
	var bl *BanList
	for _, cmd := range deferredCommands(kind, lines) {
		if ban, banned := bl.Match(cmd); banned {
			what := ban.Construct
			if what == "" {
				what = cmd
			}
			bad("would install " + c.Path + ", which runs later outside the sandbox: " + firstLineOf(what) + ": " + ban.Reason)
		}
	}
	return out
}

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// stopTargets are the units whose start stops, suspends or isolates the
// host (systemd's own names, with or without the systemd- prefix).
var stopTargets = strings.Fields("reboot halt poweroff kexec rescue emergency shutdown exit ctrl-alt-del soft-reboot sleep suspend hibernate hybrid-sleep suspend-then-hibernate final umount")

// stopUnit says whether starting unit u stops the host or leaves it
// without its services.
func stopUnit(u string) bool {
	b := strings.TrimPrefix(path.Base(u), "systemd-")
	b = strings.TrimSuffix(strings.TrimSuffix(b, ".target"), ".service")
	for _, s := range stopTargets {
		if ok, _ := path.Match(b, s); ok || b == s {
			return true
		}
	}
	return false
}

// bootHarm judges changes of systemd's unit links that take effect at the
// next boot or daemon-reload: the default target pointed at a target that
// stops the host, an access unit (ssh, the network) masked by a link to
// /dev/null, or its unit file or enablement link removed.
func bootHarm(c nightshift.FileChange) []Refusal {
	if _, ok := underAny(c.Path, unitDirs); !ok {
		return nil
	}
	var out []Refusal
	bad := func(entry, reason string) { out = append(out, Refusal{Entry: entry, Reason: reason}) }
	base := path.Base(c.Path)
	access := false
	for _, a := range accessUnits {
		access = access || (strings.Contains(a, ".") && base == a)
	}
	switch {
	case base == "default.target" && c.Change != nightshift.ChangeDeleted && c.After.Kind == nightshift.FileSymlink && stopUnit(c.After.Target):
		bad("action", "would make the host boot into "+path.Base(c.After.Target)+" ("+c.Path+")")
	case access && c.Change != nightshift.ChangeDeleted && c.After.Kind == nightshift.FileSymlink && (c.After.Target == "/dev/null" || path.Base(c.After.Target) == "null"):
		bad("lockout", "would mask "+base+" ("+c.Path+" -> /dev/null): the worker's access would not start again")
	case access && c.Change == nightshift.ChangeDeleted:
		bad("lockout", "would delete "+c.Path+": "+base+" would no longer start at boot")
	}
	return out
}

// loginProgramTrees hold the programs and libraries every login runs (the
// static check's programTrees also lists /usr/local, not /boot).
var loginProgramTrees = strings.Fields("/bin /sbin /lib /lib32 /lib64 /libx32 /usr/bin /usr/sbin /usr/lib /usr/lib32 /usr/lib64 /usr/libexec /boot")

// programHarm judges a change of the contents or kind of an existing file
// among the system's programs and libraries: only the package manager
// replaces those (its lists or checksums, changed by the same command,
// name the path).
func programHarm(c nightshift.FileChange, owned map[string]bool) []Refusal {
	if c.Change != nightshift.ChangeModified || owned[c.Path] {
		return nil
	}
	if _, ok := underAny(c.Path, loginProgramTrees); !ok {
		return nil
	}
	if c.Before.Kind == c.After.Kind && c.Before.Kind == nightshift.FileRegular && c.Before.SHA256 != "" && c.Before.SHA256 == c.After.SHA256 {
		return nil
	}
	if c.Before.Kind == nightshift.FileDir && c.After.Kind == nightshift.FileDir {
		return nil
	}
	if !isProgram(c) {
		return nil // a data or configuration file in those trees (/usr/lib/sysctl.d/*.conf)
	}
	what := "replace"
	switch {
	case c.After.Kind == nightshift.FileSymlink:
		what = "replace with a symlink to " + c.After.Target
	case c.After.Kind == nightshift.FileRegular && c.After.Size < c.Before.Size/2:
		what = "truncate"
	}
	return []Refusal{{Entry: "program", Reason: "would " + what + " " + c.Path + ", a system program or library the package manager did not install"}}
}

// sessionScript says whether p runs in login sessions (bash reads ~/.bashrc
// for commands run over SSH too).
func sessionScript(p string, pol EffectsPolicy) bool {
	if under(p, "/etc/profile.d") || p == "/etc/profile" || p == "/etc/bash.bashrc" || p == "/etc/ssh/sshrc" {
		return true
	}
	for _, home := range []string{pol.LoginHome, "/root"} {
		for _, f := range loginDotfiles {
			if p == path.Join(home, f) && f != ".bash_logout" {
				return true
			}
		}
	}
	return false
}

// isProgram says whether a changed file was a program or a library: in a
// bin or sbin directory, executable, a shared object (*.so, *.so.N) or the
// dynamic loader.
func isProgram(c nightshift.FileChange) bool {
	base := path.Base(c.Path)
	dir := path.Base(path.Dir(c.Path))
	switch {
	case dir == "bin" || dir == "sbin":
		return true
	case c.Before.Kind == nightshift.FileRegular && c.Before.Mode&0o111 != 0:
		return true
	case strings.HasSuffix(base, ".so") || strings.Contains(base, ".so."):
		return true
	case strings.HasPrefix(base, "ld-linux") || strings.HasPrefix(base, "ld.so"):
		return true
	}
	return false
}
