package shell

import (
	"errors"
	"path"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/nightshift-dev/nightshift/internal/textcut"
)

// MaxDepth bounds nesting: scripts in scripts (bash -c 'bash -c …') and
// substitutions in substitutions.
const MaxDepth = 8

const (
	maxCommands = 4096 // simple commands reported for one command line
	maxLoopVals = 64   // literal loop values substituted one by one
)

// Analyze parses src as bash and reports what it may run. A text Parse
// refuses is reported as the only Problem.
func Analyze(src string, cfg Config) *Analysis {
	a := &analyzer{out: &Analysis{}, seen: map[syntax.Node]bool{}, written: map[string]bool{}, funcs: map[string]*syntax.Stmt{}, calling: map[string]bool{}}
	a.script(src, newScope(cfg), StdinInherited, "", nil)
	return a.out
}

type analyzer struct {
	out     *Analysis
	depth   int
	seen    map[syntax.Node]bool // substitutions already analysed
	written map[string]bool      // literal paths this command line writes
	full    bool
	funcs   map[string]*syntax.Stmt // function bodies, for calls with known arguments
	calling map[string]bool         // functions being analysed for a call
	calls   int                     // calls analysed with their arguments
}

// ctx is what a statement inherits from where it stands.
type ctx struct {
	redirs    []Redir
	stdin     Input
	stdinText string
	known     bool
	via       []string
	// paths, when set, is a glob every line of standard input matches:
	// the input is a listing of paths (find over a tree with no test, ls
	// of a directory, printf or echo of a glob).
	paths string
}

func (a *analyzer) problem(n syntax.Node, reason, hint string) {
	c := ""
	if n != nil {
		c = printNode(n)
	}
	a.problemText(c, reason, hint)
}

func (a *analyzer) problemText(construct, reason, hint string) {
	construct = textcut.Head(construct, 200)
	for _, p := range a.out.Problems {
		if p.Construct == construct && p.Reason == reason {
			return
		}
	}
	a.out.Problems = append(a.out.Problems, Problem{Construct: construct, Reason: reason, Hint: hint})
}

// script parses and analyses a script: the command line itself or a
// literal script handed to a shell (bash -c, su -c, eval, trap, …).
func (a *analyzer) script(src string, sc *scope, in Input, via string, c *ctx) {
	if a.depth >= MaxDepth {
		a.problemText(via, "nested too deeply to analyse", "write the commands directly")
		return
	}
	f, err := Parse(src)
	if err != nil {
		what := "the command"
		if via != "" {
			what = "the script given to " + via
		}
		construct := textcut.Head(src, 120)
		if errors.Is(err, ErrUnsafeText) {
			construct = strconv.Quote(construct)
		}
		a.problemText(construct, what+" cannot be analysed: "+err.Error(), "write plain bash with printable characters")
		return
	}
	a.depth++
	defer func() { a.depth-- }()
	inner := ctx{stdin: in}
	if c != nil {
		inner = *c
		inner.via = append(append([]string(nil), c.via...), via)
	}
	a.stmts(f.Stmts, sc, inner)
	// Every substitution anywhere runs: analyse those the walk did not
	// reach with what is known at the top.
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			a.substitution(n, n.Stmts, sc.clone(), StdinInherited)
		case *syntax.ProcSubst:
			a.substitution(n, n.Stmts, sc.clone(), StdinPipe)
		}
		return true
	})
}

func (a *analyzer) substitution(n syntax.Node, stmts []*syntax.Stmt, sc *scope, in Input) {
	if a.seen[n] {
		return
	}
	a.seen[n] = true
	if a.depth >= MaxDepth {
		a.problem(n, "nested too deeply to analyse", "write the commands directly")
		return
	}
	a.depth++
	a.stmts(stmts, sc.clone(), ctx{stdin: in})
	a.depth--
}

func (a *analyzer) stmts(list []*syntax.Stmt, sc *scope, c ctx) {
	for _, s := range list {
		before := sc.dir
		a.stmt(s, sc, c)
		if sc.dir != before && changesDir(s) {
			// cd may have failed: what follows runs in one directory or
			// the other.
			sc.dir = ""
		}
	}
}

// changesDir reports whether a statement runs cd, pushd or popd outside a
// subshell (a failed cd leaves the directory as it was).
func changesDir(s *syntax.Stmt) bool {
	found := false
	syntax.Walk(s, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Subshell, *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				switch n.Args[0].Lit() {
				case "cd", "pushd", "popd":
					found = true
				}
			}
		}
		return !found
	})
	return found
}

func (a *analyzer) stmt(s *syntax.Stmt, sc *scope, c ctx) {
	if len(a.out.Commands) >= maxCommands {
		if !a.full {
			a.full = true
			a.problemText("", "too many commands to analyse", "split the work into several commands")
		}
		return
	}
	c = a.redirects(s.Redirs, sc, c)
	if s.Background || s.Coprocess {
		// Runs concurrently: its effects on variables and the directory
		// do not reach what follows.
		a.command(s.Cmd, sc.clone(), c)
		return
	}
	a.command(s.Cmd, sc, c)
}

// redirects evaluates a statement's redirections and returns the context
// its command runs in.
func (a *analyzer) redirects(rs []*syntax.Redirect, sc *scope, c ctx) ctx {
	if len(rs) == 0 {
		return c
	}
	c.redirs = append([]Redir(nil), c.redirs...)
	var own []Redir
	for _, r := range rs {
		op := r.Op.String()
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			body := Word{}
			if r.Hdoc != nil {
				body = a.word(r.Hdoc, sc)
			}
			c.stdin, c.stdinText, c.known = StdinHeredoc, body.Value, body.Kind != Unknown
			own = append(own, Redir{Op: op, Target: body})
			continue
		case syntax.WordHdoc:
			body := a.word(r.Word, sc)
			c.stdin, c.stdinText, c.known = StdinHereString, body.Value+"\n", body.Kind != Unknown
			own = append(own, Redir{Op: op, Target: body})
			continue
		default:
			// other operators have no heredoc body
		}
		fs := a.fields(r.Word, sc)
		t := Word{Kind: Unknown, Value: printWord(r.Word)}
		if len(fs) == 1 {
			t = fs[0] // a Pattern stays one: bash globs a target that matches one file
		}
		fd := ""
		if r.N != nil {
			fd = r.N.Value
		}
		rd := Redir{Op: op, Target: t}
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut:
			rd.Write = true
		case syntax.DplOut:
			// >&word: a file when word is not a number or "-".
			if !isFD(t.Value) || t.Kind != Literal {
				rd.Write = true
			}
		case syntax.RdrIn:
			if fd == "" || fd == "0" {
				c.stdin, c.known = StdinFile, false
			}
		default:
			// the others read (<&, heredocs); >>|, &>| and &>>| are zsh's, not parsed in bash
		}
		if rd.Write {
			a.out.Writes = append(a.out.Writes, abs(t, sc.dir))
			if t.Kind == Literal {
				a.written[abs(t, sc.dir).Value] = true
			}
		}
		own = append(own, rd)
	}
	c.redirs = append(own, c.redirs...)
	return c
}

func isFD(s string) bool {
	if s == "-" {
		return true
	}
	s = strings.TrimSuffix(s, "-")
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// abs places a path word against the working directory when both are known.
func abs(w Word, dir string) Word {
	if w.Kind == Unknown || strings.HasPrefix(w.Value, "/") {
		return w
	}
	if dir == "" {
		return Word{Kind: Unknown, Value: w.Value, Expanded: w.Expanded}
	}
	out := w
	out.Value = path.Join(dir, w.Value)
	if w.Kind == Pattern {
		out.Glob = escapeGlob(dir) + "/" + w.Glob
	}
	return out
}

// Abs is abs for callers: w placed against dir ("" = unknown).
func Abs(w Word, dir string) Word { return abs(w, dir) }

func (a *analyzer) command(cmd syntax.Command, sc *scope, c ctx) {
	switch x := cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		a.call(x, sc, c)
	case *syntax.Block:
		a.stmts(x.Stmts, sc, c)
	case *syntax.Subshell:
		a.stmts(x.Stmts, sc.clone(), c)
	case *syntax.BinaryCmd:
		switch x.Op {
		case syntax.Pipe, syntax.PipeAll:
			// Each side of a pipe runs in a subshell.
			a.stmt(x.X, sc.clone(), c)
			right := c
			right.stdin, right.known, right.stdinText, right.paths = StdinPipe, false, "", ""
			if text, ok := pipedText(x.X, sc, a); ok {
				right.known, right.stdinText = true, text
			}
			if !right.known {
				right.paths = pipedPaths(x.X, sc, a)
			}
			a.stmt(x.Y, sc.clone(), right)
		case syntax.AndStmt:
			a.stmt(x.X, sc, c)
			branch := sc.clone()
			a.stmt(x.Y, branch, c)
			sc.mergeFrom(branch)
		default: // ||
			before := sc.clone()
			a.stmt(x.X, sc, c)
			branch := before.clone()
			branch.mergeFrom(sc)
			a.stmt(x.Y, branch, c)
			sc.mergeFrom(branch)
		}
	case *syntax.IfClause:
		var branches []*scope
		hasElse := false
		for cl := x; cl != nil; cl = cl.Else {
			if len(cl.Cond) == 0 && cl != x {
				hasElse = true
			}
			a.stmts(cl.Cond, sc, c)
			branch := sc.clone()
			a.stmts(cl.Then, branch, c)
			branches = append(branches, branch)
		}
		if !hasElse {
			for _, b := range branches {
				sc.mergeFrom(b)
			}
			break
		}
		// One of the branches runs: what they all agree on is known, a
		// variable each sets to a literal may hold any of those.
		joined := branches[0].clone()
		for _, b := range branches[1:] {
			joined.mergeFrom(b)
		}
		sc.vars, sc.dir, sc.funcs, sc.pos, sc.posKnown = joined.vars, joined.dir, joined.funcs, joined.pos, joined.posKnown
	case *syntax.WhileClause:
		a.forgetAssigned(x, sc)
		a.stmts(x.Cond, sc, c)
		if a.whileRead(x, sc, c) {
			break
		}
		branch := sc.clone()
		a.stmts(x.Do, branch, c)
		sc.mergeFrom(branch)
	case *syntax.ForClause:
		a.forClause(x, sc, c)
	case *syntax.CaseClause:
		a.word(x.Word, sc)
		for _, it := range x.Items {
			for _, p := range it.Patterns {
				a.word(p, sc)
			}
			branch := sc.clone()
			a.stmts(it.Stmts, branch, c)
			sc.mergeFrom(branch)
		}
	case *syntax.FuncDecl:
		if x.Name != nil {
			sc.funcs[x.Name.Value] = true
			a.funcs[x.Name.Value] = x.Body
			if selfForks(x.Name.Value, x.Body) {
				a.out.forkers = append(a.out.forkers, printNode(x))
			}
		}
		body := sc.clone()
		body.posKnown = false
		a.forgetAssigned(x.Body, body)
		a.stmt(x.Body, body, c)
	case *syntax.ArithmCmd:
		a.arithm(x, x.X, sc)
	case *syntax.LetClause:
		for _, e := range x.Exprs {
			a.arithm(x, e, sc)
		}
	case *syntax.TestClause:
		a.test(x.X, sc)
	case *syntax.DeclClause:
		a.decl(x, sc, c)
	case *syntax.TimeClause:
		if x.Stmt != nil {
			a.stmt(x.Stmt, sc, c)
		}
	case *syntax.CoprocClause:
		a.stmt(x.Stmt, sc.clone(), c)
	default:
		a.problem(cmd, "a construct the analysis does not know", "write plain commands")
	}
}

// forgetAssigned makes every variable a loop or function body assigns (and
// the directory, if it changes it) unknown before the body is analysed.
func (a *analyzer) forgetAssigned(n syntax.Node, sc *scope) {
	// A variable assigned only plain literals in the body holds, anywhere
	// in and after it, its value before or one of those literals.
	lits := map[string][]string{}
	other := map[string]bool{}
	unknown := func(name string) { other[name] = true }
	// VAR=x cmd sets VAR for cmd alone (IFS= read -r line).
	temporary := map[*syntax.Assign]bool{}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Assign:
			if n.Name == nil || temporary[n] {
				return true
			}
			if v, ok := plainLiteral(n); ok {
				lits[n.Name.Value] = append(lits[n.Name.Value], v)
			} else {
				unknown(n.Name.Value)
			}
		case *syntax.DeclClause:
			for _, as := range n.Args {
				if as.Name != nil {
					unknown(as.Name.Value)
				}
			}
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				for _, as := range n.Assigns {
					temporary[as] = true
				}
				switch n.Args[0].Lit() {
				case "cd", "pushd", "popd":
					sc.dir = ""
				case "read", "readarray", "mapfile", "getopts", "printf", "unset":
					for _, w := range n.Args[1:] {
						if l := w.Lit(); syntax.ValidName(l) {
							unknown(l)
						}
					}
					unknown("REPLY")
				case "set", "shift":
					sc.posKnown = false
				}
			}
		case *syntax.WordIter:
			unknown(n.Name.Value)
		}
		return true
	})
	for name := range other {
		sc.set(name, value{kind: Unknown, isSet: true})
	}
	for name, vs := range lits {
		if other[name] {
			continue
		}
		alts := ""
		if old, ok := sc.vars[name]; ok {
			alts = old.alts
			if old.kind == Literal && old.isSet {
				alts = old.s
			}
			if alts != "" {
				for _, v := range vs {
					alts = mergeAlts(value{kind: Unknown, isSet: true, alts: alts}, true, value{s: v, isSet: true})
					if alts == "" {
						break
					}
				}
			}
		}
		sc.set(name, value{kind: Unknown, isSet: true, alts: alts})
	}
}

// plainLiteral returns the value of an assignment written as plain text
// (no expansion of any kind).
func plainLiteral(as *syntax.Assign) (string, bool) {
	if as.Append || as.Index != nil || as.Array != nil || as.Naked {
		return "", false
	}
	if as.Value == nil {
		return "", true
	}
	var b strings.Builder
	for _, p := range as.Value.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "\\~") {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok || strings.Contains(l.Value, "\\") {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

func (a *analyzer) forClause(x *syntax.ForClause, sc *scope, c ctx) {
	a.forgetAssigned(&syntax.Block{Stmts: x.Do}, sc)
	switch l := x.Loop.(type) {
	case *syntax.WordIter:
		var vals []Word
		known := true
		if l.InPos.IsValid() {
			for _, w := range l.Items {
				for _, f := range a.fields(w, sc) {
					if f.Kind == Unknown {
						known = false
					}
					vals = append(vals, f)
				}
			}
		} else {
			vals, known = sc.pos, sc.posKnown
		}
		name := l.Name.Value
		if !known || len(vals) > maxLoopVals || x.Select {
			branch := sc.clone()
			branch.set(name, value{kind: Unknown, isSet: true})
			a.stmts(x.Do, branch, c)
			sc.mergeFrom(branch)
			return
		}
		for _, v := range vals {
			branch := sc.clone()
			branch.set(name, value{s: v.Value, kind: v.Kind, isSet: true})
			if v.Kind == Pattern {
				branch.set(name, value{s: v.Glob, kind: Pattern, isSet: true})
			}
			a.stmts(x.Do, branch, c)
			sc.mergeFrom(branch)
		}
		sc.set(name, value{kind: Unknown, isSet: true})
	case *syntax.CStyleLoop:
		for _, e := range []syntax.ArithmExpr{l.Init, l.Cond, l.Post} {
			if e != nil {
				a.arithm(l, e, sc)
			}
		}
		branch := sc.clone()
		a.stmts(x.Do, branch, c)
		sc.mergeFrom(branch)
	}
}

func (a *analyzer) test(x syntax.TestExpr, sc *scope) {
	switch t := x.(type) {
	case *syntax.BinaryTest:
		a.test(t.X, sc)
		a.test(t.Y, sc)
		switch t.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			// [[ a -eq b ]] evaluates both sides as arithmetic.
			for _, side := range []syntax.TestExpr{t.X, t.Y} {
				if w, ok := side.(*syntax.Word); ok {
					v := a.word(w, sc)
					if v.Kind == Literal && !isInteger(v.Value) && strings.TrimSpace(v.Value) != "" {
						a.problem(w, "arithmetic comparison of text that is not a number: bash evaluates it as an expression, which can run commands", "compare numbers")
					}
				}
			}
		default:
			// other tests evaluate no arithmetic
		}
	case *syntax.UnaryTest:
		a.test(t.X, sc)
	case *syntax.ParenTest:
		a.test(t.X, sc)
	case *syntax.Word:
		a.word(t, sc)
	}
}

func isInteger(s string) bool {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func (a *analyzer) decl(x *syntax.DeclClause, sc *scope, c ctx) {
	nameref := false
	args := []Word{Lit(x.Variant.Value)}
	for _, as := range x.Args {
		if as.Naked && as.Name == nil && as.Value != nil {
			w := a.word(as.Value, sc)
			args = append(args, w)
			if strings.HasPrefix(w.Value, "-") && strings.ContainsAny(w.Value, "n") {
				nameref = true
			}
			continue
		}
		if as.Name == nil {
			continue
		}
		v := value{kind: Unknown, isSet: true}
		if as.Value != nil && as.Array == nil && as.Index == nil && !as.Append && !nameref {
			w := a.word(as.Value, sc)
			a.codeVariable(as.Name.Value, w)
			v = value{s: w.Value, kind: w.Kind, isSet: true}
			if w.Kind == Pattern {
				v.kind = Literal
			}
		} else if as.Naked {
			if old, ok := sc.lookup(as.Name.Value); ok {
				v = old
			}
		}
		if as.Array != nil {
			v = a.arrayAssign(as, sc)
		}
		sc.set(as.Name.Value, v)
		args = append(args, Lit(printNode(as)))
	}
	a.emit(&Command{Args: args, Redirs: c.redirs, Dir: sc.dir, Stdin: c.stdin, StdinText: c.stdinText, StdinKnown: c.known, Via: c.via}, sc, c)
}

// pipedText returns what the left side of a pipe writes when it is echo or
// printf of literal words.
func pipedText(s *syntax.Stmt, sc *scope, a *analyzer) (string, bool) {
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(s.Redirs) > 0 || len(call.Args) == 0 {
		return "", false
	}
	name := call.Args[0].Lit()
	if name != "echo" && name != "printf" {
		return "", false
	}
	var words []string
	for _, w := range call.Args[1:] {
		for _, f := range (&analyzer{out: &Analysis{}, seen: map[syntax.Node]bool{}, written: map[string]bool{}}).fields(w, sc.clone()) {
			if f.Kind != Literal {
				return "", false // unknown, or a glob bash expands
			}
			words = append(words, f.Value)
		}
	}
	if name == "printf" {
		if len(words) == 0 {
			return "", false
		}
		return decodeANSI(words[0]) + strings.Join(words[1:], " "), true
	}
	for len(words) > 0 && strings.HasPrefix(words[0], "-") {
		words = words[1:]
	}
	return decodeANSI(strings.Join(words, " ")) + "\n", true
}

// selfForks reports whether a function body calls the function in a pipe
// or in the background (a fork bomb: :(){ :|:& };:).
func selfForks(name string, body *syntax.Stmt) bool {
	found := false
	var visit func(n syntax.Node, forking bool)
	visit = func(n syntax.Node, forking bool) {
		syntax.Walk(n, func(m syntax.Node) bool {
			if found {
				return false
			}
			switch m := m.(type) {
			case *syntax.Stmt:
				if m != n && (m.Background || m.Coprocess) {
					visit(m.Cmd, true)
					return false
				}
			case *syntax.BinaryCmd:
				if m.Op == syntax.Pipe || m.Op == syntax.PipeAll {
					visit(m.X, true)
					visit(m.Y, true)
					return false
				}
			case *syntax.CallExpr:
				if forking && len(m.Args) > 0 && m.Args[0].Lit() == name {
					found = true
				}
			}
			return true
		})
	}
	visit(body, body.Background)
	return found
}
