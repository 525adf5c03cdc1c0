package safety

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/shell"
)

// The login shells' start-up files set the environment of every login,
// root's included: a variable set there (LD_LIBRARY_PATH=/var/tmp,
// PATH=.:$PATH, HISTFILE=/dev/null, a readonly TMOUT=0 before the checked
// line) reaches every shell. With StrictScope, a line a command adds to
// /etc/profile, /etc/profile.d, /etc/bash.bashrc or /etc/environment
// may assign, declare, export, make read-only or unset only the variables
// the rule's check names (the NAME= of its line patterns, its keywords);
// the lines are parsed as bash parses them (package shell), so
// declare -xr TMOUT=900 HISTFILE=/dev/null sets HISTFILE. A line bash
// would not parse is refused in these files.

// shellStartupFile reports whether p is read by every login shell.
func shellStartupFile(p string) bool {
	return p == "/etc/profile" || p == "/etc/bash.bashrc" || p == "/etc/environment" || path.Dir(p) == "/etc/profile.d"
}

// patternVar is a variable a line pattern assigns: TMOUT in
// (?:typeset|declare)[\s]+-xr[\s]+TMOUT=.
var patternVar = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)=`)

// checkVars are the variables the rule's check names.
func checkVars(pol EffectsPolicy) []string {
	var out []string
	for _, re := range pol.linePatterns {
		for _, m := range patternVar.FindAllStringSubmatch(re, -1) {
			out = append(out, m[1])
		}
	}
	for _, k := range pol.Keys {
		if patternVar.MatchString(k + "=") {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// assignedVars returns the variables src assigns, declares, exports,
// makes read-only or unsets; false when bash would not parse it.
func assignedVars(src string) ([]string, bool) {
	f, err := shell.Parse(src)
	if err != nil {
		return nil, false
	}
	var out []string
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Assign:
			if x.Name != nil {
				out = append(out, x.Name.Value)
			}
		case *syntax.DeclClause:
			for _, a := range x.Args {
				if a.Name == nil && a.Value != nil {
					// declare -x NAME: a name given as a word.
					if lit := a.Value.Lit(); lit != "" && !strings.HasPrefix(lit, "-") {
						out = append(out, lit)
					}
				}
			}
		case *syntax.CallExpr:
			if len(x.Args) > 1 {
				switch x.Args[0].Lit() {
				case "unset", "export", "readonly", "declare", "typeset", "local":
					for _, w := range x.Args[1:] {
						if lit := w.Lit(); lit != "" && !strings.HasPrefix(lit, "-") {
							name, _, _ := strings.Cut(lit, "=")
							out = append(out, name)
						}
					}
				}
			}
		}
		return true
	})
	slices.Sort(out)
	return slices.Compact(out), true
}

// shellVarsHarm refuses, with StrictScope, lines added to the login
// shells' start-up files that set variables the rule's check does not
// name.
func shellVarsHarm(e nightshift.Effects, owned map[string]bool, pol EffectsPolicy) []Refusal {
	if !pol.StrictScope {
		return nil
	}
	allowed := checkVars(pol)
	var out []Refusal
	for _, c := range e.Changes {
		if !shellStartupFile(c.Path) || owned[c.Path] || c.After.Kind != nightshift.FileRegular {
			continue
		}
		// A line the command removed and wrote back as it was (a file
		// rewritten whole) sets nothing new.
		var kept []string
		for _, l := range removedLines(c.Diff) {
			kept = append(kept, strings.TrimSpace(l))
		}
		var added []string
		for _, l := range addedLines(c.Diff) {
			if !freeLine(l) && !slices.Contains(kept, strings.TrimSpace(l)) {
				added = append(added, l)
			}
		}
		if len(added) == 0 {
			continue
		}
		// /etc/environment's KEY=VALUE lines (pam_env) read as
		// assignments too.
		vars, ok := assignedVars(strings.Join(added, "\n"))
		if !ok {
			// An added block bash does not parse alone (a line of a
			// construct the file already holds): each line that does.
			for _, l := range added {
				if v, ok := assignedVars(l); ok {
					vars = append(vars, v...)
				}
			}
		}
		var other []string
		for _, v := range vars {
			if !slices.Contains(allowed, v) && !slices.Contains(other, v) {
				other = append(other, v)
			}
		}
		if len(other) == 0 {
			continue
		}
		names := "names no variable"
		if len(allowed) > 0 {
			names = "names only " + strings.Join(allowed, ", ")
		}
		out = append(out, Refusal{Entry: "scope", Reason: "would set " + strings.Join(other, ", ") + " for every login shell (" + c.Path + "): the rule's check " + names})
	}
	return out
}
