package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Shells are the programs that run a script: their -c string, their script
// file or their standard input.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "ash": true, "zsh": true, "ksh": true,
	"mksh": true, "rbash": true, "yash": true, "posh": true, "ksh93": true, "lksh": true}

// IsShell reports whether name is a shell that runs scripts.
func IsShell(name string) bool { return shells[name] }

var shellSpec = optSpec{flags: "abefhkmnprtuvxBCEHPTilsc", args: "oO", long: []string{"--login", "--norc", "--noprofile",
	"--posix", "--restricted", "--verbose", "--noediting", "--debugger", "--dump-strings", "--dump-po-strings",
	"--help", "--version", "--pretty-print"}, longArgs: []string{"--rcfile", "--init-file"}}

var wrapperSpecs = map[string]optSpec{
	"sudo": {flags: "AbBEeHiKklNnPSsVv", args: "CDghpRrTtUu", long: []string{"--askpass", "--background", "--bell",
		"--edit", "--help", "--login", "--remove-timestamp", "--reset-timestamp", "--list", "--non-interactive",
		"--preserve-groups", "--stdin", "--shell", "--version", "--validate"}, longArgs: []string{"--close-from",
		"--chdir", "--group", "--host", "--prompt", "--chroot", "--role", "--type", "--command-timeout", "--other-user", "--user"},
		longOpt: []string{"--preserve-env"}},
	"doas":    {flags: "Lns", args: "Cu"},
	"nice":    {args: "n", longArgs: []string{"--adjustment"}, numeric: true, long: []string{"--help", "--version"}},
	"nohup":   {long: []string{"--help", "--version"}},
	"timeout": {flags: "v", args: "sk", long: []string{"--foreground", "--preserve-status", "--verbose"}, longArgs: []string{"--signal", "--kill-after"}},
	"setsid":  {flags: "cfw", long: []string{"--ctty", "--fork", "--wait"}},
	"flock": {flags: "sxeunoF", args: "wEc", long: []string{"--shared", "--exclusive", "--unlock", "--nonblock", "--nb",
		"--close", "--no-fork", "--verbose"}, longArgs: []string{"--timeout", "--conflict-exit-code", "--command"}},
	"chroot": {long: []string{"--skip-chdir"}, longArgs: []string{"--userspec", "--groups"}},
	"su": {flags: "flmpP", args: "cCgGsw", long: []string{"--login", "--preserve-environment", "--pty", "--fast"},
		longArgs: []string{"--command", "--session-command", "--group", "--supp-group", "--shell", "--whitelist-environment"}, permute: true},
	"runuser": {flags: "flmpP", args: "cCgGswu", long: []string{"--login", "--preserve-environment", "--pty", "--fast"},
		longArgs: []string{"--command", "--session-command", "--group", "--supp-group", "--shell", "--whitelist-environment", "--user"}, permute: true},
	"script": {flags: "aefqhV", args: "cEIOBTm", optional: "t", long: []string{"--append", "--return", "--flush", "--force", "--quiet"},
		longArgs: []string{"--command", "--echo", "--log-in", "--log-out", "--log-io", "--log-timing", "--logging-format", "--output-limit"},
		longOpt:  []string{"--timing"}},
	"nsenter": {flags: "aFZ", args: "tSG", optional: "muinpCUTrw", long: []string{"--all", "--no-fork", "--preserve-credentials",
		"--follow-context", "--user-parent", "--keep-caps", "--env", "--join-cgroup"}, longArgs: []string{"--target", "--setuid", "--setgid"},
		longOpt: []string{"--mount", "--uts", "--ipc", "--net", "--pid", "--cgroup", "--user", "--time", "--root", "--wd"}},
	"unshare": {flags: "fcr", args: "RwSGl", optional: "muinpUCT", long: []string{"--fork", "--map-root-user", "--map-current-user",
		"--map-auto", "--keep-caps"}, longArgs: []string{"--root", "--wd", "--setuid", "--setgid", "--propagation", "--setgroups",
		"--map-user", "--map-group", "--map-users", "--map-groups", "--load-interp", "--monotonic", "--boottime"},
		longOpt: []string{"--mount", "--uts", "--ipc", "--net", "--pid", "--user", "--cgroup", "--time", "--kill-child", "--mount-proc", "--mount-binfmt"}},
	"setpriv": {flags: "d", long: []string{"--dump", "--nnp", "--no-new-privs", "--init-groups", "--clear-groups", "--keep-groups",
		"--reset-env"}, longArgs: []string{"--inh-caps", "--ambient-caps", "--bounding-set", "--ruid", "--euid", "--reuid", "--rgid",
		"--egid", "--regid", "--groups", "--securebits", "--pdeathsig", "--selinux-label", "--apparmor-profile",
		"--landlock-access", "--landlock-rule", "--seccomp-filter"}},
	"pkexec":  {long: []string{"--keep-cwd", "--disable-internal-agent"}, longArgs: []string{"--user"}},
	"stdbuf":  {args: "ioe", longArgs: []string{"--input", "--output", "--error"}},
	"ionice":  {flags: "t", args: "cnpPu", long: []string{"--ignore"}, longArgs: []string{"--class", "--classdata", "--pid", "--pgid", "--uid"}},
	"chrt":    {flags: "abdfiormpvRe", args: "TPD", long: []string{"--all-tasks", "--batch", "--deadline", "--fifo", "--idle", "--other", "--rr", "--max", "--pid", "--verbose", "--reset-on-fork", "--ext"}, longArgs: []string{"--sched-runtime", "--sched-period", "--sched-deadline"}},
	"taskset": {flags: "apc", long: []string{"--all-tasks", "--pid", "--cpu-list"}},
	"time":    {flags: "apvqV", args: "fo", long: []string{"--append", "--portability", "--verbose", "--quiet"}, longArgs: []string{"--format", "--output"}},
	"command": {flags: "pvV"},
	"exec":    {flags: "cl", args: "a"},
	"xargs": {flags: "0oprtx", args: "adEILnPs", optional: "eil", long: []string{"--null", "--interactive", "--no-run-if-empty",
		"--show-limits", "--verbose", "--exit", "--open-tty"}, longArgs: []string{"--arg-file", "--delimiter", "--max-args",
		"--max-procs", "--max-chars", "--process-slot-var"}, longOpt: []string{"--eof", "--replace", "--max-lines"}},
	"watch": {flags: "bcCeghprtwx", args: "nqs", optional: "d", long: []string{"--beep", "--color", "--no-color", "--errexit",
		"--chgexit", "--precise", "--no-rerun", "--no-title", "--no-wrap", "--exec"}, longArgs: []string{"--interval", "--equexit", "--shotsdir"},
		longOpt: []string{"--differences"}},
	"ssh": {flags: "46AaCfGgKkMNnqsTtVvXxYy", args: "BbcDEeFIiJLlmOoPpQRSWw"},
	"prlimit": {flags: "orv", args: "p", optional: "ACDEFILMNPRSTUcdefilmnqrstuvxy", long: []string{"--noheadings", "--raw", "--verbose", "--help", "--version"},
		longArgs: []string{"--pid", "--output"}, longOpt: []string{"--as", "--core", "--cpu", "--data", "--fsize", "--locks", "--memlock",
			"--msgqueue", "--nice", "--nofile", "--nproc", "--rss", "--rtprio", "--rttime", "--sigpending", "--stack"}},
	"strace": {flags: "cCdDfFhiqrtTvVwxyYzZ", args: "abeEIoOpPsSuUX", long: []string{"--follow-forks", "--output-separately", "--summary-only",
		"--summary", "--quiet", "--no-abbrev", "--decode-fds", "--relative-timestamps", "--absolute-timestamps", "--syscall-times", "--instruction-pointer",
		"--stack-trace", "--successful-only", "--failed-only", "--daemonize", "--seccomp-bpf", "--kill-on-exit"},
		longArgs: []string{"--output", "--trace", "--signal", "--status", "--attach", "--user", "--env", "--string-limit", "--columns", "--trace-path", "--abbrev", "--verbose", "--raw", "--read", "--write", "--quiet", "--decode-fds", "--summary-sort-by", "--timestamps", "--inject", "--fault"}, permute: false},
	"ltrace":    {flags: "bCfhiLrStTV", args: "aAeFlnopsuwx", longArgs: []string{"--output", "--library", "--config", "--indent", "--align"}},
	"fakeroot":  {flags: "uv", args: "ilsb", long: []string{"--unknown-is-real", "--version", "--help"}, longArgs: []string{"--lib", "--faked"}},
	"firejail":  {permute: false},
	"catchsegv": {},
	"sg":        {},
	"systemd-run": {flags: "rtPqGdS", args: "upEHM", long: []string{"--user", "--system", "--scope", "--remain-after-exit",
		"--send-sighup", "--pty", "--pipe", "--quiet", "--wait", "--collect", "--no-block", "--same-dir", "--shell",
		"--no-ask-password", "--verbose", "--ignore-failure", "--background"}, longArgs: []string{"--unit", "--property",
		"--description", "--slice", "--uid", "--gid", "--nice", "--working-directory", "--setenv", "--on-active", "--on-boot",
		"--on-startup", "--on-unit-active", "--on-unit-inactive", "--on-calendar", "--timer-property", "--path-property",
		"--socket-property", "--service-type", "--host", "--machine", "--slice-inherit"}, longOpt: []string{"--on-clock-change", "--on-timezone-change"}},
}

// peel analyses what a wrapper, a shell or eval runs.
func (a *analyzer) peel(cmd *Command, sc *scope, c ctx) {
	name := cmd.Name()
	args := cmd.Args[1:]
	via := name
	bad := func(option string) {
		a.problemText(cmd.String(), "cannot tell which command "+name+" runs: unknown or non-literal option "+option, "use only the options documented for "+name)
	}
	if shells[name] {
		a.shell(cmd, args, sc, c)
		return
	}
	switch name {
	case "eval":
		src := joinWords(args)
		a.innerScript(cmd, src, "eval", sc.pos, sc.posKnown, sc.arg0, sc, c, StdinInherited)
		return
	case "source", ".":
		if len(args) == 0 {
			return
		}
		a.scriptFile(cmd, args[0], name)
		return
	case "trap":
		a.trap(cmd, args, sc, c)
		return
	case "builtin":
		a.innerArgv(cmd, args, via, sc, c)
		return
	case "busybox":
		if len(args) > 0 && !strings.HasPrefix(args[0].Value, "-") {
			a.innerArgv(cmd, args, via, sc, c)
		}
		return
	case "find":
		a.find(cmd, args, sc, c)
		return
	case "dpkg":
		// dpkg's hooks run their value with sh -c.
		for i, w := range args {
			for _, o := range []string{"--pre-invoke", "--post-invoke", "--status-logger"} {
				if v, ok := strings.CutPrefix(w.Value, o+"="); ok {
					a.innerScript(cmd, Word{Kind: w.Kind, Value: v}, "dpkg "+o, nil, true, "sh", sc, c, StdinInherited)
				} else if w.Value == o && i+1 < len(args) {
					a.innerScript(cmd, args[i+1], "dpkg "+o, nil, true, "sh", sc, c, StdinInherited)
				}
			}
		}
		return
	case "parallel":
		a.parallel(cmd, args, sc, c)
		return
	case "env":
		a.env(cmd, args, sc, c)
		return
	case "ip":
		// ip [opts] netns exec NAME CMD…, ip vrf exec NAME CMD…
		for i := 0; i+2 < len(args); i++ {
			if (args[i].Value == "netns" || args[i].Value == "vrf") && args[i+1].Value == "exec" {
				a.innerArgv(cmd, args[i+3:], "ip "+args[i].Value+" exec", sc, c)
				return
			}
		}
		return
	case "socat":
		// socat ADDRESS ADDRESS: EXEC:argv and SYSTEM:script run commands.
		for _, w := range args {
			v := w.Value
			if strings.HasPrefix(v, "-") && len(v) > 1 {
				continue
			}
			kind, rest, ok := strings.Cut(v, ":")
			if !ok {
				continue
			}
			k := strings.ToUpper(kind)
			if k != "EXEC" && k != "SYSTEM" {
				continue
			}
			if w.Kind == Unknown {
				bad(v)
				return
			}
			if i := strings.IndexByte(rest, ','); i >= 0 {
				rest = rest[:i] // address options
			}
			if k == "SYSTEM" {
				a.innerScript(cmd, Word{Value: rest}, "socat SYSTEM:", nil, true, "sh", sc, c, StdinPipe)
				continue
			}
			var argv []Word
			for _, f := range strings.Fields(rest) {
				argv = append(argv, Lit(f))
			}
			a.innerArgv(cmd, argv, "socat EXEC:", sc, c)
		}
		return
	case "capsh":
		// capsh [opts] -- ARGS: ARGS go to /bin/bash (-c SCRIPT).
		for i, w := range args {
			if w.Value == "--" {
				a.shellArgs(cmd, args[i+1:], "capsh", sc, c)
				return
			}
			if strings.HasPrefix(w.Value, "--shell=") || w.Kind != Literal {
				bad(w.Value)
				return
			}
		}
		return
	case "sg":
		// sg GROUP [-c] COMMAND: the command is run by /bin/sh -c.
		if len(args) >= 2 {
			rest := args[1:]
			if rest[0].Value == "-c" {
				rest = rest[1:]
			}
			a.innerScript(cmd, joinWords(rest), "sg", nil, true, "sh", sc, c, StdinInherited)
		} else {
			a.shellFromStdin(cmd, "sg")
		}
		return
	case "firejail":
		var i int
		for i = 0; i < len(args) && strings.HasPrefix(args[i].Value, "--"); i++ {
			if args[i].Value == "--" {
				i++
				break
			}
			if args[i].Kind != Literal {
				bad(args[i].Value)
				return
			}
		}
		a.innerArgv(cmd, args[i:], "firejail", sc, c)
		return
	}
	spec, ok := wrapperSpecs[name]
	if !ok {
		return
	}
	opts, rest, badOpt := spec.parse(args)
	if badOpt != "" {
		bad(badOpt)
		return
	}
	inner := *cmd
	switch name {
	case "sudo":
		if _, ok := has(opts, "-e", "--edit", "-l", "--list", "-v", "--validate", "-k", "-K", "--remove-timestamp", "--reset-timestamp"); ok && len(rest) == 0 {
			return
		}
		if d, ok := has(opts, "-D", "--chdir"); ok {
			inner.Dir = dirOf(d, cmd.Dir)
		}
		// sudo VAR=value CMD: the assignments go to CMD's environment.
		for len(rest) > 0 && rest[0].Kind != Unknown && strings.Contains(rest[0].Value, "=") && syntaxName(rest[0].Value) {
			name, val, _ := strings.Cut(rest[0].Value, "=")
			a.codeVariable(name, Word{Kind: rest[0].Kind, Value: val})
			rest = rest[1:]
		}
		if _, ok := has(opts, "-s", "--shell", "-i", "--login"); ok && len(rest) == 0 {
			a.shellFromStdin(cmd, "sudo -s")
			return
		}
	case "timeout":
		if len(rest) > 0 {
			rest = rest[1:] // DURATION
		}
	case "flock":
		if s, ok := has(opts, "-c", "--command"); ok {
			a.innerScript(cmd, s, "flock -c", nil, true, "sh", sc, c, StdinInherited)
			return
		}
		if len(rest) > 0 {
			rest = rest[1:] // the lock file
		}
		if len(rest) > 0 && (rest[0].Value == "-c" || rest[0].Value == "--command") {
			if len(rest) < 2 {
				return
			}
			a.innerScript(cmd, rest[1], "flock -c", nil, true, "sh", sc, c, StdinInherited)
			return
		}
	case "chroot":
		if len(rest) == 0 {
			return
		}
		root := rest[0]
		rest = rest[1:]
		if len(rest) == 0 {
			a.shellFromStdin(cmd, "chroot")
			return
		}
		if root.Kind != Literal || strings.TrimRight(root.Value, "/") != "" {
			inner.Dir = "" // paths inside are under the new root
		}
	case "su", "runuser":
		if s, ok := has(opts, "-c", "--command", "-C", "--session-command"); ok {
			a.innerScript(cmd, s, name+" -c", nil, true, "sh", sc, c, StdinInherited)
			return
		}
		if name == "runuser" {
			if _, ok := has(opts, "-u", "--user"); ok && len(rest) > 0 {
				break
			}
		}
		if len(rest) > 1 {
			// su USER ARG…: the arguments go to the user's shell.
			a.shellArgs(cmd, rest[1:], name, sc, c)
			return
		}
		a.shellFromStdin(cmd, name)
		return
	case "script":
		for _, o := range opts {
			switch o.name {
			case "-O", "--log-out", "-B", "--log-io", "-T", "--log-timing", "-I", "--log-in", "-t", "--timing":
				if o.val.Value != "" {
					a.out.Writes = append(a.out.Writes, abs(o.val, cmd.Dir))
				}
			}
		}
		file := Lit("typescript")
		if len(rest) > 0 {
			file = rest[0]
		}
		a.out.Writes = append(a.out.Writes, abs(file, cmd.Dir))
		if s, ok := has(opts, "-c", "--command"); ok {
			a.innerScript(cmd, s, "script -c", nil, true, "sh", sc, c, StdinInherited)
			return
		}
		a.shellFromStdin(cmd, "script")
		return
	case "nsenter", "unshare", "pkexec", "setpriv":
		if _, ok := has(opts, "-d", "--dump"); ok && name == "setpriv" {
			return
		}
		if len(rest) == 0 {
			a.shellFromStdin(cmd, name)
			return
		}
		if _, ok := has(opts, "-r", "--root", "-R"); ok {
			inner.Dir = ""
		}
		if d, ok := has(opts, "-w", "--wd"); ok {
			inner.Dir = dirOf(d, cmd.Dir)
		}
	case "ionice":
		if _, ok := has(opts, "-p", "--pid", "-P", "--pgid", "-u", "--uid"); ok {
			return
		}
	case "chrt", "taskset":
		if _, ok := has(opts, "-p", "--pid", "-m", "--max"); ok {
			return
		}
		if len(rest) > 0 {
			rest = rest[1:] // priority or mask
		}
	case "strace", "ltrace":
		if f, ok := has(opts, "-o", "--output"); ok {
			if strings.HasPrefix(f.Value, "|") || strings.HasPrefix(f.Value, "!") {
				a.innerScript(cmd, Word{Kind: f.Kind, Value: f.Value[1:]}, name+" -o", nil, true, "sh", sc, c, StdinPipe)
			} else {
				a.out.Writes = append(a.out.Writes, abs(f, cmd.Dir))
			}
		}
		if _, ok := has(opts, "-p", "--attach"); ok && len(rest) == 0 {
			return
		}
	case "prlimit":
		if _, ok := has(opts, "-p", "--pid"); ok && len(rest) == 0 {
			return
		}
	case "time":
		if f, ok := has(opts, "-o", "--output"); ok {
			a.out.Writes = append(a.out.Writes, abs(f, cmd.Dir))
		}
	case "command":
		if _, ok := has(opts, "-v", "-V"); ok {
			return
		}
	case "xargs":
		repl, isRepl := has(opts, "-I", "--replace", "-i")
		if isRepl && repl.Value == "" {
			repl = Lit("{}")
		}
		if len(rest) == 0 {
			rest = []Word{Lit("echo")}
		}
		inner.Stdin, inner.StdinKnown = StdinInherited, false
		_, fromFile := has(opts, "-a", "--arg-file")
		_, delim := has(opts, "-0", "--null", "-d", "--delimiter")
		if chunks, ok := xargsChunks(cmd, opts, isRepl, fromFile || delim && c.paths == ""); ok {
			for _, in := range chunks {
				a.innerArgv(&inner, xargsArgv(rest, in, repl, isRepl), via, sc, c)
			}
			return
		}
		in := []Word{{Kind: Unknown, Value: "{input}"}}
		if c.paths != "" && !fromFile {
			// Every listed path: a pattern.
			in = []Word{{Kind: Pattern, Value: c.paths, Glob: c.paths}}
		}
		a.innerArgv(&inner, xargsArgv(rest, in, repl, isRepl), via, sc, c)
		return
	case "watch":
		if _, ok := has(opts, "-x", "--exec"); !ok {
			a.innerScript(cmd, joinWords(rest), "watch", nil, true, "sh", sc, c, StdinInherited)
			return
		}
	case "ssh":
		if len(rest) == 0 {
			return
		}
		if len(rest) == 1 {
			a.shellFromStdin(cmd, "ssh")
			return
		}
		a.innerScript(cmd, joinWords(rest[1:]), "ssh", nil, true, "sh", sc, c, StdinInherited)
		return
	case "systemd-run":
		if d, ok := has(opts, "--working-directory"); ok {
			inner.Dir = dirOf(d, cmd.Dir)
		}
		if _, ok := has(opts, "-S", "--shell"); ok && len(rest) == 0 {
			a.shellFromStdin(cmd, "systemd-run --shell")
			return
		}
	}
	a.innerArgv(&inner, rest, via, sc, c)
}

func dirOf(d Word, cur string) string {
	if d.Kind != Literal {
		return ""
	}
	w := abs(d, cur)
	if w.Kind != Literal {
		return ""
	}
	return w.Value
}

// joinWords joins words with spaces into one (as a shell given them as a
// script would read them).
func joinWords(ws []Word) Word {
	out := Word{}
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.Value
		if w.Kind == Unknown {
			out.Kind = Unknown
		}
	}
	out.Value = strings.Join(parts, " ")
	return out
}

// shellFromStdin records a problem when a shell started by cmd would read
// its commands from a standard input that carries data.
func (a *analyzer) shellFromStdin(cmd *Command, what string) {
	if cmd.Stdin != StdinInherited {
		a.problemText(cmd.String(), "a shell started by "+what+" reads its commands from a "+cmd.Stdin.String()+", which cannot be checked",
			"do not pipe into a shell: run the commands directly")
	}
}

// shell analyses sh/bash/… invocations.
func (a *analyzer) shell(cmd *Command, args []Word, sc *scope, c ctx) {
	opts, rest, badOpt := shellSpec.parse(args)
	if badOpt != "" {
		a.problemText(cmd.String(), "cannot tell what "+cmd.Name()+" runs: unknown or non-literal option "+badOpt, "use bash -c 'SCRIPT'")
		return
	}
	if _, ok := has(opts, "-c"); ok {
		if len(rest) == 0 {
			return
		}
		arg0 := cmd.Name()
		var pos []Word
		if len(rest) > 1 {
			arg0 = rest[1].Value
			pos = rest[2:]
		}
		a.innerScript(cmd, rest[0], cmd.Name()+" -c", pos, true, arg0, sc, c, StdinInherited)
		return
	}
	if _, ok := has(opts, "-s"); ok || len(rest) == 0 {
		a.shellFromStdin(cmd, cmd.Name())
		return
	}
	a.scriptFile(cmd, rest[0], cmd.Name())
}

// shellArgs: su USER ARG… hands ARG… to the user's shell as its options and
// operands.
func (a *analyzer) shellArgs(cmd *Command, args []Word, via string, sc *scope, c ctx) {
	sh := &Command{Args: append([]Word{Lit("sh")}, args...), Redirs: cmd.Redirs, Dir: cmd.Dir, Stdin: cmd.Stdin,
		StdinText: cmd.StdinText, StdinKnown: cmd.StdinKnown, Via: append(append([]string(nil), cmd.Via...), via)}
	a.shell(sh, args, sc, c)
}

// scriptFile checks a script file a shell or source runs: its content is
// on the host and not analysed, unless this command line wrote it.
func (a *analyzer) scriptFile(cmd *Command, f Word, via string) {
	switch {
	case f.Kind != Literal:
		a.problemText(cmd.String(), "the script "+via+" runs is named by an expansion, so what runs cannot be known", "name the script file literally")
	case f.Value == "-" || f.Value == "/dev/stdin" || f.Value == "/dev/fd/0" || f.Value == "/proc/self/fd/0":
		a.shellFromStdin(cmd, via)
		if cmd.Stdin == StdinInherited {
			a.problemText(cmd.String(), via+" reads its script from standard input, which cannot be checked", "run the commands directly")
		}
	case strings.HasPrefix(f.Value, "/dev/fd/") || strings.HasPrefix(f.Value, "/proc/") && strings.Contains(f.Value, "/fd/"):
		a.problemText(cmd.String(), via+" reads its script from a file descriptor (a here-string, pipe or file opened by the command line), which cannot be checked", "run the commands directly")
	case a.written[abs(f, cmd.Dir).Value] || cmd.Dir == "" && !strings.HasPrefix(f.Value, "/"):
		a.problemText(cmd.String(), "the script "+via+" runs is written by the same command line, so what runs cannot be checked", "run the commands directly")
	}
}

// WrittenHere reports whether the command line writes path with a
// redirection before running it (a script written then run).
func (an *Analysis) WrittenHere(p string) bool {
	for _, w := range an.Writes {
		if w.Kind == Literal && w.Value == p {
			return true
		}
	}
	return false
}

func (a *analyzer) trap(cmd *Command, args []Word, sc *scope, c ctx) {
	if len(args) > 0 && (args[0].Value == "-l" || args[0].Value == "-p" || args[0].Value == "--") {
		if args[0].Value != "--" {
			return
		}
		args = args[1:]
	}
	if len(args) < 2 { // "trap SIG" resets; "trap" lists
		return
	}
	body := args[0]
	if body.Kind == Literal && (body.Value == "-" || body.Value == "") {
		return
	}
	a.innerScript(cmd, body, "trap", sc.pos, sc.posKnown, sc.arg0, sc.clone(), c, StdinInherited)
}

// env peels env's options and NAME=VALUE words.
func (a *analyzer) env(cmd *Command, args []Word, sc *scope, c ctx) {
	spec := optSpec{flags: "i0v", args: "uCS", long: []string{"--ignore-environment", "--null", "--debug", "--list-signal-handling", "--help", "--version"},
		longArgs: []string{"--unset", "--chdir", "--split-string"}, longOpt: []string{"--block-signal", "--default-signal", "--ignore-signal"}}
	var split []Word
	inner := *cmd
	for {
		if len(args) > 0 && args[0].Value == "-" {
			args = args[1:]
			continue
		}
		opts, rest, badOpt := spec.parse(args)
		if badOpt != "" {
			a.problemText(cmd.String(), "cannot tell which command env runs: unknown or non-literal option "+badOpt, "use only env's documented options")
			return
		}
		for _, o := range opts {
			switch o.name {
			case "-C", "--chdir":
				inner.Dir = dirOf(o.val, inner.Dir)
			case "-S", "--split-string":
				if o.val.Kind != Literal {
					a.problemText(cmd.String(), "env -S splits text that is not literal, so what runs cannot be known", "write the command directly")
					return
				}
				an := Analyze(o.val.Value, Config{Dir: "/", Home: "/root"})
				if len(an.Problems) > 0 || len(an.Commands) != 1 {
					a.problemText(cmd.String(), "env -S text cannot be split into one command", "write the command directly")
					return
				}
				split = append(split, an.Commands[0].Args...)
			}
		}
		args = rest
		for len(args) > 0 && args[0].Kind != Unknown && strings.Contains(args[0].Value, "=") && !strings.HasPrefix(args[0].Value, "-") && !strings.HasPrefix(args[0].Value, "=") {
			name, val, _ := strings.Cut(args[0].Value, "=")
			a.codeVariable(name, Word{Kind: args[0].Kind, Value: val})
			args = args[1:]
		}
		if len(args) > 0 && strings.HasPrefix(args[0].Value, "-") && args[0].Value != "--" {
			continue
		}
		break
	}
	if len(args) > 0 && args[0].Value == "--" {
		args = args[1:]
	}
	a.innerArgv(&inner, append(split, args...), "env", sc, c)
}

// find peels the commands -exec, -execdir, -ok and -okdir run; "{}" is
// each found path, unknown.
func (a *analyzer) find(cmd *Command, args []Word, sc *scope, c ctx) {
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		switch v {
		case "-exec", "-execdir", "-ok", "-okdir":
			var argv []Word
			j := i + 1
			for ; j < len(args); j++ {
				if args[j].Value == ";" || args[j].Value == "+" && j > i+1 && strings.Contains(args[j-1].Value, "{}") {
					break
				}
				w := args[j]
				if strings.Contains(w.Value, "{}") {
					w = Word{Kind: Unknown, Value: w.Value}
				}
				argv = append(argv, w)
			}
			inner := *cmd
			if v == "-execdir" || v == "-okdir" {
				inner.Dir = ""
			}
			a.innerArgv(&inner, argv, "find "+v, sc, c)
			i = j
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if i+1 < len(args) {
				a.out.Writes = append(a.out.Writes, abs(args[i+1], cmd.Dir))
			}
		}
	}
}

// parallel peels GNU parallel: the command template and its ::: inputs.
func (a *analyzer) parallel(cmd *Command, args []Word, sc *scope, c ctx) {
	i := 0
	for ; i < len(args); i++ {
		v := args[i].Value
		if args[i].Kind == Unknown {
			a.problemText(cmd.String(), "cannot tell which command parallel runs: non-literal word "+v, "write the command literally")
			return
		}
		if !strings.HasPrefix(v, "-") || v == "--" {
			break
		}
		switch v {
		case "-j", "-S", "-a", "-d", "-E", "-I", "-n", "-N", "-L", "--jobs", "--sshlogin", "--arg-file", "--joblog",
			"--results", "--colsep", "--tmpdir", "--workdir", "--wd", "--timeout", "--delay", "--basefile", "--return",
			"--transfer-file", "--tag-string", "--env", "--max-args", "--max-replace-args", "--delimiter", "--memfree", "--load":
			i++
		}
	}
	if i < len(args) && args[i].Value == "--" {
		i++
	}
	var tmpl []Word
	for ; i < len(args) && !strings.HasPrefix(args[i].Value, ":::"); i++ {
		tmpl = append(tmpl, args[i])
	}
	var inputs []Word
	fromStdin := i >= len(args)
	for ; i < len(args); i++ {
		if strings.HasPrefix(args[i].Value, "::::") {
			fromStdin = true
			continue
		}
		if strings.HasPrefix(args[i].Value, ":::") {
			continue
		}
		inputs = append(inputs, args[i])
	}
	if fromStdin {
		if c.paths != "" {
			inputs = append(inputs, Word{Kind: Pattern, Value: c.paths, Glob: c.paths})
		} else {
			inputs = append(inputs, Word{Kind: Unknown, Value: "{input}"})
		}
	}
	if len(tmpl) == 0 {
		a.problemText(cmd.String(), "parallel runs its inputs as commands, which cannot be checked", "run the commands directly")
		return
	}
	for _, in := range inputs {
		var argv []Word
		used := false
		for _, w := range tmpl {
			if strings.Contains(w.Value, "{}") {
				used = true
				argv = append(argv, xargsArgv([]Word{w}, []Word{in}, Lit("{}"), true)...)
				continue
			}
			argv = append(argv, w)
		}
		if !used {
			argv = append(argv, in)
		}
		if len(argv) == 1 && strings.ContainsAny(argv[0].Value, " \t;|&") {
			a.innerScript(cmd, argv[0], "parallel", nil, true, "sh", sc, c, StdinInherited)
			continue
		}
		a.innerArgv(cmd, argv, "parallel", sc, c)
	}
}

// syntaxName reports whether s starts with NAME= (a valid variable name).
func syntaxName(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	return ok && syntax.ValidName(name)
}

// xargsArgv builds the command xargs runs for one input chunk: with -I,
// each replacement string in the template replaced by the input; without,
// the input appended.
func xargsArgv(tmpl []Word, in []Word, repl Word, isRepl bool) []Word {
	var argv []Word
	for _, w := range tmpl {
		if isRepl && strings.Contains(w.Value, repl.Value) && len(in) == 1 {
			x := in[0]
			out := Word{Kind: Literal, Value: strings.ReplaceAll(w.Value, repl.Value, x.Value)}
			switch {
			case x.Kind == Unknown || w.Kind == Unknown:
				out.Kind = Unknown
			case x.Kind == Pattern || w.Kind == Pattern:
				out.Kind = Pattern
				parts := strings.Split(w.Value, repl.Value)
				for i := range parts {
					parts[i] = escapeGlob(parts[i])
				}
				g := x.Glob
				if x.Kind != Pattern {
					g = escapeGlob(x.Value)
				}
				out.Glob = strings.Join(parts, g)
			}
			argv = append(argv, out)
			continue
		}
		argv = append(argv, w)
	}
	if !isRepl {
		argv = append(argv, in...)
	}
	return argv
}

// xargsChunks splits input the command line determines (a pipe from
// echo/printf of literal words, a here-string or here-document) into the
// argument lists xargs passes: one per line with -I, N words with -n N,
// all of them otherwise. ok is false when the input is not known or
// quoting in it would need xargs's own parsing.
func xargsChunks(cmd *Command, opts []opt, isRepl, other bool) ([][]Word, bool) {
	if !cmd.StdinKnown || other || strings.ContainsAny(cmd.StdinText, "'\\\"") {
		return nil, false
	}
	text := cmd.StdinText
	if isRepl {
		var out [][]Word
		for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			line = strings.TrimLeft(line, " \t")
			if line == "" {
				continue
			}
			out = append(out, []Word{Lit(line)})
		}
		return out, len(out) <= maxLoopVals
	}
	if n, ok := has(opts, "-L", "--max-lines", "-l"); ok {
		if n.Kind != Literal || n.Value != "1" && n.Value != "" {
			return nil, false
		}
		var out [][]Word
		for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			var ws []Word
			for _, f := range strings.Fields(line) {
				ws = append(ws, Lit(f))
			}
			if len(ws) > 0 {
				out = append(out, ws)
			}
		}
		return out, len(out) <= maxLoopVals
	}
	var words []Word
	for _, f := range strings.Fields(text) {
		words = append(words, Lit(f))
	}
	per := len(words)
	if n, ok := has(opts, "-n", "--max-args"); ok {
		if n.Kind != Literal || !isInteger(n.Value) {
			return nil, false
		}
		per = 0
		for _, r := range n.Value {
			per = per*10 + int(r-'0')
		}
		if per <= 0 {
			return nil, false
		}
	}
	if len(words) == 0 {
		return [][]Word{nil}, true
	}
	var out [][]Word
	for i := 0; i < len(words); i += per {
		end := i + per
		if end > len(words) {
			end = len(words)
		}
		out = append(out, words[i:end])
	}
	return out, len(out) <= maxLoopVals
}
