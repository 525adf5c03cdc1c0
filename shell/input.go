package shell

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// What a command reads, where the command line determines it: read from
// a here-string, a here-document or a pipe from echo/printf of literal
// words; while-read loops over such text, one pass per line; xargs given
// such text; and listings of paths (find with no test, ls, printf or echo
// of a glob) fed to xargs or a while-read loop, which stand for every
// path they list.

// readVars parses read's arguments: the variable names, and whether an
// option makes the input not a plain line split at IFS (-a, -d, -n, -N,
// -u, an unknown word).
func readVars(args []Word) (names []string, raw, ok bool) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w.Kind != Literal {
			return nil, false, false
		}
		v := w.Value
		if strings.HasPrefix(v, "-") && len(v) > 1 && len(names) == 0 {
			for j := 1; j < len(v); j++ {
				switch v[j] {
				case 'r':
					raw = true
				case 's', 'e':
				case 'p', 't':
					if j == len(v)-1 {
						i++ // the prompt or timeout
					}
					j = len(v)
				default: // -a, -d, -n, -N, -u, -i: not a plain line
					return nil, false, false
				}
			}
			continue
		}
		if !syntax.ValidName(v) {
			return nil, false, false
		}
		names = append(names, v)
	}
	if len(names) == 0 {
		names = []string{"REPLY"}
	}
	return names, raw, true
}

// splitRead assigns one line to names as read does with the default IFS.
func splitRead(line string, names []string, raw bool) (map[string]string, bool) {
	if !raw && strings.Contains(line, `\`) {
		return nil, false
	}
	out := map[string]string{}
	if len(names) == 1 && names[0] == "REPLY" {
		out["REPLY"] = line
		return out, true
	}
	rest := strings.Trim(line, " \t")
	for i, n := range names {
		if i == len(names)-1 {
			out[n] = strings.TrimRight(rest, " \t")
			break
		}
		var f, r string
		if j := strings.IndexAny(rest, " \t"); j >= 0 {
			f, r = rest[:j], rest[j+1:]
		} else {
			f, r = rest, ""
		}
		out[n] = f
		rest = strings.TrimLeft(r, " \t")
	}
	return out, true
}

// readKnown assigns read's variables from input the command line
// determines: a here-string, a here-document or a pipe from echo/printf
// (its first line), or a listing of paths.
func (a *analyzer) readKnown(args []Word, sc *scope, c ctx) bool {
	names, raw, ok := readVars(args)
	if !ok || !sc.ifsDefault() {
		return false
	}
	if c.paths != "" {
		sc.set(names[0], value{s: c.paths, kind: Pattern, isSet: true})
		for _, n := range names[1:] {
			sc.set(n, value{kind: Unknown, isSet: true})
		}
		return true
	}
	if !c.known {
		return false
	}
	line, _, _ := strings.Cut(c.stdinText, "\n")
	vals, ok := splitRead(line, names, raw)
	if !ok {
		return false
	}
	for n, v := range vals {
		sc.set(n, value{s: v, kind: Literal, isSet: true})
	}
	return true
}

// whileRead analyses `… | while read VARS; do BODY; done` once per line of
// known input, or with VARS standing for every listed path. It reports
// false when the loop is not of that form.
func (a *analyzer) whileRead(x *syntax.WhileClause, sc *scope, c ctx) bool {
	if x.Until || len(x.Cond) != 1 {
		return false
	}
	call, ok := x.Cond[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 || call.Args[0].Lit() != "read" || len(x.Cond[0].Redirs) > 0 || !c.known && c.paths == "" {
		return false
	}
	var args []Word
	for _, w := range call.Args[1:] {
		args = append(args, a.fields(w, sc.clone())...)
	}
	names, raw, ok := readVars(args)
	if !ok || !sc.ifsDefault() {
		return false
	}
	for _, as := range call.Assigns {
		if as.Name != nil && as.Name.Value == "IFS" {
			return false
		}
	}
	if c.paths != "" {
		branch := sc.clone()
		branch.set(names[0], value{s: c.paths, kind: Pattern, isSet: true})
		a.stmts(x.Do, branch, c)
		sc.mergeFrom(branch)
		return true
	}
	lines := strings.Split(strings.TrimSuffix(c.stdinText, "\n"), "\n")
	if len(lines) > maxLoopVals {
		return false
	}
	for _, line := range lines {
		vals, ok := splitRead(line, names, raw)
		if !ok {
			return false
		}
		branch := sc.clone()
		for n, v := range vals {
			branch.set(n, value{s: v, kind: Literal, isSet: true})
		}
		a.stmts(x.Do, branch, c)
		sc.mergeFrom(branch)
	}
	return true
}

// maxFuncCalls bounds the calls analysed with their arguments, so that
// analysis time stays linear in the input.
const maxFuncCalls = 64

// callFunction analyses a function's body for a call whose arguments are
// known, with them as its positional parameters.
func (a *analyzer) callFunction(cmd *Command, sc *scope, c ctx) {
	name := cmd.Args[0].Value
	body := a.funcs[name]
	if body == nil || a.calling[name] || a.depth >= MaxDepth || a.calls >= maxFuncCalls {
		// The body was analysed where it was defined, with unknown
		// arguments: the call adds precision, not coverage.
		return
	}
	a.calls++
	a.calling[name] = true
	a.depth++
	defer func() { a.calling[name] = false; a.depth-- }()
	inner := sc.clone()
	inner.pos, inner.posKnown = append([]Word(nil), cmd.Args[1:]...), true
	cc := c
	cc.redirs, cc.stdin, cc.stdinText, cc.known = cmd.Redirs, cmd.Stdin, cmd.StdinText, cmd.StdinKnown
	// The body runs once from its start, with the caller's variables:
	// analysed in order, as the command line is.
	a.stmt(body, inner, cc)
}

// pipedPaths returns the glob every line a listing command writes
// matches: find over start points with no test or action, ls of one
// directory (bare names), printf '%s\n' or echo of words that are globs
// or paths. "" when the left side is anything else.
func pipedPaths(s *syntax.Stmt, sc *scope, a *analyzer) string {
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(s.Redirs) > 0 || len(call.Args) == 0 {
		return ""
	}
	scratch := &analyzer{out: &Analysis{}, seen: map[syntax.Node]bool{}, written: map[string]bool{}, funcs: map[string]*syntax.Stmt{}, calling: map[string]bool{}}
	var words []Word
	for _, w := range call.Args[1:] {
		words = append(words, scratch.fields(w, sc.clone())...)
	}
	globOf := func(w Word) string {
		w = abs(w, sc.dir)
		switch w.Kind {
		case Pattern:
			return w.Glob
		case Literal:
			return escapeGlob(w.Value)
		default:
			return ""
		}
	}
	switch call.Args[0].Lit() {
	case "find":
		var starts []string
		for _, w := range words {
			switch {
			case w.Value == "-H" || w.Value == "-L" || w.Value == "-P":
			case strings.HasPrefix(w.Value, "-") || w.Value == "(" || w.Value == "!":
				switch w.Value {
				case "-print", "-print0", "-xdev", "-mount", "-depth", "-ignore_readdir_race", "-noleaf", "-follow":
					continue
				case "-type", "-maxdepth", "-mindepth":
					// Kinds and depths keep the listing broad.
					continue
				}
				return ""
			default:
				if w.Value == "f" || w.Value == "d" || w.Value == "l" || isInteger(w.Value) {
					continue
				}
				g := globOf(w)
				if g == "" {
					return ""
				}
				starts = append(starts, g)
			}
		}
		if len(starts) != 1 {
			return ""
		}
		return path.Join(starts[0], "*")
	case "ls":
		n := 0
		for _, w := range words {
			if strings.HasPrefix(w.Value, "-") {
				continue
			}
			n++
		}
		if n == 1 {
			return "*" // bare names of the entries
		}
	case "printf", "echo":
		i := 0
		if call.Args[0].Lit() == "printf" {
			if len(words) == 0 || words[0].Value != `%s\n` && words[0].Value != `%s\0` && words[0].Value != "%s\\n" {
				return ""
			}
			i = 1
		}
		if len(words) != i+1 {
			return ""
		}
		if w := abs(words[i], sc.dir); w.Kind == Pattern {
			return w.Glob
		}
	}
	return ""
}
