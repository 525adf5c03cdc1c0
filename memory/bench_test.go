package memory

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift"
)

// BenchmarkPromptTurn100 measures preparing the prompt for turn 100 of a
// scripted history (add the turn, then Prompt), amortised over the 100 turns
// that lead to it: each iteration replays turns 1–100 on a fresh Memory and
// the figure reported per op is divided by 100 as ns/turn.
func BenchmarkPromptTurn100(b *testing.B) {
	loadOutputs(b)
	qwen3(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		h := newHarness(b, nil)
		b.StartTimer()
		for turn := 1; turn <= 100; turn++ {
			addScriptedTurn(b, h.m, turn)
			if _, err := h.m.Prompt(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100, "ns/turn")
}

// BenchmarkPromptAtTurn100 measures one Prompt call at turn 100 once the
// history exists (the steady-state cost before a model call).
func BenchmarkPromptAtTurn100(b *testing.B) {
	h := newHarness(b, nil)
	for turn := 1; turn <= 100; turn++ {
		addScriptedTurn(b, h.m, turn)
		if _, err := h.m.Prompt(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := h.m.Prompt(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// addDistinctTurn adds turn n whose command and error line are new: every
// turn is a distinct failure, the history's worst case (its lines give
// way at every compaction once they pass the share).
func addDistinctTurn(tb testing.TB, m *Memory, n int) {
	tb.Helper()
	outs := loadOutputs(tb)
	cmd := fmt.Sprintf("sysctl -w kernel.attempt_%d=%d", n, n*7)
	m.AddAssistant(openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{
		ID: fmt.Sprintf("call_%d", n), Type: openai.ToolTypeFunction,
		Function: openai.FunctionCall{Name: "ssh_apply", Arguments: fmt.Sprintf(`{"command": %q}`, cmd)}}}})
	out := outs[n%len(outs)]
	errLine := fmt.Sprintf("sysctl: cannot stat /proc/sys/kernel/attempt_%d: No such file or directory", n)
	if err := m.AddToolResult(fmt.Sprintf("call_%d", n),
		Step{Tool: "ssh_apply", Command: cmd, Action: nightshift.ActionRan, ExitCode: 255, Before: "exit status: 255\n", Stdout: out, Stderr: errLine}); err != nil {
		tb.Fatal(err)
	}
	if err := m.SetCheckResult(nightshift.CheckFail, "kernel.attempt = 0\n"); err != nil {
		tb.Fatal(err)
	}
	if err := m.AddFeedback(FeedbackCheck, fmt.Sprintf("Re-check after turn %d: FAIL (exit 1).", n)); err != nil {
		tb.Fatal(err)
	}
}

// cpuTime is the CPU time (user and system) the test process used so far:
// on a machine shared with other builds it measures the memory's work
// where wall time measures the machine's load.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPromptTurn1000 measures the memory's time per turn at turn
// 1,000: turns 1–900 are replayed untimed on a fresh Memory, then turns
// 901–1,000 (add the turn, prepare its prompt) are timed and reported per
// turn, in wall time (ns/turn) and in the process's CPU time
// (cpu-ns/turn, which includes the garbage collector's); "scripted" repeats a few commands with 300–3,000-token outputs,
// "distinct" makes every turn a new failure (the history's worst case):
//
//	go test ./memory -run '^$' -bench PromptTurn1000 -benchtime 1x -count 3
func BenchmarkPromptTurn1000(b *testing.B) {
	for _, shape := range []struct {
		name string
		add  func(testing.TB, *Memory, int)
	}{{"scripted", addScriptedTurn}, {"distinct", addDistinctTurn}} {
		b.Run(shape.name, func(b *testing.B) {
			loadOutputs(b)
			qwen3(b)
			var timed, cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				h := newHarness(b, nil)
				for turn := 1; turn <= 900; turn++ {
					shape.add(b, h.m, turn)
					if _, err := h.m.Prompt(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
				start, cpu0 := time.Now(), cpuTime(b)
				b.StartTimer()
				for turn := 901; turn <= 1000; turn++ {
					shape.add(b, h.m, turn)
					if _, err := h.m.Prompt(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
				timed += time.Since(start)
				cpu += cpuTime(b) - cpu0
			}
			b.ReportMetric(float64(timed.Nanoseconds())/float64(b.N)/100, "ns/turn")
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/100, "cpu-ns/turn")
		})
	}
}
