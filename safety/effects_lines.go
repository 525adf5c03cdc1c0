package safety

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// Lines must serve the check. A rule's scope lets it change its files;
// keysHarm limits the lines of key-value files to the check's keywords.
// The files whose lines name no keyword — PAM stacks (a line's effect is
// its module, control and place), audit rules (-a always,exit -S …, -w
// PATH, -e 2), profile scripts, cron tables, apt's source lists, and a
// key-value file of a rule whose keywords are not known — are judged by
// the check's own line patterns (EffectsPolicy.Keys' LinePatternPrefix
// entries, which package scap derives from the check's text patterns):
//
//   - every line a command adds (comments and blank lines free) must be
//     matched, at least in part, by one of the patterns, as the check
//     reads the file (the text around it in the diff included, for
//     patterns that span lines): a pam_faillock rule adds pam_faillock
//     lines, not pam_cracklib; an audit rule adds the -a or -w lines its
//     check looks for, not -a … -S all, -W (a watch removed), -e 2 (for
//     any rule but the immutable one) or a read of every file under /;
//   - every line it removes must be matched by a pattern, or be edited
//     into a line a pattern matches (the added line has the same first
//     word and keeps at least half of its words): an umask rule does not
//     empty /etc/profile, and a PAM line moves only when the check names
//     it.
//
// A pattern that Go's regular expressions cannot read (a look-ahead other
// than the comment one, a back-reference) switches the discipline off
// for the rule: what the check accepts is then not known, and the lines
// are judged by the classes alone, as for a rule whose patterns come from
// the host (a var_ref) and are not derived.

// LinePatternPrefix marks an entry of EffectsPolicy.Keys that is one of
// the check's line patterns (a regular expression) rather than a keyword.
const LinePatternPrefix = "re:"

func isLinePattern(k string) bool { return strings.HasPrefix(k, LinePatternPrefix) }

// compileLinePatterns compiles the check's line patterns as the check
// reads a file: multi-line (^ and $ at every line), the comment
// look-ahead (?!#), which Go's syntax lacks, dropped (it only narrows the
// lines). False when any pattern does not compile.
func compileLinePatterns(res []string) ([]*regexp.Regexp, bool) {
	var out []*regexp.Regexp
	for _, re := range res {
		x, err := regexp.Compile("(?m)" + strings.ReplaceAll(re, "(?!#)", ""))
		if err != nil {
			return nil, false
		}
		out = append(out, x)
	}
	return out, len(out) > 0
}

// keywordFile reports whether keysHarm judges p's lines by the rule's
// keywords (pol.Keys without the line patterns).
func keywordFile(p string, pol EffectsPolicy) bool {
	unit := slices.ContainsFunc(pol.Keys, func(k string) bool { return k != "" && k[0] >= 'A' && k[0] <= 'Z' })
	return isSSHDConfig(p) && len(pol.Keys) > 0 || isSysctlFile(p) && len(sysctlKeys(pol)) > 0 ||
		isUnitPath(p) && unit || kvFile(p).keysOf != nil && len(pol.Keys) > 0
}

// diffSide is one side of a unified diff's hunks as text (the context
// lines and the lines of that side), with which of its lines the diff
// changed.
type diffSide struct {
	text    string
	starts  []int // offset of each line in text
	changed []bool
	lines   []string
}

// hunkSides returns the diff's old side (context and removed lines) and
// new side (context and added lines).
func hunkSides(diff string) (before, after diffSide) {
	add := func(s *diffSide, l string, changed bool) {
		s.starts = append(s.starts, len(s.text))
		s.text += l + "\n"
		s.changed = append(s.changed, changed)
		s.lines = append(s.lines, l)
	}
	for _, l := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---") || strings.HasPrefix(l, "@@") || strings.HasPrefix(l, "\\"):
		case strings.HasPrefix(l, "+"):
			add(&after, l[1:], true)
		case strings.HasPrefix(l, "-"):
			add(&before, l[1:], true)
		case strings.HasPrefix(l, " "):
			add(&before, l[1:], false)
			add(&after, l[1:], false)
		}
	}
	return before, after
}

// matched returns, for each line of s, whether a non-empty match of one
// of the patterns overlaps it.
func (s diffSide) matched(res []*regexp.Regexp) []bool {
	out := make([]bool, len(s.lines))
	for _, re := range res {
		for _, m := range re.FindAllStringIndex(s.text, -1) {
			if m[1] <= m[0] {
				continue
			}
			for i, st := range s.starts {
				end := st + len(s.lines[i])
				if m[0] <= end && m[1] > st && !(m[0] == end && m[1] > end) {
					out[i] = true
				}
			}
		}
	}
	return out
}

// freeLine reports whether a changed line is free: blank or a comment.
func freeLine(l string) bool {
	t := strings.TrimSpace(l)
	return t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, ";")
}

// editOf reports whether added is an edit of removed: the same first word,
// and at least half of removed's words kept.
func editOf(removed, added string) bool {
	r, a := strings.Fields(removed), strings.Fields(added)
	if len(r) == 0 || len(a) == 0 || r[0] != a[0] {
		return false
	}
	kept := 0
	for _, w := range r {
		if slices.Contains(a, w) {
			kept++
		}
	}
	return 2*kept >= len(r)
}

// linesHarm refuses, with StrictScope and the check's line patterns, the
// lines added to or removed from the scope's files that no keyword judges
// when no pattern of the check matches them.
func linesHarm(e nightshift.Effects, owned map[string]bool, pol EffectsPolicy) []Refusal {
	if !pol.StrictScope || len(pol.linePatterns) == 0 {
		return nil
	}
	res, ok := compileLinePatterns(pol.linePatterns)
	if !ok {
		return nil
	}
	var out []Refusal
	for _, c := range e.Changes {
		if !inScope(c.Path, pol.Scope) || owned[c.Path] || owned[usrAlias(c.Path)] || c.After.Kind != nightshift.FileRegular ||
			(c.Change != nightshift.ChangeCreated && c.Change != nightshift.ChangeModified) || c.Diff == "" || keywordFile(c.Path, pol) {
			continue
		}
		before, after := hunkSides(c.Diff)
		addOK, delOK := after.matched(res), before.matched(res)
		var added, removed []string
		for i, l := range after.lines {
			if after.changed[i] && !addOK[i] && !freeLine(l) && !createModeLine(l, pol.fileStates) && !slices.Contains(added, strings.TrimSpace(l)) {
				added = append(added, strings.TrimSpace(l))
			}
		}
		for i, l := range before.lines {
			if !before.changed[i] || delOK[i] || freeLine(l) {
				continue
			}
			edited := false
			for j, a := range after.lines {
				edited = edited || after.changed[j] && addOK[j] && editOf(l, a)
			}
			if !edited && !slices.Contains(removed, strings.TrimSpace(l)) {
				removed = append(removed, strings.TrimSpace(l))
			}
		}
		first := func(ls []string) string {
			if len(ls) > 3 {
				ls = append(ls[:3:3], "…")
			}
			return strings.Join(ls, "; ")
		}
		why := func(l string) string {
			return ": the rule's check looks for no such line (" + patternsNote(pol.linePatterns, l) + ")"
		}
		if len(added) > 0 {
			out = append(out, Refusal{Entry: "scope", Reason: "would add " + first(added) + " to " + c.Path + why(added[0])})
		}
		if len(removed) > 0 {
			out = append(out, Refusal{Entry: "scope", Reason: "would remove " + first(removed) + " from " + c.Path + why(removed[0])})
		}
	}
	return out
}

// createModeLine reports whether l sets the mode a program creates the
// files the check states with (rsyslog's $FileCreateMode 0640: a keyword
// ending in "mode", an octal value) to one with none of the bits the
// check's file states forbid: the check reads those files' modes, and
// the line makes them so.
func createModeLine(l string, states []string) bool {
	f := strings.Fields(strings.ReplaceAll(l, "=", " "))
	if len(states) == 0 || len(f) != 2 || !strings.HasSuffix(strings.ToLower(f[0]), "mode") || !strings.HasPrefix(f[1], "0") {
		return false
	}
	m, err := strconv.ParseUint(f[1], 8, 32)
	if err != nil || m > 0o7777 {
		return false
	}
	var forbidden uint32
	for _, s := range states {
		forbidden |= modeBits[s]
	}
	return uint32(m)&forbidden == 0
}

// patternsNote names the check's patterns in a refusal of line: the
// first whose text (backslashes dropped) holds the line's first word (an
// audit rule's -a, a PAM line's type), else the first, cut; and how many
// more there are.
func patternsNote(res []string, line string) string {
	p := res[0]
	if f := strings.Fields(line); len(f) > 0 {
		for _, r := range res {
			if strings.Contains(strings.ReplaceAll(r, `\`, ""), f[0]) {
				p = r
				break
			}
		}
	}
	if len(p) > 80 {
		p = p[:80] + "…"
	}
	s := "its pattern " + p
	if len(res) > 1 {
		s = "its patterns include " + p + ", " + plural(len(res)-1, "other")
	}
	return s
}

// FileStatePrefix marks an entry of EffectsPolicy.Keys that names a mode
// bit or owner the check's file states state: an OVAL file_state entity
// (suid, sgid, sticky, uread … oexec, user_id, group_id).
const FileStatePrefix = "state:"

// modeBits are the mode bits of the file_state entities.
var modeBits = map[string]uint32{
	"suid": 0o4000, "sgid": 0o2000, "sticky": 0o1000,
	"uread": 0o400, "uwrite": 0o200, "uexec": 0o100,
	"gread": 0o40, "gwrite": 0o20, "gexec": 0o10,
	"oread": 0o4, "owrite": 0o2, "oexec": 0o1,
}

// modeScopeHarm refuses, with StrictScope and a check that states files'
// modes or owners (a permission or owner rule), the mode and owner
// changes in the rule's paths that change what the check does not state:
// a rule about group- and world-writable binaries removes those bits, it
// does not strip setuid from su and passwd (chmod -R 755) nor make
// /usr/sbin 0700; a rule about /var/log's owner does not change its
// files' group.
func modeScopeHarm(e nightshift.Effects, owned map[string]bool, pol EffectsPolicy) []Refusal {
	if !pol.StrictScope || len(pol.fileStates) == 0 {
		return nil
	}
	var stated uint32
	for _, s := range pol.fileStates {
		stated |= modeBits[s]
	}
	var out []string
	for _, c := range e.Changes {
		if c.Change != nightshift.ChangeMeta && c.Change != nightshift.ChangeModified || c.Before.Kind != c.After.Kind ||
			c.After.Kind == nightshift.FileSymlink || !inScope(c.Path, pol.Scope) || owned[c.Path] || owned[usrAlias(c.Path)] {
			continue
		}
		var what []string
		if bits := (c.Before.Mode ^ c.After.Mode) & 0o7777 &^ stated &^ narrowedBits(c); bits != 0 {
			what = append(what, fmt.Sprintf("mode %04o -> %04o", c.Before.Mode&0o7777, c.After.Mode&0o7777))
		}
		if c.Before.UID != c.After.UID && !slices.Contains(pol.fileStates, "user_id") {
			what = append(what, fmt.Sprintf("owner %d -> %d", c.Before.UID, c.After.UID))
		}
		if c.Before.GID != c.After.GID && !slices.Contains(pol.fileStates, "group_id") {
			what = append(what, fmt.Sprintf("group %d -> %d", c.Before.GID, c.After.GID))
		}
		if len(what) > 0 {
			out = append(out, c.Path+" ("+strings.Join(what, ", ")+")")
		}
	}
	if len(out) == 0 {
		return nil
	}
	n := len(out)
	if n > 3 {
		out = append(out[:3], "and "+plural(n-3, "other"))
	}
	return []Refusal{{Entry: "scope", Reason: "would change " + strings.Join(out, ", ") + ": the rule's check states only " + statedNote(pol.fileStates) + " of its files"}}
}

// narrowedBits are the bits a mode change only takes from a regular,
// non-executable, non-setuid file that the judge lets a permission rule
// take whatever its check states: group's and other's write, and their
// read outside the trees every user's programs read (/etc: passwd,
// nsswitch.conf, resolv.conf; /usr, /lib*, /boot). Narrowing a log file
// to 0640 (chmod g-w,o-rwx) serves a permission rule; a bit added, a
// directory, a program or a setuid file keeps the rule's bits alone.
func narrowedBits(c nightshift.FileChange) uint32 {
	b, a := c.Before.Mode&0o7777, c.After.Mode&0o7777
	if c.Before.Kind != nightshift.FileRegular || c.After.Kind != nightshift.FileRegular || b&0o7111 != 0 || a&^b != 0 {
		return 0
	}
	bits := uint32(0o022)
	if _, shared := underAny(c.Path, []string{"/etc", "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/bin", "/sbin"}); !shared {
		bits |= 0o044
	}
	return (b &^ a) & bits
}

// statedNote names what the check's file states state.
func statedNote(states []string) string {
	var bits, owners []string
	for _, s := range slices.Sorted(slices.Values(states)) {
		switch s {
		case "user_id":
			owners = append(owners, "the owner")
		case "group_id":
			owners = append(owners, "the group")
		default:
			bits = append(bits, s)
		}
	}
	if len(bits) > 0 {
		owners = append([]string{"the mode bits " + strings.Join(slices.Compact(bits), ", ")}, owners...)
	}
	return strings.Join(owners, " and ")
}

// secretFiles are files whose content is a secret: a setting that shows
// or writes a file (sshd's Banner, AIDE's database_out, sudo's logfile)
// never names them.
var secretFiles = strings.Fields("/etc/shadow /etc/shadow- /etc/gshadow /etc/gshadow- /etc/security/opasswd /etc/sudoers")

// readDirs are directories whose every file a program reads as its
// configuration or commands: a setting that writes a file (a log, a
// database) never names a file in them.
var readDirs = strings.Fields(`/etc/sudoers.d /etc/pam.d /etc/cron.d /etc/cron.hourly /etc/cron.daily /etc/cron.weekly /etc/cron.monthly
	/etc/profile.d /etc/sysctl.d /etc/modprobe.d /etc/ssh/sshd_config.d /etc/ssh/ssh_config.d /etc/audit/rules.d /etc/security/limits.d
	/etc/apt/apt.conf.d /etc/apt/sources.list.d /etc/ld.so.conf.d /etc/systemd/system /etc/rsyslog.d /etc/logrotate.d /etc/init.d /etc/udev/rules.d`)

// includeKeywords name what another file is read from: their paths are
// judged elsewhere (sshd's Include, sudo's includes) or name keys
// (HostKey).
var includeKeywords = strings.Fields("include includedir #include #includedir @include @includedir hostkey hostcertificate")

// valuePathHarm refuses lines added to a key-value file of the scope
// (sshd's configuration, kvFile) whose value names a secret file or a
// file in a directory another program reads whole: Banner
// /etc/ssh/ssh_host_ed25519_key shows the host's private key to anyone
// who connects, AIDE's database_out=file:/etc/shadow overwrites the
// password hashes, sudo's logfile=/etc/sudoers.d/log makes sudo parse its
// own log as rules.
func valuePathHarm(e nightshift.Effects, owned map[string]bool, pol EffectsPolicy) []Refusal {
	if !pol.StrictScope {
		return nil
	}
	var out []Refusal
	for _, c := range e.Changes {
		if !inScope(c.Path, pol.Scope) || owned[c.Path] || c.After.Kind != nightshift.FileRegular || !isSSHDConfig(c.Path) && kvFile(c.Path).keysOf == nil {
			continue
		}
		for _, l := range addedLines(c.Diff) {
			if freeLine(l) {
				continue
			}
			f := strings.FieldsFunc(l, func(r rune) bool { return r == ' ' || r == '\t' || r == '=' || r == ',' || r == '"' || r == '\'' })
			if len(f) < 2 || slices.Contains(includeKeywords, strings.ToLower(f[0])) {
				continue
			}
			for _, w := range f[1:] {
				w = strings.TrimPrefix(w, "file:")
				if !strings.HasPrefix(w, "/") {
					continue
				}
				p := path.Clean(w)
				secret := slices.Contains(secretFiles, p) || strings.HasPrefix(p, "/etc/ssh/ssh_host_") && !strings.HasSuffix(p, ".pub")
				if _, read := underAny(p, readDirs); secret || read && !slices.Contains(readDirs, p) {
					why := "a file whose content is a secret"
					if !secret {
						why = "a file in a directory another program reads whole as its configuration"
					}
					out = append(out, Refusal{Entry: "config", Reason: "would set " + strings.TrimSpace(l) + " in " + c.Path + ": its value names " + p + ", " + why})
				}
			}
		}
	}
	return out
}

// sysctlSlashHarm refuses, with StrictScope and the rule's kernel
// parameters known, a line of a sysctl file of the scope that sets one
// in the slash form (net/ipv4/ip_forward = 1): sysctl and systemd-sysctl
// apply it, the check's patterns, written with dots, do not read it, so
// the check passes on a value it never saw.
func sysctlSlashHarm(e nightshift.Effects, owned map[string]bool, pol EffectsPolicy) []Refusal {
	if !pol.StrictScope || len(sysctlKeys(pol)) == 0 {
		return nil
	}
	var out []Refusal
	for _, c := range e.Changes {
		if !isSysctlFile(c.Path) || !inScope(c.Path, pol.Scope) || owned[c.Path] || c.After.Kind != nightshift.FileRegular {
			continue
		}
		for _, l := range addedLines(c.Diff) {
			k, _, ok := strings.Cut(l, "=")
			if !ok || freeLine(l) || !strings.Contains(k, "/") {
				continue
			}
			out = append(out, Refusal{Entry: "scope", Reason: "would set " + strings.TrimSpace(l) + " in " + c.Path + " in the slash form: the check reads kernel parameters written with dots (" + sysctlKey(k) + ")"})
		}
	}
	return out
}
