package safety

import (
	"net/netip"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// The package manager's configuration and database change what every
// later apt or dpkg run does, outside the sandbox. packagesHarm refuses:
// apt configuration that replaces apt's programs or directories (Dir,
// Dir::Bin::*), adds hooks (*-Invoke, Pre-Install-Pkgs), sends downloads
// to a proxy on loopback or an unroutable address, runs a proxy
// auto-detection program, or accepts unsigned or insecure repositories;
// pins of vital packages (openssh-server, sudo, libc6, …) below 0; source
// lists deleted, emptied or disabled, or sources marked trusted; dpkg
// options that force (but for the conffile choices), exclude system paths,
// move its directories or run a status logger; dpkg's status database
// edited outside a package operation; maintainer scripts written by
// anything but dpkg unpacking their package.

// vitalPackages are the packages whose install or upgrade a pin must not
// stop: the worker's access, root, and the system's base.
var vitalPackages = strings.Fields(`openssh-server openssh-client openssh-sftp-server ssh sudo apt dpkg libc6 libc-bin bash dash coreutils
	login passwd libpam-modules libpam-modules-bin libpam-runtime libpam0g systemd systemd-sysv libsystemd0 base-files base-passwd init
	util-linux libssl3 openssl ca-certificates debian-archive-keyring gpgv libselinux1 zlib1g`)

// aptEntry is one setting of apt's configuration: its key (lowercase,
// scopes joined with ::), value and whether an added line set it.
type aptEntry struct {
	key, value, line string
	added            bool
}

var aptToken = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|[{};]|[^\s{};"]+`)

// aptEntries parses the after side of an apt configuration diff (the whole
// file for a created one) into its settings; a scope opened in a part of
// the file the diff does not show is missing from the keys.
func aptEntries(c nightshift.FileChange) []aptEntry {
	var out []aptEntry
	var scopes []string
	var key string
	addedSet := map[int]bool{}
	var lines []string
	for _, l := range strings.Split(c.Diff, "\n") {
		switch {
		case strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "@@") || strings.HasPrefix(l, `\`) || strings.HasPrefix(l, "-"):
		case strings.HasPrefix(l, "+"):
			addedSet[len(lines)] = true
			lines = append(lines, l[1:])
		case strings.HasPrefix(l, " "):
			lines = append(lines, l[1:])
		}
	}
	inComment := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "#include") || strings.HasPrefix(t, "#clear") {
			out = append(out, aptEntry{key: strings.Fields(t)[0], value: strings.Trim(strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(t, "#include"), "#clear")), ";"), `"`), line: t, added: addedSet[i]})
			continue
		}
		if strings.HasPrefix(t, "#") || strings.HasPrefix(t, "//") {
			continue
		}
		for _, tok := range aptToken.FindAllString(l, -1) {
			switch {
			case inComment:
				if strings.Contains(tok, "*/") {
					inComment = false
				}
			case strings.HasPrefix(tok, "/*"):
				inComment = !strings.Contains(tok, "*/")
			case strings.HasPrefix(tok, "//"):
			case tok == "{":
				scopes = append(scopes, key)
				key = ""
			case tok == "}":
				if len(scopes) > 0 {
					scopes = scopes[:len(scopes)-1]
				}
				key = ""
			case tok == ";":
				key = ""
			case strings.HasPrefix(tok, `"`):
				full := strings.ToLower(strings.Trim(strings.Join(append(append([]string{}, scopes...), key), "::"), ":"))
				out = append(out, aptEntry{key: full, value: strings.ReplaceAll(strings.Trim(tok, `"`), `\"`, `"`), line: strings.TrimSpace(l), added: addedSet[i]})
			default:
				key = tok
			}
		}
	}
	return out
}

func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "1", "on", "enable", "enabled":
		return true
	}
	return false
}

// deadProxy says why a proxy URL sends downloads nowhere, or "".
func deadProxy(v string) string {
	lv := strings.ToLower(strings.TrimSpace(v))
	if lv == "" || lv == "direct" || lv == "false" {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || u.Hostname() == "" {
		return "a proxy that cannot be read"
	}
	h := u.Hostname()
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || strings.HasSuffix(h, ".invalid") {
		return "a proxy on this host"
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return "" // a name: the host's proxy
	}
	for _, p := range []string{"0.0.0.0/8", "127.0.0.0/8", "::1/128", "::/128", "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "224.0.0.0/4", "169.254.0.0/16", "2001:db8::/32", "ff00::/8", "fe80::/10"} {
		if netip.MustParsePrefix(p).Contains(a.Unmap()) {
			return "a proxy at an address that is loopback or unroutable (" + h + ")"
		}
	}
	return ""
}

// aptHarm judges apt's configuration files.
func aptHarm(c nightshift.FileChange) []string {
	var out []string
	for _, en := range aptEntries(c) {
		if !en.added {
			continue
		}
		k, v := en.key, en.value
		what := " (" + textcutHead(en.line, 100) + " in " + c.Path + ")"
		switch {
		case k == "#include":
			if !under(path.Clean(v), "/etc/apt") {
				out = append(out, "would make apt read its configuration from "+v+what+", whose contents cannot be judged")
			}
		case k == "dir" || strings.HasPrefix(k, "dir::"):
			out = append(out, "would make apt use "+v+" for "+k+what+": apt would run or read it instead of its own, as root, at its next run")
		case strings.Contains(k, "invoke") || strings.Contains(k, "pre-install-pkgs"):
			out = append(out, "would add an apt hook"+what+": apt would run "+textcutHead(v, 60)+" as root at its next run, outside the sandbox (a hardening rule adds no package-manager hooks)")
		case strings.HasSuffix(k, "proxy-auto-detect"):
			out = append(out, "would make apt run "+v+" to find its proxy"+what+", as root, outside the sandbox")
		case strings.HasPrefix(k, "acquire::") && (strings.HasSuffix(k, "::proxy") || strings.Contains(k, "::proxy::")):
			if why := deadProxy(v); why != "" {
				out = append(out, "would send apt's downloads to "+why+what+": the host would get no security updates")
			}
		case strings.Contains(k, "allowunauthenticated") || strings.Contains(k, "allowinsecurerepositories") || strings.Contains(k, "allowdowngradetoinsecurerepositories") || strings.Contains(k, "allowweakrepositories"):
			if truthy(v) {
				out = append(out, "would make apt install packages whose signatures it cannot check"+what)
			}
		case strings.HasSuffix(k, "check-valid-until") || strings.HasSuffix(k, "check-date"):
			if !truthy(v) {
				out = append(out, "would make apt accept outdated repository metadata (a replay keeps security updates away)"+what)
			}
		case strings.HasPrefix(k, "dpkg::options"):
			if why := dpkgOption(strings.TrimLeft(v, "-")); why != "" {
				out = append(out, "would run dpkg with "+v+" from apt"+what+": "+why)
			}
		}
	}
	return out
}

// dpkgOption says why a dpkg option (without its leading dashes), set for
// every run, harms the host, or "".
func dpkgOption(o string) string {
	k, v, _ := strings.Cut(strings.TrimSpace(o), "=")
	k = strings.TrimSpace(k)
	v = strings.TrimSpace(v)
	if k == "" {
		return ""
	}
	if f := strings.Fields(k); len(f) > 1 {
		k, v = f[0], strings.Join(f[1:], " ")
	}
	switch {
	case strings.HasPrefix(k, "force-"):
		for _, x := range strings.Split(strings.TrimPrefix(k, "force-"), ",") {
			switch x {
			case "confold", "confdef", "confnew", "confmiss", "confask", "unsafe-io":
			default:
				return "dpkg would force-" + x + " on every run (remove essential packages, overwrite files, ignore dependencies or signatures, without asking)"
			}
		}
	case strings.HasPrefix(k, "no-force-") || k == "refuse-all":
	case k == "path-exclude":
		for _, keep := range []string{"/usr/share/doc", "/usr/share/man", "/usr/share/locale", "/usr/share/info", "/usr/share/lintian", "/usr/share/linda", "/usr/share/groff", "/usr/share/help", "/usr/share/omf", "/usr/share/gnome/help", "/usr/share/bug"} {
			if strings.HasPrefix(v, keep+"/") || v == keep {
				return ""
			}
		}
		return "dpkg would leave out " + v + " from every package it installs or upgrades (only documentation may be excluded)"
	case k == "admindir" || k == "instdir" || k == "root" || k == "status-logger":
		return "dpkg would use " + v + " for " + k + " on every run"
	}
	return ""
}

// prefHarm judges the preference stanzas an added line is part of: a
// negative Pin-Priority for a vital package.
func prefHarm(c nightshift.FileChange) []string {
	var out []string
	var pkg, prio string
	added := false
	flush := func() {
		defer func() { pkg, prio, added = "", "", false }()
		n, err := strconv.Atoi(strings.TrimSpace(prio))
		if !added || pkg == "" || err != nil || n >= 0 {
			return
		}
		for _, want := range strings.Fields(pkg) {
			for _, v := range vitalPackages {
				if pkgPatternMatches(want, v) {
					out = append(out, "would pin "+v+" to priority "+strconv.Itoa(n)+" ("+want+" in "+c.Path+"): apt would never install or upgrade it, security updates included, and would remove it when asked to")
					return
				}
			}
		}
	}
	for _, l := range strings.Split(c.Diff, "\n") {
		var s string
		switch {
		case strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "@@") || strings.HasPrefix(l, "-"):
			continue
		case strings.HasPrefix(l, "+"):
			s = l[1:]
			added = added || strings.TrimSpace(s) != ""
		case strings.HasPrefix(l, " "):
			s = l[1:]
		default:
			continue
		}
		if strings.TrimSpace(s) == "" {
			flush()
			continue
		}
		k, v, _ := strings.Cut(s, ":")
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "package":
			pkg = strings.TrimSpace(v)
		case "pin-priority":
			prio = strings.TrimSpace(v)
		}
	}
	flush()
	return out
}

// pkgPatternMatches matches an apt preferences package field: a name, a
// glob, or a /regular expression/.
func pkgPatternMatches(pat, name string) bool {
	if strings.HasPrefix(pat, "/") && strings.HasSuffix(pat, "/") && len(pat) > 1 {
		re, err := regexp.Compile(pat[1 : len(pat)-1])
		return err != nil || re.MatchString(name)
	}
	ok, err := path.Match(pat, name)
	return err != nil || ok
}

// isSourcesFile says whether apt reads p as a list of package sources.
func isSourcesFile(p string) bool {
	return p == "/etc/apt/sources.list" || path.Dir(p) == "/etc/apt/sources.list.d" && (strings.HasSuffix(p, ".list") || strings.HasSuffix(p, ".sources"))
}

// sourcesHarm judges apt's source lists.
func sourcesHarm(c nightshift.FileChange) []string {
	if c.Change == nightshift.ChangeDeleted {
		return []string{"would delete apt's source list " + c.Path + ": the packages it lists, security updates among them, could no longer be installed or upgraded"}
	}
	if c.Change != nightshift.ChangeModified && c.Change != nightshift.ChangeCreated {
		return nil
	}
	var out []string
	active := func(l string) bool {
		t := strings.TrimSpace(l)
		return strings.HasPrefix(t, "deb ") || strings.HasPrefix(t, "deb-src ") || strings.HasPrefix(t, "deb[") || strings.HasPrefix(strings.ToLower(t), "uris:")
	}
	removedActive, addedActive, keptActive := 0, 0, 0
	for _, l := range strings.Split(c.Diff, "\n") {
		if strings.HasPrefix(l, " ") && active(l[1:]) {
			keptActive++
		}
	}
	for _, l := range removedLines(c.Diff) {
		if active(l) {
			removedActive++
		}
	}
	for _, l := range addedLines(c.Diff) {
		t := strings.TrimSpace(l)
		low := strings.ToLower(strings.ReplaceAll(t, " ", ""))
		if active(l) {
			addedActive++
		}
		for _, o := range []string{"trusted=yes", "allow-insecure=yes", "allow-weak=yes", "allow-downgrade-to-insecure=yes", "trusted:yes", "allow-insecure:yes", "allow-weak:yes", "allow-downgrade-to-insecure:yes"} {
			if strings.Contains(low, o) {
				out = append(out, "would make apt install packages from a source without checking their signatures ("+textcutHead(t, 100)+" in "+c.Path+")")
				break
			}
		}
		if low == "enabled:no" {
			out = append(out, "would disable the sources of "+c.Path+": the packages it lists, security updates among them, could no longer be installed or upgraded")
		}
	}
	if c.Change == nightshift.ChangeModified && removedActive > 0 && addedActive == 0 && keptActive == 0 {
		out = append(out, "would remove the sources of "+c.Path+" (no active line left in what the diff shows): the packages it listed, security updates among them, could no longer be installed or upgraded")
	}
	return out
}

// dpkgStatusHarm refuses dpkg's status database edited outside a package
// operation: a change beyond the selections (install, hold, deinstall,
// purge) that no change of a package's file list or checksums comes with.
func dpkgStatusHarm(e nightshift.Effects, c nightshift.FileChange) string {
	if c.Path != "/var/lib/dpkg/status" || c.Change == nightshift.ChangeMeta {
		return ""
	}
	for _, o := range e.Changes {
		if strings.HasPrefix(o.Path, "/var/lib/dpkg/info/") && (strings.HasSuffix(o.Path, ".list") || strings.HasSuffix(o.Path, ".md5sums")) {
			return ""
		}
	}
	if c.Change == nightshift.ChangeDeleted || c.Diff == "" {
		return "would replace dpkg's database (/var/lib/dpkg/status) outside any package operation"
	}
	rem, add := removedLines(c.Diff), addedLines(c.Diff)
	// Selection changes rewrite the Status line's first word only.
	state := func(l string) (string, bool) {
		v, ok := strings.CutPrefix(l, "Status: ")
		if f := strings.Fields(v); ok && len(f) == 3 {
			return f[1] + " " + f[2], true
		}
		return "", false
	}
	if len(rem) == len(add) {
		same := true
		for i := range rem {
			a, ok1 := state(rem[i])
			b, ok2 := state(add[i])
			same = same && ok1 && ok2 && a == b
		}
		if same {
			return ""
		}
	}
	what := ""
	if len(rem) > 0 && len(add) > 0 {
		what = ": -" + textcutHead(rem[0], 60) + " +" + textcutHead(add[0], 60)
	}
	return "would edit dpkg's database by hand (/var/lib/dpkg/status" + what + "), outside any package operation: apt and dpkg would act on packages that are not as it says"
}

// maintScriptHarm refuses a maintainer script written without dpkg
// unpacking its package (whose file list or checksums the same command
// changes).
func maintScriptHarm(e nightshift.Effects, c nightshift.FileChange) string {
	if path.Dir(c.Path) != "/var/lib/dpkg/info" || c.Change != nightshift.ChangeCreated && c.Change != nightshift.ChangeModified {
		return ""
	}
	base := path.Base(c.Path)
	ext := path.Ext(base)
	switch ext {
	case ".preinst", ".postinst", ".prerm", ".postrm", ".config", ".triggers":
	default:
		return ""
	}
	pkg := strings.TrimSuffix(base, ext)
	for _, o := range e.Changes {
		if o.Path == "/var/lib/dpkg/info/"+pkg+".list" || o.Path == "/var/lib/dpkg/info/"+pkg+".md5sums" {
			return ""
		}
	}
	return "would write the maintainer script " + c.Path + " outside dpkg: it runs as root at the next configure, upgrade or removal of " + pkg + ", outside the sandbox"
}

// packagesHarm judges one change of the package manager's configuration
// and database.
func packagesHarm(e nightshift.Effects, c nightshift.FileChange, owned map[string]bool) []Refusal {
	if owned[c.Path] {
		return nil
	}
	var why []string
	dir := path.Dir(c.Path)
	live := c.Change == nightshift.ChangeCreated || c.Change == nightshift.ChangeModified
	regular := live && c.After.Kind == nightshift.FileRegular
	symlink := live && c.After.Kind == nightshift.FileSymlink
	switch {
	case c.Path == "/etc/apt/apt.conf" || dir == "/etc/apt/apt.conf.d":
		if symlink {
			why = append(why, "would make apt's configuration "+c.Path+" a symlink to "+c.After.Target+", whose contents cannot be judged")
		} else if regular {
			why = append(why, aptHarm(c)...)
		}
	case c.Path == "/etc/apt/preferences" || dir == "/etc/apt/preferences.d":
		if regular {
			why = append(why, prefHarm(c)...)
		}
	case isSourcesFile(c.Path):
		why = append(why, sourcesHarm(c)...)
	case c.Path == "/etc/dpkg/dpkg.cfg" || dir == "/etc/dpkg/dpkg.cfg.d":
		if regular {
			for _, l := range addedLines(c.Diff) {
				if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
					if r := dpkgOption(strings.TrimLeft(t, "-")); r != "" {
						why = append(why, "would set "+t+" in "+c.Path+": "+r)
					}
				}
			}
		}
	case c.Path == "/var/lib/dpkg/status":
		if r := dpkgStatusHarm(e, c); r != "" {
			why = append(why, r)
		}
	case dir == "/var/lib/dpkg/info":
		if r := maintScriptHarm(e, c); r != "" {
			why = append(why, r)
		}
	}
	out := make([]Refusal, 0, len(why))
	for _, r := range why {
		out = append(out, Refusal{Entry: "deferred", Reason: r})
	}
	return out
}
