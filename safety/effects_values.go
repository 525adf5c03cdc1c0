package safety

import (
	"encoding/json"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// Values must move toward the check. Where the check states the value a
// line must hold (an OVAL textfilecontent54 state's subexpression: the
// first group of the object's pattern compared with an operation to a
// literal or to an XCCDF value), a line a command adds to the rule's
// files that the pattern matches must hold a value the check accepts:
// LoginGraceTime 0 is refused (SSG's state: greater than 0), dcredit = 9
// is refused (less than or equal to var_password_pam_dcredit, -1 by
// default). A value compared with an XCCDF value counts as accepted when
// it satisfies the comparison with any value the datastream gives it (its
// default, a selector, a profile's set-value): the judge does not know the
// profile the check runs with.

// ValueKeyPrefix marks an entry of EffectsPolicy.Keys that is a ValueCheck
// (its JSON form after the prefix).
const ValueKeyPrefix = "value:"

// ValueCheck is a value the check states for the lines its pattern
// matches: Pattern's first group compared by Operation (OVAL's: "equals",
// "not equal", "less than", "less than or equal", "greater than",
// "greater than or equal", "pattern match", "case insensitive equals")
// as Datatype ("int", "string"; anything else is compared as a string) to
// one of Values.
type ValueCheck struct {
	Pattern   string   `json:"re"`
	Operation string   `json:"op"`
	Datatype  string   `json:"type"`
	Values    []string `json:"values"`
	// every: v must satisfy the comparison with every value, not one
	// (a sibling kernel parameter's check, withSiblings).
	every bool
}

// Key is c as an entry of EffectsPolicy.Keys.
func (c ValueCheck) Key() string {
	b, _ := json.Marshal(c) // strings only: cannot fail
	return ValueKeyPrefix + string(b)
}

// accepts reports whether v satisfies the comparison with one of the
// values; known is false when the comparison cannot be made (a value
// that is not a number for an int, an unknown operation).
func (c ValueCheck) accepts(v string) (ok, known bool) {
	if c.every {
		for _, want := range c.Values {
			if sat, k := compareValue(v, c.Operation, c.Datatype, want); !sat || !k {
				return false, k
			}
		}
		return len(c.Values) > 0, len(c.Values) > 0
	}
	for _, want := range c.Values {
		sat, k := compareValue(v, c.Operation, c.Datatype, want)
		if !k {
			continue
		}
		known = true
		if sat {
			return true, true
		}
	}
	return false, known
}

func compareValue(v, op, typ, want string) (sat, known bool) {
	if op == "" {
		op = "equals"
	}
	if typ == "int" {
		a, err1 := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		b, err2 := strconv.ParseInt(strings.TrimSpace(want), 10, 64)
		if err1 != nil || err2 != nil {
			return false, false
		}
		switch op {
		case "equals":
			return a == b, true
		case "not equal":
			return a != b, true
		case "less than":
			return a < b, true
		case "less than or equal":
			return a <= b, true
		case "greater than":
			return a > b, true
		case "greater than or equal":
			return a >= b, true
		}
		return false, false
	}
	switch op {
	case "equals":
		return v == want, true
	case "not equal":
		return v != want, true
	case "case insensitive equals":
		return strings.EqualFold(v, want), true
	case "pattern match":
		re, err := regexp.Compile(want)
		if err != nil {
			return false, false
		}
		return re.MatchString(v), true
	}
	return false, false
}

// valueChecks decodes the ValueChecks of Keys (withDefaults moves them
// out); an entry that does not decode is dropped.
func valueChecks(raw []string) []ValueCheck {
	var out []ValueCheck
	for _, r := range raw {
		var c ValueCheck
		if json.Unmarshal([]byte(r), &c) == nil && c.Pattern != "" && len(c.Values) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// valueHarm refuses, with StrictScope, a line added to a file of the
// rule's scope that one of the check's patterns matches with a value its
// state does not accept.
func valueHarm(e nightshift.Effects, owned map[string]bool, pol EffectsPolicy) []Refusal {
	if !pol.StrictScope || len(pol.valueChecks) == 0 {
		return nil
	}
	type compiled struct {
		c  ValueCheck
		re *regexp.Regexp
	}
	var cs []compiled
	for _, c := range pol.valueChecks {
		re, err := regexp.Compile("(?m)" + strings.ReplaceAll(c.Pattern, "(?!#)", ""))
		if err != nil || re.NumSubexp() == 0 {
			continue // not readable here: judged by the classes
		}
		cs = append(cs, compiled{c, re})
	}
	var out []Refusal
	for _, ch := range e.Changes {
		if !inScope(ch.Path, pol.Scope) || owned[ch.Path] || ch.After.Kind != nightshift.FileRegular ||
			(ch.Change != nightshift.ChangeCreated && ch.Change != nightshift.ChangeModified) || ch.Diff == "" {
			continue
		}
		_, after := hunkSides(ch.Diff)
		var bad []string
		for _, x := range cs {
			for _, m := range x.re.FindAllStringSubmatchIndex(after.text, -1) {
				if m[2] < 0 || !after.changedAt(m[2], m[3]) {
					continue
				}
				v := after.text[m[2]:m[3]]
				if ok, known := x.c.accepts(v); known && !ok {
					w := strings.TrimSpace(after.lineAt(m[2])) + " (the check wants " + x.c.Operation + " " + strings.Join(x.c.Values, " or ") + ")"
					if !slices.Contains(bad, w) {
						bad = append(bad, w)
					}
				}
			}
		}
		if len(bad) > 0 {
			out = append(out, Refusal{Entry: "scope", Reason: "would set " + strings.Join(bad, "; ") + " in " + ch.Path + ": a value the rule's check does not accept"})
		}
	}
	return out
}

// changedAt reports whether the text between offsets a and b lies on a
// line the diff changed.
func (s diffSide) changedAt(a, b int) bool {
	for i, st := range s.starts {
		end := st + len(s.lines[i])
		if a <= end && b >= st && s.changed[i] {
			return true
		}
	}
	return false
}

// lineAt is the line of s at offset a.
func (s diffSide) lineAt(a int) string {
	for i, st := range s.starts {
		if a >= st && a <= st+len(s.lines[i]) {
			return s.lines[i]
		}
	}
	return ""
}

// writablePlaces are the trees any local user may write: a file there can
// be made, replaced or read by someone other than root.
var writablePlaces = strings.Fields("/tmp /var/tmp /dev/shm /run/user /run/shm /var/crash /var/lib/php/sessions")

// pathWords returns the absolute paths a configuration line names: words
// split at blanks, "=", ",", quotes and brackets, a file: or file://
// prefix dropped.
func pathWords(l string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(l, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '=' || r == ',' || r == '"' || r == '\'' || r == '[' || r == ']' || r == '(' || r == ')' || r == ';'
	}) {
		w = strings.TrimPrefix(strings.TrimPrefix(w, "file://"), "file:")
		if strings.HasPrefix(w, "/") {
			out = append(out, path.Clean(w))
		}
	}
	return out
}

// writablePathHarm refuses, with StrictScope, a line added to a
// configuration file of the rule's scope whose value names a place any
// user can write (writablePlaces) or a home other than root's: what the
// program then reads from there (a dictionary, an included
// configuration, a keyring, a mirror list, a library path) or writes
// there (a log, a history) is another user's to forge, replace or read.
// A place the rule's paths name or lie under is the check's own
// (namespace.conf's /tmp for /tmp/tmp-inst). Not judged: /etc/fstab and mount units (a mount point is a place, not
// what a program reads), audit rules (a watch names what is watched).
func writablePathHarm(e nightshift.Effects, owned map[string]bool, pol EffectsPolicy) []Refusal {
	if !pol.StrictScope {
		return nil
	}
	var out []Refusal
	for _, c := range e.Changes {
		if !inScope(c.Path, pol.Scope) || owned[c.Path] || c.After.Kind != nightshift.FileRegular || c.Path == "/etc/fstab" ||
			isUnitPath(c.Path) && strings.HasSuffix(c.Path, ".mount") || strings.HasPrefix(c.Path, "/etc/audit/") && strings.HasSuffix(c.Path, ".rules") ||
			!under(c.Path, "/etc") {
			continue
		}
		for _, l := range addedLines(c.Diff) {
			if freeLine(l) {
				continue
			}
			for _, p := range pathWords(l) {
				place, bad := underAny(p, writablePlaces)
				if !bad && under(p, "/home") && p != "/home" {
					place, bad = "a home", true
				}
				if bad && (inScope(p, pol.Scope) || slices.ContainsFunc(pol.Scope, func(s string) bool { return under(s, p) })) {
					bad = false // the place the rule's check reads (polyinstantiated /tmp)
				}
				if bad {
					out = append(out, Refusal{Entry: "config", Reason: "would set " + strings.TrimSpace(l) + " in " + c.Path + ": its value names " + p + ", in " + place + ", which users other than root can write"})
					break
				}
			}
		}
	}
	return out
}
