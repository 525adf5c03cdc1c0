package distill

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/nightshift-dev/nightshift/shell"
)

// This file reads commands through package shell, the module's one shell
// parser (mvdan.cc/sh/v3/syntax, bash dialect): shell.Analyze lists every
// simple command that may run, wrappers (sudo, env, timeout, setsid, flock,
// su -c, chroot, bash -c, find -exec, xargs, …) peeled, with its words
// expanded as far as they are known and its redirections.

// analyzeConfig is what the distiller assumes of the shell: the session
// starts in the home directory, and both stay symbolic ("~"), so that
// paths are reported as written rather than resolved against a guessed
// home.
func analyzeConfig() shell.Config { return shell.Config{Dir: "~", Home: "~"} }

// analyze analyses a command line; a command the parser rejects yields an
// analysis with no commands.
func analyze(command string) *shell.Analysis { return shell.Analyze(command, analyzeConfig()) }

// wordValues returns the values of words.
func wordValues(ws []shell.Word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Value
	}
	return out
}

// operands parses a program's arguments with o, GNU style (options may
// follow operands, long options may be abbreviated, "--" ends options), and
// returns its options and operands. Unknown options are kept as options
// without a value.
//
// shell.Options.Parse with Permute drops the operands read before an
// unknown option, so options are parsed here one stretch at a time,
// without Permute, between operands.
func operands(args []shell.Word, o shell.Options) (opts []shell.Option, ops []shell.Word) {
	o.Permute = false
	for len(args) > 0 {
		got, rest, unknown := o.Parse(args)
		opts = append(opts, got...)
		if len(unknown) > 0 { // rest follows the unknown option
			args = rest
			continue
		}
		if n := len(args) - len(rest); n > 0 && args[n-1].Value == "--" {
			return opts, append(ops, rest...)
		}
		if len(rest) == 0 {
			break
		}
		ops = append(ops, rest[0])
		args = rest[1:]
	}
	return opts, ops
}

// runs reports whether next is a command that cmd runs as a wrapper (sudo,
// env, timeout, xargs, …) or as a shell's or su's -c script.
func runs(cmd, next *shell.Command) bool {
	if len(next.Via) != len(cmd.Via)+1 {
		return false
	}
	for i, v := range cmd.Via {
		if next.Via[i] != v {
			return false
		}
	}
	name, via := cmd.Name(), next.Via[len(next.Via)-1]
	return name != "" && (via == name || strings.HasPrefix(via, name+" -c"))
}

// innermost follows cmds[i] through the wrappers it runs to the program
// that does the work.
func innermost(cmds []*shell.Command, i int) int {
	for i+1 < len(cmds) && runs(cmds[i], cmds[i+1]) {
		i++
	}
	return i
}

// program returns a command's program (base name) and its arguments.
// Leading NAME=value words of a command a wrapper runs are skipped: sudo
// and env pass them as environment (shell.Analyze reports them as the
// program for sudo).
func program(c *shell.Command) (string, []shell.Word) {
	args := c.Args
	if len(c.Via) > 0 {
		for len(args) > 1 && args[0].Kind == shell.Literal && isAssignment(args[0].Value) {
			args = args[1:]
		}
	}
	if len(args) == 0 || args[0].Kind != shell.Literal {
		return "", nil
	}
	return path.Base(args[0].Value), args[1:]
}

func isAssignment(a string) bool {
	name, _, ok := strings.Cut(a, "=")
	return ok && syntax.ValidName(name)
}

// readsScript reports whether a shell invoked with args reads its script
// from standard input (no -c, no script file, or -s).
func readsScript(args []shell.Word) bool {
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "-o" || v == "+o" || v == "-O" || v == "+O":
			i++
		case v == "--":
			return false
		case v == "-s" || len(v) > 1 && v[0] == '-' && v[1] != '-' && strings.ContainsRune(v, 's'):
			return true
		case len(v) > 1 && v[0] == '-' && v[1] != '-' && strings.ContainsRune(v, 'c'):
			return false
		case strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+"):
		default:
			return false // a script file
		}
	}
	return true
}
