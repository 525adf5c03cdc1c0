package distill

import "strings"

// maxDepth bounds recursion into sh -c scripts and here-documents fed to a
// shell.
const maxDepth = 4

// Targets returns what the command touches, in order of first appearance
// and without repeats: files written by redirections (>, >>, &>, >|),
// tee, sed -i, cp/mv/install/ln destinations, chmod/chown/chgrp, touch,
// mkdir, rm, truncate; systemd units of systemctl and service; packages of
// apt, apt-get, aptitude, dpkg, dnf, yum, microdnf, rpm and zypper; sysctl
// keys written with sysctl -w; augeas paths changed by augtool. It sees
// through sudo, env, timeout, nohup and similar wrappers, assignments,
// chains (&&, ||, ;, |, newlines), quoting, sh/bash -c scripts and
// here-documents fed to a shell or to augtool. Paths are reported as written
// (variables unexpanded); /dev/null and the standard streams are left out.
// Targets never fails; for input it cannot make sense of it returns what it
// found, possibly nothing.
func Targets(command string) []string {
	var ts targetSet
	ts.command(command, 0)
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

func isStdStream(t string) bool {
	switch t {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/stdin":
		return true
	}
	return false
}

func (ts *targetSet) command(line string, depth int) {
	for _, c := range commands(lex(line)) {
		ts.simple(c, depth)
	}
}

func (ts *targetSet) simple(c simpleCmd, depth int) {
	name, args := program(c.words)
	for _, r := range c.redirs {
		op := strings.TrimLeft(r.op, "0123456789")
		switch op {
		case ">", ">>", ">|", "&>", "&>>", "<>":
			ts.add(r.target)
		case "<<", "<<-":
			if depth < maxDepth {
				switch name {
				case "sh", "bash", "dash", "zsh", "ksh":
					if _, ops := shellArgs(args); len(ops) == 0 {
						ts.command(r.body, depth+1)
					}
				case "augtool":
					ts.augeasScript(r.body)
				}
			}
		}
	}
	if name == "" {
		return
	}
	if f := programs[name]; f != nil {
		f(ts, args, depth)
	}
}

// programs maps a program name to the function that adds its targets.
var programs map[string]func(ts *targetSet, args []string, depth int)

func init() {
	programs = map[string]func(*targetSet, []string, int){
		"sed": sedTargets,
		"tee": func(ts *targetSet, a []string, _ int) { ts.operands(a, "", []string{"output-error"}) },
		"cp":  copyTargets("tS", []string{"target-directory", "suffix"}),
		"mv":  copyTargets("tS", []string{"target-directory", "suffix"}),
		"ln":  copyTargets("tS", []string{"target-directory", "suffix"}),
		"install": func(ts *targetSet, a []string, d int) {
			opts, ops := operands(a, "mogtS", []string{"mode", "owner", "group", "target-directory", "suffix", "strip-program"})
			if _, dir := hasOpt(opts, "-d", "--directory"); dir {
				ts.addAll(ops)
				return
			}
			copyDest(ts, opts, ops)
		},
		"chmod":     modeTargets,
		"chown":     modeTargets,
		"chgrp":     modeTargets,
		"touch":     func(ts *targetSet, a []string, _ int) { ts.operands(a, "dtr", []string{"date", "reference"}) },
		"mkdir":     func(ts *targetSet, a []string, _ int) { ts.operands(a, "m", []string{"mode"}) },
		"rm":        func(ts *targetSet, a []string, _ int) { ts.operands(a, "", nil) },
		"rmdir":     func(ts *targetSet, a []string, _ int) { ts.operands(a, "", nil) },
		"truncate":  func(ts *targetSet, a []string, _ int) { ts.operands(a, "sr", []string{"size", "reference"}) },
		"systemctl": systemctlTargets,
		"service": func(ts *targetSet, a []string, _ int) {
			if _, ops := operands(a, "", nil); len(ops) > 0 {
				ts.add(ops[0])
			}
		},
		"apt":      aptTargets,
		"apt-get":  aptTargets,
		"aptitude": aptTargets,
		"dnf":      dnfTargets,
		"yum":      dnfTargets,
		"microdnf": dnfTargets,
		"zypper":   dnfTargets,
		"dpkg":     dpkgTargets,
		"rpm":      rpmTargets,
		"sysctl":   sysctlTargets,
		"augtool":  augtoolTargets,
		"sh":       shellTargets,
		"bash":     shellTargets,
		"dash":     shellTargets,
		"zsh":      shellTargets,
		"ksh":      shellTargets,
		"dpkg-reconfigure": func(ts *targetSet, a []string, _ int) {
			_, ops := operands(a, "fp", []string{"frontend", "priority"})
			ts.addAll(ops)
		},
	}
}

func (ts *targetSet) addAll(list []string) {
	for _, t := range list {
		ts.add(t)
	}
}

func (ts *targetSet) operands(args []string, argShort string, argLong []string) {
	_, ops := operands(args, argShort, argLong)
	ts.addAll(ops)
}

// sedTargets adds the files of sed -i; sed without -i writes nothing.
func sedTargets(ts *targetSet, args []string, _ int) {
	inPlace, script := false, false
	var ops []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case a == "--in-place" || strings.HasPrefix(a, "--in-place="):
			inPlace = true
		case a == "--expression" || a == "--file":
			script = true
			i++
		case strings.HasPrefix(a, "--expression=") || strings.HasPrefix(a, "--file="):
			script = true
		case a == "--line-length":
			i++
		case strings.HasPrefix(a, "--"):
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
			ops = append(ops, a)
		}
	}
	if !inPlace {
		return
	}
	if !script && len(ops) > 0 {
		ops = ops[1:]
	}
	ts.addAll(ops)
}

func copyTargets(argShort string, argLong []string) func(*targetSet, []string, int) {
	return func(ts *targetSet, a []string, _ int) {
		opts, ops := operands(a, argShort, argLong)
		copyDest(ts, opts, ops)
	}
}

func copyDest(ts *targetSet, opts [][2]string, ops []string) {
	if dir, ok := hasOpt(opts, "-t", "--target-directory"); ok {
		ts.add(dir)
		return
	}
	if len(ops) >= 2 {
		ts.add(ops[len(ops)-1])
	}
}

// modeTargets adds the files of chmod, chown and chgrp: every operand after
// the mode or owner (which --reference replaces).
func modeTargets(ts *targetSet, args []string, _ int) {
	var ops []string
	ref := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--reference"):
			ref = true
			if !strings.Contains(a, "=") {
				i++
			}
		case a == "--from":
			i++
		case strings.HasPrefix(a, "--"):
		case len(a) > 1 && a[0] == '-' && strings.Trim(a[1:], "RcfvhHLP") == "":
		default:
			ops = append(ops, a) // includes symbolic modes such as -w
		}
	}
	if !ref && len(ops) > 0 {
		ops = ops[1:]
	}
	ts.addAll(ops)
}

// systemctl verbs whose operands are not units.
var systemctlNoUnits = map[string]bool{
	"daemon-reload": true, "daemon-reexec": true, "set-environment": true, "unset-environment": true,
	"import-environment": true, "show-environment": true, "reboot": true, "poweroff": true, "halt": true,
	"default": true, "rescue": true, "emergency": true, "suspend": true, "hibernate": true,
	"get-default": true, "is-system-running": true,
}

func systemctlTargets(ts *targetSet, args []string, _ int) {
	_, ops := operands(args, "tpHMsonS", []string{"type", "property", "host", "machine", "state", "signal",
		"output", "lines", "root", "kill-whom", "job-mode", "what", "kill-value", "timestamp", "message", "image", "when"})
	if len(ops) == 0 {
		return
	}
	verb := ops[0]
	switch {
	case systemctlNoUnits[verb] || strings.HasPrefix(verb, "list-"):
	case verb == "set-property":
		if len(ops) > 1 {
			ts.add(ops[1])
		}
	default:
		ts.addAll(ops[1:])
	}
}

var pkgVerbs = map[string]bool{
	"install": true, "reinstall": true, "remove": true, "purge": true, "erase": true, "autoremove": true,
	"upgrade": true, "update": true, "downgrade": true, "groupinstall": true, "localinstall": true,
	"full-upgrade": true, "dist-upgrade": true, "build-dep": true, "in": true, "rm": true, "up": true,
}

func aptTargets(ts *targetSet, args []string, _ int) {
	_, ops := operands(args, "octaS", []string{"option", "config-file", "target-release", "default-release"})
	pkgOperands(ts, ops, true)
}

func dnfTargets(ts *targetSet, args []string, _ int) {
	_, ops := operands(args, "cxdeRi", []string{"setopt", "config", "releasever", "installroot", "enablerepo",
		"disablerepo", "repo", "repoid", "exclude", "downloaddir", "destdir", "from-repo", "forcearch", "color"})
	pkgOperands(ts, ops, false)
}

// pkgOperands adds the packages of an install/remove verb. apt's update
// refreshes indexes and touches no package.
func pkgOperands(ts *targetSet, ops []string, apt bool) {
	if len(ops) == 0 || !pkgVerbs[ops[0]] || apt && ops[0] == "update" {
		return
	}
	ts.addAll(ops[1:])
}

func dpkgTargets(ts *targetSet, args []string, _ int) {
	opts, ops := operands(args, "irPsLSc", []string{"root", "admindir", "instdir", "force", "configure"})
	for _, o := range opts {
		switch o[0] {
		case "-i", "--install", "-r", "--remove", "-P", "--purge", "--unpack":
			if o[1] != "" {
				ts.add(o[1])
			}
			ts.addAll(ops)
			return
		case "--configure":
			if o[1] != "" && o[1] != "-a" && o[1] != "--pending" {
				ts.add(o[1])
				ts.addAll(ops)
			}
			return
		}
	}
}

func rpmTargets(ts *targetSet, args []string, _ int) {
	for _, a := range args {
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "iUFe") && !strings.ContainsAny(a, "q") {
			_, ops := operands(args, "", []string{"root", "dbpath", "define", "macros"})
			ts.addAll(ops)
			return
		}
		switch a {
		case "--install", "--upgrade", "--freshen", "--erase":
			_, ops := operands(args, "", []string{"root", "dbpath", "define", "macros"})
			ts.addAll(ops)
			return
		}
	}
}

// sysctlTargets adds the keys set by sysctl -w key=value (or sysctl
// key=value).
func sysctlTargets(ts *targetSet, args []string, _ int) {
	opts, ops := operands(args, "pf", []string{"load", "pattern"})
	if _, ok := hasOpt(opts, "-p", "--load", "-f", "--system"); ok {
		return
	}
	for _, op := range ops {
		if k, _, ok := strings.Cut(op, "="); ok {
			ts.add(strings.TrimSpace(k))
		}
	}
}

// augtool commands whose first argument is the path they change.
var augeasWriters = map[string]bool{
	"set": true, "setm": true, "rm": true, "remove": true, "clear": true, "clearm": true, "ins": true,
	"insert": true, "mv": true, "move": true, "rename": true, "touch": true, "cp": true, "copy": true,
}

func augtoolTargets(ts *targetSet, args []string, _ int) {
	_, ops := operands(args, "rIltf", []string{"root", "include", "load-file", "transform", "file"})
	augeasCommand(ts, ops)
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

// augeasScript adds the targets of an augtool script, one command a line.
func (ts *targetSet) augeasScript(body string) {
	for _, line := range strings.Split(body, "\n") {
		for _, c := range commands(lex(line)) {
			augeasCommand(ts, values(c.words))
		}
	}
}

// shellArgs splits a shell's arguments into its -c script (if any) and its
// operands.
func shellArgs(args []string) (script string, ops []string) {
	hasC := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c" || (len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 'c')):
			hasC = true
		case a == "-o" || a == "+o":
			i++
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
		default:
			if hasC && script == "" {
				script = a
				continue
			}
			ops = append(ops, args[i:]...)
			return script, ops
		}
	}
	return script, ops
}

func shellTargets(ts *targetSet, args []string, depth int) {
	if depth >= maxDepth {
		return
	}
	if script, _ := shellArgs(args); script != "" {
		ts.command(script, depth+1)
	}
}
