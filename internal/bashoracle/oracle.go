package bashoracle

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ErrUnavailable is wrapped by New's error when the sandbox cannot be built
// on this machine (not root, or bwrap, strace, prlimit, setpriv or bash
// missing).
var ErrUnavailable = errors.New("bashoracle: sandbox unavailable")

// ErrSandbox is wrapped by Run's error when the sandbox did not start the
// command (the command itself failing is not an error: see Trace.ExitCode).
var ErrSandbox = errors.New("bashoracle: sandbox failed")

// ErrNUL is returned by Run for a command that holds a NUL byte, which no
// program can receive as an argument.
var ErrNUL = errors.New("bashoracle: the command holds a NUL byte")

// ErrClosed is returned by Run after Close.
var ErrClosed = errors.New("bashoracle: oracle closed")

// Config configures an Oracle. Zero values are defaulted by New as documented.
type Config struct {
	// Timeout bounds one Run; the command is killed after it and the
	// trace marked TimedOut. Default 5s.
	Timeout time.Duration
	// MaxTrace caps the strace output of one Run in bytes; a run that
	// exceeds it is stopped and marked Truncated. Default 32 MiB.
	MaxTrace int64
	// MaxOutput caps the recorded standard output and error. Default 64 KiB.
	MaxOutput int
	// MaxProcs is the RLIMIT_NPROC of the command's user. Default 128.
	MaxProcs int
	// UID and GID are the unprivileged user and group the command runs
	// as. The process limit counts every process of a user on the machine,
	// so concurrent runs use UID, UID-1, UID-2, … (and GID likewise), one
	// per run in progress: choose a range with no running processes. The
	// default is a random range of 64 ids above 1,000,000 per Oracle, so
	// that test processes running at once (go test runs packages in
	// parallel) never share a user and its process limit.
	UID, GID int
	// Programs are stub names added to StubNames and the host's programs.
	Programs []string
	// Dir is the working directory bash starts in. Default /root, where
	// a root SSH session starts.
	Dir string
	// TempDir is where the stub directory and trace files are created.
	// Default os.TempDir().
	TempDir string
	// Bash, Bwrap, Strace, Prlimit, Setpriv and Stub are the host programs
	// used. Defaults: /bin/bash, then bwrap, strace, prlimit, setpriv and
	// true looked up in PATH.
	Bash, Bwrap, Strace, Prlimit, Setpriv, Stub string
}

// Oracle runs commands under bash in a sandbox. See the package comment.
type Oracle struct {
	cfg   Config
	dir   string // root of the oracle's temporary files
	bin   string // the stub directory, bound over every program directory
	mu    sync.Mutex
	close bool
	slots []bool // uid offsets in use by runs in progress
}

// inside are the sandbox paths of the oracle's own files.
const (
	insideDir     = "/run/nightshift-oracle"
	insideBash    = insideDir + "/bash"
	insideStub    = insideDir + "/stub"
	insideStrace  = insideDir + "/strace"
	insidePrlimit = insideDir + "/prlimit"
	insideSetpriv = insideDir + "/setpriv"
	insideEnv     = insideDir + "/bashenv"
	insideOut     = insideDir + "/out"
)

// bashEnv is sourced by every non-interactive bash in the sandbox (BASH_ENV):
// a command name that has no stub still runs as one, under its own name.
// The handler records the name as a stub exec and then, like bash without
// a handler, fails with 127, so that `missing || cmd` runs cmd as bash would.
const bashEnv = `command_not_found_handle() { (exec -a "$1" ` + insideStub + ` "${@:2}"); return 127; }
`

// hostProgramDirs are the directories whose programs get stubs and which the
// stub directory covers in the sandbox.
var hostProgramDirs = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// New checks the host programs and builds the stub directory.
func New(ctx context.Context, cfg Config) (*Oracle, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.MaxTrace <= 0 {
		cfg.MaxTrace = 32 << 20
	}
	if cfg.MaxOutput <= 0 {
		cfg.MaxOutput = 64 << 10
	}
	if cfg.MaxProcs <= 0 {
		cfg.MaxProcs = 128
	}
	if cfg.UID <= 0 || cfg.GID <= 0 {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("bashoracle: choosing a user id: %w", err)
		}
		base := 1_000_000 + int(binary.BigEndian.Uint32(b[:])%(1<<20))*64 + 63
		if cfg.UID <= 0 {
			cfg.UID = base
		}
		if cfg.GID <= 0 {
			cfg.GID = base
		}
	}
	if cfg.Dir == "" {
		cfg.Dir = "/root"
	}
	if cfg.TempDir == "" {
		cfg.TempDir = os.TempDir()
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: it needs root (it creates namespaces and switches user)", ErrUnavailable)
	}
	if cfg.Bash == "" {
		cfg.Bash = "/bin/bash"
	}
	for _, p := range []struct {
		field *string
		name  string
		pkg   string
	}{
		{&cfg.Bash, "bash", "bash"},
		{&cfg.Bwrap, "bwrap", "bubblewrap"},
		{&cfg.Strace, "strace", "strace"},
		{&cfg.Prlimit, "prlimit", "util-linux"},
		{&cfg.Setpriv, "setpriv", "util-linux"},
		{&cfg.Stub, "true", "coreutils"},
	} {
		name := *p.field
		if name == "" {
			name = p.name
		}
		path, err := exec.LookPath(name)
		if err != nil {
			return nil, fmt.Errorf("%w: %s not found (install the Debian package %s): %v", ErrUnavailable, name, p.pkg, err)
		}
		if path, err = filepath.EvalSymlinks(path); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrUnavailable, name, err)
		}
		*p.field = path
	}
	dir, err := os.MkdirTemp(cfg.TempDir, "bashoracle-")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	o := &Oracle{cfg: cfg, dir: dir, bin: filepath.Join(dir, "bin")}
	if err := o.buildStubs(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%w: building stubs: %v", ErrUnavailable, err)
	}
	return o, nil
}

// buildStubs creates the stub directory: a symlink per program name to the
// stub (or to bash for the shells) as seen inside the sandbox, and BASH_ENV.
func (o *Oracle) buildStubs() error {
	// The directories are read and searched by the sandboxed user.
	if err := os.Chmod(o.dir, 0o755); err != nil {
		return err
	}
	if err := os.Mkdir(o.bin, 0o755); err != nil {
		return err
	}
	names := map[string]bool{}
	for _, d := range hostProgramDirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			names[e.Name()] = true
		}
	}
	for _, n := range append(StubNames(), o.cfg.Programs...) {
		names[n] = true
	}
	for _, s := range realShells {
		names[s] = false
	}
	for n, stub := range names {
		if n == "" || n == "." || n == ".." || filepath.Base(n) != n {
			continue
		}
		target := insideStub
		if !stub {
			target = insideBash
		}
		if err := os.Symlink(target, filepath.Join(o.bin, n)); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(o.dir, "bashenv"), []byte(bashEnv), 0o644)
}

// Close removes the oracle's temporary files. It is idempotent.
func (o *Oracle) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.close {
		return nil
	}
	o.close = true
	return os.RemoveAll(o.dir)
}

// Run runs command as `bash -c command` in a fresh sandbox and returns what
// bash did. A command that fails, times out or exceeds the caps is not an
// error (see Trace); an error means the sandbox could not run it.
func (o *Oracle) Run(ctx context.Context, command string) (Trace, error) {
	o.mu.Lock()
	closed := o.close
	o.mu.Unlock()
	if closed {
		return Trace{}, ErrClosed
	}
	t := Trace{Command: command, ExitCode: -1}
	if strings.ContainsRune(command, 0) {
		return t, ErrNUL
	}
	out, err := os.MkdirTemp(o.dir, "run-")
	if err != nil {
		return t, fmt.Errorf("%w: %v", ErrSandbox, err)
	}
	defer os.RemoveAll(out)
	// out stays 0700: the sandboxed user cannot reach the trace.

	slot := o.takeSlot()
	defer o.freeSlot(slot)
	runCtx, cancel := context.WithTimeout(ctx, o.cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, o.cfg.Bwrap, o.args(out, command, o.cfg.UID-slot, o.cfg.GID-slot)...)
	cmd.Env = []string{}
	cmd.Stdin = nil
	output := &capWriter{n: o.cfg.MaxOutput}
	cmd.Stdout = output
	cmd.Stderr = output
	cmd.WaitDelay = time.Second
	traceFile := filepath.Join(out, "trace")

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return t, fmt.Errorf("%w: starting bwrap: %v", ErrSandbox, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var waitErr error
wait:
	for {
		select {
		case waitErr = <-done:
			break wait
		case <-tick.C:
			if fi, err := os.Stat(traceFile); err == nil && fi.Size() > o.cfg.MaxTrace {
				t.Truncated = true
				cancel()
			}
		}
	}
	t.Duration = time.Since(start)
	if runCtx.Err() != nil && !t.Truncated {
		if ctx.Err() != nil {
			return t, ctx.Err()
		}
		t.TimedOut = true
	}
	t.Output = output.buf.Bytes()
	if waitErr == nil {
		t.ExitCode = 0
	} else if ee := (*exec.ExitError)(nil); errors.As(waitErr, &ee) && ee.Exited() {
		t.ExitCode = ee.ExitCode()
	}
	f, err := os.Open(traceFile)
	if err != nil {
		return t, fmt.Errorf("%w: no trace (%v); output: %s", ErrSandbox, err, t.Output)
	}
	defer f.Close()
	if err := parseTrace(io.LimitReader(f, o.cfg.MaxTrace), insideBash, &t); err != nil {
		return t, fmt.Errorf("%w; output: %s", err, t.Output)
	}
	return t, nil
}

// takeSlot returns the lowest uid offset not used by a run in progress.
func (o *Oracle) takeSlot() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, used := range o.slots {
		if !used {
			o.slots[i] = true
			return i
		}
	}
	o.slots = append(o.slots, true)
	return len(o.slots) - 1
}

func (o *Oracle) freeSlot(i int) {
	o.mu.Lock()
	o.slots[i] = false
	o.mu.Unlock()
}

// args returns bwrap's arguments for one run whose trace goes to out.
func (o *Oracle) args(out, command string, uid, gid int) []string {
	a := []string{
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--perms", "1777", "--tmpfs", "/tmp",
		"--perms", "1777", "--tmpfs", "/var/tmp",
		"--tmpfs", "/run",
		"--ro-bind", o.cfg.Bash, insideBash,
		"--ro-bind", o.cfg.Stub, insideStub,
		"--ro-bind", o.cfg.Strace, insideStrace,
		"--ro-bind", o.cfg.Prlimit, insidePrlimit,
		"--ro-bind", o.cfg.Setpriv, insideSetpriv,
		"--ro-bind", filepath.Join(o.dir, "bashenv"), insideEnv,
		"--bind", out, insideOut,
	}
	for _, d := range hostProgramDirs {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			a = append(a, "--ro-bind", o.bin, d)
		}
	}
	a = append(a,
		// No user namespace: the process limit must count against a real,
		// unprivileged user (root is exempt from RLIMIT_NPROC).
		"--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--hostname", "nightshift-oracle",
		// strace is PID 1: kill(-1, …) and kill(1, …) from the command
		// cannot stop the tracer.
		"--as-pid-1",
		"--die-with-parent", "--new-session",
		// What strace and setpriv need; the command keeps only
		// CAP_DAC_READ_SEARCH.
		"--cap-drop", "ALL",
		"--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP",
		"--cap-add", "CAP_SYS_PTRACE", "--cap-add", "CAP_DAC_READ_SEARCH",
		"--clearenv",
		"--setenv", "PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"--setenv", "HOME", "/root",
		"--setenv", "LANG", "C",
		"--setenv", "BASH_ENV", insideEnv,
		"--chdir", o.cfg.Dir,
		"--",
		insideStrace, "-f", "--seccomp-bpf", "-y", "-qq", "-xx", "-s", "1048576",
		"-e", "signal=none",
		"-e", "trace=execve,execveat,fork,vfork,clone,clone3,open,openat,openat2,creat,truncate,kill,tkill,tgkill,rt_sigqueueinfo,rt_tgsigqueueinfo",
		"-o", insideOut+"/trace",
		insidePrlimit, fmt.Sprintf("--nproc=%d:%d", o.cfg.MaxProcs, o.cfg.MaxProcs),
		insideSetpriv, fmt.Sprintf("--reuid=%d", uid), fmt.Sprintf("--regid=%d", gid), "--clear-groups",
		"--inh-caps=-all,+dac_read_search", "--ambient-caps=+dac_read_search", "--bounding-set=-all,+dac_read_search",
		insideBash, "-c", command,
	)
	return a
}
