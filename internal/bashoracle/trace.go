package bashoracle

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Trace is what bash did for one command.
type Trace struct {
	// Command is the command that was run.
	Command string
	// Execs are the programs executed, in order (the oracle's own launcher
	// and the outer `bash -c COMMAND` excluded).
	Execs []Exec
	// Writes are the paths opened for writing, creating, truncating or
	// appending, and paths passed to creat(2) and truncate(2), in order.
	Writes []Write
	// Signals are the signals sent with kill, tkill, tgkill and
	// rt_sigqueueinfo, in order.
	Signals []Signal
	// Forks counts the processes created (fork, vfork, clone, clone3
	// without CLONE_THREAD), and ForkLimited the attempts refused by the
	// process limit (EAGAIN): a fork bomb shows as ForkLimited > 0.
	Forks, ForkLimited int
	// Output is bash's standard output and standard error, interleaved,
	// at most Config.MaxOutput bytes.
	Output []byte
	// ExitCode is bash's exit status (-1 when it was killed).
	ExitCode int
	// TimedOut reports that the command still ran after Config.Timeout and
	// was killed; the events before that are recorded.
	TimedOut bool
	// Truncated reports that the trace exceeded Config.MaxTrace and the run
	// was stopped; the events before that are recorded.
	Truncated bool
	// Duration is the wall time of the run, sandbox set-up included.
	Duration time.Duration
}

// Exec is one execve(2) or execveat(2).
type Exec struct {
	Pid  int    // in the sandbox's PID namespace
	Path string // the program path as passed to execve
	// Dir is the working directory the program started in ("" when the
	// trace does not show it).
	Dir string
	// Program is the program that ran: Path, except for a name that has
	// no stub, which runs the stub through command_not_found_handle and
	// is then argv[0]. Judge by Program, not argv[0]: `exec -a foo rm`
	// runs rm.
	Program string
	Argv    []string // the argument vector, argv[0] first
	Err     string   // the errno name when execve failed ("ENOENT"), else ""
}

// Write is one open for writing.
type Write struct {
	Pid     int
	Syscall string // "openat", "open", "creat", "truncate", ...
	Path    string // absolute and cleaned; resolved against the caller's cwd or dirfd
	Flags   string // the open flags as strace prints them ("O_WRONLY|O_CREAT|O_TRUNC")
	Err     string
}

// Signal is one signal sent.
type Signal struct {
	Pid     int    // the sender
	Syscall string // "kill", "tkill", "tgkill", "rt_sigqueueinfo"
	Target  int    // the pid argument (for tgkill, the tgid); 0 and negative values keep kill(2)'s meaning
	Signal  string // "SIGINT", or the number ("0") when strace prints none
	Err     string
}

// String formats the exec as a shell-like line.
func (e Exec) String() string { return fmt.Sprintf("exec %q", e.Argv) }

// String formats the write.
func (w Write) String() string { return fmt.Sprintf("%s %s (%s)", w.Syscall, w.Path, w.Flags) }

// String formats the signal.
func (s Signal) String() string { return fmt.Sprintf("%s(%d, %s)", s.Syscall, s.Target, s.Signal) }

// writeFlags are the open flags that make an open a write.
var writeFlags = []string{"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"}

// parseTrace reads strace output (-f -y -xx -qq, one file) and fills the
// events of t. Events before the first successful execve of payload (the
// oracle's launcher) are skipped, and so is that execve itself.
func parseTrace(r io.Reader, payload string, t *Trace) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	pending := map[int]string{}
	started := false
	cwd := map[int]string{}  // the last working directory seen per pid
	newExec := map[int]int{} // pid → index in t.Execs of an exec whose Dir is not yet known
	for sc.Scan() {
		line := sc.Text()
		pid, rest, ok := splitPid(line)
		if !ok {
			continue
		}
		if i := strings.Index(rest, " <unfinished ...>"); i >= 0 {
			pending[pid] = rest[:i]
			continue
		}
		if strings.HasPrefix(rest, "<... ") {
			i := strings.Index(rest, " resumed>")
			if i < 0 {
				continue
			}
			head, ok := pending[pid]
			if !ok {
				continue
			}
			delete(pending, pid)
			rest = head + rest[i+len(" resumed>"):]
		}
		ev, ok := parseCall(rest)
		if !ok {
			continue
		}
		if !started {
			if (ev.name == "execve") && ev.ret == "0" && len(ev.args) > 0 {
				if p, err := decodeString(ev.args[0]); err == nil && p == payload {
					started = true
				}
			}
			continue
		}
		if d, ok := atFDCWD(ev); ok {
			cwd[pid] = d
			if i, ok := newExec[pid]; ok {
				// The first open after an exec (the dynamic loader's)
				// shows the directory the program started in.
				t.Execs[i].Dir = d
				delete(newExec, pid)
			}
		}
		n := len(t.Execs)
		addEvent(t, pid, ev)
		if len(t.Execs) > n {
			t.Execs[n].Dir = cwd[pid]
			newExec[pid] = n
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("bashoracle: reading trace: %w", err)
	}
	if !started {
		return fmt.Errorf("%w: the trace never shows bash starting", ErrSandbox)
	}
	return nil
}

// atFDCWD returns the working directory strace -y prints for an
// openat(AT_FDCWD<dir>, …).
func atFDCWD(c call) (string, bool) {
	if (c.name != "openat" && c.name != "openat2") || len(c.args) == 0 || !strings.HasPrefix(c.args[0], "AT_FDCWD<") {
		return "", false
	}
	d := decodeFDPath(c.args[0])
	return d, d != ""
}

// splitPid splits "1234  rest" into its pid and the rest.
func splitPid(line string) (int, string, bool) {
	i := strings.IndexByte(line, ' ')
	if i <= 0 {
		return 0, "", false
	}
	pid, err := strconv.Atoi(line[:i])
	if err != nil {
		return 0, "", false
	}
	return pid, strings.TrimLeft(line[i:], " "), true
}

type call struct {
	name string
	args []string
	ret  string // the return value's first token ("0", "-1", "3<…>")
	err  string // errno name when ret is -1
}

// parseCall parses "name(arg, arg, ...) = ret [ERRNO (text)]". Strings are
// printed in hex (-xx) and so contain none of the delimiters.
func parseCall(s string) (call, bool) {
	open := strings.IndexByte(s, '(')
	if open <= 0 {
		return call{}, false
	}
	c := call{name: s[:open]}
	// strace pads short calls with spaces before " = ".
	eq := strings.LastIndex(s, " = ")
	if eq < open {
		return call{}, false
	}
	end := len(strings.TrimRight(s[:eq], " ")) - 1
	if end < open || s[end] != ')' {
		return call{}, false
	}
	c.args = splitArgs(s[open+1 : end])
	ret := strings.Fields(s[eq+len(" = "):])
	if len(ret) == 0 {
		return call{}, false
	}
	c.ret = ret[0]
	if c.ret == "-1" && len(ret) > 1 {
		c.err = ret[1]
	}
	return c, true
}

// splitArgs splits a syscall's argument list at top-level commas.
func splitArgs(s string) []string {
	var args []string
	depth := 0
	inStr := false
	start := 0
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case inStr:
			if ch == '\\' {
				i++
			} else if ch == '"' {
				inStr = false
			}
		case ch == '"':
			inStr = true
		case ch == '[' || ch == '{' || ch == '<' || ch == '(':
			depth++
		case ch == ']' || ch == '}' || ch == '>' || ch == ')':
			depth--
		case ch == ',' && depth == 0:
			args = append(args, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" {
		args = append(args, rest)
	}
	return args
}

// decodeString decodes a strace string argument ("\x2f\x62..." with -xx),
// ignoring a trailing "..." that marks truncation.
func decodeString(arg string) (string, error) {
	arg = strings.TrimSuffix(arg, "...")
	if len(arg) < 2 || arg[0] != '"' || arg[len(arg)-1] != '"' {
		return "", fmt.Errorf("bashoracle: not a string: %.40q", arg)
	}
	return strconv.Unquote(arg)
}

// decodeArray decodes ["\x..", "\x.."] into strings.
func decodeArray(arg string) ([]string, error) {
	arg = strings.TrimSuffix(arg, "...")
	if len(arg) < 2 || arg[0] != '[' || arg[len(arg)-1] != ']' {
		return nil, fmt.Errorf("bashoracle: not an array: %.40q", arg)
	}
	var out []string
	for _, el := range splitArgs(arg[1 : len(arg)-1]) {
		if el == "..." {
			continue
		}
		s, err := decodeString(el)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// decodeFDPath returns the path strace -y prints after a descriptor
// ("AT_FDCWD<\x2f>" or "3<\x2f\x65\x74\x63>"), or "" when there is none.
func decodeFDPath(arg string) string {
	i := strings.IndexByte(arg, '<')
	if i < 0 || !strings.HasSuffix(arg, ">") {
		return ""
	}
	s, err := strconv.Unquote(`"` + arg[i+1:len(arg)-1] + `"`)
	if err != nil {
		return ""
	}
	return s
}

// resolve makes p absolute against dir (when p is relative) and cleans it;
// /proc/PID/root/X, /proc/self/root/X and /proc/thread-self/root/X become
// /X (the sandbox has one root).
func resolve(dir, p string) string {
	if !strings.HasPrefix(p, "/") {
		if dir == "" {
			dir = "/"
		}
		p = dir + "/" + p
	}
	p = path.Clean(p)
	for {
		m := procRoot.FindStringIndex(p)
		if m == nil {
			return p
		}
		p = path.Clean("/" + p[m[1]:])
	}
}

var procRoot = regexp.MustCompile(`^/proc/(?:self|thread-self|[0-9]+)/root(?:/|$)`)

func isWrite(flags string) bool {
	for _, f := range strings.Split(flags, "|") {
		for _, w := range writeFlags {
			if f == w {
				return true
			}
		}
	}
	return false
}

func addEvent(t *Trace, pid int, c call) {
	switch c.name {
	case "execve", "execveat":
		a := c.args
		if c.name == "execveat" {
			if len(a) < 3 {
				return
			}
			a = a[1:]
		}
		if len(a) < 2 {
			return
		}
		p, err1 := decodeString(a[0])
		argv, err2 := decodeArray(a[1])
		if err1 != nil || err2 != nil {
			return
		}
		if c.name == "execveat" {
			p = resolve(decodeFDPath(c.args[0]), p)
		}
		prog := p
		if p == insideStub && len(argv) > 0 {
			prog = argv[0]
		}
		t.Execs = append(t.Execs, Exec{Pid: pid, Path: p, Program: prog, Argv: argv, Err: c.err})
	case "open", "openat", "openat2", "creat", "truncate":
		a := c.args
		dir := ""
		if c.name == "openat" || c.name == "openat2" {
			if len(a) < 3 {
				return
			}
			dir = decodeFDPath(a[0])
			a = a[1:]
		}
		if len(a) < 1 {
			return
		}
		p, err := decodeString(a[0])
		if err != nil {
			return
		}
		flags := ""
		switch c.name {
		case "creat":
			flags = "O_CREAT|O_WRONLY|O_TRUNC"
		case "truncate":
			flags = "truncate"
		default:
			if len(a) < 2 {
				return
			}
			flags = a[1]
			if c.name == "openat2" { // {flags=O_WRONLY|O_CREAT, mode=…, resolve=…}
				flags = strings.TrimPrefix(strings.Trim(flags, "{}"), "flags=")
				if i := strings.IndexByte(flags, ','); i >= 0 {
					flags = flags[:i]
				}
			}
			if !isWrite(flags) {
				return
			}
		}
		t.Writes = append(t.Writes, Write{Pid: pid, Syscall: c.name, Path: resolve(dir, p), Flags: flags, Err: c.err})
	case "fork", "vfork", "clone", "clone3":
		if strings.Contains(strings.Join(c.args, ","), "CLONE_THREAD") {
			return
		}
		if c.err == "EAGAIN" {
			t.ForkLimited++
		} else if c.err == "" {
			t.Forks++
		}
	case "kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo":
		a := c.args
		sig := 1
		if c.name == "tgkill" || c.name == "rt_tgsigqueueinfo" {
			sig = 2
		}
		if len(a) <= sig {
			return
		}
		target, err := strconv.Atoi(a[0])
		if err != nil {
			return
		}
		t.Signals = append(t.Signals, Signal{Pid: pid, Syscall: c.name, Target: target, Signal: a[sig], Err: c.err})
	}
}

// capWriter keeps the first n bytes written to it and discards the rest.
type capWriter struct {
	buf bytes.Buffer
	n   int
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.n - w.buf.Len(); room > 0 {
		if len(p) > room {
			w.buf.Write(p[:room])
		} else {
			w.buf.Write(p)
		}
	}
	return len(p), nil
}
