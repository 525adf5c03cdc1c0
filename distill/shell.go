package distill

import "strings"

// This file holds a small, forgiving lexer for the POSIX shell command lines
// models propose: words with their quoting, control operators, redirections
// and here-documents. It never fails: unterminated quotes, parentheses and
// here-documents end at the end of the input. It does not expand anything.

// partKind says how a piece of a word was written.
type partKind uint8

const (
	partLit  partKind = iota // literal text: its value is exact (quotes and escapes removed)
	partBare                 // unquoted text with expansions or globs, kept as written
	partDQ                   // double-quoted text with expansions; text is the inside
	partANSI                 // $'…' text; text is the inside
)

type part struct {
	kind partKind
	text string
}

// word is one shell word: its parts, and whether any of it was quoted or
// escaped (which makes ” a word and a here-document delimiter literal).
type word struct {
	parts  []part
	quoted bool
}

// value returns the word with quotes removed; expansions are kept as written.
func (w word) value() string {
	if len(w.parts) == 1 {
		return w.parts[0].text
	}
	var b strings.Builder
	for _, p := range w.parts {
		b.WriteString(p.text)
	}
	return b.String()
}

type tokKind uint8

const (
	tokWord  tokKind = iota
	tokOp            // control operator: && || ; ;; & | |& ( ) or "\n"
	tokRedir         // redirection operator, with its file descriptor prefix
)

type token struct {
	kind tokKind
	op   string // tokOp, tokRedir: the operator as written, e.g. "2>>", "<<-"
	word word   // tokWord
	// Here-documents (tokRedir "<<" or "<<-"): the body and whether the
	// delimiter was quoted. delim is the delimiter's value.
	body        string
	delim       string
	quotedDelim bool
	terminated  bool // the body ended at its delimiter line
	hasDelim    bool // a delimiter word followed the operator
}

// maxLex bounds how much of a command line is lexed; the rest is ignored.
// Model-proposed commands are far shorter; this keeps hostile input linear.
const maxLex = 64 << 10

type lexer struct {
	s       string
	i       int
	toks    []token
	pending []int // indexes of here-document tokens awaiting their body
	wantDel bool  // the next word is a here-document delimiter
}

// lex splits a command line into tokens.
func lex(s string) []token {
	if len(s) > maxLex {
		s = s[:maxLex]
	}
	l := &lexer{s: s}
	l.run()
	return l.toks
}

func (l *lexer) run() {
	for l.i < len(l.s) {
		c := l.s[l.i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			l.i++
		case c == '\\' && l.i+1 < len(l.s) && l.s[l.i+1] == '\n':
			l.i += 2
		case c == '#':
			for l.i < len(l.s) && l.s[l.i] != '\n' {
				l.i++
			}
		case c == '\n':
			l.i++
			l.wantDel = false
			l.toks = append(l.toks, token{kind: tokOp, op: "\n"})
			l.bodies()
		default:
			if op, ok := l.redirection(); ok {
				l.toks = append(l.toks, token{kind: tokRedir, op: op})
				// Only the word right after << is its delimiter.
				l.wantDel = isHeredoc(op)
				continue
			}
			if op, ok := l.control(); ok {
				l.toks = append(l.toks, token{kind: tokOp, op: op})
				l.wantDel = false
				continue
			}
			at := l.i
			w := l.word()
			if l.i == at {
				l.i++ // cannot happen with the operators above; never loop
				continue
			}
			if l.wantDel {
				l.wantDel = false
				t := &l.toks[len(l.toks)-1]
				t.delim, t.quotedDelim, t.hasDelim = w.value(), w.quoted, true
				l.pending = append(l.pending, len(l.toks)-1)
				// The delimiter word is kept on the redirection token only.
				continue
			}
			l.toks = append(l.toks, token{kind: tokWord, word: w})
		}
	}
}

// bodies reads the bodies of pending here-documents after a newline.
func (l *lexer) bodies() {
	for _, ti := range l.pending {
		t := &l.toks[ti]
		strip := strings.HasSuffix(t.op, "-")
		var b strings.Builder
		for l.i < len(l.s) {
			end := strings.IndexByte(l.s[l.i:], '\n')
			line := l.s[l.i:]
			if end >= 0 {
				line = l.s[l.i : l.i+end]
				l.i += end + 1
			} else {
				l.i = len(l.s)
			}
			cmp := line
			if strip {
				cmp = strings.TrimLeft(cmp, "\t")
			}
			if strings.TrimRight(cmp, "\r") == t.delim {
				t.terminated = true
				break
			}
			b.WriteString(line)
			b.WriteByte('\n')
		}
		t.body = b.String()
	}
	l.pending = l.pending[:0]
}

var redirOps = []string{"&>>", "&>", ">>", ">|", ">&", "<<<", "<<-", "<<", "<&", "<>", ">", "<"}

// redirection lexes a redirection operator, with an optional leading file
// descriptor number, at the current position.
func (l *lexer) redirection() (string, bool) {
	j := l.i
	for j < len(l.s) && j-l.i < 3 && l.s[j] >= '0' && l.s[j] <= '9' {
		j++
	}
	rest := l.s[j:]
	if strings.HasPrefix(rest, "<(") || strings.HasPrefix(rest, ">(") {
		return "", false // process substitution: a word
	}
	for _, op := range redirOps {
		if strings.HasPrefix(rest, op) {
			if j > l.i && op[0] == '&' {
				return "", false
			}
			full := l.s[l.i : j+len(op)]
			l.i = j + len(op)
			return full, true
		}
	}
	return "", false
}

var controlOps = []string{"&&", "||", ";;", "|&", ";", "|", "&", "(", ")"}

func (l *lexer) control() (string, bool) {
	for _, op := range controlOps {
		if strings.HasPrefix(l.s[l.i:], op) {
			l.i += len(op)
			return op, true
		}
	}
	return "", false
}

func isBreak(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', ';', '&', '|', '(', ')', '<', '>':
		return true
	}
	return false
}

// special bytes make unquoted text an expansion or pattern, kept as written.
func special(c byte) bool {
	switch c {
	case '$', '`', '*', '?', '[', ']', '{', '}', '~', '!':
		return true
	}
	return false
}

// word lexes one word.
func (l *lexer) word() word {
	var w word
	var run strings.Builder
	runSpecial := false
	flush := func() {
		if run.Len() == 0 {
			return
		}
		k := partLit
		if runSpecial {
			k = partBare
		}
		w.parts = appendPart(w.parts, part{k, run.String()})
		run.Reset()
		runSpecial = false
	}
	start := l.i
	for l.i < len(l.s) {
		c := l.s[l.i]
		if isBreak(c) {
			if (c == '<' || c == '>') && l.i+1 < len(l.s) && l.s[l.i+1] == '(' && l.i == start {
				// Process substitution <(…) or >(…).
				run.WriteString(l.balanced(l.i+1, '(', ')', l.i))
				runSpecial = true
				continue
			}
			break
		}
		switch c {
		case '\'':
			flush()
			end := strings.IndexByte(l.s[l.i+1:], '\'')
			var text string
			if end < 0 {
				text, l.i = l.s[l.i+1:], len(l.s)
			} else {
				text, l.i = l.s[l.i+1:l.i+1+end], l.i+2+end
			}
			w.parts = appendPart(w.parts, part{partLit, text})
			w.quoted = true
		case '"':
			flush()
			w.parts = appendPart(w.parts, l.doubleQuoted())
			w.quoted = true
		case '\\':
			if l.i+1 >= len(l.s) {
				run.WriteByte('\\')
				l.i++
				continue
			}
			if l.s[l.i+1] == '\n' {
				l.i += 2
				continue
			}
			flush()
			w.parts = appendPart(w.parts, part{partLit, l.s[l.i+1 : l.i+2]})
			w.quoted = true
			l.i += 2
		case '$':
			if l.i+1 < len(l.s) {
				switch l.s[l.i+1] {
				case '\'':
					flush()
					w.parts = appendPart(w.parts, l.ansi())
					w.quoted = true
					continue
				case '(':
					run.WriteString(l.balanced(l.i+1, '(', ')', l.i))
					runSpecial = true
					continue
				case '{':
					run.WriteString(l.balanced(l.i+1, '{', '}', l.i))
					runSpecial = true
					continue
				}
			}
			run.WriteByte(c)
			runSpecial = true
			l.i++
		case '`':
			end := strings.IndexByte(l.s[l.i+1:], '`')
			if end < 0 {
				run.WriteString(l.s[l.i:])
				l.i = len(l.s)
			} else {
				run.WriteString(l.s[l.i : l.i+2+end])
				l.i += 2 + end
			}
			runSpecial = true
		default:
			if special(c) {
				runSpecial = true
			}
			run.WriteByte(c)
			l.i++
		}
	}
	flush()
	return w
}

// appendPart appends p, merging adjacent literal text.
func appendPart(ps []part, p part) []part {
	if n := len(ps); n > 0 && ps[n-1].kind == partLit && p.kind == partLit {
		ps[n-1].text += p.text
		return ps
	}
	if p.kind == partLit && p.text == "" {
		return ps
	}
	return append(ps, p)
}

// balanced returns s[from:end] where s[open] opens a group closed by the
// matching close byte, skipping quoted text; unbalanced input runs to the end.
func (l *lexer) balanced(open int, o, c byte, from int) string {
	depth := 0
	j := open
	for j < len(l.s) {
		switch l.s[j] {
		case '\\':
			j++
		case '\'':
			if k := strings.IndexByte(l.s[j+1:], '\''); k >= 0 {
				j += k + 1
			} else {
				j = len(l.s)
			}
		case o:
			depth++
		case c:
			depth--
			if depth == 0 {
				l.i = j + 1
				return l.s[from:l.i]
			}
		}
		j++
	}
	l.i = len(l.s)
	return l.s[from:]
}

// doubleQuoted lexes "…" at l.i. Without expansions inside it is a literal
// (escapes of " \ $ ` and newline removed); otherwise it is kept as written.
func (l *lexer) doubleQuoted() part {
	j := l.i + 1
	expands := false
	for j < len(l.s) && l.s[j] != '"' {
		switch l.s[j] {
		case '\\':
			j++
		case '$', '`':
			expands = true
		}
		j++
	}
	end := min(j, len(l.s))
	inner := l.s[l.i+1 : end]
	if end == len(l.s) {
		inner = trimDangling(inner) // unterminated: an escape of nothing
	}
	l.i = min(end+1, len(l.s))
	if expands {
		return part{partDQ, inner}
	}
	if !strings.Contains(inner, `\`) {
		return part{partLit, inner}
	}
	var b strings.Builder
	for k := 0; k < len(inner); k++ {
		if inner[k] == '\\' && k+1 < len(inner) {
			switch inner[k+1] {
			case '"', '\\', '$', '`':
				b.WriteByte(inner[k+1])
				k++
				continue
			case '\n':
				k++
				continue
			}
		}
		b.WriteByte(inner[k])
	}
	return part{partLit, b.String()}
}

// ansi lexes $'…' at l.i, kept as written.
func (l *lexer) ansi() part {
	j := l.i + 2
	for j < len(l.s) && l.s[j] != '\'' {
		if l.s[j] == '\\' {
			j++
		}
		j++
	}
	end := min(j, len(l.s))
	text := l.s[l.i+2 : end]
	if end == len(l.s) {
		text = trimDangling(text)
	}
	p := part{partANSI, text}
	l.i = min(end+1, len(l.s))
	return p
}

// trimDangling drops a final backslash that escapes nothing (an odd run of
// backslashes at the end of unterminated quoted text).
func trimDangling(s string) string {
	n := 0
	for n < len(s) && s[len(s)-1-n] == '\\' {
		n++
	}
	if n%2 == 1 {
		return s[:len(s)-1]
	}
	return s
}
