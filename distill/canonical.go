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
	toks := lex(command)
	var b strings.Builder
	var pending []*token
	flushBodies := func() {
		for _, t := range pending {
			b.WriteString(t.body)
			b.WriteString(t.delim)
			b.WriteByte('\n')
		}
		pending = pending[:0]
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
			if i == 0 || toks[i-1].kind != tokRedir || isHeredoc(toks[i-1].op) {
				space()
			}
			writeWord(&b, t.word)
		case tokRedir:
			space()
			b.WriteString(t.op)
			if isHeredoc(t.op) {
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
	out := strings.TrimRight(b.String(), " \n")
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
			if safeBare(p.text) {
				b.WriteString(p.text)
			} else {
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
