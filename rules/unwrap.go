package rules

import (
	"path"
	"regexp"
	"strings"
)

// This file turns lexed commands into the simple commands the ban list
// checks: wrappers (sudo, env, nohup, timeout, nice, xargs, ...) are peeled
// off one layer at a time, every layer is checked, and scripts handed to a
// shell (bash -c, eval, su -c, ssh host cmd, a here-document or echo piped
// into sh, an interpreter's -c code) are parsed in turn.

// Analysis limits. A command beyond them is refused, not guessed at.
const (
	// MaxCommandLen is the longest command Match analyses; longer ones are
	// banned.
	MaxCommandLen = 256 << 10
	maxNesting    = 8
	// analysisBudget bounds the bytes lexed over all nesting levels.
	analysisBudget = 32 * MaxCommandLen
)

// simple is one simple command in canonical form: quotes removed, the
// program name reduced to its base name, wrappers peeled.
type simple struct {
	words  []string
	redirs []redirect
	stdin  []string // text fed on standard input, where known
	cwd    string   // working directory, when a cd made it known
	text   string   // words and redirections joined by single spaces
}

func (s *simple) name() string { return s.words[0] }
func (s *simple) args() []string {
	return s.words[1:]
}

type analyzer struct {
	budget   int
	exceeded bool
	// malformed is set when shell text has an unterminated quote or
	// substitution: the shell would reject it, and a lenient reading could
	// differ from the shell's.
	malformed bool
	out       []*simple
	scripts   []string // every script text parsed, the whole command first
}

// analyze finds every simple command src may run.
func analyze(src string) *analyzer {
	a := &analyzer{budget: analysisBudget}
	a.script(src, 0, nil, "", true)
	return a
}

func (a *analyzer) spend(n int) bool {
	a.budget -= n
	if a.budget < 0 {
		a.exceeded = true
	}
	return !a.exceeded
}

func (a *analyzer) script(src string, depth int, env map[string]string, cwd string, strict bool) {
	if a.exceeded {
		return
	}
	if depth > maxNesting {
		a.exceeded = true
		return
	}
	a.scripts = append(a.scripts, src)
	l := newLexer(a, src, env)
	l.run()
	if strict && l.unterminated {
		a.malformed = true
	}
	for _, c := range l.cmds {
		cwd = a.command(c, depth, l.env, cwd)
	}
	for _, n := range l.nested {
		a.script(n.src, depth+1, n.env, cwd, strict && !n.lenient)
	}
}

// command peels the wrappers of one lexed command, emitting each layer, and
// returns the working directory after it.
func (a *analyzer) command(c *command, depth int, env map[string]string, cwd string) string {
	if depth > maxNesting {
		a.exceeded = true
		return cwd
	}
	stdin := append([]string(nil), c.stdin...)
	if t, ok := upstreamText(c.prev); ok {
		stdin = append(stdin, t)
	}
	words := c.words
	for layer := 0; layer < 32 && !a.exceeded; layer++ {
		words = stripPrefix(words)
		if len(words) == 0 {
			break
		}
		words = canonical(words)
		a.emit(&simple{words: words, redirs: c.redirs, stdin: stdin, cwd: cwd})
		name, args := words[0], words[1:]
		if name == "cd" || name == "pushd" {
			return chdir(cwd, args)
		}
		next, scripts, subs := unwrap(name, args, stdin, c.prev)
		// Interpreter code yields string literals, not shell text.
		strict := !isInterpreter(name) && !awks[name]
		for _, s := range scripts {
			a.script(s, depth+1, env, cwd, strict)
		}
		for _, w := range subs {
			a.command(&command{words: w}, depth+1, env, cwd)
		}
		if next == nil {
			break
		}
		words = next
	}
	return cwd
}

func (a *analyzer) emit(s *simple) {
	var b strings.Builder
	b.WriteString(strings.Join(s.words, " "))
	for _, r := range s.redirs {
		b.WriteString(" " + r.op + " " + r.target)
	}
	s.text = b.String()
	if a.spend(len(s.text) + 64) {
		a.out = append(a.out, s)
	}
}

var keywords = set("! { } then do else elif if while until coproc time")

// stripPrefix drops reserved words and variable assignments before the
// command name.
func stripPrefix(w []string) []string {
	for len(w) > 0 {
		switch x := w[0]; {
		case keywords[x]:
			w = w[1:]
		case x == "function":
			w = w[min(2, len(w)):]
		default:
			if _, _, ok := assignment(x); !ok {
				return w
			}
			w = w[1:]
		}
	}
	return w
}

// canonical returns a copy of words with the program reduced to its base
// name; /etc/init.d/NAME ACTION becomes service NAME ACTION.
func canonical(words []string) []string {
	name := words[0]
	for _, dir := range []string{"/etc/init.d/", "/etc/rc.d/init.d/"} {
		if base, ok := strings.CutPrefix(path.Clean(name), dir); ok && base != "" {
			return append([]string{"service", base}, words[1:]...)
		}
	}
	if i := strings.LastIndexByte(name, '/'); i >= 0 && i < len(name)-1 {
		name = name[i+1:]
	}
	out := make([]string, len(words))
	out[0] = name
	copy(out[1:], words[1:])
	return out
}

func chdir(cwd string, args []string) string {
	args = skipOpts(args, nil)
	dir := ""
	if len(args) > 0 {
		dir = args[0]
	}
	switch {
	case dir == "" || dir == "~":
		return "/root"
	case dir == "-" || strings.Contains(dir, "$"):
		return ""
	case strings.HasPrefix(dir, "~/"):
		return path.Clean("/root/" + dir[2:])
	case strings.HasPrefix(dir, "/"):
		return path.Clean(dir)
	case cwd != "":
		return path.Join(cwd, dir)
	}
	return ""
}

func set(list string) map[string]bool {
	m := map[string]bool{}
	for _, f := range strings.Fields(list) {
		m[f] = true
	}
	return m
}

// skipOpts returns args after the leading options. Options in withArg take
// the next argument (unless given as --opt=value or attached, -uUSER); "--"
// ends the options and is dropped.
func skipOpts(args []string, withArg map[string]bool) []string {
	for len(args) > 0 {
		a := args[0]
		if a == "--" {
			return args[1:]
		}
		if len(a) < 2 || a[0] != '-' {
			return args
		}
		args = args[1:]
		if strings.HasPrefix(a, "--") {
			if !strings.Contains(a, "=") && withArg[a] && len(args) > 0 {
				args = args[1:]
			}
			continue
		}
		for i := 1; i < len(a); i++ {
			if withArg["-"+a[i:i+1]] {
				if i == len(a)-1 && len(args) > 0 {
					args = args[1:]
				}
				break
			}
		}
	}
	return args
}

var (
	sudoArgs    = set("-u -g -h -p -C -D -r -t -U -T -R --user --group --host --prompt --close-from --chdir --role --type --other-user --command-timeout --chroot")
	envArgs     = set("-u -C -S --unset --chdir --split-string")
	timeoutArgs = set("-k -s --kill-after --signal")
	niceArgs    = set("-n --adjustment")
	ioniceArgs  = set("-c -n -p -P -u --class --classdata --pid --pgid --uid")
	stdbufArgs  = set("-i -o -e --input --output --error")
	execArgs    = set("-a")
	xargsArgs   = set("-a -d -E -I -L -n -P -s --arg-file --delimiter --eof --replace --max-lines --max-args --max-procs --max-chars --process-slot-var")
	flockArgs   = set("-w -E --timeout --conflict-exit-code")
	watchArgs   = set("-n -d -q --interval --differences --equexit")
	chrootArgs  = set("--userspec --groups")
	setsidArgs  = set("")
	straceArgs  = set("-e -o -p -s -u -E -a -b -I -O -P -S -X")
	sshArgs     = set("-B -b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w")
	sysdRunArgs = set("-p -u -M -H -E --property --unit --description --slice --uid --gid --nice --working-directory --setenv --machine --host --on-active --on-boot --on-calendar --on-startup --on-unit-active --on-unit-inactive --timer-property --path-property --socket-property --service-type")
	taskArgs    = set("")
	shells      = set("sh bash dash zsh ksh ash mksh rbash lksh pdksh yash posh")
	awks        = set("awk gawk mawk nawk")
	awkArgs     = set("-F -v -f --field-separator --assign --file")
	chrtArgs    = set("-T -P -D --sched-runtime --sched-period --sched-deadline")
)

// unwrap peels one wrapper. It returns the wrapped command's words, or the
// scripts and word lists the command would run, or nothing when name is an
// ordinary program.
func unwrap(name string, args, stdin []string, prev *command) (next []string, scripts []string, subs [][]string) {
	switch name {
	case "sudo", "doas", "sudoedit":
		return nonEmpty(skipOpts(args, sudoArgs)), nil, nil
	case "env":
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case a == "-S" || a == "--split-string":
				if i+1 < len(args) {
					return nil, []string{strings.Join(args[i+1:], " ")}, nil
				}
			case strings.HasPrefix(a, "-S") || strings.HasPrefix(a, "--split-string="):
				s := strings.TrimPrefix(strings.TrimPrefix(a, "--split-string="), "-S")
				return nil, []string{strings.Join(append([]string{s}, args[i+1:]...), " ")}, nil
			}
		}
		return nonEmpty(skipOpts(args, envArgs)), nil, nil
	case "nohup", "builtin", "unbuffer", "catchsegv", "busybox", "time", "nocache", "eatmydata", "fakeroot":
		return nonEmpty(skipOpts(args, nil)), nil, nil
	case "command":
		return nonEmpty(skipOpts(args, nil)), nil, nil
	case "exec":
		return nonEmpty(skipOpts(args, execArgs)), nil, nil
	case "setsid":
		return nonEmpty(skipOpts(args, setsidArgs)), nil, nil
	case "nice":
		return nonEmpty(skipOpts(args, niceArgs)), nil, nil
	case "ionice":
		return nonEmpty(skipOpts(args, ioniceArgs)), nil, nil
	case "stdbuf":
		return nonEmpty(skipOpts(args, stdbufArgs)), nil, nil
	case "strace", "ltrace":
		return nonEmpty(skipOpts(args, straceArgs)), nil, nil
	case "systemd-run":
		return nonEmpty(skipOpts(args, sysdRunArgs)), nil, nil
	case "timeout":
		return nonEmpty(dropFirst(skipOpts(args, timeoutArgs))), nil, nil
	case "chroot":
		return nonEmpty(dropFirst(skipOpts(args, chrootArgs))), nil, nil
	case "taskset":
		return nonEmpty(dropFirst(skipOpts(args, taskArgs))), nil, nil
	case "chrt":
		return nonEmpty(dropFirst(skipOpts(args, chrtArgs))), nil, nil
	case "xargs":
		rest := skipOpts(args, xargsArgs)
		if len(rest) == 0 {
			rest = []string{"echo"}
		}
		return append(append([]string(nil), rest...), xargsInput(prev)...), nil, nil
	case "flock":
		for i, a := range args {
			if (a == "-c" || a == "--command") && i+1 < len(args) {
				return nil, []string{args[i+1]}, nil
			}
		}
		return nonEmpty(dropFirst(skipOpts(args, flockArgs))), nil, nil
	case "watch":
		if rest := skipOpts(args, watchArgs); len(rest) > 0 {
			return nil, []string{strings.Join(rest, " ")}, nil
		}
	case "su", "runuser", "sg":
		for i, a := range args {
			switch {
			case (a == "-c" || a == "--command" || a == "--session-command") && i+1 < len(args):
				return nil, []string{args[i+1]}, nil
			case strings.HasPrefix(a, "--command="):
				return nil, []string{strings.TrimPrefix(a, "--command=")}, nil
			case a == "--":
				if name == "runuser" {
					return nonEmpty(args[i+1:]), nil, nil
				}
			}
		}
		if name == "sg" && len(args) > 1 {
			return nil, []string{strings.Join(args[1:], " ")}, nil
		}
	case "ssh":
		if rest := skipOpts(args, sshArgs); len(rest) > 1 {
			return nil, []string{strings.Join(rest[1:], " ")}, nil
		}
	case "eval":
		return nil, []string{strings.Join(args, " ")}, nil
	case "awk", "gawk", "mawk", "nawk":
		if rest := skipOpts(args, awkArgs); len(rest) > 0 {
			return nil, stringLiterals(rest[0]), nil
		}
	case "find":
		for i, a := range args {
			if a == "-exec" || a == "-execdir" || a == "-ok" || a == "-okdir" {
				j := i + 1
				for j < len(args) && args[j] != ";" && args[j] != "+" {
					j++
				}
				if j > i+1 {
					subs = append(subs, args[i+1:j])
				}
			}
		}
		return nil, nil, subs
	}
	if shells[name] {
		script, ok, readsStdin := shellScript(args)
		if ok {
			return nil, []string{script}, nil
		}
		if readsStdin {
			return nil, stdin, nil
		}
		return nil, nil, nil
	}
	if code := interpreterCode(name, args); len(code) > 0 || isInterpreter(name) {
		if len(code) == 0 && !hasOperand(args) {
			code = stdin
		}
		for _, c := range code {
			scripts = append(scripts, stringLiterals(c)...)
		}
		return nil, scripts, nil
	}
	return nil, nil, nil
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

func nonEmpty(w []string) []string {
	if len(w) == 0 {
		return nil
	}
	return w
}

func dropFirst(w []string) []string {
	if len(w) == 0 {
		return nil
	}
	return w[1:]
}

func hasOperand(args []string) bool {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return true
		}
	}
	return false
}

// shellScript finds the script of a shell invocation: the argument of -c,
// or standard input when there is no script file.
func shellScript(args []string) (script string, ok, readsStdin bool) {
	cflag := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--" || a == "-":
			if cflag && i+1 < len(args) {
				return args[i+1], true, false
			}
			return "", false, !cflag && i+1 >= len(args)
		case a == "--rcfile" || a == "--init-file":
			i++
		case strings.HasPrefix(a, "--") && isLetters(strings.ReplaceAll(a[2:], "-", "")):
		case len(a) > 1 && (a[0] == '-' || a[0] == '+') && isLetters(a[1:]):
			if a[0] == '-' && strings.ContainsRune(a[1:], 'c') {
				cflag = true
			}
			if last := a[len(a)-1]; last == 'o' || last == 'O' {
				i++
			}
		default:
			if cflag {
				return a, true, false
			}
			return "", false, false
		}
	}
	return "", false, !cflag
}

var interpreterFlags = map[string]string{
	"python": "c", "perl": "eE", "ruby": "e", "node": "ep", "nodejs": "ep", "php": "r", "lua": "e", "awk": "", "tclsh": "",
}

func interpreterKey(name string) string {
	for k := range interpreterFlags {
		if strings.HasPrefix(name, k) {
			rest := strings.TrimLeft(name[len(k):], "0123456789.")
			if rest == "" {
				return k
			}
		}
	}
	return ""
}

func isInterpreter(name string) bool {
	k := interpreterKey(name)
	return k != "" && interpreterFlags[k] != ""
}

// interpreterCode returns the inline code given to an interpreter with -c,
// -e and the like.
func interpreterCode(name string, args []string) []string {
	flags := interpreterFlags[interpreterKey(name)]
	if flags == "" {
		return nil
	}
	var code []string
	for i, a := range args {
		if a == "--eval" || a == "--print" {
			if i+1 < len(args) {
				code = append(code, args[i+1])
			}
			continue
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(flags, rune(a[len(a)-1])) && i+1 < len(args) {
			code = append(code, args[i+1])
		}
	}
	return code
}

var literal = regexp.MustCompile("'((?:[^'\\\\]|\\\\.)*)'|\"((?:[^\"\\\\]|\\\\.)*)\"|`([^`]*)`")
var listSep = regexp.MustCompile(`^\s*,\s*$`)

// stringLiterals returns the quoted strings in interpreter code, and the
// strings of each list of literals joined by spaces (so that
// ['systemctl', 'stop', 'ssh'] is seen as one command).
func stringLiterals(code string) []string {
	var out, group []string
	last := -1
	for _, m := range literal.FindAllStringSubmatchIndex(code, -1) {
		s := ""
		for g := 1; g <= 3; g++ {
			if m[2*g] >= 0 {
				s = code[m[2*g]:m[2*g+1]]
			}
		}
		out = append(out, s)
		if last >= 0 && listSep.MatchString(code[last:m[0]]) {
			group = append(group, s)
		} else {
			if len(group) > 1 {
				out = append(out, strings.Join(group, " "))
			}
			group = []string{s}
		}
		last = m[1]
	}
	if len(group) > 1 {
		out = append(out, strings.Join(group, " "))
	}
	return out
}

// upstreamText guesses what a command writes to a pipe: the arguments of
// echo and printf, the here-document of cat.
func upstreamText(p *command) (string, bool) {
	if p == nil {
		return "", false
	}
	w := p.words
	for range 8 {
		if w = stripPrefix(w); len(w) == 0 {
			return "", false
		}
		w = canonical(w)
		next, _, _ := unwrap(w[0], w[1:], nil, nil)
		if next == nil {
			break
		}
		w = next
	}
	switch w[0] {
	case "echo":
		args := w[1:]
		for len(args) > 0 && strings.Trim(args[0], "neE") == "-" {
			args = args[1:]
		}
		return unescape(strings.Join(args, " ")), true
	case "printf":
		return unescape(strings.Join(skipOpts(w[1:], set("-v")), " ")), true
	case "cat", "tee":
		if !hasOperand(w[1:]) && len(p.stdin) > 0 {
			return strings.Join(p.stdin, ""), true
		}
	}
	return "", false
}

// unescape decodes the backslash escapes echo -e and printf understand.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	l := &lexer{src: s}
	l.readANSIC(0)
	return l.buf.String()
}

// xargsInput is what xargs appends to its command: echo's words, or the
// upstream command itself as one argument (so "pgrep sshd | xargs kill"
// shows kill an argument mentioning sshd).
func xargsInput(prev *command) []string {
	if prev == nil {
		return nil
	}
	if t, ok := upstreamText(prev); ok {
		return strings.Fields(t)
	}
	return []string{strings.Join(prev.words, " ")}
}
