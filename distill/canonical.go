package distill

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/nightshift-dev/nightshift/shell"
)

// Canonical returns the command in a normal form, the key under which the
// memory's ledger records commands. The command is parsed as bash (package
// shell) and printed back by mvdan.cc/sh/v3/syntax's printer, one line per
// statement: words separated by single spaces, quoting rewritten (literal
// text bare when it is safe, single-quoted otherwise), comments, line
// continuations and blank lines dropped, operators spaced uniformly,
// redirections written without a space before their target, compound
// commands (if, for, while, case, { }, ( )) on one line. Statements keep
// the line structure of the input: those written on one line stay joined
// by "; ", those on separate lines stay on separate lines (a statement
// with a here-document always ends its line). Expansions ($x, "$x", $(…),
// globs, $'…') and here-document bodies are kept as written, since they
// change what the command does. So
//
//	sed -i 's/a/b/' f     and     sed  -i "s/a/b/"  f
//
// share the key "sed -i s/a/b/ f". A command the parser rejects (a syntax
// error, a control character bash and the parser would read differently)
// is keyed by its text with runs of blanks collapsed and blank lines
// dropped, or by its text unchanged when that collapsed text would parse.
// Canonical never fails and is idempotent: Canonical(Canonical(c)) ==
// Canonical(c).
func Canonical(command string) string {
	f, err := shell.Parse(command)
	if err != nil {
		return unparsed(command)
	}
	requoteFile(f)
	var b strings.Builder
	for i, s := range f.Stmts {
		if i > 0 {
			prev := f.Stmts[i-1]
			switch {
			case s.Pos().Line() > prev.End().Line() || hasHeredoc(prev):
				b.WriteByte('\n')
			case prev.Background || prev.Coprocess:
				b.WriteByte(' ')
			default:
				b.WriteString("; ")
			}
		}
		b.WriteString(printStmt(s))
	}
	return b.String()
}

// unparsed is the key of a command the parser rejects. It must not parse
// either, so that Canonical maps it to itself.
func unparsed(command string) string {
	var lines []string
	for _, l := range strings.Split(command, "\n") {
		if l = strings.Join(strings.FieldsFunc(l, func(r rune) bool { return r == ' ' || r == '\t' }), " "); l != "" {
			lines = append(lines, l)
		}
	}
	c := strings.Join(lines, "\n")
	if _, err := shell.Parse(c); err == nil {
		return command
	}
	return c
}

// printStmt prints one statement on one line (here-document bodies follow
// on their own lines).
func printStmt(s *syntax.Stmt) string {
	var b strings.Builder
	// Indent with spaces: with tabs the printer re-indents <<- bodies.
	if err := syntax.NewPrinter(syntax.SingleLine(true), syntax.Indent(2)).Print(&b, s); err != nil {
		return "?"
	}
	return strings.TrimRight(b.String(), "\n")
}

func hasHeredoc(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		if r, ok := n.(*syntax.Redirect); ok && (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc) {
			found = true
		}
		return !found
	})
	return found
}

// requoteFile rewrites in canonical quoting the words whose quoting does
// not change what they mean: command arguments, assigned values,
// redirection targets, for-loop lists, and here-document delimiters
// (single-quoted when quoted at all). Words in tests, arithmetic and case
// patterns are left as written.
func requoteFile(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			for i, w := range n.Args {
				requote(w, i == 0)
			}
		case *syntax.Assign:
			if n.Name != nil && n.Value != nil && n.Array == nil {
				requote(n.Value, false)
			}
		case *syntax.Redirect:
			switch n.Op {
			case syntax.Hdoc, syntax.DashHdoc:
				requoteDelim(n.Word)
			default:
				if n.Word != nil {
					requote(n.Word, false)
				}
			}
		case *syntax.WordIter:
			for _, w := range n.Items {
				requote(w, false)
			}
		}
		return true
	})
}

// seg is a piece of a word: literal text (its value known exactly) or a
// part kept as written (an expansion, a glob, $'…').
type seg struct {
	lit  bool
	val  string
	part syntax.WordPart
}

// special bytes make unquoted text an expansion or pattern, kept as written.
const special = "$`*?[]{}~!"

// segments splits a word's parts into literal text and parts kept as
// written, merging adjacent literal text.
func segments(w *syntax.Word) []seg {
	var out []seg
	addLit := func(v string) {
		if n := len(out); n > 0 && out[n-1].lit {
			out[n-1].val += v
			return
		}
		out = append(out, seg{lit: true, val: v})
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			var run strings.Builder
			flush := func() {
				if run.Len() == 0 {
					return
				}
				if r := run.String(); strings.ContainsAny(r, special) {
					out = append(out, seg{part: &syntax.Lit{Value: r}})
				} else {
					addLit(r)
				}
				run.Reset()
			}
			for i := 0; i < len(v); i++ {
				if v[i] == '\\' && i+1 < len(v) {
					flush()
					i++
					if v[i] != '\n' { // a line continuation is dropped
						addLit(v[i : i+1])
					}
					continue
				}
				run.WriteByte(v[i])
			}
			flush()
		case *syntax.SglQuoted:
			if p.Dollar {
				out = append(out, seg{part: p})
				continue
			}
			addLit(p.Value)
		case *syntax.DblQuoted:
			if text, ok := literalDouble(p); ok {
				addLit(text)
				continue
			}
			out = append(out, seg{part: p})
		default:
			out = append(out, seg{part: p})
		}
	}
	return out
}

// literalDouble returns the value of "…" without expansions.
func literalDouble(p *syntax.DblQuoted) (string, bool) {
	if p.Dollar {
		return "", false
	}
	var b strings.Builder
	for _, q := range p.Parts {
		l, ok := q.(*syntax.Lit)
		if !ok {
			return "", false
		}
		v := l.Value
		for i := 0; i < len(v); i++ {
			if v[i] == '\\' && i+1 < len(v) {
				switch v[i+1] {
				case '"', '\\', '$', '`':
					i++
				case '\n':
					i++
					continue
				}
			}
			b.WriteByte(v[i])
		}
	}
	return b.String(), true
}

// reserved words bash reads as syntax in a command's first word.
var reserved = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "do": true, "done": true,
	"case": true, "esac": true, "while": true, "until": true, "for": true, "in": true, "select": true,
	"function": true, "time": true, "coproc": true,
}

// requote rewrites w's literal text in canonical quoting; first says w is
// a command's first word (where NAME=… is an assignment and if, for, … are
// reserved words).
func requote(w *syntax.Word, first bool) {
	segs := segments(w)
	braces := false
	for _, s := range segs {
		if l, ok := s.part.(*syntax.Lit); ok && strings.ContainsAny(l.Value, "{}") {
			braces = true
		}
	}
	var parts []syntax.WordPart
	for i, s := range segs {
		if !s.lit {
			parts = append(parts, s.part)
			continue
		}
		var prev, next syntax.WordPart
		if i > 0 {
			prev = segs[i-1].part
		}
		if i+1 < len(segs) {
			next = segs[i+1].part
		}
		var q string
		switch {
		case s.val == "":
			// Dropped inside a word, unless it keeps a # from starting a
			// comment or a ~ from expanding, or braces see it.
			if len(segs) > 1 && !braces && !(i == 0 && startsWith(next, "#~")) {
				continue
			}
			q = "''"
		case endsWithDollar(prev):
			// After a bare $, quotes would read as $'…' or $"…", and
			// bare text as a parameter.
			q = doubleQuote(s.val)
		case shortParam(prev) && isNameByte(s.val[0]):
			q = singleQuote(s.val) // $x'y' is not $xy
		case first && i == 0 && (strings.Contains(s.val, "=") || len(segs) == 1 && reserved[s.val]):
			q = singleQuote(s.val)
		case braces && strings.Trim(s.val, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_/-") != "":
			q = singleQuote(s.val) // , and .. inside braces expand
		case safeBare(s.val):
			q = s.val
		default:
			q = singleQuote(s.val)
		}
		parts = append(parts, &syntax.Lit{Value: q})
	}
	if len(parts) == 0 {
		parts = []syntax.WordPart{&syntax.Lit{Value: "''"}}
	}
	w.Parts = parts
}

// requoteDelim writes a quoted here-document delimiter in single quotes.
func requoteDelim(w *syntax.Word) {
	if w == nil {
		return
	}
	quoted := false
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.Contains(p.Value, `\`) {
				quoted = true
			}
		default:
			quoted = true
		}
	}
	segs := segments(w)
	if !quoted || len(segs) != 1 || !segs[0].lit || strings.Contains(segs[0].val, "'") {
		return
	}
	w.Parts = []syntax.WordPart{&syntax.SglQuoted{Value: segs[0].val}}
}

func startsWith(p syntax.WordPart, chars string) bool {
	l, ok := p.(*syntax.Lit)
	return ok && l.Value != "" && strings.IndexByte(chars, l.Value[0]) >= 0
}

func endsWithDollar(p syntax.WordPart) bool {
	l, ok := p.(*syntax.Lit)
	return ok && strings.HasSuffix(l.Value, "$")
}

// shortParam reports whether p is $name without braces.
func shortParam(p syntax.WordPart) bool {
	pe, ok := p.(*syntax.ParamExp)
	return ok && pe.Short
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
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
