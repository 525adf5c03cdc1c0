package distill

import (
	"strings"

	"github.com/nightshift-dev/nightshift/shell"
)

// maxDepth bounds recursion into scripts fed to a shell on its standard
// input (a here-document, a here-string or a pipe from echo).
const maxDepth = 4

// Targets returns what the command touches, in order of first appearance
// and without repeats: files written by redirections (>, >>, &>, >|, <>,
// on a command, a group or a subshell), tee, sed -i, cp/mv/install/ln
// destinations, chmod/chown/chgrp, touch, mkdir, rm, truncate; systemd
// units of systemctl and service; packages of apt, apt-get, aptitude, dpkg,
// dnf, yum, microdnf, rpm and zypper; sysctl keys written with sysctl -w;
// augeas paths changed by augtool; files that script and time -o write.
//
// The command is read by package shell: every simple command that may run
// is looked at, including those behind wrappers (sudo, env, timeout, nice,
// setsid, flock, su -c, runuser, chroot, nsenter, xargs, find -exec, …),
// in sh/bash -c scripts, command substitutions, functions and chains, and
// scripts fed to a shell or to augtool on standard input. Words are
// expanded where their value is known (quotes removed, braces expanded,
// loop variables over literal lists and variables assigned earlier
// substituted); a path is otherwise reported as written ("$f", "~/.ssh",
// relative paths as given). /dev/null and the standard streams are left
// out. Targets never fails; a command the bash parser rejects (a syntax
// error, a control character) yields nothing.
func Targets(command string) []string {
	var ts targetSet
	ts.analysis(analyze(command), 0)
	return ts.list
}

type targetSet struct {
	list []string
	seen map[string]bool
}

func (ts *targetSet) add(t string) {
	if t == "" || t == "-" || isStdStream(t) {
		return
	}
	if ts.seen == nil {
		ts.seen = map[string]bool{}
	}
	if !ts.seen[t] {
		ts.seen[t] = true
		ts.list = append(ts.list, t)
	}
}

// addWord adds a word's value, except the placeholders for what find -exec
// and xargs substitute at run time.
func (ts *targetSet) addWord(w shell.Word) {
	if w.Kind == shell.Unknown && (w.Value == "{}" || strings.Contains(w.Value, "{input}")) {
		return
	}
	ts.add(w.Value)
}

func (ts *targetSet) addWords(ws []shell.Word) {
	for _, w := range ws {
		ts.addWord(w)
	}
}

func isStdStream(t string) bool {
	switch t {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/stdin":
		return true
	}
	return false
}

// analysis adds the targets of every command of an analysis, then the
// files it writes that no command's redirection accounts for (a
// redirection with no command, script's typescript, time -o).
func (ts *targetSet) analysis(an *shell.Analysis, depth int) {
	accounted := map[string]bool{}
	for _, c := range an.Commands {
		ts.command(c, depth)
		for _, r := range c.Redirs {
			if r.Write {
				accounted[shell.Abs(r.Target, c.Dir).Value] = true
			}
		}
	}
	for _, w := range an.Writes {
		if !accounted[w.Value] {
			ts.addWord(w)
		}
	}
}

// command adds the targets of one simple command: the files its
// redirections write, then what the program changes.
func (ts *targetSet) command(c *shell.Command, depth int) {
	for _, r := range c.Redirs {
		if r.Write {
			ts.addWord(r.Target)
		}
	}
	if c.Function {
		return
	}
	name, args := program(c)
	fed := c.StdinText != "" && (c.Stdin == shell.StdinHeredoc || c.Stdin == shell.StdinHereString || c.Stdin == shell.StdinPipe)
	switch {
	case shell.IsShell(name):
		if fed && depth < maxDepth && readsScript(args) {
			ts.analysis(analyze(c.StdinText), depth+1)
		}
		return
	case name == "augtool":
		_, ops := operands(args, optsOf("augtool"))
		if len(ops) == 0 && fed {
			ts.augeasScript(c.StdinText)
			return
		}
	}
	if f := programs[name]; f != nil {
		f(ts, args)
	}
}

// programs maps a program name to the function that adds its targets.
var programs = map[string]func(ts *targetSet, args []shell.Word){
	"sed":       sedTargets,
	"tee":       operandTargets("tee"),
	"cp":        copyTargets("cp"),
	"mv":        copyTargets("mv"),
	"ln":        copyTargets("ln"),
	"install":   installTargets,
	"chmod":     modeTargets("chmod"),
	"chown":     modeTargets("chown"),
	"chgrp":     modeTargets("chgrp"),
	"touch":     operandTargets("touch"),
	"mkdir":     operandTargets("mkdir"),
	"rm":        operandTargets("rm"),
	"rmdir":     operandTargets("rmdir"),
	"truncate":  operandTargets("truncate"),
	"systemctl": systemctlTargets,
	"service": func(ts *targetSet, a []shell.Word) {
		if _, ops := operands(a, shell.Options{}); len(ops) > 0 {
			ts.addWord(ops[0])
		}
	},
	"apt":              aptTargets,
	"apt-get":          aptTargets,
	"aptitude":         aptTargets,
	"dnf":              dnfTargets,
	"yum":              dnfTargets,
	"microdnf":         dnfTargets,
	"zypper":           dnfTargets,
	"dpkg":             dpkgTargets,
	"rpm":              rpmTargets,
	"sysctl":           sysctlTargets,
	"augtool":          augtoolTargets,
	"dpkg-reconfigure": operandTargets("dpkg-reconfigure"),
}

// operandTargets adds every operand of the program, its options read
// from package shell's table (shell.ProgramOptions).
func operandTargets(program string) func(*targetSet, []shell.Word) {
	o := optsOf(program)
	return func(ts *targetSet, a []shell.Word) {
		_, ops := operands(a, o)
		ts.addWords(ops)
	}
}

// sedTargets adds the files of sed -i; sed without -i writes nothing.
func sedTargets(ts *targetSet, args []shell.Word) {
	inPlace, script := false, false
	var ops []shell.Word
	for i := 0; i < len(args); i++ {
		a := args[i].Value
		switch {
		case a == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--"):
			name, _, hasVal := strings.Cut(a, "=")
			full, _ := optsOf("sed").Resolve(name)
			switch full {
			case "--in-place":
				inPlace = true
			case "--expression", "--file":
				script = true
				if !hasVal {
					i++
				}
			case "--line-length":
				if !hasVal {
					i++
				}
			}
		case len(a) > 1 && a[0] == '-':
		cluster:
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 'i':
					inPlace = true
					break cluster // the rest is the backup suffix
				case 'e', 'f':
					script = true
					if j == len(a)-1 {
						i++
					}
					break cluster
				case 'l':
					if j == len(a)-1 {
						i++
					}
					break cluster
				}
			}
		default:
			ops = append(ops, args[i])
		}
	}
	if !inPlace {
		return
	}
	if !script && len(ops) > 0 {
		ops = ops[1:]
	}
	ts.addWords(ops)
}

func copyTargets(program string) func(*targetSet, []shell.Word) {
	o := optsOf(program)
	return func(ts *targetSet, a []shell.Word) {
		opts, ops := operands(a, o)
		copyDest(ts, opts, ops)
	}
}

func installTargets(ts *targetSet, a []shell.Word) {
	opts, ops := operands(a, optsOf("install"))
	if _, dir := shell.Has(opts, "-d", "--directory"); dir {
		ts.addWords(ops)
		return
	}
	copyDest(ts, opts, ops)
}

func copyDest(ts *targetSet, opts []shell.Option, ops []shell.Word) {
	if dir, ok := shell.Has(opts, "-t", "--target-directory"); ok {
		ts.addWord(dir)
		return
	}
	if len(ops) >= 2 {
		ts.addWord(ops[len(ops)-1])
	}
}

// modeTargets adds the files of chmod, chown and chgrp: every operand after
// the mode or owner (which --reference replaces). A symbolic mode such as
// -w looks like an option and is read as the mode.
func modeTargets(program string) func(*targetSet, []shell.Word) {
	o := optsOf(program)
	return func(ts *targetSet, args []shell.Word) { modeOperands(ts, o, args) }
}

func modeOperands(ts *targetSet, o shell.Options, args []shell.Word) {
	var ops []shell.Word
	ref := false
	for i := 0; i < len(args); i++ {
		a := args[i].Value
		switch {
		case a == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--"):
			name, _, hasVal := strings.Cut(a, "=")
			full, _ := o.Resolve(name)
			switch full {
			case "--reference":
				ref = true
				if !hasVal {
					i++
				}
			case "--from":
				if !hasVal {
					i++
				}
			}
		case len(a) > 1 && a[0] == '-' && strings.Trim(a[1:], o.Flags) == "":
		default:
			ops = append(ops, args[i]) // includes symbolic modes such as -w
		}
	}
	if !ref && len(ops) > 0 {
		ops = ops[1:]
	}
	ts.addWords(ops)
}

// systemctl verbs whose operands are not units.
var systemctlNoUnits = map[string]bool{
	"daemon-reload": true, "daemon-reexec": true, "set-environment": true, "unset-environment": true,
	"import-environment": true, "show-environment": true, "reboot": true, "poweroff": true, "halt": true,
	"default": true, "rescue": true, "emergency": true, "suspend": true, "hibernate": true,
	"get-default": true, "is-system-running": true,
}

func systemctlTargets(ts *targetSet, args []shell.Word) {
	_, ops := operands(args, optsOf("systemctl"))
	if len(ops) == 0 {
		return
	}
	verb := ops[0].Value
	switch {
	case systemctlNoUnits[verb] || strings.HasPrefix(verb, "list-"):
	case verb == "set-property":
		if len(ops) > 1 {
			ts.addWord(ops[1])
		}
	default:
		ts.addWords(ops[1:])
	}
}

var pkgVerbs = map[string]bool{
	"install": true, "reinstall": true, "remove": true, "purge": true, "erase": true, "autoremove": true,
	"upgrade": true, "update": true, "downgrade": true, "groupinstall": true, "localinstall": true,
	"full-upgrade": true, "dist-upgrade": true, "build-dep": true, "in": true, "rm": true, "up": true,
}

func aptTargets(ts *targetSet, args []shell.Word) {
	_, ops := operands(args, optsOf("apt"))
	pkgOperands(ts, ops, true)
}

func dnfTargets(ts *targetSet, args []shell.Word) {
	_, ops := operands(args, optsOf("dnf"))
	pkgOperands(ts, ops, false)
}

// pkgOperands adds the packages of an install/remove verb. apt's update
// refreshes indexes and touches no package.
func pkgOperands(ts *targetSet, ops []shell.Word, apt bool) {
	if len(ops) == 0 || !pkgVerbs[ops[0].Value] || apt && ops[0].Value == "update" {
		return
	}
	ts.addWords(ops[1:])
}

func dpkgTargets(ts *targetSet, args []shell.Word) {
	opts, ops := operands(args, optsOf("dpkg"))
	for _, o := range opts {
		switch o.Name {
		case "-i", "--install", "-r", "--remove", "-P", "--purge", "--unpack":
			ts.addWord(o.Value)
			ts.addWords(ops)
			return
		case "--configure":
			if v := o.Value.Value; v != "" && v != "-a" && v != "--pending" {
				ts.addWord(o.Value)
				ts.addWords(ops)
			}
			return
		}
	}
}

func rpmTargets(ts *targetSet, args []shell.Word) {
	for _, w := range args {
		a := w.Value
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "iUFe") && !strings.ContainsAny(a, "q") {
			_, ops := operands(args, optsOf("rpm"))
			ts.addWords(ops)
			return
		}
		switch a {
		case "--install", "--upgrade", "--freshen", "--erase":
			_, ops := operands(args, optsOf("rpm"))
			ts.addWords(ops)
			return
		}
	}
}

// sysctlTargets adds the keys set by sysctl -w key=value (or sysctl
// key=value).
func sysctlTargets(ts *targetSet, args []shell.Word) {
	opts, ops := operands(args, optsOf("sysctl"))
	if _, ok := shell.Has(opts, "-p", "--load", "-f", "--system"); ok {
		return
	}
	for _, op := range ops {
		if k, _, ok := strings.Cut(op.Value, "="); ok {
			ts.add(strings.TrimSpace(k))
		}
	}
}

// augtool commands whose first argument is the path they change.
var augeasWriters = map[string]bool{
	"set": true, "setm": true, "rm": true, "remove": true, "clear": true, "clearm": true, "ins": true,
	"insert": true, "mv": true, "move": true, "rename": true, "touch": true, "cp": true, "copy": true,
}

func augtoolTargets(ts *targetSet, args []shell.Word) {
	_, ops := operands(args, optsOf("augtool"))
	augeasCommand(ts, wordValues(ops))
}

func augeasCommand(ts *targetSet, f []string) {
	if len(f) < 2 || !augeasWriters[f[0]] {
		return
	}
	switch f[0] {
	case "ins", "insert":
		if len(f) >= 4 {
			ts.add(f[3])
		}
	case "mv", "move", "cp", "copy":
		if len(f) >= 3 {
			ts.add(f[2])
		}
	default:
		ts.add(f[1])
	}
}

// augeasScript adds the targets of an augtool script, one command a line
// (augtool splits its lines into words much as a shell does).
func (ts *targetSet) augeasScript(body string) {
	for _, line := range strings.Split(body, "\n") {
		for _, c := range analyze(line).Commands {
			augeasCommand(ts, wordValues(c.Args))
		}
	}
}

// optsOf returns program's options from package shell's one table of
// them (shell.ProgramOptions); a program the table lacks has none.
func optsOf(program string) shell.Options {
	o, _ := shell.ProgramOptions(program)
	return o
}
