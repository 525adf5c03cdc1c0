package rules

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/nightshift-dev/nightshift/safety"
	"io"
	"os"
	pathpkg "path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/nightshift-dev/nightshift/internal/readfile"
)

// Limits applied while loading rules.
const (
	// MaxFileSize is the largest rule file accepted, in bytes.
	MaxFileSize = 4 << 20
	// MaxRules is the most rules one Load or Parse accepts.
	MaxRules = 10000
	// MaxPatternLen bounds one ban pattern, in bytes.
	MaxPatternLen = safety.MaxPatternLen
	// MaxPatterns bounds the ban patterns of one file, counted per rule.
	MaxPatterns = 10000
	// MaxAttemptsLimit is the largest max_attempts accepted.
	MaxAttemptsLimit = 1000
	// MaxCheckLen bounds a check command, in bytes.
	MaxCheckLen = 64 << 10
)

var idPattern = regexp.MustCompile(`^[a-z0-9_.-]+$`)

// ruleFields are the fields a rule may have, in documentation order.
var ruleFields = []string{"id", "title", "description", "check", "banned", "hints", "max_attempts", "paths", "units", "sysctl", "keys", "recipes"}

// Load reads rules from a YAML file, or from every *.yaml and *.yml file
// directly inside a directory (in name order; subdirectories and dotfiles
// are skipped). All problems of all files are reported together as
// ValidationErrors; a rule id defined twice, in one file or across files,
// is refused naming both places. I/O errors are returned wrapped.
func Load(path string) (*Set, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("rules: load: %w", err)
	}
	files := []string{path}
	if info.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("rules: load: %w", err)
		}
		files = files[:0]
		for _, e := range entries {
			name := e.Name()
			ext := strings.ToLower(filepath.Ext(name))
			if strings.HasPrefix(name, ".") || (ext != ".yaml" && ext != ".yml") || e.IsDir() {
				continue
			}
			files = append(files, filepath.Join(path, name))
		}
		if len(files) == 0 {
			return nil, ValidationErrors{{File: path, Msg: "no *.yaml or *.yml rule files in directory", Err: ErrNoRules}}
		}
	}
	var (
		all  []located
		errs ValidationErrors
	)
	for _, f := range files {
		data, err := readBounded(f)
		if err != nil {
			var ve *ValidationError
			if errors.As(err, &ve) {
				errs = append(errs, ve)
				continue
			}
			return nil, err
		}
		rules, ferrs := parseFile(f, data)
		all = append(all, rules...)
		errs = append(errs, ferrs...)
	}
	return finish(all, errs)
}

// Parse reads rules from one YAML document; name is used in error messages.
func Parse(name string, data []byte) (*Set, error) {
	if len(data) > MaxFileSize {
		return nil, ValidationErrors{tooLarge(name)}
	}
	rules, errs := parseFile(name, data)
	return finish(rules, errs)
}

func tooLarge(name string) *ValidationError {
	return &ValidationError{File: name, Msg: fmt.Sprintf("file is larger than %d MiB", MaxFileSize>>20), Err: ErrTooLarge}
}

// readBounded reads a rules file of at most MaxFileSize bytes; anything
// but a regular file (a FIFO, a device) is refused by name, unopened.
func readBounded(path string) ([]byte, error) {
	f, err := readfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("rules: load: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("rules: load: read %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, tooLarge(path)
	}
	return data, nil
}

// finish refuses duplicate ids and turns the collected problems into the
// returned error.
func finish(rules []located, errs ValidationErrors) (*Set, error) {
	if len(rules) > MaxRules {
		errs = append(errs, &ValidationError{File: rules[MaxRules].Pos.File, Line: rules[MaxRules].Pos.Line,
			Msg: fmt.Sprintf("more than %d rules", MaxRules)})
	}
	seen := make(map[string]Position, len(rules))
	kept := make([]Rule, 0, len(rules))
	for _, l := range rules {
		r := l.Rule
		if first, dup := seen[r.ID]; dup {
			errs = append(errs, &ValidationError{File: r.Pos.File, Line: l.idLine, Field: l.field + ".id", Err: ErrDuplicateID,
				Msg: fmt.Sprintf("duplicate rule id %q (first defined at %s)", r.ID, first)})
			continue
		}
		seen[r.ID] = r.Pos
		kept = append(kept, r)
	}
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, errs
	}
	return newSet(kept), nil
}

// sortErrors orders problems by file (in the order files were read) and
// line, keeping the order of problems on the same line.
func sortErrors(errs ValidationErrors) {
	order := map[string]int{}
	for _, e := range errs {
		if _, ok := order[e.File]; !ok {
			order[e.File] = len(order)
		}
	}
	sort.SliceStable(errs, func(i, j int) bool {
		a, b := errs[i], errs[j]
		if order[a.File] != order[b.File] {
			return order[a.File] < order[b.File]
		}
		return a.Line < b.Line
	})
}

// located is a parsed rule with the path and line of its id, for duplicate
// reports.
type located struct {
	Rule
	field  string
	idLine int
}

// parser holds the state of parsing one file.
type parser struct {
	file     string
	errs     ValidationErrors
	patterns int
}

func (p *parser) errorf(n *yaml.Node, field, format string, args ...any) {
	e := &ValidationError{File: p.file, Field: field, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	p.errs = append(p.errs, e)
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func parseFile(name string, data []byte) (rules []located, errs ValidationErrors) {
	p := &parser{file: name}
	doc, err := decodeYAML(data)
	if err != nil {
		e := &ValidationError{File: name, Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			e.Line, _ = strconv.Atoi(m[1])
			e.Msg = "not valid YAML: " + m[2]
		}
		if errors.Is(err, io.EOF) {
			e.Msg, e.Err = "empty file: no rules defined", ErrNoRules
		}
		return nil, ValidationErrors{e}
	}
	root := resolve(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		p.errorf(nil, "", "empty file: no rules defined")
		p.errs[0].Err = ErrNoRules
		return nil, p.errs
	}
	if root.Kind != yaml.MappingNode {
		p.errorf(root, "", "top level must be a mapping with a %q list, not %s", "rules", describe(root))
		return nil, p.errs
	}
	var list *yaml.Node
	p.fields(root, "", func(key, val *yaml.Node) {
		if key.Value != "rules" {
			p.errorf(key, "", "unknown field %q%s (a rule file has only %q)", key.Value, suggest(key.Value, []string{"rules"}), "rules")
			return
		}
		list = val
	})
	switch {
	case list == nil:
		if len(p.errs) == 0 {
			p.errorf(root, "", "no %q list: no rules defined", "rules")
			p.errs[len(p.errs)-1].Err = ErrNoRules
		}
		return nil, p.errs
	case list.Kind == yaml.ScalarNode && list.ShortTag() == "!!null",
		list.Kind == yaml.SequenceNode && len(list.Content) == 0:
		p.errorf(list, "rules", "empty list: no rules defined")
		p.errs[len(p.errs)-1].Err = ErrNoRules
		return nil, p.errs
	case list.Kind != yaml.SequenceNode:
		p.errorf(list, "rules", "must be a list of rules, not %s", describe(list))
		return nil, p.errs
	}
	for i, n := range list.Content {
		if i >= MaxRules {
			p.errorf(n, "rules", "more than %d rules", MaxRules)
			break
		}
		// Rules with other problems still take part in the duplicate check.
		if r, ok := p.rule(resolve(n), i); ok {
			rules = append(rules, r)
		}
	}
	return rules, p.errs
}

// decodeYAML parses exactly one YAML document, converting a parser panic
// into an error.
func decodeYAML(data []byte) (doc *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc, err = nil, fmt.Errorf("yaml parser failed: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	doc = new(yaml.Node)
	if err := dec.Decode(doc); err != nil {
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("yaml: line %d: more than one YAML document (separate files are needed)", extra.Line)
	} else if !errors.Is(err, io.EOF) {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, io.EOF
	}
	return doc, nil
}

// fields calls fn for each key of a mapping, reporting non-string and
// repeated keys.
func (p *parser) fields(m *yaml.Node, path string, fn func(key, val *yaml.Node)) {
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, val := resolve(m.Content[i]), resolve(m.Content[i+1])
		if key.Kind != yaml.ScalarNode {
			p.errorf(key, path, "field names must be strings, not %s", describe(key))
			continue
		}
		if line, dup := seen[key.Value]; dup {
			p.errorf(key, join(path, key.Value), "field repeated (first at line %d)", line)
			continue
		}
		seen[key.Value] = key.Line
		fn(key, val)
	}
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func (p *parser) rule(n *yaml.Node, i int) (located, bool) {
	path := "rules[" + strconv.Itoa(i) + "]"
	r := Rule{Pos: Position{File: p.file, Line: n.Line}}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, path, "must be a mapping with fields %s, not %s", strings.Join(ruleFields, ", "), describe(n))
		return located{}, false
	}
	var idNode, checkNode *yaml.Node
	var idOK, checkOK, hasPaths bool
	p.fields(n, path, func(key, val *yaml.Node) {
		field := join(path, key.Value)
		switch key.Value {
		case "id":
			idNode = val
			r.ID, idOK = p.text(val, field)
		case "title":
			r.Title, _ = p.text(val, field)
		case "description":
			r.Description, _ = p.text(val, field)
		case "hints":
			r.Hints, _ = p.text(val, field)
		case "check":
			checkNode = val
			var cmd string
			if cmd, checkOK = p.text(val, field); checkOK {
				r.Check = ShellCheck{Command: cmd}
			}
		case "banned":
			r.Banned = p.banned(val, field)
		case "max_attempts":
			r.MaxAttempts = p.maxAttempts(val, field)
		case "paths":
			r.Paths = p.paths(val, field)
			hasPaths = true
		case "units":
			r.Units = p.names(val, field, "a systemd unit name (auditd.service)", unitNameRe)
		case "sysctl":
			r.Sysctl = p.names(val, field, "a kernel parameter (kernel.kptr_restrict)", sysctlNameRe)
		case "keys":
			r.Keys = p.names(val, field, "a configuration keyword (PermitRootLogin)", keyNameRe)
		case "recipes":
			switch {
			case val.Kind == yaml.ScalarNode && val.Tag == "!!bool" && (val.Value == "false" || val.Value == "no" || val.Value == "off"):
				r.NoRecipes = true
			case val.Kind == yaml.ScalarNode && val.Tag == "!!bool":
			default:
				p.errorf(val, field, "must be true or false (false: never replay a proven fix for this rule), not %s", describe(val))
			}
		default:
			p.errorf(key, field, "unknown field%s (a rule has %s)", suggest(key.Value, ruleFields), strings.Join(ruleFields, ", "))
		}
	})
	switch {
	case idNode == nil:
		p.errorf(n, path+".id", "required field missing")
	case !idOK && !isNull(idNode):
		// a wrong type, already reported
	case r.ID == "":
		p.errorf(idNode, path+".id", "required field is empty")
	case len(r.ID) > 200:
		p.errorf(idNode, path+".id", "longer than 200 characters")
	case !idPattern.MatchString(r.ID):
		p.errorf(idNode, path+".id", "%q must match [a-z0-9_.-]+ (lower-case letters, digits, '_', '.', '-')", r.ID)
	}
	switch cmd := checkCommand(r.Check); {
	case checkNode == nil:
		p.errorf(n, path+".check", "required field missing")
	case !checkOK && !isNull(checkNode):
		// a wrong type, already reported
	case strings.TrimSpace(cmd) == "":
		p.errorf(checkNode, path+".check", "required field is empty")
	case len(cmd) > MaxCheckLen:
		p.errorf(checkNode, path+".check", "longer than %d KiB", MaxCheckLen>>10)
	default:
		if ban, banned := safety.DefaultBanList().Match(cmd); banned {
			p.errorf(checkNode, path+".check", "check command is banned: %s (%q)", ban.Reason, ban.Construct)
		}
	}
	if !hasPaths {
		r.ScopeNote = NoPathsNote
	}
	l := located{Rule: r, field: path, idLine: n.Line}
	if idNode != nil {
		l.idLine = idNode.Line
	}
	return l, idOK && idPattern.MatchString(r.ID)
}

func checkCommand(c Check) string {
	if sc, ok := c.(ShellCheck); ok {
		return sc.Command
	}
	return ""
}

// text reads a scalar as text. Null counts as empty; sequences and mappings
// are refused.
func (p *parser) text(n *yaml.Node, field string) (string, bool) {
	if isNull(n) {
		return "", false
	}
	if n.Kind != yaml.ScalarNode {
		p.errorf(n, field, "must be a string, not %s", describe(n))
		return "", false
	}
	return n.Value, true
}

func (p *parser) banned(n *yaml.Node, field string) []string {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, field, "must be a list of regular expressions, not %s", describe(n))
		return nil
	}
	var out []string
	for j, item := range n.Content {
		item = resolve(item)
		f := field + "[" + strconv.Itoa(j) + "]"
		if p.patterns++; p.patterns > MaxPatterns {
			p.errorf(item, f, "more than %d ban patterns in one file", MaxPatterns)
			return nil
		}
		if item.Kind != yaml.ScalarNode || isNull(item) {
			p.errorf(item, f, "must be a regular expression string, not %s", describe(item))
			continue
		}
		if err := safety.CheckPattern(item.Value); err != nil {
			p.errorf(item, f, "%v", err)
			p.errs[len(p.errs)-1].Err = safety.ErrBadPattern
			continue
		}
		out = append(out, item.Value)
	}
	return out
}

// MaxPaths bounds the paths one rule declares.
const MaxPaths = 256

// paths reads a rule's declared scope: absolute paths, cleaned.
func (p *parser) paths(n *yaml.Node, field string) []string {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, field, "must be a list of absolute paths, not %s", describe(n))
		return nil
	}
	if len(n.Content) > MaxPaths {
		p.errorf(n, field, "more than %d paths", MaxPaths)
		return nil
	}
	var out []string
	for j, item := range n.Content {
		item = resolve(item)
		f := field + "[" + strconv.Itoa(j) + "]"
		if item.Kind != yaml.ScalarNode || isNull(item) {
			p.errorf(item, f, "must be an absolute path, not %s", describe(item))
			continue
		}
		if !strings.HasPrefix(item.Value, "/") || strings.ContainsAny(item.Value, "\x00\n") {
			p.errorf(item, f, "must be an absolute path (starting with /), not %q", item.Value)
			continue
		}
		clean := pathpkg.Clean(item.Value)
		if err := safety.ValidScopePath(clean); err != nil {
			p.errorf(item, f, "must be a file or directory below / (a component after the first may be a pattern: /home/*/.bashrc): %v", err)
			continue
		}
		out = append(out, clean)
	}
	return out
}

// The names units, sysctl and keys accept.
var (
	unitNameRe   = regexp.MustCompile(`^[A-Za-z0-9:_.@\\-]+$`)
	sysctlNameRe = regexp.MustCompile(`^[a-z0-9_]+([./][A-Za-z0-9_*-]+)+$`)
	keyNameRe    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`)
)

// names reads a list of names (units, kernel parameters, keywords) each
// matching re.
func (p *parser) names(n *yaml.Node, field, what string, re *regexp.Regexp) []string {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, field, "must be a list, each %s, not %s", what, describe(n))
		return nil
	}
	if len(n.Content) > MaxPaths {
		p.errorf(n, field, "more than %d entries", MaxPaths)
		return nil
	}
	var out []string
	for j, item := range n.Content {
		item = resolve(item)
		f := field + "[" + strconv.Itoa(j) + "]"
		if item.Kind != yaml.ScalarNode || isNull(item) || !re.MatchString(item.Value) {
			p.errorf(item, f, "must be %s, not %s", what, describe(item))
			continue
		}
		out = append(out, item.Value)
	}
	return out
}

func (p *parser) maxAttempts(n *yaml.Node, field string) int {
	if isNull(n) {
		return 0
	}
	var v int
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		p.errorf(n, field, "must be an integer from 1 to %d (0 or absent means the worker's default), not %s", MaxAttemptsLimit, describe(n))
		return 0
	}
	if v < 0 || v > MaxAttemptsLimit {
		p.errorf(n, field, "%d is out of range: must be from 1 to %d (0 or absent means the worker's default)", v, MaxAttemptsLimit)
		return 0
	}
	return v
}

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < 16; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe names a node's kind for error messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.AliasNode:
		return "an unresolved alias"
	case yaml.ScalarNode:
		v := n.Value
		if len(v) > 40 {
			v = v[:40] + "..."
		}
		switch n.ShortTag() {
		case "!!null":
			return "null"
		case "!!int":
			return "the integer " + v
		case "!!float":
			return "the number " + v
		case "!!bool":
			return "the boolean " + v
		default:
			return "the string " + strconv.Quote(v)
		}
	default:
		// a document node is never a value
	}
	return "an unknown node"
}

// suggest returns ` (did you mean "x"?)` when name is a near miss of one of
// the known names.
func suggest(name string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(name), k); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
