package inventory

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// ParseINI parses an Ansible INI inventory; name is the file name used in
// errors.
func ParseINI(name string, data []byte) (*Inventory, error) {
	b := newBuilder(name)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	group, kind := "ungrouped", "hosts"
	// As in Ansible, a group named in [g:vars] or as a child must be
	// declared by a [g] or [g:children] section somewhere in the file.
	declared := map[string]bool{"all": true, "ungrouped": true}
	varsAt := map[string]int{}
	childOf := map[string]string{}
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if line == 1 {
			text = strings.TrimPrefix(text, "\ufeff")
		}
		if text == "" || text[0] == '#' || text[0] == ';' {
			continue
		}
		if text[0] == '[' {
			g, k, err := parseSection(text)
			if err != nil {
				return nil, b.errf(line, ErrSyntax, "%v", err)
			}
			group, kind = g, k
			b.addGroup(group)
			if kind == "vars" {
				if _, ok := varsAt[group]; !ok {
					varsAt[group] = line
				}
			} else {
				declared[group] = true
			}
			if kind == "vars" && b.gvars[group] == nil {
				b.gvars[group] = map[string]string{}
			}
			continue
		}
		switch kind {
		case "hosts":
			if err := b.iniHostLine(text, group, line); err != nil {
				return nil, err
			}
		case "children":
			child := stripComment(text)
			if !validGroup(child) {
				return nil, b.errf(line, ErrSyntax, "[%s:children]: %q is not a group name", group, text)
			}
			if child == "all" {
				return nil, b.errf(line, ErrCycle, "group \"all\" cannot be a child of %q", group)
			}
			b.addGroup(child)
			if !slices.Contains(b.children[group], child) {
				b.children[group] = append(b.children[group], child)
			}
			if _, ok := b.childLine[child]; !ok {
				b.childLine[child] = line
				childOf[child] = group
			}
		case "vars":
			k, v, ok := strings.Cut(text, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" || strings.ContainsAny(k, " \t") {
				return nil, b.errf(line, ErrSyntax, "[%s:vars]: want key=value, got %q", group, text)
			}
			b.gvars[group][k] = unquote(strings.TrimSpace(v))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, b.errf(line+1, ErrSyntax, "%v", err)
	}
	if err := b.undeclared(declared, varsAt, childOf); err != nil {
		return nil, err
	}
	return b.build()
}

// undeclared reports the first (by line) [g:vars] section or child
// reference naming a group that no [g] or [g:children] section declares.
func (b *builder) undeclared(declared map[string]bool, varsAt map[string]int, childOf map[string]string) error {
	first, msg := 0, ""
	for g, l := range varsAt {
		if !declared[g] && (first == 0 || l < first) {
			first, msg = l, fmt.Sprintf("section [%s:vars] names undeclared group %q", g, g)
		}
	}
	for g, parent := range childOf {
		if l := b.childLine[g]; !declared[g] && (first == 0 || l < first) {
			first, msg = l, fmt.Sprintf("section [%s:children] includes undeclared group %q", parent, g)
		}
	}
	if first == 0 {
		return nil
	}
	return b.errf(first, ErrUndeclared, "%s", msg)
}

// parseSection parses "[group]", "[group:children]" or "[group:vars]",
// with an optional trailing comment.
func parseSection(text string) (group, kind string, err error) {
	end := strings.IndexByte(text, ']')
	if end < 0 {
		return "", "", fmt.Errorf("section header %q has no \"]\"", text)
	}
	if rest := strings.TrimSpace(text[end+1:]); rest != "" && rest[0] != '#' {
		return "", "", fmt.Errorf("text %q after section header", rest)
	}
	inner := text[1:end]
	group, kind, hasKind := strings.Cut(inner, ":")
	if !validGroup(group) {
		return "", "", fmt.Errorf("invalid group name %q in section header", group)
	}
	if !hasKind {
		return group, "hosts", nil
	}
	switch kind {
	case "children", "vars":
		return group, kind, nil
	}
	return "", "", fmt.Errorf("section [%s]: want [%s], [%s:children] or [%s:vars]", inner, group, group, group)
}

// validGroup reports whether g can name a group: no spaces or INI syntax,
// and no leading "!" (Select's negation).
func validGroup(g string) bool {
	return g != "" && g[0] != '!' && !strings.ContainsAny(g, " \t\r\n:[]=#;\"'")
}

// validHost reports whether h can name a host: no spaces and no leading "!".
func validHost(h string) bool {
	return h != "" && h[0] != '!' && !strings.ContainsAny(h, " \t\r\n")
}

// iniHostLine parses "pattern[:port] key=value ...".
func (b *builder) iniHostLine(text, group string, line int) error {
	tokens, err := shellSplit(text)
	if err != nil {
		return b.errf(line, ErrSyntax, "%v", err)
	}
	if len(tokens) == 0 {
		return nil
	}
	pattern, portText, err := splitPort(tokens[0])
	if err != nil {
		return b.errf(line, ErrPort, "%v", err)
	}
	vars := map[string]string{}
	for _, t := range tokens[1:] {
		k, v, ok := strings.Cut(t, "=")
		if !ok || k == "" {
			return b.errf(line, ErrSyntax, "host %q: want key=value, got %q", pattern, t)
		}
		vars[k] = v
	}
	if portText != "" {
		if _, perr := parsePort(portText); perr != nil {
			return b.errf(line, ErrPort, "host %q: port %q: %v", pattern, portText, perr)
		}
		if _, set := vars["ansible_port"]; !set {
			vars["ansible_port"] = portText
		}
	}
	names, err := expand(pattern)
	if err != nil {
		return b.errf(line, ErrRange, "%v", unwrapSentinel(err, ErrRange))
	}
	if b.entries+len(names) > MaxHosts {
		return b.errf(line, ErrRange, "%q: the inventory would hold more than %d host entries", pattern, MaxHosts)
	}
	for _, n := range names {
		if !validHost(n) {
			return b.errf(line, ErrSyntax, "invalid host name %q", n)
		}
		b.addHost(n, group, vars, line)
	}
	return nil
}

// splitPort splits "host:22" (the pattern may hold [a:b] ranges); a name
// with several colons outside brackets is an IPv6 address without a port.
func splitPort(tok string) (pattern, port string, err error) {
	depth, colons, last := 0, 0, -1
	for i := 0; i < len(tok); i++ {
		switch tok[i] {
		case '[':
			depth++
		case ']':
			depth--
		case ':':
			if depth == 0 {
				colons++
				last = i
			}
		}
	}
	if colons != 1 {
		return tok, "", nil
	}
	if last == len(tok)-1 {
		return "", "", fmt.Errorf("host %q: empty port", tok)
	}
	return tok[:last], tok[last+1:], nil
}

// shellSplit splits a host line like Python's shlex in POSIX mode with
// comments: whitespace separates words, quotes group, a backslash escapes
// outside single quotes, "#" outside quotes ends the line.
func shellSplit(s string) ([]string, error) {
	var (
		out     []string
		cur     strings.Builder
		inWord  bool
		quote   byte
		escaped bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case escaped:
			cur.WriteByte(c)
			escaped = false
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case quote == '"':
			switch c {
			case '"':
				quote = 0
			case '\\':
				if i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\' || s[i+1] == '$' || s[i+1] == '`') {
					i++
					cur.WriteByte(s[i])
				} else {
					cur.WriteByte(c)
				}
			default:
				cur.WriteByte(c)
			}
		case c == '\\':
			escaped, inWord = true, true
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '#':
			i = len(s)
		case c == ' ' || c == '\t' || c == '\r':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if escaped {
		return nil, fmt.Errorf("line ends with a backslash")
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}

func stripComment(s string) string {
	if i := strings.IndexAny(s, "#;"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// unwrapSentinel drops the sentinel's own text from err's message so that
// errf does not repeat it.
func unwrapSentinel(err, sentinel error) string {
	return strings.TrimPrefix(err.Error(), sentinel.Error()+": ")
}
