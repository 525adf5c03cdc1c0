package safety_test

// The differential test of issue 11 ("How to prove it"): every corpus
// command runs under real bash in the bash oracle's sandbox
// (internal/bashoracle), and what bash did is judged from the trace alone.
// The checker, DefaultBanList().Match, must block every command for which
// bash executed a banned argv, wrote a protected path, signalled PID 1 or
// every process, or ran into the process limit (a fork bomb).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/bashoracle"
	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/safety"
)

// oracleCorpora are read when present: the banned corpus, the oracle's
// development corpus, and the hand-written remediations (commands that
// must be allowed; for them only the differential check applies). More
// files (JSON lines with a "command" field) can be named in
// SAFETY_ORACLE_CORPUS, separated by colons.
var oracleCorpora = []string{
	"../testdata/safety/banned.jsonl",
	"../testdata/safety/oracle-dev.jsonl",
	"../testdata/safety/remediations.jsonl",
}

// oracleEntry is one corpus line. Oracle is what bash does that is banned
// ("exec", "write", "signal", "none"), "" for a command with no claim.
type oracleEntry struct {
	File    string `json:"-"`
	Name    string `json:"name"`
	Command string `json:"command"`
	Oracle  string `json:"oracle"`
}

func readOracleCorpus(t testing.TB, file string) []oracleEntry {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []oracleEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var e oracleEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s:%d: %v", file, line, err)
		}
		if e.Command == "" {
			t.Fatalf("%s:%d: no command", file, line)
		}
		switch e.Oracle {
		case "", "exec", "write", "signal", "none":
		default:
			t.Fatalf("%s:%d: oracle %q: want exec, write, signal or none", file, line, e.Oracle)
		}
		if e.Name == "" {
			e.Name = fmt.Sprintf("line%d", line)
		}
		e.File = filepath.Base(file)
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return out
}

// loadOracleCorpora reads every corpus that exists; it fails when there is
// none (the development corpus is committed).
func loadOracleCorpora(t testing.TB) []oracleEntry {
	t.Helper()
	files := slices.Clone(oracleCorpora)
	if extra := os.Getenv("SAFETY_ORACLE_CORPUS"); extra != "" {
		files = append(files, strings.Split(extra, ":")...)
	}
	var all []oracleEntry
	for _, f := range files {
		if _, err := os.Stat(f); errors.Is(err, os.ErrNotExist) && !strings.HasPrefix(f, "/") {
			continue
		}
		all = append(all, readOracleCorpus(t, f)...)
	}
	if len(all) == 0 {
		t.Fatalf("no corpus among %v", files)
	}
	return all
}

// newBashOracle returns the sandbox, failing under CI and skipping
// elsewhere when the machine cannot run it.
func newBashOracle(t testing.TB) *bashoracle.Oracle {
	t.Helper()
	o, err := bashoracle.New(context.Background(), bashoracle.Config{})
	if errors.Is(err, bashoracle.ErrUnavailable) {
		testenv.Unavailable(t, "bash oracle unavailable (scripts/install-test-deps.sh installs bwrap and strace): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

// action is one thing bash did that the ban table forbids.
type action struct {
	kind  string // "exec", "write", "signal", "fork"
	what  string
	entry string // the ban-table entry, for execs and writes
	// input marks an exec banned only because its standard input is not
	// known (`nft -f -`, `chpasswd`): the oracle does not record what a
	// stub would have read, so the judge cannot tell whether it was
	// harmful (the same argv with an empty here-string is allowed).
	input bool
}

func (a action) String() string {
	s := a.kind + " " + a.what + " (" + a.entry + ")"
	if a.input {
		s += " [depends on standard input]"
	}
	return s
}

// concrete reports whether the action is itself harmful, as opposed to an
// exec refused because what it runs cannot be checked (inline interpreter
// code, deferred jobs, non-literal text, unknown standard input).
func (a action) concrete() bool {
	switch a.entry {
	case "unanalysable", "inline-code", "deferred":
		return false
	}
	return !a.input
}

// judged returns the actions a difference is reported for: all but those
// that depend on standard input the oracle does not record.
func judged(acts []action) []action {
	var out []action
	for _, a := range acts {
		if !a.input {
			out = append(out, a)
		}
	}
	return out
}

// realShells run for real in the sandbox: what they did is in the trace.
var realShells = map[string]bool{"sh": true, "bash": true, "dash": true, "rbash": true}

// bannedActions judges a trace: what bash actually did that the ban table
// forbids.
//
// The judge is not circular although it calls into package safety. It sees
// only what bash produced after doing all the shell work itself — the
// literal argv of each program bash executed (after quoting, expansion,
// globbing, brace expansion, loops, here-documents, control characters and
// nested shells), the absolute paths it opened for writing and the pid and
// signal of each kill. MatchArgv quotes every argument, so the shell
// analysis that Match is being tested for has nothing left to resolve:
// what remains is the table lookup (program, options, operands, wrapper
// peeling). WriteBanned is a path lookup. Signals need no table at all:
// PID 1 or -1 with any signal but 0. A difference between Match and this
// judge is therefore a difference between the checker's reading of the
// shell text and bash's.
//
// Execs are judged by the program that ran (Exec.Program), not argv[0]:
// `exec -a foo rm -rf /` runs rm, and relative operands are resolved
// against the directory the program started in (see matchExec). Execs of the real shells are skipped:
// their own execs, writes and signals are in the trace.
func bannedActions(bl *safety.BanList, tr bashoracle.Trace) []action {
	var acts []action
	for _, e := range tr.Execs {
		prog := programName(e.Program)
		if realShells[path.Base(prog)] || len(e.Argv) == 0 {
			continue
		}
		argv := append([]string{prog}, e.Argv[1:]...)
		if ban, bad := matchExec(bl, e.Dir, argv, ""); bad {
			_, withEmptyInput := matchExec(bl, e.Dir, argv, " <<< ''")
			// xargs and parallel take the operands of what they run from
			// their input: "xargs rm -rf" is the banned argv the corpus
			// labels exec (testdata/safety/README.md), although with an
			// empty input it would run rm -rf alone.
			operandsFromInput := path.Base(prog) == "xargs" || path.Base(prog) == "parallel"
			acts = append(acts, action{"exec", fmt.Sprintf("%q in %s", argv, e.Dir), ban.Entry, !withEmptyInput && !operandsFromInput})
		}
	}
	for _, w := range tr.Writes {
		if ban, bad := safety.WriteBanned(w.Path); bad {
			acts = append(acts, action{kind: "write", what: w.Path, entry: ban.Entry})
		}
	}
	for _, s := range tr.Signals {
		if (s.Target == 1 || s.Target == -1) && s.Signal != "0" {
			acts = append(acts, action{kind: "signal", what: s.String(), entry: "power"})
		}
	}
	if tr.ForkLimited > 0 {
		acts = append(acts, action{kind: "fork", what: fmt.Sprintf("%d forks refused by the process limit", tr.ForkLimited), entry: "fork-bomb"})
	}
	return acts
}

// programDirs are the directories whose programs the oracle replaces by
// stubs: a program there is named by its base name, as bash found it in
// PATH; any other program (/etc/init.d/ssh) by its path.
var programDirs = map[string]bool{"/usr/local/sbin": true, "/usr/local/bin": true, "/usr/sbin": true, "/usr/bin": true, "/sbin": true, "/bin": true}

func programName(p string) string {
	if programDirs[path.Dir(p)] {
		return path.Base(p)
	}
	return p
}

// matchExec judges argv run in dir, with redirection (when not "") added.
// Relative operands are relative to the directory the program started in,
// which the trace records; the literal `cd 'DIR' && 'ARGV'…` gives the
// table that directory.
func matchExec(bl *safety.BanList, dir string, argv []string, redirection string) (safety.Ban, bool) {
	if dir == "" && redirection == "" {
		return bl.MatchArgv(argv)
	}
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = quoteSingle(a)
	}
	cmd := strings.Join(q, " ") + redirection
	if dir != "" {
		cmd = "cd " + quoteSingle(dir) + " && " + cmd
	}
	return bl.Match(cmd)
}

// honest reports whether the trace shows what the entry's oracle label
// claims: a banned action of that kind, or for "none", no banned write or
// signal and no exec banned for what it does (an exec refused because what
// it runs cannot be checked — inline code, a deferred job — is "none").
// Fork bombs are "none" in the corpus: forks are not an exec, write or
// signal.
func honest(label string, acts []action) bool {
	if label == "" {
		return true
	}
	for _, a := range acts {
		switch {
		case a.kind == "fork", a.input:
		case label == "none" && a.concrete():
			return false
		case a.kind == label:
			return true
		}
	}
	return label == "none"
}

// oracleTimes collects the time per command for the summary.
type oracleTimes struct {
	mu    sync.Mutex
	times []time.Duration
}

func (o *oracleTimes) add(d time.Duration) {
	o.mu.Lock()
	o.times = append(o.times, d)
	o.mu.Unlock()
}

func (o *oracleTimes) summary() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.times) == 0 {
		return "no runs"
	}
	ts := slices.Clone(o.times)
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	var sum time.Duration
	for _, d := range ts {
		sum += d
	}
	return fmt.Sprintf("%d runs, sum %v, mean %v, median %v, p95 %v, max %v",
		len(ts), sum.Round(time.Millisecond), (sum / time.Duration(len(ts))).Round(time.Millisecond),
		ts[len(ts)/2].Round(time.Millisecond), ts[len(ts)*95/100].Round(time.Millisecond), ts[len(ts)-1].Round(time.Millisecond))
}

// TestOracleCorpus runs every corpus command under bash. A command for
// which bash did something banned must be blocked by Match; a banned
// corpus entry's oracle label must be what bash really did.
func TestOracleCorpus(t *testing.T) {
	o := newBashOracle(t)
	bl := safety.DefaultBanList()
	entries := loadOracleCorpora(t)
	var times oracleTimes
	start := time.Now()
	t.Run("run", func(t *testing.T) {
		for _, e := range entries {
			t.Run(e.File+"/"+e.Name, func(t *testing.T) {
				t.Parallel()
				tr, err := o.Run(context.Background(), e.Command)
				if err != nil {
					t.Fatalf("%q: %v", e.Command, err)
				}
				times.add(tr.Duration)
				acts := bannedActions(bl, tr)
				ban, blocked := bl.Match(e.Command)
				if j := judged(acts); len(j) > 0 && !blocked {
					t.Errorf("%q: Match allows it, but bash did: %v", e.Command, j)
				}
				if !honest(e.Oracle, acts) {
					// With blocked=false and label exec, the table
					// bans neither the command nor the argv bash ran:
					// a gap in the table, or a wrong label.
					t.Errorf("%q: labelled %q, but bash did: %v (Match blocked=%v; execs %v, writes %v, signals %v, timed out %v)",
						e.Command, e.Oracle, acts, blocked, tr.Execs, tr.Writes, tr.Signals, tr.TimedOut)
				}
				if testing.Verbose() {
					t.Logf("%v blocked=%v (%s) acts=%v", tr.Duration.Round(time.Millisecond), blocked, ban.Entry, acts)
				}
			})
		}
	})
	t.Logf("%d commands in %v (wall); per command: %s", len(entries), time.Since(start).Round(time.Millisecond), times.summary())
}
