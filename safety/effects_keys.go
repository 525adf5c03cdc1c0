package safety

import (
	"path"
	"slices"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// Harm inside the rule's own paths. The scope lets a rule change its
// files; it does not let it change every setting in them. With
// StrictScope and the keywords the rule's check reads (EffectsPolicy.Keys,
// Sysctl), a changed line of sshd's configuration, of a sysctl file, of a
// unit or of any key-value file of kvFile in Scope must set one of them
// (keysHarm): an sshd rule about
// PermitRootLogin does not add an Include, a Subsystem or an
// AuthorizedKeysFile, and a kptr_restrict rule does not set
// kernel.modules_disabled. What sshd or the kernel does with the rule's
// own keyword is judged by the classes (sshd -T, sysctlHarm).

// isSSHDConfig reports whether p is sshd's configuration or a drop-in of
// it.
func isSSHDConfig(p string) bool {
	return p == "/etc/ssh/sshd_config" || under(p, "/etc/ssh/sshd_config.d")
}

// diffLines returns the added and removed lines of a unified diff.
func diffLines(diff string) []string {
	var out []string
	for _, l := range strings.Split(diff, "\n") {
		if strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---") {
			continue
		}
		if strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-") {
			out = append(out, l[1:])
		}
	}
	return out
}

// keysHarm refuses, with StrictScope, lines of sshd's configuration, sysctl
// files, units and the key-value files of kvFile in Scope that set
// keywords the rule's check does not read, and the deletion of such a
// file.
func keysHarm(e nightshift.Effects, owned map[string]bool, pol EffectsPolicy) []Refusal {
	if !pol.StrictScope {
		return nil
	}
	sshdKeys := map[string]bool{}
	for _, k := range pol.Keys {
		sshdKeys[strings.ToLower(k)] = true
	}
	sysKeys := sysctlKeys(pol)
	// Unit settings are CamelCase (ExecStartPost, Requires).
	unitKeys := map[string]bool{}
	for _, k := range pol.Keys {
		if k != "" && k[0] >= 'A' && k[0] <= 'Z' {
			unitKeys[k] = true
		}
	}
	// Every other key-value file's keywords, compared case-folded.
	// (modprobe's module names with '_' for '-'), or as they are (mount
	// points).
	foldKeys, exactKeys := map[string]bool{}, map[string]bool{}
	for _, k := range pol.Keys {
		foldKeys[strings.ToLower(k)] = true
		foldKeys[strings.ReplaceAll(strings.ToLower(k), "-", "_")] = true
		exactKeys[k] = true
	}
	var out []Refusal
	for _, c := range e.Changes {
		if !inScope(c.Path, pol.Scope) || owned[c.Path] || owned[usrAlias(c.Path)] || c.Change == nightshift.ChangeMeta || c.After.Kind == nightshift.FileDir {
			continue
		}
		kv := kvFile(c.Path)
		if c.Change == nightshift.ChangeDeleted {
			if isSysctlFile(c.Path) && len(sysKeys) > 0 || isUnitPath(c.Path) && len(unitKeys) > 0 || kv.keysOf != nil && len(pol.Keys) > 0 {
				out = append(out, Refusal{Entry: "scope", Reason: "would delete " + c.Path + ": the settings it held are not known to be only the rule's"})
			}
			continue
		}
		// keysOf names the settings a line (comment stripped, trimmed,
		// not blank) sets; none: a line that sets nothing nameable,
		// refused unless it is a section header.
		var keysOf func(string) []string
		var keys map[string]bool
		var what string
		one := func(f func(string) string) func(string) []string {
			return func(l string) []string {
				if k := f(l); k != "" {
					return []string{k}
				}
				return nil
			}
		}
		switch {
		case isSSHDConfig(c.Path) && len(pol.Keys) > 0:
			keys, what = sshdKeys, "sshd settings"
			keysOf = one(func(l string) string {
				f := strings.Fields(strings.ReplaceAll(l, "=", " "))
				if len(f) == 0 {
					return ""
				}
				return strings.ToLower(f[0])
			})
		case isSysctlFile(c.Path) && len(sysKeys) > 0:
			keys, what = sysKeys, "kernel parameters"
			keysOf = one(func(l string) string {
				k, _, _ := strings.Cut(l, "=")
				return sysctlKey(k)
			})
		case isUnitPath(c.Path) && len(unitKeys) > 0:
			keys, what = unitKeys, "unit settings"
			keysOf = one(func(l string) string {
				if strings.HasPrefix(l, "[") {
					return "" // a section header
				}
				k, _, _ := strings.Cut(l, "=")
				return strings.TrimSpace(k)
			})
		case kv.keysOf != nil && len(pol.Keys) > 0:
			keys, what = foldKeys, kv.what
			if kv.exact {
				keys = exactKeys
			}
			keysOf = func(l string) []string {
				ks := kv.keysOf(l)
				if !kv.exact {
					for i := range ks {
						ks[i] = strings.ToLower(ks[i])
					}
				}
				return ks
			}
		default:
			continue
		}
		if c.After.Kind != nightshift.FileRegular {
			out = append(out, Refusal{Entry: "scope", Reason: "would make " + c.Path + " a " + c.After.Kind.String() + ": which " + what + " it sets cannot be judged"})
			continue
		}
		if c.Diff == "" {
			out = append(out, Refusal{Entry: "scope", Reason: "would change " + c.Path + " without a text diff: which " + what + " it sets cannot be compared with the rule's (" + strings.Join(slices.Sorted(mapKeys(keys)), ", ") + ")"})
			continue
		}
		var other []string
		for _, l := range diffLines(c.Diff) {
			if t := strings.TrimSpace(l); isSudoers(c.Path) && (strings.HasPrefix(t, "#include") || strings.HasPrefix(t, "@include")) {
				l = t[1:] // sudo's include directive, not a comment
			} else if i := strings.IndexByte(l, '#'); i >= 0 {
				l = l[:i]
			}
			l = strings.TrimSpace(l)
			if l == "" || strings.HasPrefix(l, ";") {
				continue
			}
			ks := keysOf(l)
			ok := len(ks) > 0 || strings.HasPrefix(l, "[")
			for _, k := range ks {
				ok = ok && keys[k]
			}
			if !ok && !slices.Contains(other, l) {
				other = append(other, l)
			}
		}
		if len(other) == 0 {
			continue
		}
		if len(other) > 3 {
			other = append(other[:3], "…")
		}
		out = append(out, Refusal{Entry: "scope", Reason: "would change " + strings.Join(other, "; ") + " in " + c.Path + ": the rule's check reads only the " + what + " " +
			strings.Join(slices.Sorted(mapKeys(keys)), ", ")})
	}
	return out
}

// sshFilesHarm judges, whatever the scope, what the SSH server's and
// client's configuration files become (run 5's leftovers):
//
//   - sshd's configuration, ssh_config and their drop-in directories'
//     files replaced by something other than a regular file (a directory
//     sshd_config: sshd does not start);
//   - sshd's Include of anything outside /etc/ssh (a file in /tmp anyone
//     can write), a Subsystem whose program is not an sftp server
//     (Subsystem sftp /bin/false breaks every file transfer), an
//     AuthorizedKeysFile outside the home, /etc and /usr (root-owned
//     places), and new ways in (TrustedUserCAKeys, principals,
//     AuthorizedKeysCommand) set in a file even where sshd does not read
//     it yet (a drop-in the main file does not include becomes live when
//     it does);
//   - the SSH client's configuration running programs (ProxyCommand,
//     LocalCommand, KnownHostsCommand, Match exec, PKCS11Provider,
//     SecurityKeyProvider): root's ssh, and every tool that uses it, would
//     run them;
//   - a PAM line with pam_exec: a program run as root at every login,
//     which no hardening content adds.
func sshFilesHarm(c nightshift.FileChange) []Refusal {
	var out []Refusal
	add := func(entry, reason string) { out = append(out, Refusal{Entry: entry, Reason: reason}) }
	client := c.Path == "/etc/ssh/ssh_config" || under(c.Path, "/etc/ssh/ssh_config.d") || path.Base(c.Path) == "config" && strings.HasSuffix(path.Dir(c.Path), "/.ssh")
	server := isSSHDConfig(c.Path)
	if (client || server) && c.Change != nightshift.ChangeDeleted && c.After.Kind != nightshift.FileRegular && c.After.Kind != nightshift.FileNone &&
		!(c.After.Kind == nightshift.FileDir && (c.Path == "/etc/ssh/sshd_config.d" || c.Path == "/etc/ssh/ssh_config.d" || path.Base(c.Path) == ".ssh")) {
		kind := c.After.Kind.String()
		switch c.After.Kind {
		case nightshift.FileDir:
			kind = "directory"
		case nightshift.FileSymlink:
			kind = "symbolic link to " + c.After.Target
		default:
			// Other kinds are named as Kind names them.
		}
		add("lockout", "would make "+c.Path+" a "+kind+": ssh and sshd read it as a file (a directory or FIFO there stops sshd from starting or hangs it)")
		return out
	}
	if c.Change == nightshift.ChangeDeleted || c.After.Kind != nightshift.FileRegular {
		return out
	}
	added := addedLines(c.Diff)
	for _, l := range added {
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		f := strings.Fields(strings.Replace(l, "=", " ", 1))
		if len(f) < 2 {
			continue
		}
		kw := strings.ToLower(f[0])
		switch {
		case server && kw == "include":
			for _, p := range f[1:] {
				if !strings.HasPrefix(p, "/") {
					p = "/etc/ssh/" + p
				}
				if !under(path.Clean(p), "/etc/ssh") {
					add("privilege", "would make sshd include "+p+" ("+c.Path+"): only /etc/ssh is root's own; a file elsewhere can be written by others or outlive the rule")
				}
			}
		case server && kw == "subsystem" && len(f) >= 3:
			prog := path.Base(f[2])
			if prog != "internal-sftp" && !strings.Contains(prog, "sftp-server") {
				add("lockout", "would make sshd run "+f[2]+" for the "+f[1]+" subsystem ("+c.Path+"): file transfers (the worker's and everyone's) would break or run another program")
			}
		case server && kw == "authorizedkeysfile":
			for _, p := range f[1:] {
				if p == "none" || !strings.HasPrefix(p, "/") {
					continue // relative to the home, as sshd reads it
				}
				if _, ok := underAny(path.Clean(p), []string{"/etc", "/usr"}); !ok {
					add("privilege", "would read authorized keys from "+p+" ("+c.Path+"), outside the home and root's own trees (/etc, /usr)")
				}
			}
		case server && slices.Contains(newWayInKeywords, kw) && f[1] != "none":
			add("privilege", "would let others log in over SSH without a key in authorized_keys: "+strings.TrimSpace(l)+" ("+c.Path+"), even where sshd does not read the file yet; a new way in is a decision for the host's owners")
		case client && (kw == "proxycommand" || kw == "localcommand" || kw == "knownhostscommand" || kw == "pkcs11provider" || kw == "securitykeyprovider") && f[1] != "none":
			add("privilege", "would make root's ssh client run "+strings.TrimSpace(l)+" ("+c.Path+")")
		case client && kw == "match" && slices.Contains(f, "exec"):
			add("privilege", "would make root's ssh client run a program for every connection: "+strings.TrimSpace(l)+" ("+c.Path+")")
		}
	}
	if under(c.Path, "/etc/pam.d") {
		for _, l := range added {
			t := strings.TrimSpace(l)
			if strings.HasPrefix(t, "#") {
				continue
			}
			if slices.ContainsFunc(strings.Fields(t), func(w string) bool { return path.Base(w) == "pam_exec.so" || path.Base(w) == "pam_exec" }) {
				add("privilege", "would make PAM run a program at every login ("+t+" in "+c.Path+"): pam_exec is not hardening, and its program runs as root with the login's secrets")
			}
		}
	}
	return out
}

// vendorSysctl are sysctl files the distribution ships in /usr/lib/sysctl.d
// (or /lib/sysctl.d) with hardening in them: a file of the same name in
// /etc/sysctl.d or /run/sysctl.d replaces it whatever it holds (Debian's
// procps protect-links.conf sets the fs.protected_* links; systemd's
// 50-default.conf the same and more). Not 50-coredump.conf (systemd's
// core_pattern: CIS content replaces it on purpose) nor 50-pid-max.conf.
var vendorSysctl = strings.Fields("protect-links.conf 50-default.conf")

// scratchRoots are places where any user, or any later command, can
// change a program after the judge saw it.
var scratchRoots = strings.Fields("/tmp /var/tmp /dev/shm /run/user /home /var/cache /run/shm /var/lib/nightshift")

// laterHarm judges, whatever the scope, files that make the system run or
// drop something later: a link in the system trees into a scratch place or
// a home (/etc/audit/rules.d/x.rules -> /tmp/r: what augenrules reads at
// boot would not be what was judged), a sysctl file masking one the
// distribution ships (protect-links.conf), and a unit running a program
// from a scratch place (ExecStart=/var/tmp/x: the program can be swapped
// after the judge).
func laterHarm(c nightshift.FileChange) []Refusal {
	if c.Change == nightshift.ChangeDeleted || c.After.Kind == nightshift.FileDir {
		return nil
	}
	var out []Refusal
	if c.After.Kind == nightshift.FileSymlink {
		t := c.After.Target
		if !path.IsAbs(t) {
			t = path.Join(path.Dir(c.Path), t)
		}
		_, system := underAny(c.Path, systemTrees)
		if _, scratch := underAny(path.Clean(t), scratchRoots); system && scratch {
			out = append(out, Refusal{Entry: "deferred", Reason: "would make " + c.Path + " a link to " + c.After.Target + ", in a place a later command or another user can change: what the system reads there would not be what was judged"})
		}
		return out
	}
	if d := path.Dir(c.Path); (d == "/etc/sysctl.d" || d == "/run/sysctl.d") && slices.Contains(vendorSysctl, path.Base(c.Path)) && c.Change == nightshift.ChangeCreated {
		out = append(out, Refusal{Entry: "config", Reason: "would create " + c.Path + ", which replaces the distribution's " + path.Base(c.Path) + " (its kernel hardening) whatever it holds"})
	}
	if isUnitPath(c.Path) && c.After.Kind == nightshift.FileRegular {
		for _, kv := range unitKeyLines(c) {
			if !strings.HasPrefix(kv[1], "Exec") {
				continue
			}
			prog := strings.TrimLeft(kv[2], "-@:+!")
			if f := strings.Fields(prog); len(f) > 0 {
				if _, ok := underAny(path.Clean(f[0]), scratchRoots); ok {
					out = append(out, Refusal{Entry: "deferred", Reason: "would make " + c.Path + " run " + f[0] + " (" + kv[1] + "), from a place a later command or another user can change"})
				}
			}
		}
	}
	return out
}

// systemdConfs are systemd's own configuration files in /etc/systemd
// (each with NAME.conf.d drop-ins): `[Section]` headers and KEY=VALUE lines.
var systemdConfs = strings.Fields("journald logind coredump system user resolved timesyncd networkd sleep oomd homed pstore")

func isSudoers(p string) bool { return p == "/etc/sudoers" || under(p, "/etc/sudoers.d") }

// kvKind is how keysHarm reads a file whose syntax is one setting a line.
type kvKind struct {
	// what names the file's settings in refusals.
	what string
	// keysOf names the settings a line (comment stripped, trimmed, not
	// blank) sets; none for a line that sets nothing it can name (refused
	// unless a section header).
	keysOf func(string) []string
	// exact: the names are compared as they are (mount points), not
	// case-folded.
	exact bool
}

// modprobeCommands name a module in their second field (alias in its
// third).
var modprobeCommands = strings.Fields("install blacklist options remove softdep")

// kvFile returns how keysHarm reads p when it is a file whose syntax is one
// setting a line besides sshd's configuration, the sysctl files and the
// units; a zero kvKind (nil keysOf) when it is not. The setting a line
// sets:
//
//   - KEY VALUE, KEY=VALUE, KEY = VALUE: KEY (login.defs, faillock.conf,
//     pwquality.conf, pwhistory.conf, auditd.conf, aide.conf);
//   - limits.conf and limits.d: domain type ITEM value, the item;
//   - systemd's journald, logind, coredump, system, user… .conf and their
//     .conf.d drop-ins: KEY=VALUE, [Section] headers free;
//   - /etc/default/*: [export] KEY=VALUE shell assignments (any other
//     shell is refused);
//   - chrony's configuration: the directive (first word);
//   - sudoers and sudoers.d: each option of a Defaults line (Defaults
//     use_pty,!visiblepw is use_pty and visiblepw; Defaults:user too);
//     any other line (a user spec, an alias, #include, @includedir) its
//     first word;
//   - modprobe.d: the module an install, blacklist, options, remove or
//     softdep line names (alias: its third field), '-' read as '_' as
//     modprobe does; modules-load.d and /etc/modules: the module;
//   - /etc/fstab: the mount point (second field), compared exactly.
func kvFile(p string) kvKind {
	fields := strings.Fields
	field := func(n int) func(string) []string {
		return func(l string) []string {
			if f := fields(l); len(f) > n {
				return []string{f[n]}
			}
			return nil
		}
	}
	// KEY VALUE, KEY=VALUE and KEY = VALUE.
	keyValue := func(l string) []string {
		k, _, _ := strings.Cut(l, "=")
		return field(0)(k)
	}
	module := func(m string) string { return strings.ReplaceAll(m, "-", "_") }
	dir, base := path.Dir(p), path.Base(p)
	conf := strings.HasSuffix(base, ".conf")
	switch {
	case p == "/etc/login.defs":
		return kvKind{what: "login.defs settings", keysOf: keyValue}
	case p == "/etc/security/limits.conf" || dir == "/etc/security/limits.d" && conf:
		return kvKind{what: "limits items", keysOf: field(2)}
	case dir == "/etc/security" && slices.Contains(strings.Fields("faillock.conf pwquality.conf pwhistory.conf"), base) ||
		dir == "/etc/security/pwquality.conf.d" && conf:
		return kvKind{what: "PAM module settings", keysOf: keyValue}
	case p == "/etc/audit/auditd.conf":
		return kvKind{what: "auditd settings", keysOf: keyValue}
	case dir == "/etc/systemd" && conf && slices.Contains(systemdConfs, strings.TrimSuffix(base, ".conf")) ||
		path.Dir(dir) == "/etc/systemd" && conf && slices.Contains(systemdConfs, strings.TrimSuffix(path.Base(dir), ".conf.d")) && strings.HasSuffix(dir, ".conf.d"):
		return kvKind{what: "systemd settings", keysOf: func(l string) []string {
			if strings.HasPrefix(l, "[") {
				return nil // a section header: free
			}
			k, _, ok := strings.Cut(l, "=")
			if k = strings.TrimSpace(k); !ok || k == "" {
				return nil
			}
			return []string{k}
		}}
	case under(p, "/etc/default"):
		return kvKind{what: "variables", keysOf: func(l string) []string {
			l = strings.TrimPrefix(l, "export ")
			k, _, ok := strings.Cut(l, "=")
			if !ok || k == "" || strings.ContainsAny(k, " \t$`;(){}&|<>\"'") {
				return nil
			}
			return []string{k}
		}}
	case p == "/etc/chrony/chrony.conf" || p == "/etc/chrony.conf" || slices.Contains(strings.Fields("/etc/chrony/conf.d /etc/chrony/sources.d /etc/chrony/chrony.d /etc/chrony.d"), dir):
		return kvKind{what: "chrony directives", keysOf: field(0)}
	case p == "/etc/aide/aide.conf" || dir == "/etc/aide/aide.conf.d":
		return kvKind{what: "AIDE settings", keysOf: keyValue}
	case isSudoers(p):
		return kvKind{what: "sudo settings", keysOf: sudoersKeys}
	case (p == "/etc/modprobe.conf" || slices.Contains(strings.Fields("/etc/modprobe.d /run/modprobe.d /usr/lib/modprobe.d /lib/modprobe.d /usr/local/lib/modprobe.d"), dir) && conf):
		return kvKind{what: "modules", keysOf: func(l string) []string {
			f := fields(l)
			switch {
			case len(f) >= 2 && slices.Contains(modprobeCommands, f[0]):
				return []string{module(f[1])}
			case len(f) >= 3 && f[0] == "alias":
				return []string{module(f[2])}
			case len(f) > 0:
				return []string{f[0]} // another command: refused unless a key
			}
			return nil
		}}
	case slices.Contains(strings.Fields("/etc/modules-load.d /run/modules-load.d /usr/lib/modules-load.d /lib/modules-load.d"), dir) && conf || p == "/etc/modules":
		return kvKind{what: "modules", keysOf: func(l string) []string {
			if f := fields(l); len(f) > 0 {
				return []string{module(f[0])}
			}
			return nil
		}}
	case p == "/etc/fstab":
		return kvKind{what: "mount points", keysOf: field(1), exact: true}
	}
	return kvKind{}
}

// sudoersKeys names what a sudoers line sets: each option of a Defaults
// line (its name, without ! and before =, += or -=), or the first word of
// any other line.
func sudoersKeys(l string) []string {
	f := strings.Fields(l)
	if len(f) == 0 {
		return nil
	}
	if !strings.HasPrefix(f[0], "Defaults") || len(f[0]) > len("Defaults") && !strings.ContainsRune(":>@!", rune(f[0][len("Defaults")])) {
		return []string{f[0]}
	}
	var out []string
	for _, o := range strings.Split(strings.Join(f[1:], " "), ",") {
		o = strings.TrimLeft(strings.TrimSpace(o), "!")
		if i := strings.IndexAny(o, "+-= \t"); i >= 0 {
			o = o[:i]
		}
		if o == "" {
			return nil
		}
		out = append(out, o)
	}
	return out
}
