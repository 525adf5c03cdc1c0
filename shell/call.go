package shell

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

func (a *analyzer) call(x *syntax.CallExpr, sc *scope, c ctx) {
	if len(x.Args) == 0 {
		for _, as := range x.Assigns {
			a.assign(as, sc)
		}
		return
	}
	// Prefix assignments (VAR=x cmd) are evaluated with the outer
	// variables and only reach the command's environment.
	for _, as := range x.Assigns {
		a.assign(as, sc.clone())
	}
	var args []Word
	var alts []string
	for i, w := range x.Args {
		fs := a.fields(w, sc)
		if i == 0 && !knownName(w, fs) {
			if alts = nameAlternatives(w, sc); alts == nil {
				a.problem(w, "the program name is produced by an expansion, so what runs cannot be known before it runs",
					"write the program name literally")
			}
		}
		args = append(args, fs...)
	}
	if alts != nil {
		// $found where found was set to true or false in branches: one
		// command per value it may hold.
		for _, alt := range alts {
			argv := append([]Word{{Value: alt, Expanded: true}}, args[1:]...)
			a.emit(&Command{Args: argv, Redirs: c.redirs, Dir: sc.dir, Stdin: c.stdin, StdinText: c.stdinText, StdinKnown: c.known, Via: c.via}, sc.clone(), c)
		}
		return
	}
	if len(args) == 0 {
		return
	}
	cmd := &Command{Args: args, Redirs: c.redirs, Dir: sc.dir, Stdin: c.stdin, StdinText: c.stdinText, StdinKnown: c.known, Via: c.via}
	a.emit(cmd, sc, c)
}

// knownName reports whether the program a command-name word runs is known
// before running: written literally, or from variables assigned literal
// values earlier in the command line — never from a command or process
// substitution, a glob, a brace expansion or an unknown variable.
func knownName(w *syntax.Word, fields []Word) bool {
	if literalName(w) {
		return true
	}
	if syntax.SplitBraces(cloneWord(w)) || len(fields) == 0 {
		return false
	}
	// The program is the first field; what follows it (the unknown tail
	// of an array, "${cmd[@]}") is its arguments.
	if fields[0].Kind != Literal {
		return false
	}
	bad := false
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp, *syntax.ExtGlob:
			bad = true
		}
		return !bad
	})
	return !bad
}

// literalName reports whether a command-name word is written without any
// expansion: no parameter, command, arithmetic or process substitution, no
// unquoted glob character, no brace expansion, no tilde.
func literalName(w *syntax.Word) bool {
	if syntax.SplitBraces(cloneWord(w)) {
		return false
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := unescapeAll(p.Value)
			if strings.ContainsAny(v, "*?") || strings.HasPrefix(v, "~") || strings.Contains(v, "[") && strings.Contains(v[strings.Index(v, "["):], "]") {
				return false
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return false
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// unescapeAll drops backslash-escaped characters (they are quoted).
func unescapeAll(v string) string {
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) {
			i++
			continue
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

func (a *analyzer) assign(as *syntax.Assign, sc *scope) {
	if as.Name == nil {
		return
	}
	if as.Index != nil {
		a.arithmExpr(as.Index, sc)
	}
	v := value{kind: Unknown, isSet: true}
	if as.Array != nil {
		v = a.arrayAssign(as, sc)
	} else if as.Value != nil {
		w := a.word(as.Value, sc)
		a.codeVariable(as.Name.Value, w)
		if len(w.Value) > MaxLen {
			a.problem(as.Name, "a variable grows too large to analyse", "assign literal values")
			w = Word{Kind: Unknown, Value: "$" + as.Name.Value}
		}
		if !as.Append && as.Index == nil {
			v = value{s: w.Value, kind: w.Kind, isSet: true}
			if w.Kind == Pattern { // no globbing in assignments
				v.kind = Literal
			}
		}
	} else if !as.Append && as.Index == nil {
		v = value{kind: Literal, isSet: true}
	}
	sc.set(as.Name.Value, v)
}

// emit records a command, applies what builtins change (cd, set, read,
// …) and analyses what wrappers and shells it hands commands to.
func (a *analyzer) emit(cmd *Command, sc *scope, c ctx) {
	if len(a.out.Commands) >= maxCommands {
		if !a.full {
			a.full = true
			a.problemText("", "too many commands to analyse", "split the work into several commands")
		}
		return
	}
	if name := cmd.Name(); name != "" && sc.funcs[cmd.Args[0].Value] && len(cmd.Via) == len(c.via) {
		cmd.Function = true
	}
	a.out.Commands = append(a.out.Commands, cmd)
	if cmd.Function {
		a.callFunction(cmd, sc, c)
		return
	}
	if len(cmd.Args) == 0 || cmd.Args[0].Kind != Literal {
		return
	}
	args := cmd.Args[1:]
	switch cmd.Args[0].Value {
	case "cd", "pushd":
		sc.dir = a.cd(args, sc)
		return
	case "popd":
		sc.dir = ""
		return
	case "read", "readarray", "mapfile", "getopts", "printf":
		if cmd.Args[0].Value == "read" && a.readKnown(args, sc, c) {
			return
		}
		for i, w := range args {
			if w.Kind == Literal && syntax.ValidName(w.Value) && (cmd.Args[0].Value != "printf" || i > 0 && args[i-1].Value == "-v") {
				sc.set(w.Value, value{kind: Unknown, isSet: true})
			}
		}
		if cmd.Args[0].Value != "printf" {
			sc.set("REPLY", value{kind: Unknown, isSet: true})
		}
		return
	case "unset":
		for _, w := range args {
			if w.Kind == Literal && syntax.ValidName(w.Value) {
				sc.set(w.Value, value{kind: Literal})
			}
		}
		return
	case "set":
		for i, w := range args {
			if w.Value == "--" {
				sc.pos, sc.posKnown = append([]Word(nil), args[i+1:]...), true
				return
			}
		}
		for _, w := range args {
			if w.Kind != Literal || !strings.HasPrefix(w.Value, "-") && !strings.HasPrefix(w.Value, "+") {
				sc.posKnown = false
			}
		}
		return
	case "shift":
		if sc.posKnown && len(args) == 0 && len(sc.pos) > 0 {
			sc.pos = sc.pos[1:]
		} else {
			sc.posKnown = false
		}
		return
	case "shopt":
		for _, w := range args {
			if w.Kind != Literal || w.Value == "expand_aliases" {
				a.problemText(cmd.String(), "aliases or an unknown shell option would change how later lines are read", "do not enable aliases")
			}
		}
		return
	case "enable":
		for _, w := range args {
			if w.Kind != Literal || strings.HasPrefix(w.Value, "-") && strings.ContainsAny(w.Value, "f") {
				a.problemText(cmd.String(), "loading a builtin from a shared object cannot be checked", "use programs, not loadable builtins")
			}
		}
		return
	case "alias":
		if len(args) > 0 {
			a.problemText(cmd.String(), "aliases cannot be checked", "write the commands directly")
		}
		return
	case "export", "declare", "local", "typeset", "readonly":
		return
	}
	a.peel(cmd, sc, c)
}

// cd returns the directory cd would change to ("" when unknown).
func (a *analyzer) cd(args []Word, sc *scope) string {
	var ops []Word
	for i, w := range args {
		if w.Value == "--" {
			ops = append(ops, args[i+1:]...)
			break
		}
		if w.Kind == Literal && strings.HasPrefix(w.Value, "-") && w.Value != "-" {
			continue
		}
		ops = append(ops, w)
	}
	if len(ops) == 0 {
		h, ok := sc.home("")
		if !ok {
			return ""
		}
		return h
	}
	t := ops[0]
	if t.Kind != Literal || t.Value == "-" {
		return ""
	}
	if strings.HasPrefix(t.Value, "/") {
		return path.Clean(t.Value)
	}
	if sc.dir == "" {
		return ""
	}
	return path.Join(sc.dir, t.Value)
}

// innerScript analyses a literal script a command hands to a shell.
func (a *analyzer) innerScript(outer *Command, src Word, via string, pos []Word, posKnown bool, arg0 string, sc *scope, c ctx, in Input) {
	if src.Kind == Unknown {
		a.problemText(outer.String(), "the script given to "+via+" is not literal text, so what it runs cannot be known", "write the script as one literal, single-quoted string")
		return
	}
	inner := newScope(Config{Dir: sc.dir, Home: sc.homeDir})
	inner.dir = sc.dir
	inner.pos, inner.posKnown, inner.arg0 = pos, posKnown, arg0
	cc := c
	cc.redirs = outer.Redirs
	cc.stdin, cc.stdinText, cc.known = outer.Stdin, outer.StdinText, outer.StdinKnown
	if in != StdinInherited {
		cc.stdin = in
	}
	cc.via = outer.Via
	a.script(src.Value, inner, cc.stdin, via, &cc)
}

// innerArgv analyses the program a wrapper runs.
func (a *analyzer) innerArgv(outer *Command, argv []Word, via string, sc *scope, c ctx) {
	if len(argv) == 0 {
		return
	}
	if argv[0].Kind != Literal {
		a.problemText(outer.String(), "the program "+via+" runs is produced by an expansion, so what runs cannot be known", "write the program name literally")
		return
	}
	inner := &Command{Args: argv, Redirs: outer.Redirs, Dir: outer.Dir, Stdin: outer.Stdin, StdinText: outer.StdinText,
		StdinKnown: outer.StdinKnown, Via: append(append([]string(nil), outer.Via...), via)}
	cc := c
	cc.via = inner.Via
	a.emit(inner, sc.clone(), cc)
}

// codeVariables are expanded later as code: the prompts (PS4 at every
// command under set -x), PROMPT_COMMAND, and the files a new bash sources.
var codeVariables = map[string]bool{"PS0": true, "PS1": true, "PS2": true, "PS3": true, "PS4": true,
	"PROMPT_COMMAND": true, "BASH_ENV": true, "ENV": true}

// codeVariable records a problem when a variable that bash later expands or
// runs as code is given anything but plain text.
func (a *analyzer) codeVariable(name string, w Word) {
	if strings.HasPrefix(name, "BASH_FUNC_") {
		a.problemText(name+"="+w.Value, "an exported function in the environment runs in every bash started later", "define no functions in the environment")
		return
	}
	if codeVariables[name] && (w.Kind == Unknown || strings.ContainsAny(w.Value, "$`") || name == "PROMPT_COMMAND" || name == "BASH_ENV" || name == "ENV") {
		a.problemText(name+"="+w.Value, name+" is run or expanded as code later, where it cannot be checked", "leave "+name+" alone")
	}
}

// nameAlternatives returns the values a program name written as one
// variable ($v or "$v") may hold when they are a few known single words.
func nameAlternatives(w *syntax.Word, sc *scope) []string {
	parts := w.Parts
	if len(parts) == 1 {
		if dq, ok := parts[0].(*syntax.DblQuoted); ok {
			parts = dq.Parts
		}
	}
	if len(parts) != 1 {
		return nil
	}
	p, ok := parts[0].(*syntax.ParamExp)
	if !ok || p.Param == nil || p.Exp != nil || p.Repl != nil || p.Slice != nil || p.Index != nil || p.Excl || p.Length {
		return nil
	}
	alts := sc.alternatives(p.Param.Value)
	for _, a := range alts {
		if a == "" || strings.ContainsAny(a, " \t\n*?[{~$`") {
			return nil
		}
	}
	return alts
}

// arrayAssign evaluates name=(…) and name+=(…): the elements are known
// when every one is a literal word (no [index]=value, no unknown
// expansion).
func (a *analyzer) arrayAssign(as *syntax.Assign, sc *scope) value {
	var el []string
	known := true
	for _, e := range as.Array.Elems {
		if e.Value == nil {
			continue
		}
		fs := a.fields(e.Value, sc)
		if e.Index != nil {
			a.arithmExpr(e.Index, sc)
			known = false
		}
		for _, f := range fs {
			if f.Kind != Literal {
				known = false
			}
			el = append(el, f.Value)
		}
	}
	if as.Index != nil {
		return value{kind: Unknown, isSet: true}
	}
	if !as.Append {
		if !known {
			return value{kind: Unknown, isSet: true}
		}
		return arrayValue(el, false)
	}
	old, ok := sc.lookup(as.Name.Value)
	switch {
	case ok && old.arr && !old.tail && known:
		return arrayValue(append(old.elements(), el...), false)
	case ok && old.arr:
		return arrayValue(old.elements(), true)
	case ok && !old.arr && old.kind == Literal && old.isSet && known:
		return arrayValue(append([]string{old.s}, el...), false)
	case ok && !old.arr && old.kind == Literal && old.isSet:
		return arrayValue([]string{old.s}, true)
	}
	return value{kind: Unknown, isSet: true}
}
