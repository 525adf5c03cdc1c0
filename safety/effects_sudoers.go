package safety

import (
	"path"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// sudoers: a hardening rule adds Defaults (use_pty, logfile, env_reset,
// timestamp_timeout) and removes or narrows grants; it never grants sudo to
// an account that had no grant, includes rules from outside
// /etc/sudoers.d, or lets the caller's environment into what sudo runs.
// sudoersHarm refuses those (configHarm refuses NOPASSWD and grants to
// everyone; sudoHarm what takes the worker's own sudo away).

// isSudoersFile says whether sudo reads p: /etc/sudoers, and the files of
// /etc/sudoers.d its @includedir reads (no "." in the name, no "~" at the
// end: sudo's own rule, so sed -i.bak's ops.bak grants nothing). The one
// place the judge decides which sudoers.d names sudo reads: configHarm's
// grants and sudoersHarm judge only those; an @include that names a file
// @includedir skips is refused (sudoersHarm).
func isSudoersFile(p string) bool {
	if p == "/etc/sudoers" {
		return true
	}
	base := path.Base(p)
	return path.Dir(p) == "/etc/sudoers.d" && !strings.Contains(base, ".") && !strings.HasSuffix(base, "~")
}

// unsafeEnvVar says whether a variable kept in sudo's environment lets the
// caller run code in what sudo runs as root.
func unsafeEnvVar(v string) bool {
	v = strings.Trim(v, `"' `)
	if v == "" {
		return false
	}
	if strings.ContainsAny(v, "*?[") || strings.HasPrefix(v, "LD_") || strings.HasPrefix(v, "PYTHON") || strings.HasPrefix(v, "PERL") ||
		strings.HasPrefix(v, "RUBY") || strings.HasPrefix(v, "NODE_") || strings.HasPrefix(v, "GIT_") || strings.HasPrefix(v, "LUA_") ||
		strings.HasPrefix(v, "JAVA_") || strings.HasPrefix(v, "_JAVA") || strings.HasPrefix(v, "MALLOC_") || strings.HasPrefix(v, "BASH_FUNC") {
		return true
	}
	switch v {
	case "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "IFS", "PATH", "GCONV_PATH", "LOCPATH", "NLSPATH",
		"HOSTALIASES", "RES_OPTIONS", "GLIBC_TUNABLES", "CLASSPATH", "TCLLIBPATH", "LIBPATH", "SHLIB_PATH", "TMPDIR", "OPENSSL_CONF", "OPENSSL_ENGINES", "EDITOR", "VISUAL", "PAGER":
		return true
	}
	return false
}

// standardPathDirs are the directories a secure_path may hold.
var standardPathDirs = strings.Fields("/usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin /snap/bin /usr/games /usr/local/games")

// sudoersUsers returns a user-specification line's user list, or nil for
// a line that is not one (Defaults, aliases, includes, comments).
func sudoersUsers(s string) []string {
	if s == "" || strings.HasPrefix(s, "#") || strings.HasPrefix(s, "@") || strings.HasPrefix(s, "Defaults") {
		return nil
	}
	lhs, _, ok := strings.Cut(s, "=")
	if !ok {
		return nil
	}
	if f := strings.Fields(s); strings.HasSuffix(f[0], "_Alias") {
		return nil
	}
	// "alice, bob ALL" : the user list, then the host list.
	norm := strings.Join(strings.Fields(strings.ReplaceAll(strings.ReplaceAll(lhs, ", ", ","), " ,", ",")), " ")
	f := strings.Fields(norm)
	if len(f) < 2 {
		return nil
	}
	return listItems(strings.Join(f[:len(f)-1], ","))
}

// sudoersHarm judges a command's changes of the files sudo reads.
func sudoersHarm(e nightshift.Effects, c nightshift.FileChange, owned map[string]bool) []Refusal {
	// The package's own /etc/sudoers (installing sudo) is the package's.
	if !isSudoersFile(c.Path) || owned[c.Path] || c.Change != nightshift.ChangeCreated && c.Change != nightshift.ChangeModified {
		return nil
	}
	var out []Refusal
	bad := func(reason string) { out = append(out, Refusal{Entry: "privilege", Reason: reason}) }
	if c.After.Kind == nightshift.FileSymlink {
		bad("would make " + c.Path + " a symlink to " + c.After.Target + ": sudo would read rules that cannot be judged")
		return out
	}
	if c.Diff == "" && c.After.Size > 0 {
		bad("would write " + c.Path + ", whose diff could not be captured to judge")
		return out
	}
	// Users and alias members that had a grant before, in any sudoers
	// file the command changed (a grant moved between files is not new).
	had := map[string]bool{}
	for _, o := range e.Changes {
		if !isSudoersFile(o.Path) {
			continue
		}
		for _, l := range removedLines(o.Diff) {
			s := strings.TrimSpace(l)
			for _, u := range sudoersUsers(s) {
				had[u] = true
			}
			if f := strings.Fields(s); len(f) > 1 && f[0] == "User_Alias" {
				_, members, _ := strings.Cut(s, "=")
				for _, m := range listItems(members) {
					had[f[1]+"="+m] = true
				}
			}
		}
	}
	where := " in " + c.Path
	for _, l := range addedLines(c.Diff) {
		s := strings.TrimSpace(l)
		f := strings.Fields(s)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "@includedir", "#includedir", "@include", "#include":
			if len(f) < 2 {
				continue
			}
			p := path.Clean(strings.Trim(f[1], `"`))
			if !under(p, "/etc/sudoers.d") || f[0] != "@includedir" && f[0] != "#includedir" && p == "/etc/sudoers.d" {
				bad("would make sudo read rules from " + f[1] + " (" + s + where + "), outside /etc/sudoers.d: whoever writes there gets root")
			} else if (f[0] == "@include" || f[0] == "#include") && !isSudoersFile(p) {
				// A name @includedir skips holds what the judge let
				// pass as read by nothing (sudoersRead): naming it
				// makes sudo read it.
				bad("would make sudo read " + p + " (" + s + where + "), a file sudo's @includedir skips, which the judge does not hold to sudo's rules")
			}
			continue
		case "User_Alias":
			name, members, _ := strings.Cut(strings.TrimPrefix(s, "User_Alias"), "=")
			name = strings.TrimSpace(name)
			for _, m := range listItems(members) {
				if !had[name+"="+m] {
					bad("would add " + m + " to the sudo alias " + name + " (" + s + where + "): a hardening rule does not grant root")
				}
			}
			continue
		}
		if strings.HasPrefix(f[0], "#") {
			continue
		}
		if strings.HasPrefix(f[0], "Defaults") {
			for _, o := range strings.Split(strings.TrimSpace(strings.TrimPrefix(s, f[0])), ",") {
				o = strings.TrimSpace(o)
				k, v, _ := strings.Cut(o, "=")
				k = strings.TrimSpace(strings.TrimRight(k, "+-"))
				switch k {
				case "env_keep", "env_check":
					for _, x := range strings.Fields(strings.Trim(strings.TrimSpace(v), `"`)) {
						if unsafeEnvVar(x) {
							bad("would let callers pass " + x + " into what sudo runs as root (" + s + where + "): it runs code of their choosing")
						}
					}
				case "!env_reset":
					bad("would keep the caller's whole environment (LD_PRELOAD, PATH, …) in what sudo runs as root (" + s + where + ")")
				case "setenv":
					bad("would let callers set any variable (LD_PRELOAD among them) for what sudo runs as root (" + s + where + ")")
				case "!authenticate":
					bad("would let sudo run commands as root without a password (" + s + where + ")")
				case "secure_path":
					for _, d := range strings.Split(strings.Trim(strings.TrimSpace(v), `"`), ":") {
						if d != "" && !containsStr(standardPathDirs, path.Clean(d)) {
							bad("would put " + d + " in the PATH of what sudo runs as root (" + s + where + ")")
						}
					}
				}
			}
			continue
		}
		for _, u := range sudoersUsers(s) {
			if !had[u] && !strings.HasPrefix(u, "!") {
				bad("would grant sudo to " + u + " (" + s + where + "): a hardening rule removes or narrows grants, it does not add them")
			}
		}
	}
	return out
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
