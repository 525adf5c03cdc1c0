package distill

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/nightshift-dev/nightshift/shell"
)

// oneLine renders a command on one line in canonical quoting (see
// Canonical): statements joined by "; ", here-document bodies left out
// (the operator and its delimiter stay, followed by "…"). A command the
// parser rejects is shown with its whitespace collapsed.
func oneLine(command string) string {
	f, err := shell.Parse(command)
	if err != nil {
		return oneLineText(command)
	}
	requoteFile(f)
	fixProcSubst(f)
	syntax.Walk(f, func(n syntax.Node) bool {
		if r, ok := n.(*syntax.Redirect); ok && (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc) && r.Word != nil {
			// Printed as "<" followed by "<DELIM …": the body is left out.
			var b strings.Builder
			if err := syntax.NewPrinter().Print(&b, r.Word); err != nil {
				b.Reset()
			}
			op := "<"
			if r.Op == syntax.DashHdoc {
				op = "<-"
			}
			r.Op, r.Hdoc = syntax.RdrIn, nil
			r.Word = &syntax.Word{Parts: []syntax.WordPart{&syntax.Lit{Value: op + b.String() + " …"}}}
		}
		return true
	})
	p := newPrinter()
	var b strings.Builder
	for i, s := range f.Stmts {
		if i > 0 {
			if prev := f.Stmts[i-1]; prev.Background || prev.Coprocess {
				b.WriteByte(' ')
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(printStmt(p, s))
	}
	return b.String()
}

// subcommands: programs whose first operand is part of what they do.
var subcommands = map[string]bool{
	"apt": true, "apt-get": true, "aptitude": true, "dnf": true, "yum": true, "microdnf": true,
	"zypper": true, "systemctl": true, "augtool": true,
}

// gist returns the program of the command that tells what the line did
// (with its subcommand) and that program followed by the command's
// targets: names inline ("apt-get install aide"), paths after "on" ("sed
// on /etc/aide.conf"). That command is the first that touches something
// (tee, not the echo feeding it), else the first written (lead, see
// leadProgram: kill, not the cat of its $(cat …)); a wrapper (sudo, env,
// timeout, sh -c, …) stands for the program it runs.
func gist(an *shell.Analysis, lead string) (prog, g string) {
	cmds := an.Commands
	var ts targetSet
	if len(cmds) == 0 {
		ts.analysis(an, 0)
	} else {
		first := -1
		for i, c := range cmds {
			var t targetSet
			t.command(c, 0)
			if len(t.list) > 0 {
				first = i
				break
			}
		}
		for i := 0; first < 0 && i < len(cmds); i++ {
			if len(cmds[i].Via) == 0 && cmds[i].Args[0].Value == lead {
				first = i
			}
		}
		first = max(first, 0)
		c := cmds[innermost(cmds, first)]
		var args []shell.Word
		prog, args = program(c)
		if subcommands[prog] {
			if _, ops := operands(args, shell.Options{Args: "ocCtSxdeRirIlf"}); len(ops) > 0 && isWordy(ops[0].Value) {
				prog += " " + ops[0].Value
			}
		}
		ts.command(c, 0)
	}
	var inline, paths []string
	for _, t := range ts.list {
		if strings.HasPrefix(t, "/") || strings.HasPrefix(t, "~") || strings.HasPrefix(t, ".") || strings.HasPrefix(t, "$") {
			paths = append(paths, t)
		} else {
			inline = append(inline, t)
		}
	}
	g = prog
	if g == "" {
		g = "redirection"
	}
	if len(inline) > 0 {
		g += " " + strings.Join(capList(inline, maxTargetsShown), " ")
	}
	if len(paths) > 0 {
		g += " on " + strings.Join(capList(paths, 2), " and ")
	}
	return prog, g
}

// leadProgram returns the first word of the first simple command written
// in command, outside command and process substitutions (shell.Analyze
// lists the commands of a word's substitutions before the command).
func leadProgram(command string) string {
	f, err := shell.Parse(command)
	if err != nil {
		return ""
	}
	lead := ""
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		case *syntax.CallExpr:
			if lead == "" && len(n.Args) > 0 {
				lead = n.Args[0].Lit()
				if lead == "" {
					lead = "\x00" // not a literal: no match
				}
			}
		}
		return lead == ""
	})
	return lead
}

// headWords is how many words of a command's one-line form abbreviation
// always keeps: the program and its first argument, and the program after
// a wrapper (sudo apt-get install).
func headWords(an *shell.Analysis) int {
	if c := an.Commands; len(c) > 1 && runs(c[0], c[1]) {
		return 3
	}
	return 2
}

func isWordy(s string) bool {
	if s == "" || len(s) > 24 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c == '-') {
			return false
		}
	}
	return true
}

func capList(list []string, n int) []string {
	if len(list) <= n {
		return list
	}
	out := append([]string(nil), list[:n]...)
	out[n-1] += " +" + strconv.Itoa(len(list)-n+1) + " more"
	return out
}

// abbreviate shortens a one-line command to budget tokens, keeping its head
// (the program and its first arguments) and its targets, and marking each
// cut with "…". Words are the shell's (a quoted argument with spaces is one
// word), so a cut never splits a quotation: long arguments are first
// elided in their middle (their quotes kept at both ends), then whole
// words are left out.
func (d *Distiller) abbreviate(full string, targets []string, head, budget int) string {
	if full == "" || d.count(full) <= budget {
		return full
	}
	w := shellWords(full)
	if len(w) > 256 {
		w = w[:256]
	}
	keep := make([]bool, len(w))
	head = max(head, 2)
	for i := 0; i < head && i < len(w); i++ {
		keep[i] = true
	}
	isTarget := make([]bool, len(w))
	for _, t := range capList(targets, 2) {
		at := -1
		for i, x := range w {
			if x == t || strings.Trim(x, `'"`) == t {
				at = i
				break
			}
		}
		for i, x := range w {
			if at < 0 && strings.Contains(x, t) {
				at = i
			}
		}
		if at >= 0 {
			keep[at], isTarget[at] = true, true
		}
	}
	keep[len(w)-1] = true
	var chainHeads []int
	for i := 1; i < len(w); i++ {
		switch w[i-1] {
		case "&&", "||", "|", ";":
			chainHeads = append(chainHeads, i)
		default:
			if strings.HasSuffix(w[i-1], ";") {
				chainHeads = append(chainHeads, i)
			}
		}
	}
	render := func() string {
		var b strings.Builder
		gap := false
		for i, x := range w {
			if !keep[i] {
				gap = true
				continue
			}
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			if gap && b.Len() > 0 {
				b.WriteString("… ")
			}
			gap = false
			b.WriteString(x)
		}
		if gap {
			b.WriteString(" …")
		}
		return b.String()
	}
	if d.count(render()) > budget {
		for i := range w {
			if keep[i] && i > 0 && !isTarget[i] && utf8.RuneCountInString(w[i]) > 32 {
				w[i] = middleRunes(w[i], 16, 10)
			}
		}
	}
	if d.count(render()) > budget {
		for i := head; i < len(w); i++ {
			keep[i] = false
		}
		if d.count(render()) > budget {
			return d.clip(full, budget)
		}
	}
	// Then the programs of chained commands, then the words after the head.
	for _, i := range chainHeads {
		saved := append([]bool(nil), keep...)
		keep[i] = true
		if w[i-1] == "&&" || w[i-1] == "||" || w[i-1] == "|" {
			keep[i-1] = true
		}
		if d.count(render()) > budget {
			copy(keep, saved)
		}
	}
	for i := range w {
		if keep[i] {
			continue
		}
		keep[i] = true
		if d.count(render()) > budget {
			// The word elided in its middle, else left out.
			full := w[i]
			if w[i] = middleRunes(full, 12, 8); w[i] == full || d.count(render()) > budget {
				w[i], keep[i] = full, false
				break
			}
		}
	}
	return render()
}

// middleRunes keeps the first head and the last tail runes of s, joined by
// "…", when s is longer.
func middleRunes(s string, head, tail int) string {
	r := []rune(s)
	if len(r) <= head+tail+1 {
		return s
	}
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

// shellWords splits a command in canonical one-line form at the blanks
// outside quotes, escapes and substitutions, so that "sed -i 's/a b/c/' f"
// is four words.
func shellWords(s string) []string {
	var words []string
	start, depth := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
		case c == '\\' && i+1 < len(s):
			i++
		case quote == '"':
			if c == '"' {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case c == ' ' && depth == 0:
			words = append(words, s[start:i])
			start = i + 1
		}
	}
	return append(words, s[start:])
}

// clip shortens s to budget tokens, keeping its start and appending "…".
func (d *Distiller) clip(s string, budget int) string {
	if d.count(s) <= budget {
		return s
	}
	r := []rune(s)
	lo, hi, best := 0, len(r), "…"
	for lo <= hi {
		k := (lo + hi) / 2
		cand := string(r[:k]) + "…"
		if d.count(cand) <= budget {
			best, lo = cand, k+1
		} else {
			hi = k - 1
		}
	}
	return best
}
