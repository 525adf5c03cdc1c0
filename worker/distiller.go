package worker

import (
	"context"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/distill"
	"github.com/nightshift-dev/nightshift/memory"
)

// FallbackDistiller is a Config.Distiller that says when it wrote the
// deterministic line instead of its own (distill.ModelDistiller does). The worker
// then emits an EventDistillFallback per such line.
type FallbackDistiller interface {
	memory.LineDistiller
	Distill(ctx context.Context, t distill.Turn) distill.ModelLine
}

// ruleDistiller is the distiller of one rule's memory: Config.Distiller as
// is, or, for a FallbackDistiller, one that reports its fallbacks.
func (w *Worker) ruleDistiller(rule string) memory.LineDistiller {
	if fd, ok := w.cfg.Distiller.(FallbackDistiller); ok {
		return fallbackReporter{w, rule, fd}
	}
	return w.cfg.Distiller
}

// fallbackReporter emits an EventDistillFallback for each line its
// distiller wrote deterministically. The memory calls Line from Prompt, in
// the goroutine running Fix, as Observer requires.
type fallbackReporter struct {
	w    *Worker
	rule string
	d    FallbackDistiller
}

func (f fallbackReporter) Line(ctx context.Context, t distill.Turn) (string, error) {
	r := f.d.Distill(ctx, t)
	if r.Fallback != nil {
		f.w.log().Info("model distiller fell back to the deterministic line", "rule", f.rule, "turn", t.Number,
			"reason", r.Reason.String(), "err", r.Fallback)
		f.w.emit(nightshift.Event{Kind: nightshift.EventDistillFallback, Rule: f.rule, Attempt: t.Number, Fallback: r.Reason.String(), Error: r.Fallback.Error()})
	}
	return r.Line, nil
}
