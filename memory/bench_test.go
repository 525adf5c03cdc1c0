package memory

import (
	"context"
	"testing"
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
