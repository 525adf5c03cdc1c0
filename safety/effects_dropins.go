package safety

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// Drop-in directories the program reads. A rule whose check reads a
// program's main configuration file may fix it where the program also
// reads its settings: the drop-in directory the program reads together
// with that file. Those files join the rule's Scope (dropinScope), and
// every other discipline applies to them as to the main file: the line
// and keyword discipline (keysHarm, the check's line patterns), the
// sshd lockout judge, the sudoers judge. Only the names the program
// reads are in scope (sshd's Include glob *.conf, not a backup a sed
// left), so a file the program skips is still outside the rule's paths.
//
// The programs, and why:
//
//   - sshd: /etc/ssh/sshd_config.d/*.conf, the Include Debian 12's
//     sshd_config states first (the first value of a keyword wins, so a
//     drop-in decides);
//   - libpwquality: /etc/security/pwquality.conf.d/*.conf, read after
//     pwquality.conf;
//   - systemd's X.conf (/etc/systemd/X.conf): /etc/systemd/X.conf.d/*.conf;
//   - rsyslog: /etc/rsyslog.d/*.conf, Debian's rsyslog.conf
//     $IncludeConfig;
//   - pam_limits: /etc/security/limits.d/*.conf;
//   - grub-mkconfig: /etc/default/grub.d/*.cfg, sourced after
//     /etc/default/grub;
//   - sudo: its @includedir /etc/sudoers.d is in the sudo rules' own
//     paths already; which of its names sudo reads is sudoersRead's;
//   - login.defs, auditd.conf and the others: no drop-in directory.
var dropinDirs = []struct{ file, glob string }{
	{"/etc/ssh/sshd_config", "/etc/ssh/sshd_config.d/*.conf"},
	{"/etc/security/pwquality.conf", "/etc/security/pwquality.conf.d/*.conf"},
	{"/etc/rsyslog.conf", "/etc/rsyslog.d/*.conf"},
	{"/etc/security/limits.conf", "/etc/security/limits.d/*.conf"},
	{"/etc/default/grub", "/etc/default/grub.d/*.cfg"},
}

// dropinHarm holds the lines a command adds to a drop-in file of
// dropinScope to a stricter standard than the main file's: the rule's
// check reads the main file, not the drop-in, yet the drop-in decides
// (sshd takes a keyword's first value, and Debian's Include comes first;
// the other programs read their drop-ins after the main file). So every
// line added there (comments and blank lines free) must be vouched for by
// the check itself: one of its line patterns matches it, or one of its
// value checks matches it and accepts the value. A keyword whose value
// the check computes (RekeyLimit from a variable) is not vouched for and
// stays in the main file, where the check sees it.
func dropinHarm(e nightshift.Effects, owned map[string]bool, pol EffectsPolicy) []Refusal {
	if !pol.StrictScope || len(pol.dropins) == 0 {
		return nil
	}
	res := vouchPatterns(pol.linePatterns)
	type vc struct {
		c  ValueCheck
		re *regexp.Regexp
	}
	var vcs []vc
	for _, c := range pol.valueChecks {
		if re, err := regexp.Compile("(?m)" + strings.ReplaceAll(c.Pattern, "(?!#)", "")); err == nil && re.NumSubexp() > 0 {
			vcs = append(vcs, vc{c, re})
		}
	}
	var out []Refusal
	for _, ch := range e.Changes {
		if owned[ch.Path] || !inScope(ch.Path, pol.dropins) || inScope(ch.Path, pol.Scope[:len(pol.Scope)-len(pol.dropins)]) ||
			ch.After.Kind != nightshift.FileRegular || (ch.Change != nightshift.ChangeCreated && ch.Change != nightshift.ChangeModified) {
			continue
		}
		if ch.Diff == "" {
			out = append(out, Refusal{Entry: "scope", Reason: "would change the drop-in " + ch.Path + " whose lines were not captured: the judge cannot see what it sets"})
			continue
		}
		before, after := hunkSides(ch.Diff)
		ok := after.matched(res)
		vouched := func(i int) bool {
			return ok[i] || slices.ContainsFunc(vcs, func(x vc) bool {
				m := x.re.FindStringSubmatch(after.lines[i])
				if m == nil || m[1] == "" {
					return false
				}
				acc, known := x.c.accepts(m[1])
				return acc && known
			})
		}
		var bad, gone []string
		var good []string
		for i, l := range after.lines {
			switch {
			case !after.changed[i] || freeLine(l):
			case vouched(i):
				good = append(good, l)
			default:
				bad = append(bad, strings.TrimSpace(l))
			}
		}
		// A line removed from a drop-in (a comment or blank line aside)
		// must be edited into a line the check vouches for: the drop-in
		// is not the check's file, so the check cannot say what a line
		// it never read did (sed -z joining a PAM service into one
		// comment, a pam_unix line deleted).
		for i, l := range before.lines {
			if before.changed[i] && !freeLine(l) && !slices.ContainsFunc(good, func(a string) bool { return editOf(l, a) }) {
				gone = append(gone, strings.TrimSpace(l))
			}
		}
		if len(gone) > 0 {
			out = append(out, Refusal{Entry: "scope", Reason: fmt.Sprintf("would remove %s from the drop-in %s: the rule's check reads %s, not its drop-ins, and only an edit into a line the check vouches for may remove one",
				strings.Join(gone, "; "), ch.Path, dropinMain(ch.Path))})
		}
		if len(bad) > 0 {
			out = append(out, Refusal{Entry: "scope", Reason: fmt.Sprintf("would set %s in the drop-in %s: the rule's check reads %s, not its drop-ins, and does not vouch for the line (no pattern of its matches it, no value it states accepts it)",
				strings.Join(bad, "; "), ch.Path, dropinMain(ch.Path))})
		}
	}
	return out
}

// vouchPatterns compiles the check's line patterns for dropinHarm. A
// negative look-ahead, which Go's syntax lacks, is dropped (it only
// narrows what the pattern matches: pam_lastlog's (?!.*\ssilent\s)), so
// the line must still match everything else the pattern states; a
// pattern that still does not compile vouches for nothing.
func vouchPatterns(pats []string) []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, p := range pats {
		if re, err := regexp.Compile("(?m)" + dropLookaheads(p)); err == nil {
			out = append(out, re)
		}
	}
	return out
}

// dropLookaheads removes every (?!…) group of a pattern (its parentheses
// balanced, escapes skipped).
func dropLookaheads(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			b.WriteString(p[i : i+2])
			i++
			continue
		}
		if !strings.HasPrefix(p[i:], "(?!") {
			b.WriteByte(p[i])
			continue
		}
		depth, j := 0, i
		for ; j < len(p); j++ {
			switch {
			case p[j] == '\\':
				j++
			case p[j] == '(':
				depth++
			case p[j] == ')':
				depth--
			}
			if depth == 0 {
				break
			}
		}
		i = j
	}
	return b.String()
}

// dropinMain is the main file whose drop-in p is.
func dropinMain(p string) string {
	for _, d := range dropinDirs {
		if scopeCovers(d.glob, p) {
			return d.file
		}
	}
	var rhel []string
	for f, ps := range pamStandIns {
		if slices.Contains(ps, p) {
			rhel = append(rhel, f)
		}
	}
	if len(rhel) > 0 {
		slices.Sort(rhel)
		return strings.Join(rhel, " or ") + " (RHEL's; " + p + " runs its module type on Debian)"
	}
	if dir, ok := strings.CutSuffix(path.Dir(p), ".d"); ok {
		return dir
	}
	return "the main file"
}

// PAM services by module. SSG's checks name RHEL's PAM files, which a
// Debian host lacks and none of its services includes: postlogin (the
// session modules run after login) and system-auth / password-auth (the
// shared stacks). The Debian services that run the same module types
// stand in for them: for postlogin the session stacks of the login
// services (login, sshd, common-session), for the shared stacks Debian's
// common-* files. They join the scope like drop-ins, under dropinHarm:
// every line added must be one the check's patterns match (pam_lastlog
// showfailed, not a second module), and the PAM lockout judges apply as
// everywhere.
var pamStandIns = map[string][]string{
	"/etc/pam.d/postlogin":     {"/etc/pam.d/login", "/etc/pam.d/sshd", "/etc/pam.d/common-session"},
	"/etc/pam.d/system-auth":   {"/etc/pam.d/common-auth", "/etc/pam.d/common-account", "/etc/pam.d/common-password", "/etc/pam.d/common-session"},
	"/etc/pam.d/password-auth": {"/etc/pam.d/common-auth", "/etc/pam.d/common-account", "/etc/pam.d/common-password", "/etc/pam.d/common-session"},
}

// dropinScope returns scope with the drop-in files of its main files
// and the Debian stand-ins of its RHEL PAM files added (each once).
func dropinScope(scope []string) []string {
	out := slices.Clip(scope)
	add := func(g string) {
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	for _, s := range scope {
		for _, d := range dropinDirs {
			if s == d.file {
				add(d.glob)
			}
		}
		for _, p := range pamStandIns[s] {
			add(p)
		}
		if dir, base := path.Split(s); dir == "/etc/systemd/" && strings.HasSuffix(base, ".conf") {
			add(s + ".d/*.conf")
		}
	}
	return out
}
