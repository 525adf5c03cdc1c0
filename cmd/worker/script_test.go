package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/nightshift-dev/nightshift/internal/temporaltest"
	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/served"
)

// TestMain makes the test binary also the worker command the scripts run
// (testscript runs it as a separate process: real exit codes, stdin and
// stdout).
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"worker": main})
}

// TestScripts runs the CLI scripts in testdata/script: every subcommand,
// its help, and each bad input with its exact message and exit status.
//
// Besides testscript's own commands they have:
//
//	status N PROG [ARGS…]   run PROG, which must exit with status N (its
//	                        stdout and stderr are kept for stdout/stderr)
//	mkfifo NAME             make a FIFO (nothing ever writes to it)
//	sparse NAME SIZE        make a file of SIZE bytes (a hole: no disk
//	                        used) of zero bytes, SIZE as 4MiB+1 or 100
//	pathonly TOOL…          set PATH to a directory holding only TOOLs
//	                        (and worker), so a script proves what it does
//	                        not need (sshd, ssh, bwrap)
//	freeport VAR            set VAR to a free 127.0.0.1:PORT
//	waitport ADDR           wait (up to three minutes) until ADDR accepts TCP
//	simhosts [-group G] [-zone Z] NAME…
//	                        start simulated SSH hosts (internal/simhost),
//	                        write hosts.yaml, hosts.ini, known_hosts and
//	                        id_ed25519, and set $NAME (upper-cased) to each
//	                        host's 127.0.0.1:PORT
//	eventually DURATION PROG [ARGS…]
//	                        run PROG every half second until it exits 0
//	                        (fails after DURATION; the last run's stdout
//	                        and stderr are kept)
//	waitfaults VAR N        wait until the fault server VAR has answered N
//	                        chat completions with its fault
//	temporal VAR            start a Temporal dev server
//	                        (internal/temporaltest) and set VAR to its
//	                        address
//	faultserver VAR FAULT TIMES [RULE=COMMAND…]
//	                        start the model fault server in front of the
//	                        vLLM simulator; VAR is its OpenAI base URL
//
// and the conditions [hf_native] (the native tokenizer backend is built in),
// [temporal] (the Temporal CLI is installed), [sqlite3] (the sqlite3 shell
// is) and [llama31] (scripts/fetch-tokenizers.sh fetched the Llama 3.1
// tokenizer; $LLAMA31_TOKENIZER is its tokenizer.json); the last three are
// an error under CI when false.
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status":      cmdStatus,
			"mkfifo":      cmdMkfifo,
			"sparse":      cmdSparse,
			"pathonly":    cmdPathOnly,
			"freeport":    cmdFreePort,
			"waitport":    cmdWaitPort,
			"simhosts":    cmdSimHosts,
			"faultserver": cmdFaultServer,
			"temporal":    cmdTemporal,
			"waitfaults":  cmdWaitFaults,
			"eventually":  cmdEventually,
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "hf_native":
				return served.BackendNative.Available(), nil
			case "temporal":
				_, err := temporaltest.Find()
				return available(err == nil, "the Temporal CLI")
			case "sqlite3":
				_, err := exec.LookPath("sqlite3")
				return available(err == nil, "sqlite3")
			case "llama31":
				_, err := os.Stat(llama31Tokenizer())
				return available(err == nil, "the Llama 3.1 tokenizer (scripts/fetch-tokenizers.sh)")
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			env.Values[faultServersKey{}] = new(sync.Map)
			env.Setenv("LLAMA31_TOKENIZER", llama31Tokenizer())
			// The module root, and the go command's directories, for
			// scripts that run the repository's scripts (which build the
			// worker with go build).
			repo, err := filepath.Abs(filepath.Join("..", ".."))
			if err != nil {
				return err
			}
			env.Setenv("REPO", repo)
			goEnvOnce.Do(func() {
				out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
				if err == nil {
					goEnv = strings.Fields(string(out))
				}
			})
			if len(goEnv) == 3 {
				env.Setenv("GOCACHE", goEnv[0])
				env.Setenv("GOMODCACHE", goEnv[1])
				env.Setenv("GOPATH", goEnv[2])
			}
			return nil
		},
		RequireExplicitExec: true,
	})
}

// goEnv is `go env GOCACHE GOMODCACHE GOPATH`, read once.
var (
	goEnvOnce sync.Once
	goEnv     []string
)

// available is a condition on something the test command installs: false
// on a developer's machine without it (the script skips what needs it), an
// error under CI.
func available(present bool, what string) (bool, error) {
	if !present && testenv.CI() {
		return false, fmt.Errorf("%s is missing (CI is set; scripts/install-test-deps.sh installs it)", what)
	}
	return present, nil
}

// llama31Tokenizer is where scripts/fetch-tokenizers.sh puts the Llama 3.1
// tokenizer.json.
func llama31Tokenizer() string {
	root := os.Getenv("NIGHTSHIFT_TOKENIZERS_DIR")
	if root == "" {
		root = filepath.Join("..", "..", ".cache", "tokenizers")
	}
	p, err := filepath.Abs(filepath.Join(root, "llama3.1", "tokenizer.json"))
	if err != nil {
		return filepath.Join(root, "llama3.1", "tokenizer.json")
	}
	return p
}

func cmdEventually(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: eventually DURATION PROG [ARGS…]")
	}
	d, err := time.ParseDuration(args[0])
	ts.Check(err)
	deadline := time.Now().Add(d)
	for {
		err := ts.Exec(args[1], args[2:]...)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("eventually: %s did not succeed in %s: %v", args[1], d, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func cmdTemporal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: temporal VAR")
	}
	bin, err := temporaltest.Find()
	ts.Check(err)
	addr, stop, err := temporaltest.Run(bin)
	ts.Check(err)
	ts.Defer(stop)
	ts.Setenv(args[0], addr)
}

func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status N PROG [ARGS…]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: %v", err)
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("status: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mkfifo NAME")
	}
	ts.Check(syscall.Mkfifo(ts.MkAbs(args[0]), 0o644))
}

func cmdSparse(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sparse NAME SIZE")
	}
	var size int64
	for _, term := range strings.Split(args[1], "+") {
		unit := int64(1)
		for suffix, u := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20} {
			if s, ok := strings.CutSuffix(term, suffix); ok {
				term, unit = s, u
			}
		}
		n, err := strconv.ParseInt(term, 10, 64)
		ts.Check(err)
		size += n * unit
	}
	name := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(filepath.Dir(name), 0o755))
	f, err := os.Create(name)
	ts.Check(err)
	ts.Check(f.Truncate(size))
	ts.Check(f.Close())
}

func cmdPathOnly(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: pathonly TOOL…")
	}
	bin := ts.MkAbs("pathonly-bin")
	ts.Check(os.MkdirAll(bin, 0o755))
	worker, err := exec.LookPath("worker")
	if err != nil {
		// testscript puts its commands on the script's PATH, not the test's.
		for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
			if _, err := os.Stat(filepath.Join(dir, "worker")); err == nil {
				worker = filepath.Join(dir, "worker")
				break
			}
		}
	}
	if worker == "" {
		ts.Fatalf("pathonly: no worker command on PATH")
	}
	ts.Check(os.Symlink(worker, filepath.Join(bin, "worker")))
	for _, tool := range args {
		p, err := exec.LookPath(tool)
		ts.Check(err)
		ts.Check(os.Symlink(p, filepath.Join(bin, tool)))
	}
	ts.Setenv("PATH", bin)
}

func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport VAR")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	addr := ln.Addr().String()
	ts.Check(ln.Close())
	ts.Setenv(args[0], addr)
}

func cmdWaitPort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitport ADDR")
	}
	deadline := time.Now().Add(3 * time.Minute) // a hang guard: scripts run in parallel
	for {
		c, err := net.DialTimeout("tcp", args[0], time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitport: %s: %v", args[0], err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
