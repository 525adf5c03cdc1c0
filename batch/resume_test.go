package batch_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/report"
	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

// normalized returns the report without what legitimately differs between
// two runs of the same night: times and durations, and the model server's
// usage (a killed process's model calls count too, and the prefix cache
// depends on what ran before).
func normalized(r *report.Run) *report.Run {
	c := *r
	c.Started, c.Finished = time.Time{}, time.Time{}
	c.Results = append([]report.TaskResult(nil), r.Results...)
	for i := range c.Results {
		c.Results[i].Duration = 0
		c.Results[i].UsagePromptTokens, c.Results[i].CachedTokens = 0, 0
	}
	return &c
}

func reportJSON(t testing.TB, r *report.Run) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := report.WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// uninterrupted runs the night once, start to end, and returns its report
// and how long the run took (without the setup).
func uninterrupted(t *testing.T, rules, hosts, parallel, models int) (*report.Run, time.Duration) {
	t.Helper()
	ctx := context.Background()
	n := startNight(t, nightOptions{rules: rules, hosts: hosts})
	j := openJournal(t, filepath.Join(t.TempDir(), "ref.db"))
	start := time.Now()
	res, err := n.runner(t, j, parallel, models, nil).Run(ctx, n.spec())
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := batch.Report(ctx, j, res.Run, 0)
	if err != nil {
		t.Fatal(err)
	}
	return normalized(rep), took
}

// stopAfter closes stop once the model has been called n times.
type stopAfter struct {
	inner worker.ChatModel
	n     int64
	calls atomic.Int64
	stop  chan struct{}
}

func (m *stopAfter) CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	if m.calls.Add(1) == m.n {
		close(m.stop)
	}
	return m.inner.CreateChatCompletion(ctx, req)
}

// A graceful stop after each of several numbers of model calls, then
// Resume: every task is finished once, nothing ran twice on the hosts, and
// the report is the uninterrupted run's.
func TestStopThenResumeMatchesUninterrupted(t *testing.T) {
	const rules, hosts = 10, 3
	ref, _ := uninterrupted(t, rules, hosts, 3, 2)
	want := reportJSON(t, ref)
	continued := 0
	for _, after := range []int64{1, 4, 9, 17} {
		t.Run(fmt.Sprintf("stop after %d model calls", after), func(t *testing.T) {
			ctx := context.Background()
			n := startNight(t, nightOptions{rules: rules, hosts: hosts})
			j := openJournal(t, filepath.Join(t.TempDir(), "j.db"))
			stop := make(chan struct{})
			n.Worker.Chat = &stopAfter{inner: n.Worker.Chat, n: after, stop: stop}
			res, err := n.runner(t, j, 3, 2, stop).Run(ctx, n.spec())
			if err != nil {
				t.Fatal(err)
			}
			if !res.Stopped || res.Finished == res.Total {
				t.Fatalf("first part: %+v, want a stopped run", res)
			}
			run, err := j.Run(ctx, res.Run)
			if err != nil || run.Status != nightshift.RunInterrupted {
				t.Errorf("run status %q (err %v) after a stop, want interrupted", run.Status, err)
			}
			res2, err := n.runner(t, j, 3, 2, nil).Resume(ctx, res.Run, n.spec())
			if err != nil {
				t.Fatal(err)
			}
			if res2.Finished != res2.Total {
				t.Fatalf("resume: %+v, want every task finished", res2)
			}
			continued += res2.Continued
			checkTargets(t, ctx, j, res.Run, n)
			rep, err := batch.Report(ctx, j, res.Run, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := reportJSON(t, normalized(rep)); !bytes.Equal(got, want) {
				t.Errorf("report after stop and resume differs from the uninterrupted run's:\n%s", firstDiff(got, want))
			}
		})
	}
	if continued == 0 {
		t.Error("no stop left a task in progress to continue")
	}
}

func TestResumeRefusesAMissingRuleOrHost(t *testing.T) {
	ctx := context.Background()
	n := startNight(t, nightOptions{rules: 2, hosts: 2})
	j := openJournal(t, filepath.Join(t.TempDir(), "j.db"))
	stop := make(chan struct{})
	close(stop)
	r := n.runner(t, j, 1, 1, stop)
	res, err := r.Run(ctx, n.spec())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		edit func(*batch.Spec)
	}{
		{"rule", func(s *batch.Spec) { s.Rules = s.Rules[1:] }},
		{"host", func(s *batch.Spec) { s.Hosts = s.Hosts[:1] }},
	} {
		spec := n.spec()
		tt.edit(&spec)
		if _, err := r.Resume(ctx, res.Run, spec); err == nil || !strings.Contains(err.Error(), "recorded run") {
			t.Errorf("resume without a %s: %v, want ErrSpec", tt.name, err)
		}
	}
}

// firstDiff shows where two JSON documents first differ.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-300)
	return fmt.Sprintf("got  …%s\nwant …%s", a[lo:min(len(a), i+200)], b[lo:min(len(b), i+200)])
}

// The night the kill test runs: big enough that random kills land in the
// middle of it.
const (
	killRules, killHosts = 16, 3
	killParallel         = 3
	killModels           = 2
	killEnv              = "NIGHTSHIFT_BATCH_KILL_DIR"
)

// TestKillChild is the process the kill test starts and kills; it does
// nothing in a normal test run. It runs (or resumes) the night whose hosts
// and journal live in $NIGHTSHIFT_BATCH_KILL_DIR, with synchronous commits.
func TestKillChild(t *testing.T) {
	dir := os.Getenv(killEnv)
	if dir == "" {
		t.Skip("started by TestKillNineAndResume")
	}
	ctx := context.Background()
	n := startNight(t, nightOptions{rules: killRules, hosts: killHosts, dir: dir})
	j, err := journal.Open(ctx, filepath.Join(dir, "journal.db"), journal.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	runs, err := j.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := n.runner(t, j, killParallel, killModels, nil)
	fmt.Println("running")
	var res batch.RunResult
	if len(runs) == 0 {
		res, err = r.Run(ctx, n.spec())
	} else {
		res, err = r.Resume(ctx, runs[len(runs)-1].ID, n.spec())
	}
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("done finished=%d total=%d continued=%d\n", res.Finished, res.Total, res.Continued)
}

// TestKillNineAndResume kills the process running a night with SIGKILL at
// random points several times, resuming each time, then lets it finish: the
// journal holds every rule × host exactly once, no command recorded as run
// ran twice on its host (counted in the hosts' own logs), and the report
// matches a run that was never interrupted — except for tasks where the
// kill caught a command in flight, whose outcome is unknown by nature: those
// are reported with the unknown command, and still nothing ran twice.
func TestKillNineAndResume(t *testing.T) {
	if os.Getenv(killEnv) != "" {
		t.Skip("in the child")
	}
	if testing.Short() {
		t.Skip("starts processes")
	}
	ctx := context.Background()
	ref, refTime := uninterrupted(t, killRules, killHosts, killParallel, killModels)
	dir := t.TempDir()
	// The kill delays come from the seed (a new one each run unless set);
	// the scheduler's timing varies anyway, so a seed repeats the delays,
	// not every interleaving.
	rng := rand.New(rand.NewPCG(testenv.Seed(t, uint64(time.Now().UnixNano())), 7))
	t.Logf("uninterrupted run: %s", refTime.Round(time.Millisecond))

	kills, continued := 0, 0
	for round := 0; ; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$", "-test.v")
		cmd.Env = append(os.Environ(), killEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = cmd.Stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 100)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		var log []string
		for l := range lines { // wait for the run to start
			log = append(log, l)
			if l == "running" {
				break
			}
		}
		killed := false
		if kills < 5 {
			delay := time.Duration(rng.Int64N(int64(refTime)/2 + 1))
			select {
			case <-time.After(delay):
				killed = cmd.Process.Signal(syscall.SIGKILL) == nil
			case l, ok := <-lines:
				if ok {
					log = append(log, l)
				}
			}
		}
		for l := range lines {
			log = append(log, l)
		}
		err = cmd.Wait()
		var done string
		for _, l := range log {
			if strings.HasPrefix(l, "done ") {
				done = l
			}
		}
		if killed && done == "" {
			kills++
			t.Logf("round %d: killed", round)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("round %d: child ended with %v, want SIGKILL:\n%s", round, err, strings.Join(log, "\n"))
			}
			continue
		}
		if err != nil {
			t.Fatalf("round %d: child failed: %v\n%s", round, err, strings.Join(log, "\n"))
		}
		var f, total, c int
		if _, err := fmt.Sscanf(done, "done finished=%d total=%d continued=%d", &f, &total, &c); err != nil {
			t.Fatalf("round %d: the child's last line %q: %v\n%s", round, done, err, strings.Join(log, "\n"))
		}
		continued += c
		if f != total {
			t.Fatalf("round %d: %s", round, done)
		}
		t.Logf("round %d: ran to the end: %s", round, done)
		break
	}
	t.Logf("%d kills; the last process continued %d tasks from their recorded state", kills, continued)
	if kills == 0 {
		t.Fatal("no kill landed in the middle of the run")
	}

	// The hosts and the journal as the last process left them.
	n := startNight(t, nightOptions{rules: killRules, hosts: killHosts, dir: dir})
	j := openJournal(t, filepath.Join(dir, "journal.db"))
	runs, err := j.Runs(ctx)
	if err != nil || len(runs) != 1 {
		t.Fatalf("%d runs (%v), want 1", len(runs), err)
	}
	tasks, err := j.Tasks(ctx, runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[[2]string]int{}
	for _, task := range tasks {
		if !task.Finished {
			t.Errorf("%s on %s not finished", task.Rule, task.Host)
		}
		seen[[2]string{task.Rule, task.Host}]++
	}
	if len(tasks) != killRules*killHosts || len(seen) != killRules*killHosts {
		t.Errorf("%d tasks, %d distinct, want %d", len(tasks), len(seen), killRules*killHosts)
	}
	unknown := checkTargets(t, ctx, j, runs[0].ID, n)
	rep, err := batch.Report(ctx, j, runs[0].ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := normalized(rep)
	if len(got.Results) != len(ref.Results) {
		t.Fatalf("%d results, want %d", len(got.Results), len(ref.Results))
	}
	for i := range got.Results {
		g, w := got.Results[i], ref.Results[i]
		key := [2]string{g.Rule, g.Host}
		if unknown[key] {
			if !hasUnknownCommand(g) {
				t.Errorf("%s on %s: a command of unknown outcome is not in the report", g.Rule, g.Host)
			}
			t.Logf("%s on %s, caught mid-command: %s after %d attempts (uninterrupted: %s after %d)",
				g.Rule, g.Host, g.Outcome, len(g.Attempts), w.Outcome, len(w.Attempts))
			continue
		}
		gj, _ := json.Marshal(g)
		wj, _ := json.Marshal(w)
		if !bytes.Equal(gj, wj) {
			t.Errorf("%s on %s differs from the uninterrupted run:\n%s", g.Rule, g.Host, firstDiff(gj, wj))
		}
	}
	if len(unknown) > kills*killParallel {
		t.Errorf("%d tasks with a command of unknown outcome after %d kills of %d hosts at work", len(unknown), kills, killParallel)
	}
	t.Logf("%d of %d results identical to the uninterrupted run; %d caught mid-command", len(got.Results)-len(unknown), len(got.Results), len(unknown))
	if len(unknown) == 0 {
		if a, b := reportJSON(t, got), reportJSON(t, ref); !bytes.Equal(a, b) {
			t.Errorf("reports differ:\n%s", firstDiff(a, b))
		}
	}
}

func hasUnknownCommand(r report.TaskResult) bool {
	for _, a := range r.Attempts {
		for _, c := range a.Commands {
			if c.Action == "unknown" {
				return true
			}
		}
	}
	return false
}
