package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/nightshift-dev/nightshift/fleet"

	"github.com/nightshift-dev/nightshift/internal/temporaltest"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// fleetPolicy answers as package batch's simulated night: rules rNN of five
// kinds by index (compliant; fixed at attempt 1; a wrong try, a banned
// command, the fix at 3; a wrong try then give_up; never fixed in 5).
// Each remediation command is unique per rule and attempt.
type fleetPolicy struct{}

func (fleetPolicy) Name() string { return "fleet-night" }

func (fleetPolicy) Next(c vllmsim.Conversation) vllmsim.Generation {
	id, a := c.RuleID, c.Attempt
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "r"))
	try := vllmsim.Apply(fmt.Sprintf("set %s try%d", id, a), "look around")
	fix := vllmsim.Apply(fmt.Sprintf("set %s ok", id), "the fix")
	switch n % 5 {
	case 1:
		return vllmsim.Generation{Calls: []vllmsim.Call{fix}}
	case 2:
		switch a {
		case 1:
			return vllmsim.Generation{Calls: []vllmsim.Call{try}}
		case 2:
			return vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply("rm -rf /", "start over")}}
		}
		return vllmsim.Generation{Calls: []vllmsim.Call{fix}}
	case 3:
		if a >= 2 {
			return vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.GiveUpCall("cannot be fixed remotely")}}
		}
		return vllmsim.Generation{Calls: []vllmsim.Call{try}}
	}
	return vllmsim.Generation{Text: "Trying something else.", Calls: []vllmsim.Call{try}}
}

// gauge is the simulator's front: it records the chat completions in
// flight (the most at once) and makes each take delay.
type gauge struct {
	inner           http.Handler
	delay           time.Duration
	in, most, total atomic.Int64
}

func (g *gauge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/chat/completions") {
		n := g.in.Add(1)
		g.total.Add(1)
		defer g.in.Add(-1)
		for {
			m := g.most.Load()
			if n <= m || g.most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(g.delay)
	}
	g.inner.ServeHTTP(w, r)
}

// jsonSummary is the part of the JSON report the comparison reads.
type jsonSummary struct {
	Totals struct {
		NotStarted         int `json:"not_started"`
		PromptTokens       int `json:"prompt_tokens"`
		CachedPromptTokens int `json:"cached_prompt_tokens"`
	} `json:"totals"`
	Results []struct {
		Rule     string `json:"rule"`
		Host     string `json:"host"`
		Outcome  string `json:"outcome"`
		Reason   string `json:"reason"`
		Attempts []struct {
			Number       int    `json:"number"`
			PromptTokens int    `json:"prompt_tokens"`
			Check        string `json:"check"`
			Commands     []struct {
				Command  string `json:"command"`
				Action   string `json:"action"`
				ExitCode *int   `json:"exit_code"`
				Check    string `json:"check"`
			} `json:"commands"`
		} `json:"attempt_details"`
	} `json:"results"`
}

func readSummary(t *testing.T, path string) jsonSummary {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonSummary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// A night on a real Temporal dev server with three `worker fleet serve`
// on two zones (zone a's two processes, zone b's in this test's process),
// one of zone a's killed with SIGKILL mid-run: every
// rule × host ends exactly once, no command ran twice on its host (counted
// in the hosts' own exec logs), the model calls in flight never exceed the
// fleet-wide cap (the sum of the processes' --model-slots), and the report
// equals `worker run`'s on the same inputs except tasks caught mid-command.
func TestFleetIntegration(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	addr := temporaltest.Start(t)
	const nHosts, nRules, slots = 4, 10, 1
	dir := t.TempDir()
	key := writeFleetKey(t, dir)
	rulesFile := writeFleetRules(t, dir, nRules)
	inv, hosts := fleetHosts(t, filepath.Join(dir, "fleet"), nHosts, nRules, []string{"a", "b"}, true)
	kh := writeKnownHosts(t, filepath.Join(dir, "known_hosts"), hosts)
	g, baseURL := startFleetModel(t, 100*time.Millisecond)

	serve := func(zone string) *exec.Cmd {
		cmd, out := startCLI(t, []string{"fleet", "serve", "--temporal", addr, "--zone", zone, "--model-slots", strconv.Itoa(slots),
			"--base-url", baseURL, "--identity", key, "--known-hosts", kh, "--command-timeout", "30s"})
		t.Cleanup(func() {
			if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)); err == nil {
				for _, l := range strings.Split(string(st), "\n") {
					if strings.HasPrefix(l, "VmHWM:") {
						t.Logf("serve %s (pid %d) peak RSS %s", zone, cmd.Process.Pid, strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:")))
					}
				}
			}
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			if t.Failed() {
				t.Logf("serve %s:\n%s", zone, out.String())
			}
		})
		return cmd
	}
	// Zone b's worker runs in this process (run, as main calls it) and
	// stops when its context does: the race detector watches fleet serve's
	// own code here, since TestScripts' fleet scripts run without -race
	// (the Makefile's NORACE).
	serveHere := func(zone string) {
		ctx, cancel := context.WithCancel(context.Background())
		out := new(syncBuffer)
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, []string{"fleet", "serve", "--temporal", addr, "--zone", zone, "--model-slots", strconv.Itoa(slots),
				"--base-url", baseURL, "--identity", key, "--known-hosts", kh, "--command-timeout", "30s"}, nil, out, out)
		}()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("fleet serve %s (in this process): %v", zone, err)
			}
			if t.Failed() {
				t.Logf("serve %s (in this process):\n%s", zone, out.String())
			}
		})
	}
	// Zone a starts with one worker, so that it holds zone a's host
	// workflows (sticky) and their activities; a second one joins before the
	// first is killed and must take them over.
	victim := serve("a")
	serveHere("b")

	report := filepath.Join(dir, "fleet.json")
	start, startOut := startCLI(t, []string{"fleet", "start", "--temporal", addr, "--sandbox", "auto", "--rules", rulesFile, "--inventory", inv,
		"--id", "itest", "--base-url", baseURL, "--parallel-hosts", strconv.Itoa(nHosts), "--heartbeat", "3s",
		"--no-lessons", "--no-recipes", "--retry-deadline", "30s", "--wait", "--json-report", report})
	began := time.Now()
	tflag := []string{"--temporal", addr}

	// Kill -9 one zone-a worker once about a third of the commands have run.
	ran := func() int {
		n := 0
		for _, h := range hosts {
			n += len(h.Log())
		}
		return n
	}
	for ran() < 80 {
		if time.Since(began) > 3*time.Minute {
			t.Fatalf("the night did not get going:\n%s", startOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// While it runs, status says so (exit 1) with its progress.
	if code, out, errOut := cli(t, "", append([]string{"fleet", "status"}, append(tflag, "itest")...)...); code != exitNotFixed ||
		!strings.Contains(out, "night itest (") || !strings.Contains(out, ": running, ") {
		t.Errorf("fleet status while running: exit %d\n%s%s", code, out, errOut)
	}
	serve("a")
	time.Sleep(500 * time.Millisecond)
	if err := victim.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Since(began)

	done := make(chan error, 1)
	go func() { done <- start.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); err != nil && !(ok && ee.ExitCode() == exitNotFixed) {
			t.Fatalf("fleet start --wait: %v\n%s", err, startOut.String())
		}
	case <-time.After(5 * time.Minute):
		t.Fatalf("the night did not end in 5 minutes:\n%s", startOut.String())
	}
	t.Logf("night of %d rules × %d hosts: %s (worker killed at %s), %d model calls, at most %d in flight (cap %d)",
		nRules, nHosts, time.Since(began).Round(time.Millisecond), killedAt.Round(time.Millisecond), g.total.Load(), g.most.Load(), 3*slots)

	// Every rule × host ended exactly once.
	got := readSummary(t, report)
	if len(got.Results) != nRules*nHosts {
		t.Fatalf("%d results, want %d", len(got.Results), nRules*nHosts)
	}
	seen := map[string]bool{}
	caught := map[string]bool{} // tasks with a command of unknown outcome
	for _, r := range got.Results {
		k := r.Rule + "@" + r.Host
		if seen[k] {
			t.Errorf("%s reported twice", k)
		}
		seen[k] = true
		if r.Outcome == "interrupted" || r.Outcome == "failed" {
			t.Errorf("%s: %s (%s)", k, r.Outcome, r.Reason)
		}
		for _, a := range r.Attempts {
			for _, c := range a.Commands {
				if c.Action == "unknown" {
					caught[k] = true
				}
			}
		}
	}
	// No command ran twice on its host: each is unique per rule and attempt.
	for _, h := range hosts {
		count := map[string]int{}
		for _, c := range h.Log() {
			if strings.HasPrefix(c, "set ") {
				count[c]++
			}
		}
		for c, n := range count {
			if n > 1 {
				t.Errorf("a host ran %q %d times", c, n)
			}
		}
	}
	// The fleet-wide cap on model calls held.
	if most := g.most.Load(); most > 3*slots {
		t.Errorf("%d model calls in flight at once, above the fleet cap %d", most, 3*slots)
	}

	// Today's workflow code replays the histories just made (and, with
	// NIGHTSHIFT_RECORD_FLEET_HISTORY=1, they become package fleet's
	// recorded histories for its replay test).
	ids := []string{"itest"}
	for i := range nHosts {
		ids = append(ids, fmt.Sprintf("itest/h%02d", i))
	}
	// The kill mattered: tasks the dead worker held timed out and went to
	// the other worker of its zone.
	if n := replayHistories(t, addr, ids...); n == 0 {
		t.Error("no workflow or activity task timed out: the killed worker held no work")
	} else {
		t.Logf("%d workflow or activity tasks timed out after the kill and were taken over", n)
	}

	// The same night with `worker run` on fresh hosts (fresh ports: their
	// keys are learned on first use into a new known_hosts). Recipes are
	// off (--no-recipes) in both nights, so that every task asks the model
	// and the two reports compare task by task: with hosts in parallel,
	// which host would replay whose fix depends on the order hosts finish
	// (fleet/TestNightReplaysRecipesOnServer and TestNightEqualsBatchRun
	// compare replay, one host at a time).
	inv2, _ := fleetHosts(t, filepath.Join(dir, "run"), nHosts, nRules, []string{"a", "b"}, true)
	kh2 := filepath.Join(dir, "known_hosts2")
	want := filepath.Join(dir, "run.json")
	code, out, errOut := cli(t, "", "run", "--sandbox", "off", "--rules", rulesFile, "--inventory", inv2, "--journal", filepath.Join(dir, "run.db"),
		"--identity", key, "--known-hosts", kh2, "--accept-new-host-key", "--base-url", baseURL, "--parallel-hosts", strconv.Itoa(nHosts),
		"--no-lessons", "--no-recipes", "--no-progress", "--json-report", want)
	if code != exitNotFixed && code != exitOK {
		t.Fatalf("worker run: exit %d\n%s\n%s", code, out, errOut)
	}
	wantS := readSummary(t, want)
	byKey := map[string]int{}
	for i, r := range wantS.Results {
		byKey[r.Rule+"@"+r.Host] = i
	}
	same := 0
	for _, r := range got.Results {
		k := r.Rule + "@" + r.Host
		if caught[k] {
			continue
		}
		a, _ := json.Marshal(r)
		b, _ := json.Marshal(wantS.Results[byKey[k]])
		if string(a) != string(b) {
			t.Errorf("%s differs from worker run's:\nfleet: %s\nrun:   %s", k, a, b)
			continue
		}
		same++
	}
	t.Logf("%d of %d tasks equal to worker run's; %d caught mid-command", same, len(got.Results), len(caught))
	// The server's usage reached the fleet's report. The prompt tokens the
	// server counted are those of the same prompts, so they equal worker
	// run's unless a task caught mid-command took another path. How many
	// of them its prefix cache served is not compared: four hosts at once
	// reach one cache in an order neither run fixes, and worker run comes
	// second to a cache the fleet warmed.
	if got.Totals.PromptTokens == 0 || got.Totals.CachedPromptTokens == 0 || got.Totals.CachedPromptTokens >= got.Totals.PromptTokens {
		t.Errorf("fleet report's usage: %d prompt tokens, %d cached; want both positive, cached fewer", got.Totals.PromptTokens, got.Totals.CachedPromptTokens)
	}
	if len(caught) == 0 && got.Totals.PromptTokens != wantS.Totals.PromptTokens {
		t.Errorf("fleet report: %d prompt tokens of usage, worker run's %d", got.Totals.PromptTokens, wantS.Totals.PromptTokens)
	}
	t.Logf("server's usage: fleet %d prompt tokens (%d cached), worker run %d (%d cached)", got.Totals.PromptTokens,
		got.Totals.CachedPromptTokens, wantS.Totals.PromptTokens, wantS.Totals.CachedPromptTokens)

	// status and report of the ended night; report writes what --wait did.
	code, out, errOut = cli(t, "", append([]string{"fleet", "status"}, append(tflag, "itest")...)...)
	if wantLine := fmt.Sprintf(": ended, %d of %d rules × hosts ended", nRules*nHosts, nRules*nHosts); code != exitOK || !strings.Contains(out, wantLine) {
		t.Errorf("fleet status: exit %d, want 0 and %q\n%s%s", code, wantLine, out, errOut)
	}
	again := filepath.Join(dir, "again.json")
	code, out, errOut = cli(t, "", append([]string{"fleet", "report", "--json-report", again}, append(tflag, "itest")...)...)
	if code != exitNotFixed {
		t.Errorf("fleet report: exit %d, want 1 (some rules not fixed)\n%s%s", code, out, errOut)
	}
	if a, b := jsonOf(readSummary(t, report)), jsonOf(readSummary(t, again)); a != b {
		t.Error("fleet report's JSON differs from fleet start --wait's")
	}

	// A schedule is created and deleted.
	code, out, errOut = cli(t, "", append([]string{"fleet", "start", "--sandbox", "off", "--rules", rulesFile, "--inventory", inv, "--id", "nightly",
		"--base-url", baseURL, "--schedule", "0 1 * * *"}, tflag...)...)
	if code != exitOK || !strings.Contains(out, "schedule nightly") {
		t.Errorf("fleet start --schedule: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut = cli(t, "", append([]string{"fleet", "cancel", "--schedule", "nightly"}, tflag...)...); code != exitOK {
		t.Errorf("fleet cancel --schedule: exit %d\n%s%s", code, out, errOut)
	}

	// A cancelled night ends with what was done, the rest interrupted.
	code, out, errOut = cli(t, "", append([]string{"fleet", "start", "--sandbox", "off", "--rules", rulesFile, "--inventory", inv, "--id", "itest2",
		"--base-url", baseURL, "--no-lessons"}, tflag...)...)
	if code != exitOK {
		t.Fatalf("fleet start itest2: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut = cli(t, "", append([]string{"fleet", "cancel"}, append(tflag, "itest2")...)...); code != exitOK {
		t.Fatalf("fleet cancel: exit %d\n%s%s", code, out, errOut)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		code, out, errOut = cli(t, "", append([]string{"fleet", "status"}, append(tflag, "itest2")...)...)
		if code == exitOK || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code != exitOK || !strings.Contains(out, ": ended, ") {
		t.Fatalf("cancelled night did not end: exit %d\n%s%s", code, out, errOut)
	}
	cancelled := filepath.Join(dir, "cancelled.json")
	cli(t, "", append([]string{"fleet", "report", "--json-report", cancelled}, append(tflag, "itest2")...)...)
	// Every task is accounted for: ended, interrupted (started, not
	// finished) or not started (the cancel can land before a host starts,
	// under load) — and the cancel left some of them undone.
	sum := readSummary(t, cancelled)
	interrupted := 0
	for _, r := range sum.Results {
		if r.Outcome == "interrupted" {
			interrupted++
		}
	}
	if got := len(sum.Results) + sum.Totals.NotStarted; got != nHosts*nRules {
		t.Errorf("the cancelled night's report accounts for %d tasks (%d reported, %d not started), want %d", got, len(sum.Results), sum.Totals.NotStarted, nHosts*nRules)
	}
	if interrupted+sum.Totals.NotStarted == 0 {
		t.Errorf("the cancelled night reports no interrupted or unstarted task:\n%s", out)
	}
}

// replayHistories replays the histories of the workflows ids with the
// current code and counts their task timeouts. With
// NIGHTSHIFT_RECORD_FLEET_HISTORY set it writes the first three to
// ../../fleet/testdata/replay.
func replayHistories(t *testing.T, addr string, ids ...string) (timeouts int) {
	t.Helper()
	ctx := context.Background()
	c, err := client.DialContext(ctx, client.Options{HostPort: addr, Logger: temporaltest.Quiet{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i, id := range ids {
		it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		h := &historypb.History{}
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			h.Events = append(h.Events, e)
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT, enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
				timeouts++
			default:
				// other events are not timeouts
			}
		}
		wf := &fleet.Workflows{}
		if err := wf.Preload("qwen3"); err != nil {
			t.Fatal(err)
		}
		if err := fleet.Replay(wf, id, h, temporaltest.Quiet{}); err != nil {
			t.Errorf("replay of %s: %v", id, err)
		}
		if os.Getenv("NIGHTSHIFT_RECORD_FLEET_HISTORY") == "" || i >= 3 {
			continue
		}
		b, err := protojson.MarshalOptions{Indent: " "}.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		if _, err := zw.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		name := url.PathEscape(id) + ".json.gz"
		if err := os.WriteFile(filepath.Join("..", "..", "fleet", "testdata", "replay", name), z.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return timeouts
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
