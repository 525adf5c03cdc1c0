package distill

import (
	"path"
	"strings"
)

// simpleCmd is one simple command of a command line: its words and its
// redirections, as lexed.
type simpleCmd struct {
	words  []word
	redirs []redir
}

type redir struct {
	op     string // as written, e.g. ">>", "2>", "<<"
	target string // the target's value; empty for here-documents
	body   string // here-document body
}

// commands splits tokens into simple commands at control operators.
func commands(toks []token) []simpleCmd {
	var out []simpleCmd
	var cur simpleCmd
	end := func() {
		if len(cur.words) > 0 || len(cur.redirs) > 0 {
			out = append(out, cur)
		}
		cur = simpleCmd{}
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.kind {
		case tokOp:
			end()
		case tokWord:
			cur.words = append(cur.words, t.word)
		case tokRedir:
			r := redir{op: t.op, body: t.body}
			if !isHeredoc(t.op) && i+1 < len(toks) && toks[i+1].kind == tokWord {
				r.target = toks[i+1].word.value()
				i++
			}
			cur.redirs = append(cur.redirs, r)
		}
	}
	end()
	return out
}

// values returns the values of words.
func values(ws []word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.value()
	}
	return out
}

// reserved words that may precede a command on the same line.
var reserved = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "do": true, "while": true,
	"until": true, "!": true, "{": true, "}": true, "time": true, "fi": true, "done": true,
}

// wrappers run their operands as a command. The value is the set of their
// options that take an argument (as separate words).
var wrappers = map[string]string{
	"sudo":    "ugCDhpUrtT",
	"doas":    "uC",
	"env":     "uSC",
	"nohup":   "",
	"nice":    "n",
	"ionice":  "cnp",
	"timeout": "sk",
	"stdbuf":  "ioe",
	"command": "",
	"exec":    "a",
	"builtin": "",
	"xargs":   "aEdILnPs",
	"chronic": "",
	"time":    "fo",
}

// program strips reserved words, assignments and wrappers (sudo, env,
// timeout, …) from a command's words and returns the program name (its base
// name) and its arguments' values.
func program(ws []word) (string, []string) {
	args := values(ws)
	for len(args) > 0 {
		a := args[0]
		switch {
		case reserved[a]:
			args = args[1:]
			continue
		case isAssignment(a):
			args = args[1:]
			continue
		}
		name := path.Base(a)
		argOpts, ok := wrappers[name]
		if !ok {
			return name, args[1:]
		}
		args = skipOptions(args[1:], argOpts)
		if name == "timeout" && len(args) > 0 {
			args = args[1:] // the duration
		}
	}
	return "", nil
}

func isAssignment(a string) bool {
	eq := strings.IndexByte(a, '=')
	if eq <= 0 {
		return false
	}
	for i := 0; i < eq; i++ {
		c := a[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// skipOptions skips leading options (and assignments, for env) and returns
// the rest. argOpts lists the short options that take a separate argument.
func skipOptions(args []string, argOpts string) []string {
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--":
			return args[1:]
		case strings.HasPrefix(a, "--"):
			args = args[1:]
		case len(a) > 1 && a[0] == '-':
			args = args[1:]
			if last := a[len(a)-1]; strings.IndexByte(argOpts, last) >= 0 && len(args) > 0 {
				args = args[1:]
			}
		case isAssignment(a):
			args = args[1:]
		default:
			return args
		}
	}
	return args
}

// operands splits args into options and operands. argShort lists the short
// options taking a separate argument, argLong the long ones (without "--")
// when written without "="; opts receives each option with its argument.
func operands(args []string, argShort string, argLong []string) (opts [][2]string, ops []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return opts, append(ops, args[i+1:]...)
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			if !hasVal && contains(argLong, name) && i+1 < len(args) {
				i++
				val = args[i]
			}
			opts = append(opts, [2]string{"--" + name, val})
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				c := a[j]
				if strings.IndexByte(argShort, c) >= 0 {
					val := a[j+1:]
					if val == "" && i+1 < len(args) {
						i++
						val = args[i]
					}
					opts = append(opts, [2]string{"-" + string(c), val})
					break
				}
				opts = append(opts, [2]string{"-" + string(c), ""})
			}
		default:
			ops = append(ops, a)
		}
	}
	return opts, ops
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func hasOpt(opts [][2]string, names ...string) (string, bool) {
	for _, o := range opts {
		for _, n := range names {
			if o[0] == n {
				return o[1], true
			}
		}
	}
	return "", false
}
