package distill

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// oneLine renders lexed tokens on one line in canonical quoting: newlines
// become "; ", here-document bodies are left out (the operator and its
// delimiter stay, followed by "…").
func oneLine(toks []token) string {
	var b strings.Builder
	for i := range toks {
		t := &toks[i]
		switch t.kind {
		case tokWord:
			if b.Len() > 0 && (i == 0 || toks[i-1].kind != tokRedir || isHeredoc(toks[i-1].op)) {
				b.WriteByte(' ')
			}
			writeWord(&b, t.word)
		case tokRedir:
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(t.op)
			if isHeredoc(t.op) && t.hasDelim {
				writeDelim(&b, t)
				b.WriteString(" …")
			}
		case tokOp:
			op := t.op
			if op == "\n" {
				op = ";"
			}
			s := b.String()
			if s == "" || strings.HasSuffix(s, ";") || strings.HasSuffix(s, "&&") || strings.HasSuffix(s, "||") ||
				strings.HasSuffix(s, "|") || strings.HasSuffix(s, "(") {
				if op == ";" {
					continue
				}
			}
			if op == ";" || op == ";;" {
				b.WriteString(op)
				continue
			}
			b.WriteByte(' ')
			b.WriteString(op)
		}
	}
	return strings.TrimSuffix(b.String(), ";")
}

var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true}

// subcommands: programs whose first operand is part of what they do.
var subcommands = map[string]bool{
	"apt": true, "apt-get": true, "aptitude": true, "dnf": true, "yum": true, "microdnf": true,
	"zypper": true, "systemctl": true, "firewall-cmd": false, "augtool": true,
}

// gist returns the program of the first simple command (with its
// subcommand) and the program followed by that command's targets:
// names inline ("apt-get install aide"), paths after "on" ("sed on
// /etc/aide.conf").
func gist(toks []token) (prog, g string) {
	return gistDepth(toks, 0)
}

func gistDepth(toks []token, depth int) (prog, g string) {
	cmds := commands(toks)
	if len(cmds) == 0 {
		return "", ""
	}
	// The first command that touches something tells what the line did
	// (tee, not the echo feeding it); a shell's -c script is looked into.
	first := cmds[0]
	for _, c := range cmds {
		var ts targetSet
		ts.simple(c, 0)
		if len(ts.list) > 0 {
			first = c
			break
		}
	}
	name, args := program(first.words)
	if shells[name] && depth < maxDepth {
		if script, _ := shellArgs(args); script != "" {
			if p, g := gistDepth(lex(script), depth+1); p != "" {
				return p, g
			}
		}
	}
	prog = name
	if subcommands[name] {
		if _, ops := operands(args, "ocCtSxdeRirIlf", nil); len(ops) > 0 && isWordy(ops[0]) {
			prog += " " + ops[0]
		}
	}
	var ts targetSet
	ts.simple(first, 0)
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
// cut with "…".
func (d *Distiller) abbreviate(full string, targets []string, budget int) string {
	if full == "" || d.count(full) <= budget {
		return full
	}
	w := strings.Split(full, " ")
	if len(w) > 256 {
		w = w[:256]
	}
	keep := make([]bool, len(w))
	head := 2
	if _, ok := wrappers[w[0]]; ok {
		head = 3
	}
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
				w[i] = clipRunes(w[i], 24)
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
			keep[i] = false
			break
		}
	}
	return render()
}

// clipRunes keeps the first n runes of s and appends "…".
func clipRunes(s string, n int) string {
	i := 0
	for k := 0; k < n && i < len(s); k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	if i >= len(s) {
		return s
	}
	return s[:i] + "…"
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
