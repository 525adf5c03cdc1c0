package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/simhost"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// batchFixture is a small night for the CLI: simulated SSH hosts (they
// execute nothing on this machine), a rules file, an inventory, and the vLLM
// simulator.
type batchFixture struct {
	dir, rules, inventory, key, knownHosts, baseURL string
	hosts                                           []*simhost.Host
	prompts                                         *promptLog // every request's system message, in order
}

func newBatchFixture(t *testing.T, nHosts, neverAttempts int) *batchFixture {
	t.Helper()
	ctx := context.Background()
	f := &batchFixture{dir: t.TempDir()}
	f.key = filepath.Join(f.dir, "id_ed25519")
	if err := simhost.WriteKey(f.key, "cli client"); err != nil {
		t.Fatal(err)
	}
	var inv, known strings.Builder
	inv.WriteString("hosts:\n")
	for i := range nHosts {
		name := fmt.Sprintf("web%d", i+1)
		h, err := simhost.Start(ctx, simhost.Config{Name: name, AuthorizedKey: simhost.KeyFromSeed("cli client").PublicKey(),
			State: map[string]string{"motd": "ok"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		f.hosts = append(f.hosts, h)
		fmt.Fprintf(&inv, "  - host: %s\n    address: 127.0.0.1\n    port: %d\n    user: root\n    groups: [web]\n", name, h.Port)
		known.WriteString(h.KnownHostsLine() + "\n")
	}
	f.inventory = filepath.Join(f.dir, "hosts.yaml")
	f.knownHosts = filepath.Join(f.dir, "known_hosts")
	f.rules = filepath.Join(f.dir, "rules.yaml")
	for path, data := range map[string]string{
		f.inventory:  inv.String(),
		f.knownHosts: known.String(),
		f.rules: fmt.Sprintf(`rules:
  - {id: sshd_root_login, title: Disable root login, check: "test root_login = no", max_attempts: 5}
  - {id: motd_banner, title: Set the banner, check: "test motd = ok"}
  - {id: aide_db, title: Build the AIDE database, check: "test aide = built", max_attempts: %d}
`, neverAttempts),
	} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m, err := served.Offline(served.Config{Tokenizer: "qwen3"})
	if err != nil {
		t.Fatal(err)
	}
	counter := vllmsim.NewModelCounter(m)
	f.prompts = &promptLog{Policy: vllmsim.Eventual(vllmsim.EventualConfig{FixAt: 2,
		WrongFixes: []string{"echo attempt %d"}, Fixes: map[string]string{"sshd_root_login": "set root_login no"}})}
	srv, err := vllmsim.New(vllmsim.Config{Counter: counter, Policy: f.prompts})
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := srv.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	f.baseURL = url + "/v1"
	return f
}

func (f *batchFixture) runArgs(journal string, extra ...string) []string {
	return append([]string{"run", "--rules", f.rules, "--inventory", f.inventory, "--journal", journal, "--sandbox", "off",
		"--identity", f.key, "--known-hosts", f.knownHosts, "--base-url", f.baseURL, "--retry-deadline", "5s"}, extra...)
}

func TestRunResumeHistory(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t, 2, 2)
	j := filepath.Join(f.dir, "night.db")
	jsonOut, junit, html := filepath.Join(f.dir, "r.json"), filepath.Join(f.dir, "r.xml"), filepath.Join(f.dir, "r.html")
	code, out, errOut := cli(t, "", f.runArgs(j, "--parallel-hosts", "2", "--model-concurrency", "1",
		"--json-report", jsonOut, "--junit", junit, "--html", html)...)
	if code != exitNotFixed || !strings.Contains(out, "6 of 6 rules × hosts finished") {
		t.Fatalf("run: exit %d (want 1: aide_db is never fixed)\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var sum struct {
		Totals struct {
			Results  int            `json:"results"`
			Outcomes map[string]int `json:"outcomes"`
		} `json:"totals"`
	}
	b, err := os.ReadFile(jsonOut)
	if err != nil || json.Unmarshal(b, &sum) != nil {
		t.Fatalf("JSON report: %v\n%s", err, b)
	}
	if want := map[string]int{"fixed": 2, "compliant": 2, "not_fixed": 2}; fmt.Sprint(sum.Totals.Outcomes) != fmt.Sprint(want) {
		t.Errorf("outcomes %v, want %v", sum.Totals.Outcomes, want)
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	h, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(x, []byte("<testcase ")); n != 6 {
		t.Errorf("JUnit has %d test cases, want 6", n)
	}
	if !bytes.Contains(h, []byte("<svg")) {
		t.Error("HTML report has no chart")
	}

	// A journal another process works on is refused.
	locked := filepath.Join(f.dir, "busy.db")
	busy, err := journal.Open(context.Background(), locked, journal.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := busy.StartRun(context.Background(), journal.RunSpec{Name: "busy"}); err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"runs", []string{"history", j}, exitOK, "done"},
		{"tasks", []string{"history", j, "--run", "1"}, exitOK, "aide_db"},
		{"tasks as JSON", []string{"history", j, "--run", "1", "--json"}, exitOK, `"Rule":"sshd_root_login"`},
		{"no such run", []string{"history", j, "--run", "9"}, exitUsage, "not found"},
		{"nothing to resume", []string{"resume", j}, exitUsage, "nothing to resume"},
		{"no journal", []string{"resume"}, exitUsage, "journal file is required"},
		{"missing journal", []string{"history", filepath.Join(f.dir, "nope.db")}, exitUsage, "no such file"},
		{"not a journal", []string{"history", f.rules}, exitUsage, "not a nightshift journal"},
		{"run without inventory", []string{"run", "--rules", f.rules, "--journal", j}, exitUsage, "required"},
		{"unknown rule", append(f.runArgs(j), "--rule", "nope"), exitUsage, `rule "nope"`},
		{"unknown group", append(f.runArgs(j), "--limit", "db"), exitUsage, "db"},
		{"locked", []string{"resume", locked}, exitUsage, "journal is in use by another writer"},
		{"prune", []string{"history", j, "--prune", "1ns"}, exitOK, "pruned 1 runs"},
		{"pruned", []string{"history", j}, exitOK, "RUN"},
	}
	for _, tt := range tests {
		code, out, errOut := cli(t, "", tt.args...)
		if code != tt.code || !strings.Contains(out+errOut, tt.want) {
			t.Errorf("%s: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", tt.name, code, tt.code, tt.want, out, errOut)
		}
	}
}

// TestCLIProcess is the worker command when the signal test starts the
// test binary with NIGHTSHIFT_CLI_ARGS; it does nothing otherwise.
func TestCLIProcess(t *testing.T) {
	args := os.Getenv("NIGHTSHIFT_CLI_ARGS")
	if args == "" {
		t.Skip("started by TestSignals")
	}
	var a []string
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		t.Fatal(err)
	}
	os.Exit(exitCode(run(context.Background(), a, os.Stdin, os.Stdout, os.Stderr), os.Stderr))
}

// startCLI runs the worker command in a child process.
func startCLI(t testing.TB, args []string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	a, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCLIProcess$")
	cmd.Env = append(os.Environ(), "NIGHTSHIFT_CLI_ARGS="+string(a))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out
}

// waitSteps waits until every host has reached its last rule.
func waitSteps(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute) // a hang guard (see waitFor)
	for time.Now().Before(deadline) {
		if j, err := journal.Open(context.Background(), path, journal.Config{ReadOnly: true}); err == nil {
			tasks, _ := j.Tasks(context.Background(), 1)
			j.Close()
			if len(tasks) >= 7 { // every host is at its last rule
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the run never started")
}

// The first SIGINT finishes the current steps and exits (1, "worker
// resume" named); the second exits at once; either way the journal is
// consistent and `worker resume` finishes the run with every rule × host
// exactly once.
func TestSignals(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, signals := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d signals", signals), func(t *testing.T) {
			f := newBatchFixture(t, 3, 40)
			j := filepath.Join(f.dir, "night.db")
			cmd, out := startCLI(t, f.runArgs(j, "--parallel-hosts", "3", "--model-concurrency", "1"))
			waitSteps(t, j)
			for range signals {
				if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
			}
			err := cmd.Wait()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() == exitOK {
				t.Fatalf("after %d SIGINT: %v\n%s", signals, err, out)
			}
			if signals == 1 && (ee.ExitCode() != exitNotFixed || !strings.Contains(out.String(), "worker resume")) {
				t.Errorf("after one SIGINT: exit %d, want 1 naming worker resume:\n%s", ee.ExitCode(), out)
			}
			t.Logf("child after %d SIGINT: %v\n%s", signals, err, out)
			code, rout, rerr := cli(t, "", "resume", j)
			if code != exitNotFixed || !strings.Contains(rout, "9 of 9 rules × hosts finished") {
				t.Fatalf("resume: exit %d\n%s\n%s", code, rout, rerr)
			}
			jj, err := journal.Open(context.Background(), j, journal.Config{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer jj.Close()
			tasks, err := jj.Tasks(context.Background(), 1)
			if err != nil || len(tasks) != 9 {
				t.Fatalf("%d tasks (%v), want 9", len(tasks), err)
			}
			for _, h := range f.hosts {
				if n := h.Count("set root_login no"); n != 1 {
					t.Errorf("the fix ran %d times on a host, want 1", n)
				}
			}
		})
	}
}
