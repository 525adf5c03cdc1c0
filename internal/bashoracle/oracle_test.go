package bashoracle

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/testenv"
)

// newOracle returns an oracle or, when the machine cannot run one, fails
// the test under CI and skips it elsewhere.
func newOracle(t *testing.T, cfg Config) *Oracle {
	t.Helper()
	o, err := New(context.Background(), cfg)
	if errors.Is(err, ErrUnavailable) {
		testenv.Unavailable(t, "bash oracle unavailable: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

func hasExec(tr Trace, argv ...string) bool {
	for _, e := range tr.Execs {
		if slices.Equal(e.Argv, argv) {
			return true
		}
	}
	return false
}

func hasWrite(tr Trace, path string) bool {
	for _, w := range tr.Writes {
		if w.Path == path {
			return true
		}
	}
	return false
}

func hasSignal(tr Trace, target int, sig string) bool {
	for _, s := range tr.Signals {
		if s.Target == target && s.Signal == sig {
			return true
		}
	}
	return false
}

func TestRun(t *testing.T) {
	o := newOracle(t, Config{})
	tests := []struct {
		name    string
		command string
		check   func(Trace) bool
	}{
		{"plain", "rm -rf /", func(tr Trace) bool { return hasExec(tr, "rm", "-rf", "/") }},
		{"group redirection", "{ cat /dev/zero; } > /dev/sda", func(tr Trace) bool { return hasWrite(tr, "/dev/sda") }},
		{"kill init", "kill -INT 1", func(tr Trace) bool { return hasSignal(tr, 1, "SIGINT") }},
		{"kill all", "kill -9 -1", func(tr Trace) bool { return hasSignal(tr, -1, "SIGKILL") }},
		{"external kill", "/bin/kill -TERM 1", func(tr Trace) bool { return hasExec(tr, "/bin/kill", "-TERM", "1") }},
		{"carriage return before comment", "true\r#; rm -rf /", func(tr Trace) bool { return hasExec(tr, "rm", "-rf", "/") }},
		{"command substitution", "$(printf rm) -rf /", func(tr Trace) bool { return hasExec(tr, "rm", "-rf", "/") }},
		{"glob in program path", "/bin/r[m] -rf /", func(tr Trace) bool { return hasExec(tr, "/bin/rm", "-rf", "/") }},
		{"brace expansion", "{rm,-rf,/}", func(tr Trace) bool { return hasExec(tr, "rm", "-rf", "/") }},
		{"IFS", "rm${IFS}-rf${IFS}/", func(tr Trace) bool { return hasExec(tr, "rm", "-rf", "/") }},
		{"loop variable", "for d in /etc /usr; do rm -rf $d; done", func(tr Trace) bool {
			return hasExec(tr, "rm", "-rf", "/etc") && hasExec(tr, "rm", "-rf", "/usr")
		}},
		{"bash -c nesting", `bash -c 'sh -c "rm -rf /boot"'`, func(tr Trace) bool { return hasExec(tr, "rm", "-rf", "/boot") }},
		{"piped into a shell", `echo 'rm -rf /' | sh`, func(tr Trace) bool { return hasExec(tr, "rm", "-rf", "/") }},
		{"here-document", "bash <<EOF\nrm -rf /\nEOF", func(tr Trace) bool { return hasExec(tr, "rm", "-rf", "/") }},
		{"cd then glob", "cd /etc && echo ./pass* > /tmp/x; cat /tmp/x", func(tr Trace) bool { return hasWrite(tr, "/tmp/x") }},
		{"relative write", "cd /etc && : > shadow", func(tr Trace) bool { return hasWrite(tr, "/etc/shadow") }},
		{"append", "echo b >> /proc/sysrq-trigger", func(tr Trace) bool { return hasWrite(tr, "/proc/sysrq-trigger") }},
		{"unknown program", "frobnicate-disks --all", func(tr Trace) bool { return hasExec(tr, "frobnicate-disks", "--all") }},
		{"unknown program fails", "false\f# || rm -rf /root", func(tr Trace) bool { return hasExec(tr, "rm", "-rf", "/root") }},
		{"script written and run", "echo 'rm -rf /etc' > /tmp/y.sh; . /tmp/y.sh", func(tr Trace) bool { return hasExec(tr, "rm", "-rf", "/etc") }},
		{"exec -a", "exec -a foo rm -rf /", func(tr Trace) bool {
			return len(tr.Execs) == 1 && tr.Execs[0].Argv[0] == "foo" && strings.HasSuffix(tr.Execs[0].Program, "/rm")
		}},
		{"proc root alias", "echo x > /proc/self/root/dev/sda", func(tr Trace) bool { return hasWrite(tr, "/dev/sda") }},
		{"wrapper stays a stub", "sudo rm -rf /", func(tr Trace) bool {
			return hasExec(tr, "sudo", "rm", "-rf", "/") && !hasExec(tr, "rm", "-rf", "/")
		}},
		{"reads as root would", "cd /root && ls", func(tr Trace) bool { return hasExec(tr, "ls") }},
		{"nothing", "echo hello; x=1; : > /tmp/ok", func(tr Trace) bool {
			return len(tr.Execs) == 0 && len(tr.Signals) == 0 && strings.Contains(string(tr.Output), "hello")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := o.Run(context.Background(), tc.command)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(tr) {
				t.Errorf("%q: trace does not show it:\nexecs %v\nwrites %v\nsignals %v\nexit %d output %q",
					tc.command, tr.Execs, tr.Writes, tr.Signals, tr.ExitCode, tr.Output)
			}
			if tr.TimedOut || tr.Truncated {
				t.Errorf("%q: timed out %v, truncated %v", tc.command, tr.TimedOut, tr.Truncated)
			}
		})
	}
}

// TestRunBounded: endless commands and fork bombs end within the timeout,
// with what they did before recorded.
func TestRunBounded(t *testing.T) {
	o := newOracle(t, Config{Timeout: 2 * time.Second, MaxProcs: 32})
	for _, command := range []string{
		"rm -rf /x; :(){ :|:& };:",
		"rm -rf /x; while :; do :; done",
		"rm -rf /x; yes > /dev/null & sleep 100; exec yes",
		"rm -rf /x; while :; do echo y; done",
		"rm -rf /x; bash -c 'while :; do :; done' & disown; exit 0",
	} {
		t.Run(command, func(t *testing.T) {
			start := time.Now()
			tr, err := o.Run(context.Background(), command)
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
			if !hasExec(tr, "rm", "-rf", "/x") {
				t.Errorf("events before the end are lost: %v", tr.Execs)
			}
			if bomb := strings.HasPrefix(command, "rm -rf /x; :()"); bomb != (tr.ForkLimited > 0) {
				t.Errorf("fork bomb %v but %d forks refused by the process limit", bomb, tr.ForkLimited)
			}
			t.Logf("%v timed out %v truncated %v exit %d", tr.Duration, tr.TimedOut, tr.Truncated, tr.ExitCode)
		})
	}
}

// TestRunTraceCap: a run whose trace exceeds MaxTrace is stopped and marked.
func TestRunTraceCap(t *testing.T) {
	o := newOracle(t, Config{MaxTrace: 64 << 10})
	tr, err := o.Run(context.Background(), "rm -rf /x; while :; do : > /tmp/f; done")
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Truncated || tr.TimedOut {
		t.Errorf("truncated %v timed out %v, want truncated", tr.Truncated, tr.TimedOut)
	}
	if !hasExec(tr, "rm", "-rf", "/x") || len(tr.Writes) < 100 {
		t.Errorf("events lost: %d execs %d writes", len(tr.Execs), len(tr.Writes))
	}
}

// TestRunNoEscape: the command cannot reach the network, write the host's
// files or outlive the run.
func TestRunNoEscape(t *testing.T) {
	o := newOracle(t, Config{Timeout: 2 * time.Second})
	marker := t.TempDir() + "/escaped"
	tr, err := o.Run(context.Background(), "echo x > "+marker+"; exec 3<>/dev/tcp/127.0.0.1/22 && echo connected")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the command wrote %s on the host", marker)
	}
	if !hasWrite(tr, marker) {
		t.Errorf("the write attempt is not recorded: %v", tr.Writes)
	}
	if strings.Contains(string(tr.Output), "connected") {
		t.Errorf("the command reached the network: %q", tr.Output)
	}
}

// TestRunConcurrent: a fork bomb in one run does not exhaust the process
// limit of another run in progress.
func TestRunConcurrent(t *testing.T) {
	o := newOracle(t, Config{Timeout: 2 * time.Second, MaxProcs: 32})
	bomb := make(chan Trace, 1)
	go func() {
		tr, _ := o.Run(context.Background(), ":(){ :|:& };:")
		bomb <- tr
	}()
	time.Sleep(500 * time.Millisecond)
	for i := 0; i < 3; i++ {
		tr, err := o.Run(context.Background(), "for i in 1 2 3 4 5 6 7 8; do (rm -f /x$i) & done; wait")
		if err != nil {
			t.Fatal(err)
		}
		if tr.ForkLimited > 0 || !hasExec(tr, "rm", "-f", "/x8") {
			t.Errorf("run %d: %d forks refused, execs %v", i, tr.ForkLimited, tr.Execs)
		}
	}
	if tr := <-bomb; tr.ForkLimited == 0 {
		t.Errorf("the fork bomb was not limited")
	}
}

func TestRunNUL(t *testing.T) {
	o := newOracle(t, Config{})
	if _, err := o.Run(context.Background(), "rm -rf /\x00x"); !errors.Is(err, ErrNUL) {
		t.Fatalf("got %v, want ErrNUL", err)
	}
}

func TestRunClosed(t *testing.T) {
	o := newOracle(t, Config{})
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Run(context.Background(), "true"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Run after Close: %v, want ErrClosed", err)
	}
	if err := o.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestNewNeedsRoot: without root the oracle is unavailable, saying it needs
// root. As root the test runs as nobody.
func TestNewNeedsRoot(t *testing.T) {
	if !testenv.Unprivileged(t) {
		return // it ran as nobody
	}
	o, err := New(context.Background(), Config{})
	if err == nil {
		o.Close()
	}
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "needs root") {
		t.Fatalf("New without root: %v; want ErrUnavailable saying it needs root", err)
	}
}
