package worker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

// instantModel answers at once with one ssh_apply call that varies per
// attempt, so the benchmark measures the worker, not a model.
type instantModel struct{ n int }

func (m *instantModel) CreateChatCompletion(_ context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	m.n++
	cmds := []string{"journalctl --no-pager -n 2000", "aide --init", "apt-get install -y aide", "dpkg --configure -a", "sed -i 's/^#x/x/' /etc/aide/aide.conf"}
	args := fmt.Sprintf(`{"command": "%s # %d", "reason": "try"}`, cmds[m.n%len(cmds)], m.n)
	return openai.ChatCompletionResponse{Choices: []openai.ChatCompletionChoice{{Message: openai.ChatCompletionMessage{
		Role: "assistant", ToolCalls: []openai.ToolCall{{ID: fmt.Sprintf("call_%d", m.n), Type: "function",
			Function: openai.FunctionCall{Name: "ssh_apply", Arguments: args}}}}}}}, nil
}

// instantTarget returns realistic captured outputs at once, so the
// benchmark leaves out the remote command.
type instantTarget struct {
	outs []string
	n    int
}

func (t *instantTarget) Run(_ context.Context, command string) (nightshift.Exec, error) {
	t.n++
	if len(command) > 4 && command[:4] == "test" { // the rule's check
		return nightshift.Exec{ExitCode: 1}, nil
	}
	return nightshift.Exec{Stdout: t.outs[t.n%len(t.outs)], Stderr: "E: Sub-process /usr/bin/dpkg returned an error code (1)\n", ExitCode: 100}, nil
}

type attemptClock struct {
	mu    sync.Mutex
	last  time.Time
	times map[int]time.Duration
}

func (c *attemptClock) Observe(e nightshift.Event) {
	if e.Kind != nightshift.EventAttempt {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	c.times[e.Attempt] = now.Sub(c.last)
	c.last = now
}

// BenchmarkOverheadPerAttempt measures the worker's own cost per attempt —
// prompt preparation and counting, distillation, ban and repeat checks,
// parsing, formatting, events — with a model and a target that answer at
// once, over 100 attempts; it reports the mean of attempts 91–100.
func BenchmarkOverheadPerAttempt(b *testing.B) {
	m := servedAs(b, "bench", budget.Config{})
	paths, _ := filepath.Glob("../testdata/outputs/*.txt")
	sort.Strings(paths)
	var outs []string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		outs = append(outs, string(data))
	}
	set, err := rules.Parse("bench.yaml", []byte("rules:\n  - id: aide_build_database\n    check: \"test -f /var/lib/aide/aide.db\"\n    max_attempts: 100\n"))
	if err != nil {
		b.Fatal(err)
	}
	r, _ := set.Get("aide_build_database")
	var late time.Duration
	for b.Loop() {
		clock := &attemptClock{last: time.Now(), times: map[int]time.Duration{}}
		w, err := worker.New(worker.Config{Chat: &instantModel{}, Model: m, Target: &instantTarget{outs: outs},
			Observer: clock, RefuseRepeats: -1})
		if err != nil {
			b.Fatal(err)
		}
		out, err := w.Fix(context.Background(), r)
		if err != nil || out.Attempts != 100 {
			b.Fatalf("outcome %+v, err %v", out, err)
		}
		for a := 91; a <= 100; a++ {
			late += clock.times[a]
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100, "ns/attempt")
	b.ReportMetric(float64(late.Nanoseconds())/float64(b.N)/10, "ns/attempt@91-100")
}
