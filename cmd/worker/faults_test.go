package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/sshtarget"
	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"

	"github.com/nightshift-dev/nightshift"
)

// tasksOf reads the tasks of run 1 of the journal at path, by rule.
func tasksOf(t *testing.T, path string) map[string]journal.Task {
	t.Helper()
	j, err := journal.Open(context.Background(), path, journal.Config{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	tasks, err := j.Tasks(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]journal.Task{}
	for _, tk := range tasks {
		out[tk.Rule+"@"+tk.Host] = tk
	}
	return out
}

// fault: max-attempts-cap
// --max-attempts caps every rule, its own max_attempts included; a rule
// whose max_attempts is lower keeps it. aide_db (max_attempts 4) is never
// fixed, so its attempts are exactly the cap that applied.
func TestMaxAttemptsCapsTheNight(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		flag string
		want int
	}{
		{"flag below the rule's", "2", 2},
		{"flag above the rule's", "6", 4},
		{"no flag", "", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newBatchFixture(t, 1, 4)
			j := filepath.Join(f.dir, "night.db")
			args := f.runArgs(j, "--no-progress")
			if tt.flag != "" {
				args = append(args, "--max-attempts", tt.flag)
			}
			code, out, errOut := cli(t, "", args...)
			if code != exitNotFixed || !strings.Contains(out, "3 of 3 rules × hosts finished") {
				t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
			}
			if got := tasksOf(t, j)["aide_db@web1"].Attempts; got != tt.want {
				t.Errorf("aide_db made %d attempts, want %d", got, tt.want)
			}
		})
	}
}

// cliIn runs the worker command in a child process started by wrap (a
// command line that ends with the program to run, e.g. unshare's) and
// returns its exit code and output.
func cliIn(t *testing.T, wrap []string, args ...string) (int, string) {
	t.Helper()
	a, _ := json.Marshal(args)
	cmd := exec.Command(wrap[0], append(wrap[1:], os.Args[0], "-test.run=^TestCLIProcess$")...)
	cmd.Env = append(os.Environ(), "NIGHTSHIFT_CLI_ARGS="+string(a))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%v: %v\n%s", wrap, err, out)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// newJournal makes a journal at path holding one run with one task.
func newJournal(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	j, err := journal.Open(ctx, path, journal.Config{})
	if err != nil {
		t.Fatal(err)
	}
	run, err := j.StartRun(ctx, journal.RunSpec{Name: "night"})
	if err == nil {
		_, err = j.StartTask(ctx, run, "motd_banner", "web1")
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

// fault: history-read-only
// history reads a journal on a read-only file system (a read-only bind
// mount in a mount namespace of its own: root may write any file, not a
// read-only mount), where SQLite cannot create the journal's -shm file.
func TestHistoryReadOnlyJournal(t *testing.T) {
	t.Parallel()
	testenv.NeedRoot(t, "a read-only bind mount in a mount namespace")
	if _, err := exec.LookPath("unshare"); err != nil {
		testenv.Unavailable(t, "unshare (util-linux): %v", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "night.db")
	newJournal(t, path)
	// The mount is private to the child's namespace and gone with it.
	wrap := []string{"unshare", "--mount", "--propagation", "private", "sh", "-c",
		`mount --bind -o ro "$0" "$0" && exec "$@"`, dir}
	code, out := cliIn(t, wrap, "history", path)
	if code != exitOK || !strings.Contains(out, "0/1") || !strings.Contains(out, "night") {
		t.Fatalf("history of a read-only journal: exit %d\n%s", code, out)
	}
	code, out = cliIn(t, wrap, "history", path, "--run", "1")
	if code != exitOK || !strings.Contains(out, "motd_banner") {
		t.Fatalf("history --run 1 of a read-only journal: exit %d\n%s", code, out)
	}
}

// fault: journal-lock-identity
// A journal another worker has open for writing is refused, whatever path
// reaches it — the path itself, a symlink, a hard link, a path through
// ".." — before anything runs: no run is added, no host sees a command.
func TestJournalLockedByIdentity(t *testing.T) {
	ctx := context.Background()
	f := newBatchFixture(t, 1, 2)
	j := filepath.Join(f.dir, "night.db")
	held, err := journal.Open(ctx, j, journal.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := held.StartRun(ctx, journal.RunSpec{Name: "night", Config: map[string]any{"rules_paths": []string{f.rules}, "inventory": f.inventory}}); err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	link := filepath.Join(f.dir, "link.db")
	hard := filepath.Join(f.dir, "hard.db")
	sub := filepath.Join(f.dir, "sub")
	for _, err := range []error{os.Symlink(j, link), os.Link(j, hard), os.Mkdir(sub, 0o755)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	dotdot := filepath.Join(sub, "..", "night.db")
	tests := []struct {
		name string
		args []string
	}{
		{"run, same path", f.runArgs(j)},
		{"run through a symlink", f.runArgs(link)},
		{"run through a hard link", f.runArgs(hard)},
		{"resume through a symlink", []string{"resume", link}},
		{"resume through ..", []string{"resume", dotdot}},
		{"prune through a hard link", []string{"history", hard, "--prune", "1ns"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := cli(t, "", tt.args...)
			if code != exitUsage || !strings.Contains(errOut, "journal is in use by another writer") {
				t.Fatalf("exit %d, want 2 naming the journal in use\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
		})
	}
	runs, err := held.Runs(ctx)
	if err != nil || len(runs) != 1 {
		t.Errorf("the journal holds %d runs (%v), want the 1 it had", len(runs), err)
	}
	if n := len(f.hosts[0].Log()); n != 0 {
		t.Errorf("the host saw %d commands, want none", n)
	}
}

// fault: journal-empty-or-copied
// Journals that hold no run say so: a zero-byte file is refused by resume
// and history (and left at zero bytes: no schema is written into it), a
// journal that never recorded a run is not "every run is done", and a copy
// made without its -wal file names the missing file instead of "schema
// version 0".
func TestEmptyOrCopiedJournal(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	norun := filepath.Join(dir, "norun.db")
	j, err := journal.Open(ctx, norun, journal.Config{})
	if err != nil {
		t.Fatal(err)
	}
	j.Close()
	// A journal in use: its records are in its -wal file until a
	// checkpoint; the copy takes the main file only.
	live := filepath.Join(dir, "live.db")
	lj, err := journal.Open(ctx, live, journal.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer lj.Close()
	if _, err := lj.StartRun(ctx, journal.RunSpec{Name: "night"}); err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(dir, "copied.db")
	data, err := os.ReadFile(live)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copied, data, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"resume of a zero-byte file", []string{"resume", empty}, "is empty (0 bytes): no run was ever recorded in it"},
		{"history of a zero-byte file", []string{"history", empty}, "is empty (0 bytes): no run was ever recorded in it"},
		{"resume of a journal without a run", []string{"resume", norun}, "no run is recorded in " + norun},
		{"resume of a copy without its -wal", []string{"resume", copied}, "journal's -wal file is missing: its records are in " + copied + "-wal"},
		{"history of a copy without its -wal", []string{"history", copied}, "journal's -wal file is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := cli(t, "", tt.args...)
			if code != exitUsage || !strings.Contains(errOut, tt.want) {
				t.Fatalf("exit %d, want 2 with %q\nstdout:\n%s\nstderr:\n%s", code, tt.want, out, errOut)
			}
		})
	}
	if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
		t.Errorf("the zero-byte journal was changed: %v, %v", fi.Size(), err)
	}
}

// stoppedNight starts a night of 3 hosts × 3 rules (aide_db never fixed,
// 40 attempts) and stops it with one SIGINT once every host is at its last
// rule: an unfinished run 1 to resume.
func stoppedNight(t *testing.T) (*batchFixture, string) {
	t.Helper()
	f := newBatchFixture(t, 3, 40)
	j := filepath.Join(f.dir, "night.db")
	cmd, out := startCLI(t, f.runArgs(j, "--parallel-hosts", "3", "--model-concurrency", "1", "--no-progress"))
	waitSteps(t, j)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &ee) || ee.ExitCode() != exitNotFixed {
		t.Fatalf("stopped night: %v, want exit 1\n%s", err, out)
	}
	return f, j
}

// fault: rules-changed
// resume refuses rules that changed since the run started, naming each
// rule changed, added or removed, and changes nothing in the journal;
// --accept-changed-rules resumes with them.
func TestResumeRefusesChangedRules(t *testing.T) {
	t.Parallel()
	f, j := stoppedNight(t)
	before := tasksOf(t, j)
	old, err := os.ReadFile(f.rules)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(old), "Build the AIDE database", "Build the AIDE database now", 1)
	changed = strings.Replace(changed, "  - {id: motd_banner", "  - {id: motd_banner2", 1)
	if err := os.WriteFile(f.rules, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, "", "resume", j)
	want := "the rules changed since run 1 started: aide_db changed (" + f.rules + ":4); motd_banner removed; motd_banner2 added (" + f.rules + ":3); resuming would mix two versions of a rule in one run (pass --accept-changed-rules"
	if code != exitUsage || !strings.Contains(errOut, want) {
		t.Fatalf("resume with changed rules: exit %d, want 2 with\n%s\nstdout:\n%s\nstderr:\n%s", code, want, out, errOut)
	}
	if after := tasksOf(t, j); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the refused resume changed the tasks:\n%v\nwas\n%v", after, before)
	}
	// Only the title changed: --accept-changed-rules resumes with it.
	titled := strings.Replace(string(old), "Build the AIDE database", "Build the AIDE database now", 1)
	if err := os.WriteFile(f.rules, []byte(titled), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = cli(t, "", "resume", j, "--no-progress", "--accept-changed-rules")
	if code != exitNotFixed || !strings.Contains(out, "9 of 9 rules × hosts finished") ||
		!strings.Contains(errOut, "resuming run 1 with changed rules (--accept-changed-rules): aide_db changed") {
		t.Fatalf("resume --accept-changed-rules: exit %d\n%s\n%s", code, out, errOut)
	}

	// A rule that only moved in its file is the same rule.
	f, j = stoppedNight(t)
	old, err = os.ReadFile(f.rules)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.rules, append([]byte("# a comment moves every rule down a line\n"), old...), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = cli(t, "", "resume", j, "--no-progress")
	if code != exitNotFixed || !strings.Contains(out, "9 of 9 rules × hosts finished") {
		t.Fatalf("resume with the same rules moved: exit %d\n%s\n%s", code, out, errOut)
	}
}

// fault: report-unwritable
// A report path that cannot be written — an existing file or a directory
// on a read-only file system — is refused at the start (exit 2), before
// any host is touched or the journal is created, not after the night.
func TestReportPathCheckedAtStart(t *testing.T) {
	testenv.NeedRoot(t, "a read-only bind mount in a mount namespace")
	if _, err := exec.LookPath("unshare"); err != nil {
		testenv.Unavailable(t, "unshare (util-linux): %v", err)
	}
	f := newBatchFixture(t, 1, 2)
	ro := filepath.Join(f.dir, "reports")
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(ro, "old.xml")
	if err := os.WriteFile(old, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wrap := []string{"unshare", "--mount", "--propagation", "private", "sh", "-c",
		`mount --bind -o ro "$0" "$0" && exec "$@"`, ro}
	j := filepath.Join(f.dir, "night.db")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"new HTML report", []string{"--html", filepath.Join(ro, "night.html")}, "--html " + ro + "/night.html: directory " + ro + " cannot be written: read-only file system"},
		{"existing JUnit report", []string{"--junit", old}, "--junit " + old + ": cannot be written: read-only file system"},
		{"new JSON report", []string{"--json-report", filepath.Join(ro, "night.json")}, "directory " + ro + " cannot be written"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := cliIn(t, wrap, f.runArgs(j, tt.args...)...)
			if code != exitUsage || !strings.Contains(out, tt.want) {
				t.Fatalf("exit %d, want 2 with %q\n%s", code, tt.want, out)
			}
			if n := len(f.hosts[0].Log()); n != 0 {
				t.Errorf("the host saw %d commands, want none", n)
			}
			if _, err := os.Stat(j); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the journal was created (%v)", err)
			}
		})
	}
}

// startWrapped runs the worker command in a child process started through
// wrap (nil: directly), its output in the returned buffer.
func startWrapped(t testing.TB, wrap []string, args []string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	a, _ := json.Marshal(args)
	argv := append(append([]string(nil), wrap...), os.Args[0], "-test.run=^TestCLIProcess$")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "NIGHTSHIFT_CLI_ARGS="+string(a))
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, out
}

// waitFor polls cond every 20ms, failing the test after three minutes (a
// hang guard, not a measure: the tests run in parallel, and a race-enabled
// worker process starting on a loaded 2-core machine can take a minute).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("waited three minutes for %s", what)
}

// exitOf waits for cmd to end and returns its exit code. The process must
// end within the hang guard, far above what any step here takes and far
// below the waits a stop must cut short (Retry-After: 120).
func exitOf(t *testing.T, cmd *exec.Cmd, out *syncBuffer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode()
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the process did not end within 30s of the signal (it should within seconds):\n%s", out)
		return -1
	}
}

// faultServer stands in front of the model server: while down is set, it
// answers every request under /v1/ it is told to with 503 and
// Retry-After: 120 (a server asking for a long wait), counting them.
type faultServer struct {
	url     string
	down    atomic.Bool
	paths   []string // the paths refused while down; nil: all
	refused atomic.Int64
}

func newFaultServer(t *testing.T, upstream string, paths ...string) *faultServer {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	fs := &faultServer{paths: paths}
	proxy := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fs.down.Load() && (fs.paths == nil || slices.Contains(fs.paths, r.URL.Path)) {
			fs.refused.Add(1)
			w.Header().Set("Retry-After", "120")
			http.Error(w, `{"object":"error","message":"overloaded","type":"ServiceUnavailable","code":503}`, http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	fs.url = srv.URL
	return fs
}

// fault: stop-during-model-wait
// The first SIGTERM while every host waits on a model server that asked for
// a two-minute wait (503, Retry-After: 120) ends the process within
// seconds, exit 1 naming `worker resume`; the journal is consistent and
// resume finishes the night with every fix run once on every host.
func TestFirstSignalEndsModelWait(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t, 3, 40)
	fs := newFaultServer(t, strings.TrimSuffix(f.baseURL, "/v1"), "/v1/chat/completions")
	args := f.runArgs(filepath.Join(f.dir, "night.db"), "--parallel-hosts", "3", "--model-concurrency", "1", "--no-progress",
		"--base-url", fs.url+"/v1", "--retry-deadline", "10m")
	j := filepath.Join(f.dir, "night.db")
	cmd, out := startWrapped(t, nil, args)
	waitSteps(t, j)
	fs.down.Store(true)
	waitFor(t, "a model call refused", func() bool { return fs.refused.Load() >= 1 })
	time.Sleep(200 * time.Millisecond) // into the wait the 503 asked for
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, cmd, out); code != exitNotFixed || !strings.Contains(out.String(), "worker resume") {
		t.Fatalf("after one SIGTERM: exit %d, want 1 naming worker resume:\n%s", code, out)
	}
	fs.down.Store(false)
	code, rout, rerr := cli(t, "", "resume", j, "--no-progress")
	if code != exitNotFixed || !strings.Contains(rout, "9 of 9 rules × hosts finished") {
		t.Fatalf("resume: exit %d\n%s\n%s", code, rout, rerr)
	}
	for _, h := range f.hosts {
		if n := h.Count("set root_login no"); n != 1 {
			t.Errorf("the fix ran %d times on a host, want 1", n)
		}
	}
}

// fault: signal-at-start
// A signal while the worker waits for the model server at start (it asked
// for a two-minute wait) ends it at once with exit 1 and a line saying so
// — SIGTERM, SIGINT, and SIGINT to a worker started with SIGINT ignored
// (a background job of a non-interactive script).
func TestSignalDuringStartUp(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t, 1, 2)
	fs := newFaultServer(t, strings.TrimSuffix(f.baseURL, "/v1"))
	fs.down.Store(true)
	tests := []struct {
		name string
		wrap []string
		sig  syscall.Signal
	}{
		{"SIGTERM", nil, syscall.SIGTERM},
		{"SIGINT", nil, syscall.SIGINT},
		{"SIGINT ignored at start", []string{"sh", "-c", `trap '' INT; exec "$@"`, "sh"}, syscall.SIGINT},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := filepath.Join(f.dir, fmt.Sprintf("night%d.db", i))
			cmd, out := startWrapped(t, tt.wrap, f.runArgs(j, "--base-url", fs.url+"/v1", "--retry-deadline", "10m", "--no-progress"))
			waitFor(t, "the wait for the model server", func() bool { return strings.Contains(out.String(), "retrying in 2m0s") })
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			code := exitOf(t, cmd, out)
			if want := "worker: stopped by a signal while waiting for the model server " + fs.url + "/v1; nothing was run on any host"; code != exitNotFixed || !strings.Contains(out.String(), want) {
				t.Fatalf("exit %d, want 1 with %q:\n%s", code, want, out)
			}
			if n := len(f.hosts[0].Log()); n != 0 {
				t.Errorf("the host saw %d commands, want none", n)
			}
		})
	}
}

// sshNight is a night of two rules on one real OpenSSH host (sshd on
// loopback, internal/sshtarget) and the vLLM simulator. The commands are
// the test's own and touch only dir: rule a's first attempt runs
// "touch dir/started-1; sleep 3" (a wrong fix, during which the test kills
// sshd), its second the fix; rule b is fixed at its second attempt too.
type sshNight struct {
	dir, journal string
	target       *sshtarget.Target
	args         []string
}

func newSSHNight(t *testing.T) *sshNight {
	t.Helper()
	ctx := context.Background()
	n := &sshNight{dir: t.TempDir()}
	n.journal = filepath.Join(n.dir, "night.db")
	tg, err := sshtarget.Start(ctx, sshtarget.Options{})
	if err != nil {
		t.Fatalf("start real sshd (the test command installs openssh-server): %v", err)
	}
	t.Cleanup(func() { tg.Close() })
	n.target = tg
	m, err := served.Offline(served.Config{Tokenizer: "qwen3"})
	if err != nil {
		t.Fatal(err)
	}
	counter := vllmsim.NewModelCounter(m)
	srv, err := vllmsim.New(vllmsim.Config{Counter: counter, Policy: vllmsim.Eventual(vllmsim.EventualConfig{FixAt: 2,
		WrongFixes: []string{"touch " + n.dir + "/started-%d; sleep 3"},
		Fixes:      map[string]string{"a": "touch " + n.dir + "/a", "b": "touch " + n.dir + "/b"}})})
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := srv.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	rulesFile, inv := filepath.Join(n.dir, "rules.yaml"), filepath.Join(n.dir, "hosts.yaml")
	for path, data := range map[string]string{
		rulesFile: fmt.Sprintf("rules:\n  - {id: a, title: Rule a, check: \"test -f %s/a\"}\n  - {id: b, title: Rule b, check: \"test -f %s/b\"}\n", n.dir, n.dir),
		inv:       fmt.Sprintf("hosts:\n  - host: web1\n    address: 127.0.0.1\n    port: %d\n    user: %s\n", tg.Port, tg.User),
	} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	n.args = []string{"run", "--rules", rulesFile, "--inventory", inv, "--journal", n.journal, "--identity", tg.IdentityFile,
		"--known-hosts", tg.KnownHostsFile, "--base-url", url + "/v1", "--no-progress", "--sandbox", "off"}
	return n
}

// outage starts the night with extra flags, kills sshd (listener and
// sessions) while rule a's first command runs, and returns the process.
func (n *sshNight) outage(t *testing.T, extra ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd, out := startWrapped(t, nil, append(append([]string(nil), n.args...), extra...))
	waitFor(t, "rule a's first command", func() bool {
		_, err := os.Stat(filepath.Join(n.dir, "started-1"))
		return err == nil
	})
	n.target.Stop()
	return cmd, out
}

// fault: ssh-outage
// sshd is killed (listener and sessions) during a command and comes back
// on the same port 20 s later: the host is redialled until it answers
// (--host-reconnect-deadline, 10m by default), the night goes on and ends
// with both rules fixed, no host unreachable.
func TestNightOutlastsSSHOutage(t *testing.T) {
	t.Parallel()
	n := newSSHNight(t)
	cmd, out := n.outage(t)
	time.Sleep(20 * time.Second)
	if err := n.target.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, cmd, out); code != exitOK || !strings.Contains(out.String(), "2 of 2 rules × hosts finished") || strings.Contains(out.String(), "unreachable") {
		t.Fatalf("night across a 20 s SSH outage: exit %d, want 0 with both rules finished and no host unreachable:\n%s", code, out)
	}
	tasks := tasksOf(t, n.journal)
	for _, r := range []string{"a@web1", "b@web1"} {
		if tasks[r].Status != nightshift.RuleFixed {
			t.Errorf("%s: %s, want fixed", r, tasks[r].Status)
		}
	}
}

// fault: ssh-unreachable-resume
// A host that stays down past --host-reconnect-deadline is marked
// unreachable (exit 1, named); once it is back, resume tries it again and
// finishes its rules.
func TestResumeRetriesUnreachableHost(t *testing.T) {
	t.Parallel()
	n := newSSHNight(t)
	cmd, out := n.outage(t, "--host-reconnect-deadline", "2s")
	if code := exitOf(t, cmd, out); code != exitNotFixed || !strings.Contains(out.String(), "unreachable: web1") {
		t.Fatalf("night with the host down: exit %d, want 1 naming web1 unreachable:\n%s", code, out)
	}
	if err := n.target.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	code, rout, rerr := cli(t, "", "resume", n.journal, "--no-progress")
	if code != exitOK || !strings.Contains(rout, "2 of 2 rules × hosts finished") || strings.Contains(rout, "unreachable") {
		_, h, _ := cli(t, "", "history", n.journal, "--run", "1")
		t.Fatalf("resume with the host back: exit %d\n%s\n%s\n%s", code, rout, rerr, h)
	}
}

// fault: stop-counts
// A night stopped before every host started: the stop message, the
// summary, history and the JSON report agree on what was planned (rules ×
// hosts), finished and never started; the rules × hosts never started are
// counted in the report, not listed one by one.
func TestStopCountsPlannedTasks(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t, 3, 40)
	j := filepath.Join(f.dir, "night.db")
	jsonOut := filepath.Join(f.dir, "night.json")
	cmd, out := startWrapped(t, nil, f.runArgs(j, "--parallel-hosts", "1", "--model-concurrency", "1", "--no-progress", "--json-report", jsonOut))
	waitFor(t, "the first host at its last rule", func() bool {
		db, err := journal.Open(context.Background(), j, journal.Config{ReadOnly: true})
		if err != nil {
			return false
		}
		defer db.Close()
		tasks, _ := db.Tasks(context.Background(), 1)
		return len(tasks) >= 3
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := exitOf(t, cmd, out); code != exitNotFixed {
		t.Fatalf("stopped night: exit %d, want 1\n%s", code, out)
	}
	tasks := tasksOf(t, j)
	finished := 0
	for _, tk := range tasks {
		if tk.Finished {
			finished++
		}
	}
	notStarted := 9 - len(tasks)
	if notStarted == 0 {
		t.Fatalf("every task started before the stop:\n%s", out)
	}
	for _, want := range []string{
		fmt.Sprintf("stopped with %d of 9 rules × hosts finished", finished),
		fmt.Sprintf("%d of 9 rules × hosts finished, %d not started", finished, notStarted),
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, hout, herr := cli(t, "", "history", j)
	if want := fmt.Sprintf(" %d/9 ", finished); code != exitOK || !strings.Contains(hout, want) {
		t.Errorf("history: exit %d, want %q in\n%s%s", code, want, hout, herr)
	}
	var rep struct {
		Totals struct {
			Results    int `json:"results"`
			NotStarted int `json:"not_started"`
		} `json:"totals"`
	}
	b, err := os.ReadFile(jsonOut)
	if err != nil || json.Unmarshal(b, &rep) != nil {
		t.Fatalf("JSON report: %v\n%s", err, b)
	}
	if rep.Totals.Results != len(tasks) || rep.Totals.NotStarted != notStarted {
		t.Errorf("JSON report totals %+v, want %d results and %d not started", rep.Totals, len(tasks), notStarted)
	}
}
