package distill

import "strings"

// Canonical returns the command in a normal form, the key under which the
// memory's ledger records commands: words separated by single spaces, quoting
// rewritten (literal text bare when it is safe, single-quoted otherwise),
// comments, line continuations and blank lines dropped, operators spaced
// uniformly, redirections written without a space before their target.
// Expansions ($x, "$x", $(…), globs) and here-document bodies are kept as
// written, since they change what the command does. So
//
//	sed -i 's/a/b/' f     and     sed  -i "s/a/b/"  f
//
// share the key "sed -i s/a/b/ f". Canonical never fails and is idempotent:
// Canonical(Canonical(c)) == Canonical(c).
func Canonical(command string) string {
	// One pass normalises every command a person or model writes; odd
	// input (unterminated quotes and substitutions next to each other) can
	// need another, so passes repeat until the form is stable.
	c := canonicalPass(command)
	for i := 0; i < 8; i++ {
		next := canonicalPass(c)
		if next == c {
			break
		}
		c = next
	}
	return c
}

func canonicalPass(command string) string {
	toks := lex(command)
	var b strings.Builder
	var pending []*token
	bodyEnd := -1 // b.Len() right after the last here-document body
	flushBodies := func() {
		for _, t := range pending {
			b.WriteString(t.body)
			if t.terminated {
				b.WriteString(t.delim)
				b.WriteByte('\n')
			}
		}
		pending = pending[:0]
		bodyEnd = b.Len()
	}
	space := func() {
		if n := b.Len(); n > 0 {
			if last := b.String()[n-1]; last != '\n' && last != ' ' {
				b.WriteByte(' ')
			}
		}
	}
	for i := range toks {
		t := &toks[i]
		switch t.kind {
		case tokWord:
			var wb strings.Builder
			writeWord(&wb, t.word)
			ws := wb.String()
			if i == 0 || toks[i-1].kind != tokRedir || isHeredoc(toks[i-1].op) || strings.ContainsAny(ws[:1], "<>&|(") {
				space()
			}
			b.WriteString(ws)
		case tokRedir:
			space()
			b.WriteString(t.op)
			if isHeredoc(t.op) && t.hasDelim {
				writeDelim(&b, t)
				pending = append(pending, t)
			}
		case tokOp:
			switch t.op {
			case "\n":
				if b.Len() == 0 {
					continue
				}
				s := strings.TrimRight(b.String(), " ")
				if len(pending) == 0 && strings.HasSuffix(s, "\n") {
					continue
				}
				b.Reset()
				b.WriteString(s)
				b.WriteByte('\n')
				flushBodies()
			case ";", ";;":
				s := strings.TrimRight(b.String(), " ")
				b.Reset()
				b.WriteString(s)
				b.WriteString(t.op)
			default:
				space()
				b.WriteString(t.op)
			}
		}
	}
	out := b.String()
	if bodyEnd == len(out) {
		out = strings.TrimRight(out, "\n") // a body's own spaces are kept
	} else {
		out = strings.TrimRight(out, " \n")
	}
	if len(pending) > 0 {
		b.Reset()
		b.WriteString(out)
		b.WriteByte('\n')
		flushBodies()
		out = strings.TrimRight(b.String(), "\n")
	}
	return out
}

// isHeredoc reports whether a redirection operator opens a here-document
// (<< or <<-, not the here-string <<<).
func isHeredoc(op string) bool {
	op = strings.TrimLeft(op, "0123456789")
	return op == "<<" || op == "<<-"
}

func writeDelim(b *strings.Builder, t *token) {
	if t.quotedDelim || !safeBare(t.delim) {
		b.WriteString(singleQuote(t.delim))
		return
	}
	if strings.HasPrefix(t.delim, "-") {
		b.WriteByte(' ') // "<<-x" would read as the <<- operator
	}
	b.WriteString(t.delim)
}

// writeWord writes a word in canonical quoting.
func writeWord(b *strings.Builder, w word) {
	if len(w.parts) == 0 {
		b.WriteString("''")
		return
	}
	start := b.Len()
	for _, p := range w.parts {
		switch p.kind {
		case partLit:
			switch {
			case safeBare(p.text):
				b.WriteString(p.text)
			case b.Len() > start && strings.HasSuffix(b.String(), "$"):
				// After a bare $, a single quote would read as $'…'.
				b.WriteString(doubleQuote(p.text))
			default:
				b.WriteString(singleQuote(p.text))
			}
		case partBare:
			if b.Len() == start && strings.HasPrefix(p.text, "#") {
				b.WriteString("''") // keep it a word, not a comment
			}
			b.WriteString(p.text)
		case partDQ:
			b.WriteString(`"` + p.text + `"`)
		case partANSI:
			b.WriteString(`$'` + p.text + `'`)
		}
	}
}

// safeBare reports whether s can be written without quotes.
func safeBare(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c >= 0x80:
		case strings.IndexByte("_@%+=:,./-^", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func singleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// doubleQuote quotes s in double quotes, escaping what they expand.
func doubleQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"', '\\', '$', '`':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}
