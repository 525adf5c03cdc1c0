package rules

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file is a small shell lexer: enough of POSIX sh and bash to find
// every simple command a command line would run, after quote removal, for
// the ban list. It never executes anything and is deliberately
// conservative: function bodies, both branches of conditionals, the bodies
// of command substitutions and here-documents fed to a shell are all
// treated as commands that may run.

// command is one simple command as lexed.
type command struct {
	words  []string
	redirs []redirect
	stdin  []string // here-document bodies and here-strings
	prev   *command // the command piping into this one, if any
}

type redirect struct {
	op     string // ">", ">>", ">|", "&>", "&>>", "<", "<>", ">&", "<&"
	target string
}

// writes reports whether the redirection writes to its target.
func (r redirect) writes() bool {
	switch r.op {
	case ">", ">>", ">|", "&>", "&>>", "<>":
		return true
	case ">&":
		_, err := strconv.Atoi(r.target)
		return err != nil && r.target != "-"
	}
	return false
}

type heredoc struct {
	delim  string
	strip  bool // <<- strips leading tabs
	expand bool // unquoted delimiter: the body is expanded
	cmd    *command
}

type nestedScript struct {
	src     string
	env     map[string]string
	lenient bool // text that may not be shell syntax: unterminated quotes are not suspicious
}

// lexer splits one script into simple commands.
type lexer struct {
	a      *analyzer
	src    string
	pos    int
	env    map[string]string // variables assigned earlier in the script
	cmds   []*command
	nested []nestedScript

	cur      *command
	buf      strings.Builder
	quoted   bool // the current word used quoting (so an empty word counts)
	redirOp  string
	pipeFrom *command
	pending  []heredoc
	// unterminated is set when a quote or substitution is not closed.
	unterminated bool
}

func newLexer(a *analyzer, src string, env map[string]string) *lexer {
	l := &lexer{a: a, src: src, env: make(map[string]string, len(env)), cur: &command{}}
	for k, v := range env {
		l.env[k] = v
	}
	return l
}

func (l *lexer) peek(off int) byte {
	if l.pos+off < len(l.src) {
		return l.src[l.pos+off]
	}
	return 0
}

func (l *lexer) inWord() bool { return l.buf.Len() > 0 || l.quoted }

// run lexes the whole script.
func (l *lexer) run() {
	if !l.a.spend(len(l.src)) {
		return
	}
	for l.pos < len(l.src) && !l.a.exceeded {
		c := l.src[l.pos]
		switch c {
		case ' ', '\t', '\r', '\f', '\v':
			l.endWord()
			l.pos++
		case '\n':
			l.endWord()
			l.endCommand(false)
			l.pos++
			l.readHeredocs()
		case ';':
			l.endWord()
			l.endCommand(false)
			l.pos++
		case '&':
			if l.peek(1) == '>' {
				l.redirect()
				continue
			}
			l.endWord()
			l.endCommand(false)
			l.pos++
			if l.peek(0) == '&' {
				l.pos++
			}
		case '|':
			l.endWord()
			if l.peek(1) == '|' {
				l.endCommand(false)
				l.pos += 2
				continue
			}
			l.endCommand(true)
			l.pos++
			if l.peek(0) == '&' {
				l.pos++
			}
		case '(', ')':
			l.endWord()
			l.endCommand(false)
			l.pos++
		case '<', '>':
			if l.peek(1) == '(' { // process substitution
				l.pos++
				sub := l.readParens()
				l.buf.WriteByte(c)
				l.buf.WriteString("(" + sub + ")")
				l.addNested(sub)
				continue
			}
			l.redirect()
		case '#':
			if l.inWord() {
				l.wordChar()
				continue
			}
			for l.pos < len(l.src) && l.src[l.pos] != '\n' {
				l.pos++
			}
		default:
			l.wordChar()
		}
	}
	l.endWord()
	l.endCommand(false)
}

// wordChar consumes one unit of a word: a character, a quoted string, an
// escape, an expansion or a substitution.
func (l *lexer) wordChar() {
	c := l.src[l.pos]
	switch c {
	case '\'':
		l.quoted = true
		end := strings.IndexByte(l.src[l.pos+1:], '\'')
		if end < 0 {
			l.buf.WriteString(l.src[l.pos+1:])
			l.pos = len(l.src)
			l.unterminated = true
			return
		}
		l.buf.WriteString(l.src[l.pos+1 : l.pos+1+end])
		l.pos += end + 2
	case '"':
		l.quoted = true
		l.pos++
		l.readDouble('"')
	case '\\':
		if l.pos+1 >= len(l.src) {
			l.pos++
			return
		}
		if n := l.src[l.pos+1]; n != '\n' {
			l.buf.WriteByte(n)
			l.quoted = true
		}
		l.pos += 2
	case '`':
		l.pos++
		sub := l.readBacktick()
		l.addNested(sub)
		l.substitute("`"+sub+"`", sub, false)
	case '$':
		l.dollar(false)
	default:
		l.buf.WriteByte(c)
		l.pos++
	}
}

// readDouble reads a double-quoted string up to term (0: to the end, for
// here-document bodies, where '"' is an ordinary character).
func (l *lexer) readDouble(term byte) {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case term != 0 && c == term:
			l.pos++
			return
		case c == '\\' && l.pos+1 < len(l.src):
			n := l.src[l.pos+1]
			switch {
			case n == '\n':
			case n == '$' || n == '`' || n == '\\' || (term != 0 && n == '"'):
				l.buf.WriteByte(n)
			default:
				l.buf.WriteByte('\\')
				l.buf.WriteByte(n)
			}
			l.pos += 2
		case c == '$':
			l.dollar(true)
		case c == '`':
			l.pos++
			sub := l.readBacktick()
			l.addNested(sub)
			l.substitute("`"+sub+"`", sub, true)
		default:
			l.buf.WriteByte(c)
			l.pos++
		}
	}
	if term != 0 {
		l.unterminated = true
	}
}

// dollar handles '$' at l.pos: ANSI-C and locale quoting, command and
// arithmetic substitution, and parameter expansion of variables assigned
// earlier in the script. Unknown variables are kept as written.
func (l *lexer) dollar(inDouble bool) {
	l.pos++
	if l.pos >= len(l.src) {
		l.buf.WriteByte('$')
		return
	}
	n := l.src[l.pos]
	switch {
	case n == '\'' && !inDouble:
		l.quoted = true
		l.pos++
		l.readANSIC('\'')
	case n == '"' && !inDouble:
		l.quoted = true
		l.pos++
		l.readDouble('"')
	case n == '(':
		sub := l.readParens()
		l.addNested(sub)
		l.substitute("$("+sub+")", sub, inDouble)
	case n == '{':
		inner := l.readBraces()
		l.param(inner, inDouble)
	case isNameByte(n, true):
		start := l.pos
		for l.pos < len(l.src) && isNameByte(l.src[l.pos], false) {
			l.pos++
		}
		name := l.src[start:l.pos]
		if v, ok := l.env[name]; ok {
			l.expand(v, inDouble)
		} else {
			l.buf.WriteString("$" + name)
		}
	default:
		l.buf.WriteByte('$')
	}
}

// param handles ${inner}.
func (l *lexer) param(inner string, inDouble bool) {
	i := 0
	for i < len(inner) && isNameByte(inner[i], i == 0) {
		i++
	}
	name, rest := inner[:i], inner[i:]
	v, known := l.env[name]
	if name != "" {
		switch {
		case rest == "":
			if known {
				l.expand(v, inDouble)
				return
			}
		case strings.HasPrefix(rest, ":-"), strings.HasPrefix(rest, ":="),
			strings.HasPrefix(rest, "-"), strings.HasPrefix(rest, "="):
			colon := rest[0] == ':'
			def := strings.TrimPrefix(rest, ":")[1:]
			if !known || (colon && v == "") {
				l.addLenient(def)
				l.expand(strings.NewReplacer(`'`, "", `"`, "").Replace(def), inDouble)
				return
			}
			l.expand(v, inDouble)
			return
		}
	}
	// Anything else is kept as written; its text may hide substitutions.
	l.buf.WriteString("${" + inner + "}")
	if rest != "" {
		l.addLenient(inner)
	}
}

// expand appends a variable's value, split into words when unquoted.
func (l *lexer) expand(v string, inDouble bool) {
	if !l.a.spend(len(v)) {
		return
	}
	if inDouble || v == "" {
		l.buf.WriteString(v)
		return
	}
	isIFS := func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }
	parts := strings.FieldsFunc(v, isIFS)
	if isIFS(rune(v[0])) {
		l.endWord()
	}
	for i, p := range parts {
		if i > 0 {
			l.endWord()
		}
		l.buf.WriteString(p)
	}
	if isIFS(rune(v[len(v)-1])) {
		l.endWord()
	}
}

// readParens reads a balanced (...) group starting at l.pos and returns its
// contents; l.pos ends after the closing parenthesis.
func (l *lexer) readParens() string {
	start := l.pos + 1
	depth := 0
	for l.pos < len(l.src) {
		switch l.src[l.pos] {
		case '\\':
			l.pos++
		case '\'':
			l.skipPast('\'')
			continue
		case '"':
			l.skipDouble()
			continue
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				s := l.src[start:l.pos]
				l.pos++
				return s
			}
		}
		l.pos++
	}
	l.pos = len(l.src)
	l.unterminated = true
	if start > len(l.src) {
		return ""
	}
	return l.src[start:]
}

// readBraces reads ${...} starting at the '{' and returns the inside.
func (l *lexer) readBraces() string {
	start := l.pos + 1
	depth := 0
	for l.pos < len(l.src) {
		switch l.src[l.pos] {
		case '\\':
			l.pos++
		case '\'':
			l.skipPast('\'')
			continue
		case '"':
			l.skipDouble()
			continue
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				s := l.src[start:l.pos]
				l.pos++
				return s
			}
		}
		l.pos++
	}
	l.pos = len(l.src)
	l.unterminated = true
	if start > len(l.src) {
		return ""
	}
	return l.src[start:]
}

// skipPast moves past the quote at l.pos and its closing quote q.
func (l *lexer) skipPast(q byte) {
	end := strings.IndexByte(l.src[l.pos+1:], q)
	if end < 0 {
		l.pos = len(l.src)
		l.unterminated = true
		return
	}
	l.pos += end + 2
}

func (l *lexer) skipDouble() {
	l.pos++
	for l.pos < len(l.src) {
		switch l.src[l.pos] {
		case '\\':
			l.pos += 2
			continue
		case '"':
			l.pos++
			return
		}
		l.pos++
	}
	l.pos = len(l.src)
	l.unterminated = true
}

// readBacktick reads a `...` substitution whose opening backquote has been
// consumed, undoing the backslash escapes it allows.
func (l *lexer) readBacktick() string {
	var b strings.Builder
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		if c == '`' {
			l.pos++
			return b.String()
		}
		if c == '\\' && l.pos+1 < len(l.src) {
			if n := l.src[l.pos+1]; n == '`' || n == '\\' || n == '$' {
				b.WriteByte(n)
				l.pos += 2
				continue
			}
		}
		b.WriteByte(c)
		l.pos++
	}
	l.unterminated = true
	return b.String()
}

// readANSIC reads the rest of an ANSI-C quoted string up to term, or a whole
// string when term is 0, decoding backslash escapes.
func (l *lexer) readANSIC(term byte) {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		if term != 0 && c == term {
			l.pos++
			return
		}
		if c != '\\' || l.pos+1 >= len(l.src) {
			l.buf.WriteByte(c)
			l.pos++
			continue
		}
		n := l.src[l.pos+1]
		l.pos += 2
		switch n {
		case 'a':
			l.buf.WriteByte('\a')
		case 'b':
			l.buf.WriteByte('\b')
		case 'e', 'E':
			l.buf.WriteByte(0x1b)
		case 'f':
			l.buf.WriteByte('\f')
		case 'n':
			l.buf.WriteByte('\n')
		case 'r':
			l.buf.WriteByte('\r')
		case 't':
			l.buf.WriteByte('\t')
		case 'v':
			l.buf.WriteByte('\v')
		case 'c':
			if l.pos < len(l.src) {
				l.buf.WriteByte(l.src[l.pos] & 0x1f)
				l.pos++
			}
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[n]
			v, k := l.digits(16, max)
			if k == 0 {
				l.buf.WriteByte('\\')
				l.buf.WriteByte(n)
			} else if n == 'x' {
				l.buf.WriteByte(byte(v))
			} else if utf8.ValidRune(rune(v)) {
				l.buf.WriteRune(rune(v))
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			l.pos--
			v, _ := l.digits(8, 3)
			l.buf.WriteByte(byte(v))
		default:
			l.buf.WriteByte(n)
		}
	}
	if term != 0 {
		l.unterminated = true
	}
}

func (l *lexer) digits(base, max int) (int, int) {
	v, k := 0, 0
	for k < max && l.pos < len(l.src) {
		d, err := strconv.ParseUint(l.src[l.pos:l.pos+1], base, 8)
		if err != nil {
			break
		}
		v = v*base + int(d)
		k++
		l.pos++
	}
	return v, k
}

// redirect handles a redirection operator at l.pos; the next word becomes
// its target.
func (l *lexer) redirect() {
	// A word made only of digits right before the operator is a file
	// descriptor number, not an argument.
	if !l.quoted && l.buf.Len() > 0 {
		if _, err := strconv.Atoi(l.buf.String()); err == nil {
			l.buf.Reset()
		}
	}
	l.endWord()
	ops := []string{"&>>", "<<<", "<<-", ">>", ">|", ">&", "&>", "<<", "<>", "<&", ">", "<"}
	for _, op := range ops {
		if strings.HasPrefix(l.src[l.pos:], op) {
			l.pos += len(op)
			l.redirOp = op
			return
		}
	}
	l.pos++
}

// endWord finishes the current word, if any.
func (l *lexer) endWord() {
	if !l.inWord() {
		return
	}
	w := l.buf.String()
	quoted := l.quoted
	l.buf.Reset()
	l.quoted = false
	op := l.redirOp
	l.redirOp = ""
	switch op {
	case "":
		l.cur.words = append(l.cur.words, w)
	case "<<", "<<-":
		l.pending = append(l.pending, heredoc{delim: w, strip: op == "<<-", expand: !quoted, cmd: l.cur})
	case "<<<":
		l.cur.stdin = append(l.cur.stdin, w)
	default:
		l.cur.redirs = append(l.cur.redirs, redirect{op: op, target: w})
	}
}

// endCommand finishes the current simple command; pipe means it pipes into
// the next one.
func (l *lexer) endCommand(pipe bool) {
	c := l.cur
	l.redirOp = ""
	if len(c.words) == 0 && len(c.redirs) == 0 && len(c.stdin) == 0 {
		return
	}
	if !l.a.spend(64) {
		return
	}
	c.prev = l.pipeFrom
	l.cmds = append(l.cmds, c)
	l.pipeFrom = nil
	if pipe {
		l.pipeFrom = c
	}
	l.record(c)
	l.cur = &command{}
}

// record remembers variables a command assigns for later expansion:
// NAME=value alone, or after export, declare, typeset, local or readonly.
func (l *lexer) record(c *command) {
	words := c.words
	if len(words) > 0 {
		switch words[0] {
		case "export", "declare", "typeset", "local", "readonly":
			words = words[1:]
		}
	}
	for _, w := range words {
		if strings.HasPrefix(w, "-") {
			continue
		}
		name, value, ok := assignment(w)
		if !ok {
			return
		}
		if len(value) > 64<<10 {
			l.a.exceeded = true
			return
		}
		l.env[name] = value
	}
}

// readHeredocs reads the bodies of the here-documents started on the line
// just ended.
func (l *lexer) readHeredocs() {
	for _, h := range l.pending {
		var body strings.Builder
		for l.pos < len(l.src) {
			end := strings.IndexByte(l.src[l.pos:], '\n')
			var line string
			if end < 0 {
				line, l.pos = l.src[l.pos:], len(l.src)
			} else {
				line, l.pos = l.src[l.pos:l.pos+end], l.pos+end+1
			}
			check := line
			if h.strip {
				check = strings.TrimLeft(line, "\t")
			}
			if check == h.delim {
				break
			}
			body.WriteString(line)
			body.WriteByte('\n')
		}
		text := body.String()
		if h.expand {
			sub := newLexer(l.a, text, l.env)
			sub.readDouble(0)
			l.nested = append(l.nested, sub.nested...)
			text = sub.buf.String()
		}
		h.cmd.stdin = append(h.cmd.stdin, text)
	}
	l.pending = nil
}

func (l *lexer) addNested(src string) {
	if strings.TrimSpace(src) != "" {
		l.nested = append(l.nested, nestedScript{src: src, env: l.env})
	}
}

func (l *lexer) addLenient(src string) {
	if strings.TrimSpace(src) != "" {
		l.nested = append(l.nested, nestedScript{src: src, env: l.env, lenient: true})
	}
}

// substitute writes a command substitution's output when it is known
// (echoOutput), else its text.
func (l *lexer) substitute(text, sub string, inDouble bool) {
	if out, ok := echoOutput(sub); ok {
		l.expand(out, inDouble)
		return
	}
	l.buf.WriteString(text)
}

var plainEcho = regexp.MustCompile(`^\s*echo((?:\s+[A-Za-z0-9_./:=,+@%-]+)+)\s*$`)

// echoOutput is the output of a command substitution that only echoes
// plain words, so that $(echo /) and a=$(echo reb) are seen through.
func echoOutput(sub string) (string, bool) {
	m := plainEcho.FindStringSubmatch(sub)
	if m == nil || strings.HasPrefix(strings.TrimSpace(m[1]), "-") {
		return "", false
	}
	return strings.Join(strings.Fields(m[1]), " "), true
}

func isNameByte(c byte, first bool) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9')
}

// assignment splits NAME=value (also NAME+=value).
func assignment(w string) (name, value string, ok bool) {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return "", "", false
	}
	name = strings.TrimSuffix(w[:eq], "+")
	if name == "" {
		return "", "", false
	}
	for i := 0; i < len(name); i++ {
		if !isNameByte(name[i], i == 0) {
			return "", "", false
		}
	}
	return name, w[eq+1:], true
}
