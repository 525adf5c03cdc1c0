package batch_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/worker"
)

var (
	benchRules    = flag.Int("night.rules", 200, "rules of BenchmarkNight")
	benchHosts    = flag.Int("night.hosts", 50, "hosts of BenchmarkNight")
	benchParallel = flag.Int("night.parallel", 16, "parallel hosts of BenchmarkNight")
	benchModels   = flag.Int("night.models", 8, "model concurrency of BenchmarkNight")
	benchNoSync   = flag.Bool("night.nosync", false, "journal with synchronous=NORMAL")
	benchOld      = flag.Bool("night.oldlayout", false, "run the night a second time with the messages laid out as before issue 14 (the rule first in the system message) and report its cache share too")
)

// BenchmarkNight is the simulated night of issue 7: 200 rules × 50 hosts
// (in-process SSH hosts, the vLLM simulator over HTTP on loopback), every
// step committed to a journal, in one process. Run it once:
//
//	go test ./batch -run '^$' -bench BenchmarkNight -benchtime 1x
//
// It reports tasks/s, model calls/s, journal steps/s, the process's peak
// RSS (VmHWM) and the share of prompt tokens the simulator's prefix cache
// served. With -night.oldlayout it then runs the same night again with
// every request's messages laid out as before issue 14 (oldLayout) against
// a simulator of its own, and reports that night's cache share and prompt
// tokens per call beside.
func BenchmarkNight(b *testing.B) {
	for range b.N {
		runNight(b, false)
		if *benchOld {
			runNight(b, true)
		}
	}
}

// runNight runs one simulated night and reports it; old lays the messages
// out as before issue 14 and reports only the cache figures, suffixed
// "-old-layout".
func runNight(b *testing.B, old bool) {
	n := startNight(b, nightOptions{rules: *benchRules, hosts: *benchHosts})
	if old {
		n.Worker.Chat = oldLayout{n.calls}
	}
	j, err := journal.Open(context.Background(), filepath.Join(b.TempDir(), "night.db"), journal.Config{NoSync: *benchNoSync})
	if err != nil {
		b.Fatal(err)
	}
	r := n.runner(b, j, *benchParallel, *benchModels, nil)
	runtime.GC()
	start := time.Now()
	res, err := r.Run(context.Background(), n.spec())
	took := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	if res.Finished != res.Total {
		b.Fatalf("%d of %d finished", res.Finished, res.Total)
	}
	var steps int
	if err := j.Close(); err != nil {
		b.Fatal(err)
	}
	j2, err := journal.Open(context.Background(), j.Path(), journal.Config{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	tasks, err := j2.Tasks(context.Background(), res.Run)
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range tasks {
		s, err := j2.Steps(context.Background(), t.ID)
		if err != nil {
			b.Fatal(err)
		}
		steps += len(s)
	}
	j2.Close()
	prompt, cached := n.Sim.Stats().PromptTokens()
	if old {
		b.ReportMetric(100*float64(cached)/float64(max(prompt, 1)), "%prompt-cached-old-layout")
		b.ReportMetric(float64(prompt)/float64(max(len(n.Sim.Stats().Completions()), 1)), "prompt-tokens/call-old-layout")
		return
	}
	b.ReportMetric(float64(res.Total)/took.Seconds(), "tasks/s")
	b.ReportMetric(float64(n.calls.Calls())/took.Seconds(), "model-calls/s")
	b.ReportMetric(float64(steps)/took.Seconds(), "steps/s")
	b.ReportMetric(took.Seconds(), "run-s")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MB")
	b.ReportMetric(100*float64(cached)/float64(max(prompt, 1)), "%prompt-cached")
	b.ReportMetric(float64(prompt)/float64(max(len(n.Sim.Stats().Completions()), 1)), "prompt-tokens/call")
}

// oldLayout sends every request with its first two messages laid out as
// the worker laid them out before issue 14 (commit 4d35740): the system
// message began with the rule (its lines up to the host facts and hints),
// then the instructions, worded for "the rule above", and the ban list;
// the user message was one line. So two rules, or one rule on two hosts,
// shared only the template's first tokens. (The night's rules have no bans
// of their own and the night no lessons, whose places moved too.)
type oldLayout struct{ inner worker.ChatModel }

func (o oldLayout) CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	if len(req.Messages) >= 2 {
		msgs := append([]openai.ChatCompletionMessage(nil), req.Messages...)
		rule, task, ok := strings.Cut(msgs[1].Content, "\nMake the host compliant with rule ")
		if !ok {
			return openai.ChatCompletionResponse{}, fmt.Errorf("old layout: the task message has no task line: %.80q", msgs[1].Content)
		}
		system := strings.Replace(msgs[0].Content, "You bring a host into compliance with the rule in the user message.",
			"You bring this host into compliance with the rule above.", 1)
		msgs[0].Content = rule + "\n" + system
		msgs[1].Content = "Make the host compliant with rule " + strings.TrimSpace(task)
		req.Messages = msgs
	}
	return o.inner.CreateChatCompletion(ctx, req)
}

// peakRSS is the process's peak resident set size in bytes (Linux).
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return -1
}
