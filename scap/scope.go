package scap

import (
	"encoding/xml"
	"fmt"
	"path"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/nightshift-dev/nightshift/safety"
)

// OVALNamespace is the namespace of OVAL 5 definitions, tests, objects,
// states and variables in a datastream.
const OVALNamespace = "http://oval.mitre.org/XMLSchema/oval-definitions-5"

// FileScope is what a rule's OVAL check reads from the file system: the
// paths a fix for the rule is expected to change (the rule's scope for
// safety.EffectsPolicy).
type FileScope struct {
	// Paths are files and directory trees, sorted, without duplicates: a
	// literal filepath is a file; a path whose file name (or a trailing
	// part) is a regular expression is the literal directory before it
	// (^/etc/ssh/sshd_config\.d/.*\.conf$ is /etc/ssh/sshd_config.d).
	// Empty for checks that read no files (package_*_installed,
	// service_*_enabled: their changes come from the package manager or
	// recorded actions).
	Paths []string
	// Complete is false when some object's path could not be resolved to
	// a literal (an external variable, a value computed from the host, a
	// regular expression without a literal directory): Paths then
	// under-states what the check reads and must not be used as a
	// default-deny scope.
	Complete bool
	// Unresolved says what was not resolved, for reports.
	Unresolved []string
	// Units are the systemd units the check reads (systemdunitproperty
	// objects, the dependencies a systemdunitdependency state requires:
	// auditd.service), sorted, without duplicates.
	Units []string
	// Sysctl are the kernel parameters the check reads (sysctl objects:
	// kernel.kptr_restrict).
	Sysctl []string
	// Keys are the keywords the check's text patterns match at the start
	// of a line (^[ \t]*PermitRootLogin[ \t]+… is PermitRootLogin;
	// ^[\s]*kernel.kptr_restrict[\s]*=… is kernel.kptr_restrict), also
	// after a newline inside the pattern, with what some keywords name
	// after them (a modprobe command's module: install and rds; a sudo
	// Defaults option: Defaults and use_pty), and the mount point of an
	// fstab pattern (/dev/shm): the settings a fix is expected to change
	// in the rule's files. A mount point is not a rules file keyword
	// (rules' keyNameRe): only scap derives it. Keys also holds each
	// literal text pattern of the check itself, as
	// safety.LinePatternPrefix followed by the pattern: the lines a fix
	// adds to the rule's files that no keyword names (PAM stacks, audit
	// rules, profile scripts) must be lines the check looks for
	// (package safety, effects_lines.go). And the mode bits and owners the
	// check's file states state (suid … oexec, user_id, group_id), each as
	// safety.FileStatePrefix followed by the entity's name: a mode or owner
	// change a fix makes in the rule's paths changes only those
	// (effects_lines.go). And the values the check states (a
	// safety.ValueCheck each, safety.ValueKeyPrefix and its JSON form;
	// effects_values.go).
	Keys []string
}

// Scope returns the FileScope of a rule (full or short id) derived from
// its OVAL check when the datastream was parsed; false when the rule is
// unknown or has no OVAL check.
func (d *Datastream) Scope(id string) (FileScope, bool) {
	i, ok := d.ruleIndex[id]
	if !ok {
		return FileScope{}, false
	}
	fs, ok := d.scopes[d.rules[i].ID]
	fs.Paths = slices.Clone(fs.Paths)
	fs.Unresolved = slices.Clone(fs.Unresolved)
	fs.Units, fs.Sysctl, fs.Keys = slices.Clone(fs.Units), slices.Clone(fs.Sysctl), slices.Clone(fs.Keys)
	return fs, ok
}

// ovalNode is any OVAL element, kept whole.
type ovalNode struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Text     string     `xml:",chardata"`
	Children []ovalNode `xml:",any"`
}

func (n ovalNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (n ovalNode) child(local string) *ovalNode {
	for i := range n.Children {
		if n.Children[i].XMLName.Local == local {
			return &n.Children[i]
		}
	}
	return nil
}

// isOVAL reports whether se is an OVAL definition, test, object, state or
// variable (an element of the OVAL definitions namespaces with an oval: id).
func isOVAL(se xml.StartElement) bool {
	return strings.Contains(se.Name.Space, "oval-definitions-5") && strings.HasPrefix(attrOf(se, "id"), "oval:")
}

// deriveScopes derives, for every rule with an OVAL check, the files its
// check reads (FileScope), keyed by the rule's full id. It follows the
// check's definition through extend_definition, its tests' objects,
// object sets and variables (constant values and literal components;
// object components add the paths of the objects they read).
func deriveScopes(ruleDefs map[string][]string, byID map[string]ovalNode) map[string]FileScope {
	out := make(map[string]FileScope, len(ruleDefs))
	for rule, defs := range ruleDefs {
		w := scopeWalk{byID: byID, seen: map[string]bool{}, paths: map[string]bool{}, units: map[string]bool{}, sysctl: map[string]bool{}, keys: map[string]bool{}}
		for _, d := range defs {
			w.ref(d)
		}
		if w.openLines {
			for k := range w.keys {
				if strings.HasPrefix(k, safety.LinePatternPrefix) {
					delete(w.keys, k)
				}
			}
		}
		fs := FileScope{Complete: len(w.unresolved) == 0, Unresolved: w.unresolved,
			Units: sortedSet(w.units), Sysctl: sortedSet(w.sysctl), Keys: sortedSet(w.keys)}
		fs.Paths = dropCovered(sortedSet(w.paths))
		if slices.ContainsFunc(fs.Paths, bootConfig) {
			for _, a := range kernelArgs(w.texts) {
				fs.Keys = append(fs.Keys, safety.KernelArgPrefix+a)
			}
			slices.Sort(fs.Keys)
			fs.Keys = slices.Compact(fs.Keys)
		}
		out[rule] = fs
	}
	return out
}

func attrOf(se xml.StartElement, local string) string {
	for _, a := range se.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// sortedSet is m's keys, sorted (nil when empty).
func sortedSet(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// scopeWalk collects the paths, units, kernel parameters and keywords one
// rule's check reads.
type scopeWalk struct {
	byID       map[string]ovalNode
	seen       map[string]bool
	paths      map[string]bool
	units      map[string]bool
	sysctl     map[string]bool
	keys       map[string]bool
	unresolved []string
	// mounts: the walk read the host's mount points (a partition_object's
	// mount_point), which name every local file system.
	mounts bool
	// openLines: the check's line patterns do not say what lines a fix
	// writes: one is computed on the host (a var_ref), or a test wants its
	// pattern's lines absent (check_existence none_exist: the pattern names
	// what a fix removes, not what it adds). The rule then gets no line
	// patterns, and its lines are judged without them.
	openLines bool
	// texts are the check's text patterns and the literal parts of its
	// states' subexpressions (a concat's literal components too): where a
	// boot-configuration check names the kernel arguments it reads
	// (kernelArgs).
	texts []string
}

func (w *scopeWalk) miss(format string, a ...any) {
	w.unresolved = append(w.unresolved, fmt.Sprintf(format, a...))
}

// ref follows an OVAL id: a definition, test, object, state or variable.
func (w *scopeWalk) ref(id string) {
	if w.seen[id] {
		return
	}
	w.seen[id] = true
	n, ok := w.byID[id]
	if !ok {
		w.miss("%s is not in the datastream", id)
		return
	}
	if strings.HasSuffix(n.XMLName.Local, "_object") {
		w.object(n)
		return
	}
	if n.XMLName.Local == "file_state" {
		w.fileState(n) // an object's filter
		return
	}
	if strings.HasPrefix(n.XMLName.Local, "textfilecontent") && strings.HasSuffix(n.XMLName.Local, "_test") && n.attr("check_existence") == "none_exist" {
		w.openLines = true
	}
	w.refsIn(n)
}

// fileStateEntities are the file_state entities that state a file's mode
// bits and owners.
var fileStateEntities = strings.Fields("suid sgid sticky uread uwrite uexec gread gwrite gexec oread owrite oexec user_id group_id")

// fileState adds the mode bits and owners a file_state states, as
// safety.FileStatePrefix keys: what a fix for a permission or owner rule
// may change.
func (w *scopeWalk) fileState(n ovalNode) {
	for _, c := range n.Children {
		if slices.Contains(fileStateEntities, c.XMLName.Local) {
			w.keys[safety.FileStatePrefix+c.XMLName.Local] = true
		}
	}
}

// refsIn follows every reference inside n (criteria, tests' objects and
// states, object sets, variables' components).
func (w *scopeWalk) refsIn(n ovalNode) {
	for _, a := range []string{"test_ref", "definition_ref", "object_ref", "var_ref"} {
		if v := n.attr(a); v != "" {
			w.ref(v)
		}
	}
	for _, c := range n.Children {
		switch c.XMLName.Local {
		case "object_reference", "filter", "var_ref":
			w.ref(strings.TrimSpace(c.Text))
		case "state":
			w.state(c.attr("state_ref"))
		default:
			w.refsIn(c)
		}
	}
}

// state adds the units a systemdunitdependency state requires (the
// services a service_*_enabled check wants among multi-user.target's
// dependencies). Other states are not followed: they name no file the
// check reads.
func (w *scopeWalk) state(id string) {
	n, ok := w.byID[id]
	if ok && n.XMLName.Local == "file_state" {
		w.fileState(n)
		return
	}
	if ok && strings.HasPrefix(n.XMLName.Local, "textfilecontent") {
		w.stateTexts(n)
		return
	}
	if !ok || n.XMLName.Local != "systemdunitdependency_state" {
		return
	}
	for _, c := range n.Children {
		if c.XMLName.Local == "dependency" && c.attr("var_ref") == "" {
			if u := strings.TrimSpace(c.Text); u != "" {
				w.units[u] = true
			}
		}
	}
}

// literal returns an entity's literal text when it is compared for
// equality (no operation, or "equals"), "" otherwise.
func literal(e *ovalNode) string {
	if e == nil || e.attr("var_ref") != "" || (e.attr("operation") != "" && e.attr("operation") != "equals") {
		return ""
	}
	return strings.TrimSpace(e.Text)
}

// object adds the paths a file-reading object reads, the unit of a
// systemdunitproperty object, the parameter of a sysctl object and the
// keyword of a text pattern; other objects only have their references
// followed.
func (w *scopeWalk) object(n ovalNode) {
	switch n.XMLName.Local {
	case "partition_object":
		w.mounts = true
	case "sysctl_object":
		if k := literal(n.child("name")); k != "" {
			w.sysctl[k] = true
		}
	case "systemdunitproperty_object":
		if u := literal(n.child("unit")); u != "" {
			w.units[u] = true
		}
	case "textfilecontent54_object", "textfilecontent_object":
		if p := n.child("pattern"); p != nil && p.attr("var_ref") != "" {
			w.openLines = true
		} else if p != nil {
			for _, k := range patternKeywords(strings.TrimSpace(p.Text)) {
				w.keys[k] = true
			}
			// The pattern itself judges the lines no keyword names.
			if re := strings.TrimSpace(p.Text); re != "" {
				w.texts = append(w.texts, re)
				w.keys[safety.LinePatternPrefix+re] = true
			}
		}
	}
	if fixed, ok := implicitFiles[n.XMLName.Local]; ok {
		for _, p := range fixed {
			w.add(p, "")
		}
	}
	// A file object's filters: the file states it keeps or drops (the
	// mode bits and owners a permission rule states).
	for _, c := range n.Children {
		if c.XMLName.Local == "filter" {
			if st, ok := w.byID[strings.TrimSpace(c.Text)]; ok && st.XMLName.Local == "file_state" {
				w.fileState(st)
			}
		}
	}
	fp, dir, file := n.child("filepath"), n.child("path"), n.child("filename")
	if fp == nil && dir == nil {
		w.refsIn(n) // a set, or an object that reads no files
		return
	}
	if fp != nil {
		for _, p := range w.values(*fp) {
			w.add(p, fp.attr("operation"))
		}
		return
	}
	dirs := w.values(*dir)
	if file == nil || file.attr("nil") == "true" || dir.attr("operation") == "pattern match" {
		for _, d := range dirs {
			w.add(d, dir.attr("operation"))
		}
		return
	}
	for _, d := range dirs {
		if file.attr("operation") == "pattern match" {
			if d == homes && file.attr("var_ref") == "" && dotPattern(strings.TrimSpace(file.Text)) {
				d += "/.*" // the homes' dotfiles
			}
			w.add(d, "")
			continue
		}
		for _, f := range w.values(*file) {
			w.add(path.Join(d, f), "")
		}
	}
}

// values resolves an entity's literal text or the values of its var_ref.
func (w *scopeWalk) values(e ovalNode) []string {
	if v := e.attr("var_ref"); v != "" {
		return w.variable(v)
	}
	return []string{strings.TrimSpace(e.Text)}
}

// variable resolves a constant variable's values, or a local variable made
// of one literal component; an object component adds the object's own
// paths and leaves the variable unresolved.
func (w *scopeWalk) variable(id string) []string {
	n, ok := w.byID[id]
	if !ok {
		w.miss("variable %s is not in the datastream", id)
		return nil
	}
	switch n.XMLName.Local {
	case "constant_variable":
		var out []string
		for _, c := range n.Children {
			if c.XMLName.Local == "value" {
				out = append(out, strings.TrimSpace(c.Text))
			}
		}
		return out
	case "local_variable":
		if len(n.Children) == 1 && n.Children[0].XMLName.Local == "literal_component" {
			return []string{strings.TrimSpace(n.Children[0].Text)}
		}
	}
	sub := scopeWalk{byID: w.byID, seen: map[string]bool{}, paths: map[string]bool{}, units: map[string]bool{}, sysctl: map[string]bool{}, keys: map[string]bool{}}
	sub.refsIn(n)
	w.merge(sub)
	if vals, ok := computedValues(sub); ok {
		return vals
	}
	if sub.mounts {
		w.miss("%s %s holds the host's mount points: the check reads every local file system, which no path scopes", n.XMLName.Local, id)
		return nil
	}
	w.miss("%s %s is computed", n.XMLName.Local, id)
	return nil
}

// merge adds what a walk of a computed variable's components read.
func (w *scopeWalk) merge(sub scopeWalk) {
	for _, m := range []struct{ to, from map[string]bool }{{w.paths, sub.paths}, {w.units, sub.units}, {w.sysctl, sub.sysctl}, {w.keys, sub.keys}} {
		for k := range m.from {
			m.to[k] = true
		}
	}
	w.unresolved = append(w.unresolved, sub.unresolved...)
	w.texts = append(w.texts, sub.texts...)
	w.mounts = w.mounts || sub.mounts
	w.openLines = w.openLines || sub.openLines
}

// homes is the scope of the home directories a check lists from the
// password file at check time: Debian's useradd makes an account's home
// /home/NAME, so the pattern /home/* covers them (a home elsewhere is
// not covered: a fix that changes it is refused).
const homes = "/home/*"

// valuesFrom are the trees a value read from one of these files names, by
// Debian's defaults: the files rsyslog's configuration includes and the
// logs it writes, the database directory of AIDE's configuration, the
// log directory of auditd's.
var valuesFrom = map[string][]string{
	"/etc/rsyslog.conf":      {"/etc/rsyslog.d", "/var/log"},
	"/etc/aide/aide.conf":    {"/var/lib/aide"},
	"/etc/audit/auditd.conf": {"/var/log/audit"},
}

// computedValues resolves a computed variable to the places it can hold,
// from the files its components read (sub): the password file alone
// (an account's fields: the homes, homes), or files of valuesFrom (and
// files in the trees their values name: rsyslog's included
// configuration), each with those trees. False when it read anything
// else, or the host's mount points.
func computedValues(sub scopeWalk) ([]string, bool) {
	if sub.mounts || len(sub.paths) == 0 || len(sub.unresolved) > 0 {
		return nil, false
	}
	passwd := true
	for p := range sub.paths {
		passwd = passwd && (p == "/etc/passwd" || p == "/etc/passwd-")
	}
	if passwd {
		return []string{homes}, true
	}
	// The sources (files of valuesFrom) and what they name; a path read
	// that is neither makes the variable unknown.
	var out []string
	for p := range sub.paths {
		out = append(out, valuesFrom[p]...)
	}
	for p := range sub.paths {
		if _, src := valuesFrom[p]; !src && !slices.ContainsFunc(out, func(t string) bool { return p == t || strings.HasPrefix(p, t+"/") }) {
			return nil, false
		}
	}
	if len(out) == 0 {
		return nil, false
	}
	slices.Sort(out)
	return slices.Compact(out), true
}

// add records p: a literal file or directory, or (operation "pattern
// match") a regular expression reduced to its literal paths (regexPaths).
func (w *scopeWalk) add(p, operation string) {
	ps := []string{p}
	if operation == "pattern match" {
		var ok bool
		if ps, ok = regexPaths(p); !ok {
			w.miss("the pattern %q has no literal directory", p)
			return
		}
	}
	for _, p := range ps {
		if path.Clean(p) == "/" {
			w.miss("the check reads the whole file system (/), which no path scopes")
			continue
		}
		if !strings.HasPrefix(p, "/") {
			w.miss("the path %q is not an absolute path below /", p)
			continue
		}
		p = path.Clean(p)
		w.paths[p] = true
		for _, src := range generatedFrom[p] {
			w.paths[src] = true
		}
	}
}

// dotPattern reports whether a file name pattern matches only names that
// begin with a dot (^\..*).
func dotPattern(re string) bool {
	x, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return false
	}
	subs := concatNodes(x.Simplify())
	if len(subs) < 2 || subs[0].Op != syntax.OpBeginText && subs[0].Op != syntax.OpBeginLine {
		return false
	}
	return subs[1].Op == syntax.OpLiteral && len(subs[1].Rune) > 0 && subs[1].Rune[0] == '.'
}

// implicitFiles are the files objects without a path element read.
var implicitFiles = map[string][]string{
	"shadow_object":   {"/etc/shadow"},
	"password_object": {"/etc/passwd"},
}

// generatedFrom maps a file a check reads to what a fix changes to change
// it: a generated file's sources (update-grub writes grub.cfg from
// /etc/default/grub), an account file's backup, which the shadow tools
// write with it.
var generatedFrom = map[string][]string{
	"/boot/grub/grub.cfg": {"/etc/default/grub", "/etc/default/grub.d"},
	"/etc/shadow":         {"/etc/shadow-"},
	"/etc/passwd":         {"/etc/passwd-"},
	"/etc/group":          {"/etc/group-"},
	"/etc/gshadow":        {"/etc/gshadow-"},
}

// maxExpansions bounds the literal strings a path pattern is expanded to.
const maxExpansions = 32

// regexPaths reduces a path pattern to the literal paths it can match:
// alternatives, optional parts and small character classes are expanded
// (^\/s?bin → /sbin, /bin; ^(/etc/chrony/chrony.conf|/etc/chrony/chrony.d/.+\.conf)$
// → /etc/chrony/chrony.conf, /etc/chrony/chrony.d), and where a
// repetition or a wide class begins, the literal part is cut back to its
// directory (^/etc/sysctl.d/.*\.conf$ → /etc/sysctl.d). An unescaped dot
// outside a repetition is read as itself (sysctl.d). False when the pattern
// does not parse, expands to more than maxExpansions strings or leaves no
// directory below /.
func regexPaths(re string) ([]string, bool) {
	x, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return nil, false
	}
	ps, ok := expand(x, []prefix{{}})
	if !ok {
		return nil, false
	}
	var out []string
	for _, p := range ps {
		s := p.s
		if p.stopped {
			s = s[:strings.LastIndexByte(s, '/')+1]
		}
		if s = path.Clean(s); !strings.HasPrefix(s, "/") || s == "/" {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// prefix is the literal start of a pattern; stopped once a non-literal
// part follows.
type prefix struct {
	s       string
	stopped bool
}

func expand(x *syntax.Regexp, in []prefix) ([]prefix, bool) {
	appendAll := func(lit string) []prefix {
		out := make([]prefix, len(in))
		for i, p := range in {
			out[i] = p
			if !p.stopped {
				out[i].s += lit
			}
		}
		return out
	}
	switch x.Op {
	case syntax.OpLiteral:
		return appendAll(string(x.Rune)), true
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return appendAll("."), true
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText, syntax.OpEmptyMatch,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return in, true
	case syntax.OpCapture:
		return expand(x.Sub[0], in)
	case syntax.OpConcat:
		cur := in
		for _, sub := range x.Sub {
			var ok bool
			if cur, ok = expand(sub, cur); !ok {
				return nil, false
			}
		}
		return cur, true
	case syntax.OpAlternate, syntax.OpQuest, syntax.OpCharClass:
		var alts []*syntax.Regexp
		var out []prefix
		switch x.Op {
		case syntax.OpAlternate:
			alts = x.Sub
		case syntax.OpQuest:
			alts, out = x.Sub, slices.Clone(in)
		default:
			for i := 0; i+1 < len(x.Rune); i += 2 {
				for r := x.Rune[i]; r <= x.Rune[i+1] && len(alts) <= 4; r++ {
					alts = append(alts, &syntax.Regexp{Op: syntax.OpLiteral, Rune: []rune{r}})
				}
			}
			if len(alts) > 4 {
				return stopAll(in), true
			}
		}
		for _, a := range alts {
			ps, ok := expand(a, in)
			if !ok {
				return nil, false
			}
			out = append(out, ps...)
		}
		if len(out) > maxExpansions {
			return nil, false
		}
		return out, true
	default:
		// Repetitions, wide classes: the literal part ends here.
		return stopAll(in), true
	}
}

func stopAll(in []prefix) []prefix {
	out := make([]prefix, len(in))
	for i, p := range in {
		out[i] = prefix{p.s, true}
	}
	return out
}

// dropCovered removes the paths under another path of the sorted list.
func dropCovered(ps []string) []string {
	var out []string
	for _, p := range ps {
		if len(out) > 0 && (p == out[len(out)-1] || strings.HasPrefix(p, strings.TrimSuffix(out[len(out)-1], "/")+"/")) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// patternKeywords returns the keywords a line pattern matches at the start
// of a line (^, or after a literal newline), after optional blanks, flags
// or [^#]* (lineKeywords): ^[ \t]*(?i)PermitRootLogin(?-i)[ \t]+…
// is permitrootlogin (folded to lower case as (?i) reads it),
// ^[\s]*kernel.kptr_restrict[\s]*=… is kernel.kptr_restrict (an unescaped
// dot read as itself), ^(ExecStartPost=\-\/sbin\/augenrules.*$|Requires=augenrules.service)
// is ExecStartPost and Requires (a group's alternatives each); none when
// the pattern does not begin that way or the word is not a setting's name.
func patternKeywords(re string) []string {
	// A negative look-ahead of a comment ((?!#), which Go's syntax does
	// not have) only narrows the lines; without it the keyword is the
	// same.
	x, err := syntax.Parse(strings.ReplaceAll(re, "(?!#)", ""), syntax.Perl)
	if err != nil {
		return nil
	}
	subs := concatNodes(x)
	var out []string
	// Every line start of the top-level sequence: ^, or after a literal
	// newline (.*\n[^#]*(PASS_MIN_DAYS\s+\d+): login.defs read as one
	// text; \n^[ \t]*Storage after a [Coredump] header).
	for j, n := range subs {
		lineStart := n.Op == syntax.OpBeginLine || n.Op == syntax.OpBeginText ||
			n.Op == syntax.OpLiteral && len(n.Rune) > 0 && n.Rune[len(n.Rune)-1] == '\n'
		if lineStart {
			out = append(out, lineKeywords(subs[j+1:])...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// blankRun reports whether n is a run of blanks or of non-comment
// characters before a keyword: [ \t]*, \s*, [\s]*, [ ]+, [^#]*.
func blankRun(n *syntax.Regexp) bool {
	if n.Op != syntax.OpStar && n.Op != syntax.OpQuest && n.Op != syntax.OpPlus {
		return false
	}
	c := n.Sub[0]
	return c.Op == syntax.OpCharClass || c.Op == syntax.OpLiteral && strings.TrimSpace(string(c.Rune)) == ""
}

// lineKeywords reads the keywords at the start of one line of a pattern:
// after blanks, a keyword, or a group whose alternatives each begin with
// one; with what a keyword names after it (modprobe's module, sudo's
// Defaults option), and an fstab line's mount point.
func lineKeywords(subs []*syntax.Regexp) []string {
	i := 0
	for i < len(subs) && blankRun(subs[i]) {
		if m := mountPoint(subs[i+1:]); m != "" {
			return []string{m}
		}
		i++
	}
	if i >= len(subs) {
		return nil
	}
	if subs[i].Op == syntax.OpCapture {
		var out []string
		alts := []*syntax.Regexp{subs[i].Sub[0]}
		if subs[i].Sub[0].Op == syntax.OpAlternate {
			alts = subs[i].Sub[0].Sub
		}
		for _, a := range alts {
			out = append(out, keywordAndObject(concatNodes(a))...)
		}
		return out
	}
	return keywordAndObject(subs[i:])
}

// keywordAndObject is the keyword at the start of subs, and what it names
// after it: a module after modprobe's install, blacklist, options, remove
// or softdep (^\s*install\s+rds\s+… is install and rds), an option after
// sudo's Defaults (^[\s]*Defaults[\s]*[^!]\buse_pty is Defaults and
// use_pty).
func keywordAndObject(subs []*syntax.Regexp) []string {
	k, n := keywordRun(subs)
	if k == "" {
		return nil
	}
	out := []string{k}
	rest := subs[n:]
	switch {
	case slices.Contains([]string{"install", "blacklist", "options", "remove", "softdep"}, k):
		// Blanks, then the module's literal name.
		if len(rest) >= 2 && blankRun(rest[0]) {
			if m := wordOf(rest[1]); m != "" {
				out = append(out, m)
			}
		}
	case k == "Defaults":
		// Blanks, a character class ([^!]), a word boundary, the option.
		for _, r := range rest {
			if blankRun(r) || r.Op == syntax.OpCharClass || r.Op == syntax.OpWordBoundary {
				continue
			}
			if o := wordOf(r); o != "" {
				out = append(out, o)
			}
			break
		}
	}
	return out
}

// wordOf is the name (letters, digits, '_', '-') a literal node begins
// with.
func wordOf(n *syntax.Regexp) string {
	if n.Op != syntax.OpLiteral {
		return ""
	}
	w := string(n.Rune)
	for j, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			w = w[:j]
			break
		}
	}
	return w
}

// mountPoint reads an fstab line's pattern, [\S]+[\s]+/tmp[\s]+…: the
// device (a run of non-blanks), blanks, then the mount point's literal
// path.
func mountPoint(subs []*syntax.Regexp) string {
	if len(subs) < 3 || subs[0].Op != syntax.OpPlus || subs[0].Sub[0].Op != syntax.OpCharClass || !blankRun(subs[1]) || subs[2].Op != syntax.OpLiteral {
		return ""
	}
	p := string(subs[2].Rune)
	if i := strings.IndexAny(p, " \t"); i >= 0 {
		p = p[:i]
	}
	// The mount point ends at a blank or the line's end (/tmpfoo is not
	// /tmp).
	if !strings.HasPrefix(p, "/") || len(p) < len(string(subs[2].Rune)) ||
		len(subs) < 4 || !blankRun(subs[3]) && subs[3].Op != syntax.OpEndLine && subs[3].Op != syntax.OpEndText {
		return ""
	}
	return p
}

// concatNodes is x's sequence of nodes (x alone when it is not a
// concatenation).
func concatNodes(x *syntax.Regexp) []*syntax.Regexp {
	if x.Op == syntax.OpConcat {
		return x.Sub
	}
	return []*syntax.Regexp{x}
}

// keywordRun reads the literal run at the start of subs as a setting's
// name: letters first, then letters, digits, '_', '.', '-'; it ends at the
// first other character or node. "" when shorter than 3 characters.
// It also returns the number of nodes the keyword took whole (the nodes
// after it follow the keyword's name).
func keywordRun(subs []*syntax.Regexp) (string, int) {
	var b strings.Builder
	n := 0
loop:
	for _, x := range subs {
		switch x.Op {
		case syntax.OpLiteral:
			lit := string(x.Rune)
			if x.Flags&syntax.FoldCase != 0 {
				lit = strings.ToLower(lit) // (?i): sshd's keywords are case-insensitive
			}
			b.WriteString(lit)
		case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
			b.WriteByte('.')
		case syntax.OpCharClass:
			// [.] or a folded single letter ([Pp]).
			r := x.Rune
			if len(r) != 2 || r[0] != r[1] {
				break loop
			}
			b.WriteRune(r[0])
		default:
			// Any other node (a repetition, a group, blanks) ends the
			// keyword.
			break loop
		}
		n++
	}
	full := b.String()
	k := full
	for j, r := range k {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (j == 0 || !(r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-')) {
			k = k[:j]
			break
		}
	}
	if k != full {
		n = len(subs) // the keyword ends inside a node: nothing follows it
	}
	if k = strings.Trim(k, ".-"); len(k) < 3 {
		return "", 0
	}
	return k, n
}
