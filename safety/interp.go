package safety

import (
	"regexp"
	"strings"

	"github.com/nightshift-dev/nightshift/shell"
)

// interpreters and the options that give them inline code.
var inlineOpts = map[string][]string{
	"python": {"-c"}, "python2": {"-c"}, "python3": {"-c"}, "pypy": {"-c"}, "pypy3": {"-c"},
	"perl": {"-e", "-E"}, "ruby": {"-e"}, "node": {"-e", "--eval", "-p", "--print"}, "nodejs": {"-e", "--eval", "-p", "--print"},
	"php": {"-r", "-R", "-B", "-E"}, "lua": {"-e"}, "luajit": {"-e"}, "tclsh": {}, "wish": {}, "expect": {"-c"},
	"Rscript": {"-e"}, "gdb": {"-ex", "--ex", "-eval-command", "--eval-command", "-x", "--command", "-batch"},
	"jshell": {}, "irb": {}, "guile": {"-c"}, "osascript": {"-e"}, "pwsh": {"-c", "-Command", "-command"}, "busybox": {},
}

// interpreterName normalises python3.11 to python3 and perl5.36 to perl.
func interpreterName(n string) string {
	if _, ok := inlineOpts[n]; ok {
		return n
	}
	trimmed := strings.TrimRight(n, "0123456789.")
	if _, ok := inlineOpts[trimmed]; ok && trimmed != n {
		return trimmed
	}
	if strings.HasPrefix(n, "python") {
		return "python3"
	}
	return ""
}

func inlineCode(c *shell.Command) (verdict, bool) {
	name := progName(c)
	args := c.Args[1:]
	if in := interpreterName(name); in != "" && in != "busybox" {
		for _, a := range args {
			v := a.Value
			for _, o := range inlineOpts[in] {
				if v == o || strings.HasPrefix(v, o) && len(o) == 2 && !strings.HasPrefix(v, "--") || strings.HasPrefix(v, o+"=") {
					return hit(entInterpreter, "write the change with shell commands (sed, printf, tee) instead of inline "+in+" code")
				}
			}
			if in == "perl" && strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "--") && strings.ContainsAny(v, "eE") {
				return hit(entInterpreter, "write the change with shell commands instead of inline perl code")
			}
		}
		ops := 0
		for _, a := range args {
			if !strings.HasPrefix(a.Value, "-") {
				ops++
			}
		}
		if in == "tclsh" || in == "wish" || in == "irb" || in == "jshell" {
			if ops == 0 && c.Stdin != shell.StdinInherited {
				return hit(entInterpreter, "do not feed programs to interpreters")
			}
		}
		// The program from standard input.
		if ops == 0 && c.Stdin != shell.StdinInherited || hasOperand(args, "-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0") {
			return hit(entInterpreter, "do not pipe programs into interpreters")
		}
	}
	for _, f := range scriptFiles(c) {
		if name == "nft" {
			break // nft -f - is checked on its input (firewall)
		}
		switch f.Value {
		case "-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0":
			return hit(entInterpreter, "do not feed programs to "+name+" from its input")
		}
	}
	switch name {
	case "awk", "gawk", "mawk", "nawk", "busybox-awk":
		if prog, ok := awkProgram(args); ok {
			if awkBad(placeholders(prog)) {
				return hit(entInterpreter, "use awk only to print and compute; no system(), pipes or device writes")
			}
		}
	case "sed", "gsed":
		for _, s := range sedScripts(args) {
			if sedBad(placeholders(s)) {
				return hit(entInterpreter, "use sed only to edit text: no e command, no e flag, no writes to devices")
			}
		}
	case "tar", "bsdtar":
		for _, a := range args {
			for _, o := range []string{"--checkpoint-action", "--to-command", "--use-compress-program", "--info-script", "--new-volume-script", "--rsh-command", "-I", "-F"} {
				if a.Value == o || strings.HasPrefix(a.Value, o+"=") || strings.HasPrefix(o, "--") && strings.HasPrefix(a.Value, "--") && len(a.Value) > 6 && strings.HasPrefix(o, strings.SplitN(a.Value, "=", 2)[0]) {
					return hit(entInterpreter, "use tar without options that run commands")
				}
			}
		}
	case "vi", "vim", "nvim", "ex", "view", "emacs", "less", "more", "man", "git", "zip", "tcpdump", "rsync", "apt", "apt-get", "strace", "ltrace", "ssh":
		for i, a := range args {
			v := a.Value
			switch {
			case (name == "vi" || name == "vim" || name == "nvim" || name == "ex" || name == "view") && (v == "-c" || strings.HasPrefix(v, "+") || v == "-S" || v == "--cmd"),
				name == "emacs" && (strings.HasPrefix(v, "--eval") || v == "-l" || strings.HasPrefix(v, "--load") || v == "-f"),
				name == "zip" && (v == "-TT" || strings.HasPrefix(v, "--unzip-command")),
				name == "tcpdump" && v == "-z",
				name == "rsync" && (v == "-e" || strings.HasPrefix(v, "--rsh") || strings.HasPrefix(v, "--rsync-path")),
				(name == "apt" || name == "apt-get") && (v == "-o" || strings.HasPrefix(v, "--option")) && i+1 < len(args) && strings.Contains(strings.ToLower(args[i+1].Value), "invoke"),
				(name == "apt" || name == "apt-get") && strings.HasPrefix(v, "-o") && strings.Contains(strings.ToLower(v), "invoke"),
				name == "ssh" && (v == "-o" && i+1 < len(args) && sshCommandOpt(args[i+1].Value) || strings.HasPrefix(v, "-o") && sshCommandOpt(v[2:])),
				name == "git" && v == "-c" && i+1 < len(args) && strings.Contains(strings.ToLower(args[i+1].Value), "command"),
				(name == "strace" || name == "ltrace") && v == "-o" && i+1 < len(args) && strings.HasPrefix(args[i+1].Value, "|"):
				return hit(entInterpreter, "do not pass commands to "+name+" options")
			}
		}
	}
	return verdict{}, false
}

func sshCommandOpt(s string) bool {
	s = strings.ToLower(s)
	return strings.HasPrefix(s, "proxycommand") || strings.HasPrefix(s, "localcommand") || strings.HasPrefix(s, "permitlocalcommand")
}

func hasOperand(args []shell.Word, names ...string) bool {
	for _, a := range args {
		for _, n := range names {
			if a.Value == n {
				return true
			}
		}
	}
	return false
}

// awkProgram returns the program text of an awk command (the first operand
// unless -f gives a file).
func awkProgram(args []shell.Word) (shell.Word, bool) {
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "-f" || v == "--file" || strings.HasPrefix(v, "--file="):
			return shell.Word{}, false
		case v == "-F" || v == "-v" || v == "--assign" || v == "--field-separator" || v == "-i" || v == "--include" || v == "-l" || v == "--load" || v == "-E" || v == "--exec":
			if v == "-E" || v == "--exec" {
				return shell.Word{}, false
			}
			i++
		case v == "--":
			if i+1 < len(args) {
				return args[i+1], true
			}
			return shell.Word{}, false
		case strings.HasPrefix(v, "-") && len(v) > 1 && args[i].Kind == shell.Literal:
		default:
			return args[i], true
		}
	}
	return shell.Word{}, false
}

var (
	awkStrings = regexp.MustCompile(`"(\\.|[^"\\])*"`)
	awkRegexps = regexp.MustCompile(`(^|[(,~!&|{;=\s])/(\\.|[^/\\\n])*/`)
	awkSystem  = regexp.MustCompile(`\bsystem\s*\(|\|\s*&|\|\s*getline|[^|]\|[^|]|^\|[^|]|>\s*"?/dev/|"/dev/(sd|vd|hd|nvme|xvd|mem|kmem|port|mapper|md|dm-|disk)|/proc/sysrq`)
)

// awkBad reports whether an awk program runs commands or writes devices.
var awkOutput = regexp.MustCompile(`>>?\s*"([^"]*)"`)

func awkBad(prog string) bool {
	for _, m := range awkOutput.FindAllStringSubmatch(prog, -1) {
		if _, bad := writeBan(shell.Lit(m[1]), "/", true); bad {
			return true
		}
	}
	if strings.Contains(prog, "/dev/") && regexp.MustCompile(`>\s*"/dev/`).MatchString(prog) && !regexp.MustCompile(`>\s*"/dev/(stdout|stderr|null)"`).MatchString(prog) {
		return true
	}
	p := awkStrings.ReplaceAllString(prog, `""`)
	p = awkRegexps.ReplaceAllString(p, "${1}//")
	return awkSystem.MatchString(p)
}

// sedScripts returns the scripts of a sed command: -e and --expression
// values, or the first operand when there are none.
func sedScripts(args []shell.Word) []shell.Word {
	var out []shell.Word
	fromFile := false
	first := -1
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "-e" || v == "--expression":
			if i+1 < len(args) {
				out = append(out, args[i+1])
				i++
			}
		case strings.HasPrefix(v, "--expression="):
			out = append(out, shell.Word{Kind: args[i].Kind, Value: strings.TrimPrefix(v, "--expression=")})
		case v == "-f" || v == "--file" || strings.HasPrefix(v, "--file="):
			fromFile = true
			if !strings.Contains(v, "=") {
				i++
			}
		case v == "-l" || v == "--line-length":
			i++
		case strings.HasPrefix(v, "-") && len(v) > 1 && !strings.HasPrefix(v, "--"):
			if j := strings.IndexAny(v, "ef"); j > 0 {
				rest := v[j+1:]
				if v[j] == 'f' {
					fromFile = true
					if rest == "" {
						i++
					}
				} else if rest != "" {
					out = append(out, shell.Word{Kind: args[i].Kind, Value: rest})
				} else if i+1 < len(args) {
					out = append(out, args[i+1])
					i++
				}
			}
		case strings.HasPrefix(v, "--"):
		default:
			if first < 0 {
				first = i
			}
		}
	}
	if len(out) == 0 && !fromFile && first >= 0 {
		out = append(out, args[first])
	}
	return out
}

// sedBad scans a sed script for the e command, the s///e flag, and w or W
// (command or flag) writing to a device or a protected file.
func sedBad(script string) bool {
	s := script
	i := 0
	skipSpace := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == ';' || s[i] == '\n' || s[i] == '{' || s[i] == '}' || s[i] == '!') {
			i++
		}
	}
	readTo := func(delim byte) {
		for i < len(s) && s[i] != delim {
			if s[i] == '\\' {
				i++
			}
			i++
		}
		i++
	}
	restOfLine := func() string {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			j = len(s) - i
		}
		out := strings.TrimSpace(s[i : i+j])
		i += j
		return out
	}
	badFile := func(f string) bool {
		_, bad := writeBan(shell.Lit(f), "/", false)
		return bad
	}
	for i < len(s) {
		skipSpace()
		// Addresses.
		for i < len(s) {
			c := s[i]
			if c >= '0' && c <= '9' || c == '$' || c == ',' || c == '~' || c == '+' {
				i++
				continue
			}
			if c == '/' {
				i++
				readTo('/')
				if i < len(s) && (s[i] == 'I' || s[i] == 'M') {
					i++
				}
				continue
			}
			if c == '\\' && i+1 < len(s) {
				d := s[i+1]
				i += 2
				readTo(d)
				continue
			}
			break
		}
		skipSpace()
		if i >= len(s) {
			break
		}
		c := s[i]
		i++
		switch c {
		case 'e':
			return true
		case 's', 'y':
			if i >= len(s) {
				return false
			}
			d := s[i]
			i++
			readTo(d)
			readTo(d)
			if c == 's' {
				for i < len(s) && strings.IndexByte("gpiImMe0123456789w", s[i]) >= 0 {
					if s[i] == 'e' {
						return true
					}
					if s[i] == 'w' {
						i++
						if badFile(restOfLine()) {
							return true
						}
						break
					}
					i++
				}
			}
		case 'w', 'W':
			if badFile(restOfLine()) {
				return true
			}
		case 'a', 'i', 'c', 'r', 'R', ':', 'b', 't', 'T', 'q', 'Q', 'l', 'L':
			restOfLine()
		}
	}
	return false
}

func deferred(c *shell.Command) (verdict, bool) {
	name := progName(c)
	args := c.Args[1:]
	switch name {
	case "at", "batch":
		if listsOnly(args, "-l", "-r", "-d", "-c") {
			return verdict{}, false
		}
		return hit(entDeferred, "run the commands now, directly")
	case "tmux", "screen", "byobu", "dtach", "abduco":
		if name == "tmux" && len(args) > 0 && (args[0].Value == "ls" || args[0].Value == "list-sessions") || name == "screen" && listsOnly(args, "-ls", "-list") {
			return verdict{}, false
		}
		return hit(entDeferred, "run the commands directly, not in a terminal session")
	case "crontab":
		if listsOnly(args, "-l") {
			return verdict{}, false
		}
		return hit(entDeferred, "do not install crontabs")
	}
	return verdict{}, false
}

var expansionRe = regexp.MustCompile("\\$\\{[^}]*\\}|\\$\\([^)]*\\)|`[^`]*`|\\$[A-Za-z_][A-Za-z0-9_]*|\\$[0-9@*#?$!-]")

// placeholders returns a script's text with the parts only known when it
// runs replaced by a plain word, so its structure can be checked: a sed
// script "s/^$key=.*/$key=$value/" is a substitution whatever the values
// (values are taken as text; one that holds sed syntax itself is not seen).
func placeholders(w shell.Word) string {
	if w.Kind != shell.Unknown {
		return w.Value
	}
	return expansionRe.ReplaceAllString(w.Value, "X")
}
