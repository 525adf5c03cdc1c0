package shell

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// Parameter operators and indexed arrays, resolved where every value they
// read is known: ${x:-w}, ${x-w}, ${x:=w}, ${x:+w}, ${x:?w}, ${x#p},
// ${x##p}, ${x%p}, ${x%%p}, ${x/p/r}, ${x//p/r}, ${x^}, ${x^^}, ${x,},
// ${x,,}, ${#x}, ${x:off:len}, ${a[N]}, ${a[@]}, ${a[*]}, ${#a[@]}. A
// variable never assigned in the command line may come from the
// environment and stays unknown.

// known returns a variable's value when the command line determines it:
// set to a known text (set=true) or known to be unset (set=false).
func (sc *scope) known(name string) (s string, set, ok bool) {
	v, found := sc.lookup(name)
	if !found || v.kind != Literal || v.arr && v.tail {
		return "", false, false
	}
	if v.arr {
		el := v.elements()
		if len(el) == 0 {
			return "", false, true
		}
		return el[0], true, true
	}
	return v.s, v.isSet, true
}

// elements returns an array's known elements.
func (v value) elements() []string {
	if !v.arr || v.n == 0 {
		return nil
	}
	return strings.Split(v.elems, "\x00")
}

func arrayValue(el []string, tail bool) value {
	v := value{arr: true, elems: strings.Join(el, "\x00"), n: len(el), tail: tail, isSet: true}
	if len(el) > 0 {
		v.s = el[0]
	}
	if tail {
		v.kind = Unknown
	}
	return v
}

// mergeArrays keeps what two arrays agree on: their common leading
// elements, the rest unknown.
func mergeArrays(a, b value) (value, bool) {
	if !a.arr || !b.arr {
		return value{}, false
	}
	x, y := a.elements(), b.elements()
	n := 0
	for n < len(x) && n < len(y) && x[n] == y[n] {
		n++
	}
	return arrayValue(x[:n], true), true
}

// paramOp expands a parameter expansion with an operator, an index, a
// length or a slice. It returns false when the value is not known.
func (a *analyzer) paramOp(p *syntax.ParamExp, sc *scope, quoted bool) ([]segment, bool) {
	name := p.Param.Value
	if p.Excl || p.Width || p.Names != 0 || p.NestedParam != nil {
		return nil, false
	}
	seg := func(s string) []segment {
		return []segment{{text: s, quoted: quoted, split: !quoted, expanded: true}}
	}
	if p.Index != nil {
		idx, ok := arrayIndex(p.Index)
		v, found := sc.lookup(name)
		if !ok || !found || !v.arr && v.kind != Literal {
			return nil, false
		}
		el := v.elements()
		if !v.arr {
			el = nil
			if v.isSet {
				el = []string{v.s}
			}
		}
		if idx == "@" || idx == "*" {
			if v.tail {
				if p.Length || p.Exp != nil || p.Repl != nil || p.Slice != nil {
					return nil, false
				}
				// The known leading elements, then what is not known.
				segs := a.arraySegs(el, idx, quoted)
				if len(segs) > 0 {
					segs = append(segs, segment{text: " ", split: true, expanded: true})
				}
				return append(segs, segment{text: printNode(p), unknown: true, quoted: quoted, split: !quoted, expanded: true}), true
			}
			if p.Length {
				return []segment{{text: strconv.Itoa(len(el)), quoted: true, expanded: true}}, true
			}
			if p.Exp != nil || p.Repl != nil || p.Slice != nil {
				return nil, false
			}
			return a.arraySegs(el, idx, quoted), true
		}
		n, _ := strconv.Atoi(idx)
		if n < 0 {
			if v.tail {
				return nil, false
			}
			n += len(el)
		}
		if n < 0 || n >= len(el) {
			if v.tail {
				return nil, false
			}
			return a.applyOp(p, "", false, sc, quoted)
		}
		return a.applyOp(p, el[n], true, sc, quoted)
	}
	s, set, ok := sc.known(name)
	if !ok {
		// ${x:-w} where x may come from the environment: unknown, but
		// the word's own substitutions still run.
		return nil, false
	}
	if p.Length {
		return seg(strconv.Itoa(len([]rune(s)))), true
	}
	return a.applyOp(p, s, set, sc, quoted)
}

func (a *analyzer) arraySegs(el []string, idx string, quoted bool) []segment {
	var segs []segment
	for i, e := range el {
		if i > 0 {
			if quoted && idx == "@" {
				segs = append(segs, segment{text: " ", split: true, expanded: true})
			} else {
				segs = append(segs, segment{text: " ", quoted: quoted, split: !quoted, expanded: true})
			}
		}
		segs = append(segs, segment{text: e, quoted: quoted, split: !quoted, expanded: true})
	}
	if len(el) == 0 && quoted && idx == "*" {
		return []segment{{quoted: true, expanded: true}}
	}
	return segs
}

// arrayIndex returns a literal index: "@", "*" or a decimal number.
func arrayIndex(x syntax.ArithmExpr) (string, bool) {
	switch x := x.(type) {
	case *syntax.Word:
		l := x.Lit()
		if l == "@" || l == "*" {
			return l, true
		}
		if n, err := strconv.Atoi(l); err == nil {
			return strconv.Itoa(n), true
		}
	case *syntax.UnaryArithm:
		if w, ok := x.X.(*syntax.Word); ok && x.Op == syntax.Minus {
			if n, err := strconv.Atoi(w.Lit()); err == nil {
				return strconv.Itoa(-n), true
			}
		}
	}
	return "", false
}

// applyOp applies ${x OP word}, ${x/p/r}, ${x:o:l} or plain ${x} to a known
// value s (set says whether x is set).
func (a *analyzer) applyOp(p *syntax.ParamExp, s string, set bool, sc *scope, quoted bool) ([]segment, bool) {
	val := func(s string) []segment {
		return []segment{{text: s, quoted: quoted, split: !quoted, expanded: true}}
	}
	if p.Slice != nil {
		if p.Exp != nil || p.Repl != nil {
			return nil, false
		}
		r := []rune(s)
		off, ok := arithLit(p.Slice.Offset)
		if !ok {
			return nil, false
		}
		if off < 0 {
			off += len(r)
		}
		if off < 0 || off > len(r) {
			return val(""), true
		}
		end := len(r)
		if p.Slice.Length != nil {
			l, ok := arithLit(p.Slice.Length)
			if !ok {
				return nil, false
			}
			if l < 0 {
				end = len(r) + l
			} else if off+l < end {
				end = off + l
			}
		}
		if end < off {
			return nil, false // bash reports an error
		}
		return val(string(r[off:end])), true
	}
	if p.Repl != nil {
		pat, ok := a.patternOf(p.Repl.Orig, sc)
		if !ok {
			return nil, false
		}
		with := Word{}
		if p.Repl.With != nil {
			with = a.word(p.Repl.With, sc)
			if with.Kind == Unknown {
				return nil, false
			}
		}
		anchor := ""
		if strings.HasPrefix(pat, "#") || strings.HasPrefix(pat, "%") {
			anchor, pat = pat[:1], pat[1:]
		}
		res, ok := replacePattern(s, pat, with.Value, p.Repl.All, anchor)
		if !ok {
			return nil, false
		}
		return val(res), true
	}
	if p.Exp == nil {
		if !set {
			return val(""), true
		}
		return val(s), true
	}
	op := p.Exp.Op
	switch op {
	case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnset, syntax.AssignUnsetOrNull,
		syntax.AlternateUnset, syntax.AlternateUnsetOrNull, syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		empty := !set || (s == "" && (op == syntax.DefaultUnsetOrNull || op == syntax.AssignUnsetOrNull ||
			op == syntax.AlternateUnsetOrNull || op == syntax.ErrorUnsetOrNull))
		useWord := empty
		if op == syntax.AlternateUnset || op == syntax.AlternateUnsetOrNull {
			useWord = !empty
		}
		if op == syntax.ErrorUnset || op == syntax.ErrorUnsetOrNull {
			if empty {
				return nil, false // bash stops the command with an error
			}
			return val(s), true
		}
		if !useWord {
			return val(s), true
		}
		if p.Exp.Word == nil {
			return val(""), true
		}
		segs := a.segments(p.Exp.Word.Parts, sc, quoted, false)
		if op == syntax.AssignUnset || op == syntax.AssignUnsetOrNull {
			w := joinSegs(segs, false)
			sc.set(p.Param.Value, value{s: w.Value, kind: w.Kind, isSet: true})
		}
		for i := range segs {
			segs[i].expanded = true
			if !segs[i].quoted && !quoted {
				segs[i].split = segs[i].split || segs[i].unknown
			}
		}
		return segs, true
	case syntax.RemSmallPrefix, syntax.RemLargePrefix, syntax.RemSmallSuffix, syntax.RemLargeSuffix:
		pat, ok := a.patternOf(p.Exp.Word, sc)
		if !ok {
			return nil, false
		}
		res, ok := removePattern(s, pat, op)
		if !ok {
			return nil, false
		}
		return val(res), true
	case syntax.UpperFirst, syntax.UpperAll, syntax.LowerFirst, syntax.LowerAll:
		if p.Exp.Word != nil && p.Exp.Word.Lit() != "" && p.Exp.Word.Lit() != "?" {
			return nil, false
		}
		r := []rune(s)
		f := unicode.ToUpper
		if op == syntax.LowerFirst || op == syntax.LowerAll {
			f = unicode.ToLower
		}
		for i := range r {
			if i > 0 && (op == syntax.UpperFirst || op == syntax.LowerFirst) {
				break
			}
			r[i] = f(r[i])
		}
		return val(string(r)), true
	default:
		return nil, false
	}
}

func arithLit(x syntax.ArithmExpr) (int, bool) {
	s, ok := arrayIndex(x)
	if !ok || s == "@" || s == "*" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// patternOf returns a pattern word in glob syntax (quoted parts escaped).
func (a *analyzer) patternOf(w *syntax.Word, sc *scope) (string, bool) {
	if w == nil {
		return "", true
	}
	segs := a.segments(w.Parts, sc, false, false)
	pw := joinSegs(segs, true)
	switch pw.Kind {
	case Unknown:
		return "", false
	case Pattern:
		return pw.Glob, true
	default:
		return escapeGlob(pw.Value), true
	}
}

// maxScanLen bounds the values a suffix removal tries one position at a
// time (${x%p}): longer ones are left unknown, so analysis time stays
// linear.
const maxScanLen = 4096

// globRegexp compiles a bash pattern, with anchors as given.
func globRegexp(pat, prefix, suffix string, shortest bool) (*regexp.Regexp, bool) {
	mode := pattern.Mode(0)
	if shortest {
		mode |= pattern.Shortest
	}
	expr, err := pattern.Regexp(pat, mode)
	if err != nil {
		return nil, false
	}
	re, err := regexp.Compile(prefix + "(?s:" + expr + ")" + suffix)
	if err != nil {
		return nil, false
	}
	return re, true
}

// removePattern applies ${x#p}, ${x##p}, ${x%p}, ${x%%p}.
func removePattern(s, pat string, op syntax.ParExpOperator) (string, bool) {
	switch op {
	case syntax.RemSmallPrefix, syntax.RemLargePrefix:
		// The shortest (non-greedy) or longest (leftmost-longest) match
		// anchored at the start.
		re, ok := globRegexp(pat, "^", "", op == syntax.RemSmallPrefix)
		if !ok {
			return "", false
		}
		if op == syntax.RemLargePrefix {
			re.Longest()
		}
		if loc := re.FindStringIndex(s); loc != nil {
			return s[loc[1]:], true
		}
		return s, true
	case syntax.RemLargeSuffix:
		// The leftmost start from which the rest matches.
		re, ok := globRegexp(pat, "", "$", false)
		if !ok {
			return "", false
		}
		if loc := re.FindStringIndex(s); loc != nil {
			return s[:loc[0]], true
		}
		return s, true
	default: // RemSmallSuffix: the rightmost start from which the rest matches
		if len(s) > maxScanLen {
			return "", false
		}
		re, ok := globRegexp(pat, "^", "$", false)
		if !ok {
			return "", false
		}
		for i := len(s); i >= 0; i-- {
			if re.MatchString(s[i:]) {
				return s[:i], true
			}
		}
		return s, true
	}
}

// replacePattern applies ${x/p/r} (all: ${x//p/r}; anchor "#" or "%":
// ${x/#p/r}, ${x/%p/r}): at each position the longest match, left to
// right, as bash does.
func replacePattern(s, pat, with string, all bool, anchor string) (string, bool) {
	if pat == "" {
		return s, true
	}
	prefix, suffix := "", ""
	switch anchor {
	case "#":
		prefix = "^"
	case "%":
		suffix = "$"
	}
	re, ok := globRegexp(pat, prefix, suffix, false)
	if !ok {
		return "", false
	}
	re.Longest()
	n := 1
	if all {
		n = -1
	}
	var b strings.Builder
	last := 0
	for _, loc := range re.FindAllStringIndex(s, n) {
		if loc[0] == loc[1] {
			continue // bash replaces no empty match
		}
		b.WriteString(s[last:loc[0]])
		b.WriteString(with)
		last = loc[1]
	}
	b.WriteString(s[last:])
	return b.String(), true
}
