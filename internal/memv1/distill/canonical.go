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
// change what the command does (the printer only re-spaces the commands
// inside a substitution). So
//
//	sed -i 's/a/b/' f     and     sed  -i "s/a/b/"  f
//
// share the key "sed -i s/a/b/ f". A command the parser rejects (a syntax
// error, a control character bash and the parser would read differently)
// is keyed by its text with runs of blanks collapsed and blank lines
// dropped, or by its text unchanged when that collapsed text would parse.
// A command whose printed form would not be stable under another pass or
// would not parse is its own key. Canonical never fails and is idempotent:
// Canonical(Canonical(c)) == Canonical(c).
func Canonical(command string) string {
	// A form that is not stable under another pass, or that bash would
	// not parse when the command parses (the printer mishandles rare
	// input: an empty or unterminated here-document delimiter, a
	// backquoted subshell), is not used: such a command is its own key.
	c, parsed := canonicalPass(command)
	if c == command {
		return c
	}
	if again, ok := canonicalPass(c); again != c || ok != parsed {
		return command
	}
	return c
}

// canonicalPass prints command in canonical form; parsed says whether bash
// would parse it.
func canonicalPass(command string) (form string, parsed bool) {
	f, err := shell.Parse(command)
	if err != nil {
		return unparsed(command), false
	}
	requoteFile(f)
	fixProcSubst(f)
	p := newPrinter()
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
		b.WriteString(printStmt(p, s))
	}
	return b.String(), true
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

// newPrinter returns the printer of statements: one line per statement
// (here-document bodies follow on their own lines), indented with spaces
// (with tabs the printer re-indents <<- bodies).
func newPrinter() *syntax.Printer {
	return syntax.NewPrinter(syntax.SingleLine(true), syntax.Indent(2))
}

// printStmt prints one statement with p.
func printStmt(p *syntax.Printer, s *syntax.Stmt) string {
	var b strings.Builder
	if err := p.Print(&b, s); err != nil {
		return "?"
	}
	return b.String()
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

// fixProcSubst writes every process substitution that does not start its
// word as literal text: the printer puts a space before it, which would
// split the word. Words are fixed innermost first, so that a printed
// substitution holds fixed words.
func fixProcSubst(f *syntax.File) {
	var words []*syntax.Word
	syntax.Walk(f, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok {
			words = append(words, w)
		}
		return true
	})
	for k := len(words) - 1; k >= 0; k-- {
		w := words[k]
		for i, p := range w.Parts {
			if ps, ok := p.(*syntax.ProcSubst); ok && i > 0 {
				var b strings.Builder
				if err := syntax.NewPrinter(syntax.SingleLine(true)).Print(&b, ps); err == nil {
					w.Parts[i] = &syntax.Lit{Value: b.String()}
				}
			}
		}
	}
}

// requoteFile rewrites in canonical quoting the words whose quoting does
// not change what they mean: command arguments, assigned values,
// redirection targets, for-loop lists, and here-document delimiters
// (single-quoted when quoted at all). Words in tests, arithmetic, case
// patterns and inside expansions are left as written.
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
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ParamExp, *syntax.ArithmExp, *syntax.DblQuoted, *syntax.ExtGlob:
			return false // expansions are kept as written
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

// special bytes make unquoted text a pattern, a brace or tilde expansion,
// kept as written. (A $ in literal text is a literal dollar sign: the
// parser makes every expansion a part of its own.)
const special = "*?[]{}~!"

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
				if v[i] == '\\' {
					flush()
					switch {
					case i+1 == len(v): // a final backslash is itself
						addLit(`\`)
					case v[i+1] != '\n': // a line continuation is dropped
						addLit(v[i+1 : i+2])
					}
					i++
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
	braces, rawLit := false, false
	for _, s := range segs {
		if l, ok := s.part.(*syntax.Lit); ok {
			rawLit = true
			braces = braces || strings.ContainsAny(l.Value, "{}")
		}
	}
	var parts []syntax.WordPart
	for i, s := range segs {
		if !s.lit {
			parts = append(parts, s.part)
			continue
		}
		var prev syntax.WordPart
		if i > 0 {
			prev = segs[i-1].part
		}
		var q string
		switch {
		case s.val == "":
			// Dropped next to other quoted text, unless the word has
			// unquoted text that it may change: a comment, !, a reserved
			// word or an assignment at the start, a tilde prefix,
			// braces. (Next to an unquoted expansion alone it keeps the
			// word from vanishing when the expansion is empty.)
			if !rawLit && quotedOther(segs, i) {
				continue
			}
			q = "''"
		case i == 1 && tildePrefix(prev) && s.val[0] != '/':
			q = singleQuote(s.val) // quoted, it stops ~ from expanding
		case shortParam(prev) && isNameByte(s.val[0]):
			q = singleQuote(s.val) // $x'y' is not $xy
		case first && i == 0 && (len(segs) > 1 || strings.Contains(s.val, "=") || reserved[s.val]):
			// Bare, it could start an assignment (A=, A[…]=) or be a
			// reserved word.
			q = singleQuote(s.val)
		case braces && strings.Trim(s.val, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_/-") != "":
			q = singleQuote(s.val) // , and .. inside braces expand
		default:
			q = quoteLit(s.val)
		}
		parts = append(parts, &syntax.Lit{Value: q})
	}
	if len(parts) == 0 {
		parts = []syntax.WordPart{&syntax.Lit{Value: "''"}}
	}
	w.Parts = parts
}

// quotedOther reports whether a segment other than segs[i] is quoted text
// that makes a word by itself.
func quotedOther(segs []seg, i int) bool {
	for j, s := range segs {
		if j == i {
			continue
		}
		switch s.part.(type) {
		case nil:
			if s.val != "" {
				return true
			}
		case *syntax.DblQuoted, *syntax.SglQuoted:
			return true
		}
	}
	return false
}

// quoteLit writes literal text bare when it is safe, single-quoted
// otherwise.
func quoteLit(s string) string {
	if s == "" || safeBare(s) {
		return s
	}
	return singleQuote(s)
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

// tildePrefix reports whether p is unquoted text starting with ~ and
// without a slash: text right after it is part of the tilde prefix.
func tildePrefix(p syntax.WordPart) bool {
	l, ok := p.(*syntax.Lit)
	return ok && strings.HasPrefix(l.Value, "~") && !strings.Contains(l.Value, "/")
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
