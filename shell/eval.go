package shell

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// maxBraceWords bounds the words one brace expansion may produce.
const maxBraceWords = 1024

// value is what is known of a variable.
type value struct {
	s     string
	kind  WordKind // Literal, Pattern (bound by a for loop over a glob), Unknown
	isSet bool
	// alts are the literal values an Unknown variable may hold after
	// branches that assigned different literals (found=true / found=false).
	alts string // NUL-separated, so that value stays comparable
	// arr marks an indexed array: its first n elements are known (elems,
	// NUL-separated); tail says more elements, not known, may follow.
	arr   bool
	elems string
	n     int
	tail  bool
}

// segment is a piece of a word being expanded.
type segment struct {
	text     string
	quoted   bool // no field splitting, no globbing
	split    bool // an unquoted expansion result: split on IFS, globbed
	glob     bool // a Pattern value bound to a variable
	unknown  bool
	expanded bool
}

// fields expands one word into the words bash would pass.
func (a *analyzer) fields(w *syntax.Word, sc *scope) []Word {
	words := []*syntax.Word{w}
	braced := false
	if split := cloneWord(w); syntax.SplitBraces(split) {
		braced = true
		words = words[:0]
		for bw, err := range expand.BracesSeq(nil, split) {
			if err != nil || len(words) >= maxBraceWords {
				a.problem(w, "a brace expansion produces too many words to check", "list the words literally")
				return []Word{{Kind: Unknown, Value: printWord(w), Expanded: true}}
			}
			words = append(words, bw)
		}
	}
	var out []Word
	for _, bw := range words {
		fs := a.expandWord(bw, sc)
		if braced {
			for i := range fs {
				fs[i].Expanded = true
			}
		}
		out = append(out, fs...)
	}
	return out
}

func cloneWord(w *syntax.Word) *syntax.Word {
	c := *w
	c.Parts = append([]syntax.WordPart(nil), w.Parts...)
	return &c
}

// word expands w as one word (no field splitting): assignments, here-string
// bodies, redirection targets, case subjects.
func (a *analyzer) word(w *syntax.Word, sc *scope) Word {
	if w == nil {
		return Word{}
	}
	segs := a.segments(w.Parts, sc, false, true)
	return joinSegs(segs, false)
}

func (a *analyzer) expandWord(w *syntax.Word, sc *scope) []Word {
	segs := a.segments(w.Parts, sc, false, true)
	return splitFields(segs, sc.ifsDefault())
}

// segments turns word parts into segments. first says whether parts[0]
// starts the word (tilde expansion).
func (a *analyzer) segments(parts []syntax.WordPart, sc *scope, quoted, first bool) []segment {
	var segs []segment
	for i, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if quoted {
				segs = append(segs, segment{text: unescapeDouble(v), quoted: true})
				continue
			}
			if first && i == 0 && strings.HasPrefix(v, "~") {
				user, rest, _ := strings.Cut(v[1:], "/")
				if i+1 < len(parts) && !strings.Contains(v, "/") {
					// ~"user" or ~$x: bash does no tilde expansion with
					// quotes in the name, but an unquoted suffix follows.
					segs = append(segs, unescapeUnquoted(v)...)
					continue
				}
				home, ok := sc.home(user)
				if !ok {
					segs = append(segs, segment{text: "~" + user, unknown: true, expanded: true})
				} else {
					segs = append(segs, segment{text: home, quoted: true, expanded: true})
				}
				if strings.Contains(v, "/") {
					segs = append(segs, unescapeUnquoted("/"+rest)...)
				}
				continue
			}
			segs = append(segs, unescapeUnquoted(v)...)
		case *syntax.SglQuoted:
			v := p.Value
			if p.Dollar {
				v = decodeANSI(v)
			}
			segs = append(segs, segment{text: v, quoted: true})
		case *syntax.DblQuoted:
			inner := a.segments(p.Parts, sc, true, false)
			if len(inner) == 0 && !allElements(p) {
				segs = append(segs, segment{quoted: true})
			}
			segs = append(segs, inner...)
		case *syntax.ParamExp:
			segs = append(segs, a.param(p, sc, quoted)...)
		case *syntax.CmdSubst:
			a.substitution(p, p.Stmts, sc, StdinInherited)
			segs = append(segs, segment{text: printNode(p), unknown: true, quoted: quoted, split: !quoted, expanded: true})
		case *syntax.ProcSubst:
			in := StdinInherited
			if p.Op == syntax.CmdOut {
				in = StdinPipe
			}
			a.substitution(p, p.Stmts, sc, in)
			segs = append(segs, segment{text: printNode(p), unknown: true, quoted: true, expanded: true})
		case *syntax.ArithmExp:
			s, ok := a.arithm(p, p.X, sc)
			segs = append(segs, segment{text: s, unknown: !ok, quoted: quoted, split: !quoted, expanded: true})
		case *syntax.ExtGlob:
			segs = append(segs, segment{text: printNode(p), glob: true})
		default:
			segs = append(segs, segment{text: printNode(p), unknown: true, expanded: true})
		}
	}
	return segs
}

// unescapeUnquoted handles backslashes in an unquoted literal: "\x" is a
// quoted x; what is left may hold glob characters.
func unescapeUnquoted(v string) []segment {
	if !strings.Contains(v, `\`) {
		return []segment{{text: v}}
	}
	var segs []segment
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			if b.Len() > 0 {
				segs = append(segs, segment{text: b.String()})
				b.Reset()
			}
			i++
			if v[i] == '\n' { // line continuation
				continue
			}
			segs = append(segs, segment{text: v[i : i+1], quoted: true})
			continue
		}
		b.WriteByte(v[i])
	}
	if b.Len() > 0 {
		segs = append(segs, segment{text: b.String()})
	}
	return segs
}

// unescapeDouble handles the backslashes bash removes inside double quotes.
func unescapeDouble(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			switch v[i+1] {
			case '$', '`', '"', '\\':
				i++
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

func hasGlobChar(s string) bool { return strings.ContainsAny(s, "*?[") }

func escapeGlob(s string) string {
	if !strings.ContainsAny(s, `*?[\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[\`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// joinSegs makes one word of segments. asPattern: unquoted glob characters
// make a Pattern.
func joinSegs(segs []segment, asPattern bool) Word {
	var val, glob strings.Builder
	w := Word{}
	isGlob := false
	for _, s := range segs {
		val.WriteString(s.text)
		if s.unknown {
			w.Kind = Unknown
		}
		if s.expanded {
			w.Expanded = true
		}
		if s.glob {
			// A value bash globbed before it was bound (a loop item, a
			// positional parameter): quoting it later does not undo that.
			isGlob = true
			glob.WriteString(s.text)
			continue
		}
		if s.quoted {
			glob.WriteString(escapeGlob(s.text))
			continue
		}
		if hasGlobChar(s.text) {
			isGlob = true
		}
		glob.WriteString(s.text)
	}
	w.Value = val.String()
	if w.Kind != Unknown && asPattern && isGlob {
		w.Kind = Pattern
		w.Glob = glob.String()
	}
	return w
}

// splitFields joins segments into fields, splitting unquoted expansion
// results at blanks (IFS's default) and dropping empty unquoted ones.
func splitFields(segs []segment, ifsDefault bool) []Word {
	var out []Word
	var cur []segment
	started := false // cur holds something that makes a field (even empty quotes)
	flush := func() {
		if started {
			out = append(out, joinSegs(cur, true))
		}
		cur, started = nil, false
	}
	for _, s := range segs {
		if !s.split || s.quoted {
			cur = append(cur, s)
			started = true
			continue
		}
		if s.unknown || !ifsDefault {
			if !s.unknown {
				s.text = "${IFS-split:" + s.text + "}" // where IFS splits it is not known
			}
			s.unknown = true
			cur = append(cur, s)
			started = true
			continue
		}
		fs := strings.FieldsFunc(s.text, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' })
		if len(fs) == 0 {
			if s.text != "" { // only blanks: a field break
				flush()
			}
			continue
		}
		if strings.IndexAny(s.text[:1], " \t\n") == 0 {
			flush()
		}
		for i, f := range fs {
			if i > 0 {
				flush()
			}
			c := s
			c.text = f
			cur = append(cur, c)
			started = true
		}
		if strings.IndexAny(s.text[len(s.text)-1:], " \t\n") == 0 {
			flush()
		}
	}
	flush()
	return out
}

// param expands a parameter expansion.
func (a *analyzer) param(p *syntax.ParamExp, sc *scope, quoted bool) []segment {
	src := printNode(p)
	unknown := []segment{{text: src, unknown: true, quoted: quoted, split: !quoted, expanded: true}}
	if p.Param == nil {
		return unknown
	}
	name := p.Param.Value
	simple := !p.Excl && !p.Length && !p.Width && p.Index == nil && p.Slice == nil &&
		p.Repl == nil && p.Names == 0 && p.Exp == nil && p.NestedParam == nil
	if p.Index != nil {
		a.arithmExpr(p.Index, sc)
	}
	if !simple {
		if segs, ok := a.paramOp(p, sc, quoted); ok {
			return segs
		}
		if p.Exp != nil && p.Exp.Word != nil {
			// ${x:-WORD}, ${x:=WORD}, ...: WORD may run substitutions.
			a.segments(p.Exp.Word.Parts, sc, true, false)
		}
		return unknown
	}
	switch name {
	case "@", "*":
		if !sc.posKnown {
			return unknown
		}
		var segs []segment
		for i, w := range sc.pos {
			if i > 0 {
				if quoted && name == "@" {
					segs = append(segs, segment{text: " ", split: true, expanded: true}) // a field break
				} else {
					segs = append(segs, segment{text: " ", quoted: quoted, split: !quoted, expanded: true})
				}
			}
			segs = append(segs, segment{text: w.Value, quoted: quoted, split: !quoted, unknown: w.Kind == Unknown, glob: w.Kind == Pattern, expanded: true})
		}
		if len(segs) == 0 && quoted && name == "@" {
			return nil
		}
		return segs
	case "#":
		if !sc.posKnown {
			return unknown
		}
		return []segment{{text: strconv.Itoa(len(sc.pos)), quoted: true, expanded: true}}
	case "0":
		return []segment{{text: sc.arg0, quoted: true, expanded: true, unknown: sc.arg0 == ""}}
	}
	if n, err := strconv.Atoi(name); err == nil {
		if n == 0 { // ${00}
			return []segment{{text: sc.arg0, quoted: true, expanded: true, unknown: sc.arg0 == ""}}
		}
		if !sc.posKnown {
			return unknown
		}
		if n-1 < len(sc.pos) {
			w := sc.pos[n-1]
			return []segment{{text: w.Value, quoted: quoted, split: !quoted, unknown: w.Kind == Unknown, glob: w.Kind == Pattern, expanded: true}}
		}
		return []segment{{quoted: quoted, split: !quoted, expanded: true}}
	}
	v, ok := sc.lookup(name)
	if !ok || v.kind == Unknown {
		return unknown
	}
	return []segment{{text: v.s, quoted: quoted, split: !quoted, glob: v.kind == Pattern, expanded: true}}
}

// arithm evaluates an arithmetic expansion when every variable it reads
// holds a known integer. A variable holding known text that is not a
// number is a problem: bash evaluates such text as an expression, and an
// expression can run command substitutions (x='a[$(cmd)]'; $((x))).
func (a *analyzer) arithm(n syntax.Node, x syntax.ArithmExpr, sc *scope) (string, bool) {
	if !a.arithmExpr(x, sc) {
		return printNode(n), false
	}
	env := expand.ListEnviron()
	v, err := expand.Arithm(&expand.Config{Env: env, NoUnset: true}, x)
	if err != nil {
		return printNode(n), false
	}
	return strconv.Itoa(v), true
}

// arithmExpr reports whether x reads only literal numbers; it records a
// problem for variables with known non-numeric values.
func (a *analyzer) arithmExpr(x syntax.ArithmExpr, sc *scope) bool {
	known := true
	syntax.Walk(x, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Word:
			if lit := n.Lit(); lit != "" {
				if _, err := strconv.ParseInt(lit, 0, 64); err == nil {
					return false
				}
				if !syntax.ValidName(lit) {
					known = false
					return false
				}
				v, ok := sc.lookup(lit)
				if ok && v.kind != Unknown {
					if _, err := strconv.ParseInt(strings.TrimSpace(v.s), 0, 64); err != nil && strings.TrimSpace(v.s) != "" {
						a.problem(n, "arithmetic on a variable whose text is not a number: bash evaluates the text as an expression, which can run commands", "use a number")
					}
				}
				known = false
				return false
			}
			for _, p := range n.Parts {
				if _, ok := p.(*syntax.Lit); !ok {
					known = false
				}
			}
			a.segments(n.Parts, sc, true, false)
			return false
		case *syntax.ParamExp:
			known = false
		}
		return true
	})
	return known
}

// decodeANSI decodes the body of a $'…' string as bash does.
func decodeANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(s[i])
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			}
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[i]]
			j := i + 1
			for j < len(s) && j-i-1 < max && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(s[i])
				continue
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if s[i] == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 32)
			b.WriteByte(byte(n))
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func printNode(n syntax.Node) string {
	var b strings.Builder
	if err := syntax.NewPrinter(syntax.Minify(true)).Print(&b, n); err != nil {
		return "?"
	}
	return strings.TrimSpace(b.String())
}

func printWord(w *syntax.Word) string { return printNode(w) }

// allElements reports "$@" or "${a[@]}" alone in double quotes: with no
// elements it makes no word at all, not an empty one.
func allElements(q *syntax.DblQuoted) bool {
	if len(q.Parts) != 1 {
		return false
	}
	p, ok := q.Parts[0].(*syntax.ParamExp)
	if !ok || p.Param == nil || p.Exp != nil || p.Repl != nil || p.Slice != nil || p.Length || p.Excl {
		return false
	}
	if p.Index == nil {
		return p.Param.Value == "@"
	}
	idx, ok := arrayIndex(p.Index)
	return ok && idx == "@"
}
