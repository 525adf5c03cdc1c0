package worker

import (
	"log/slog"

	"github.com/nightshift-dev/nightshift/memory"
)

// memLogger logs the memory's events with slog.
type memLogger struct {
	log  *slog.Logger
	rule string
	next memory.Observer // Config.MemoryObserver, or nil
}

func (l memLogger) Observe(e memory.Event) {
	args := []any{"rule", l.rule, "kind", string(e.Kind), "turn", e.Turn, "distilled", e.Distilled, "verbatim", e.Verbatim}
	if e.Assessment != nil {
		args = append(args, "budget", e.Assessment.String())
	}
	if e.TokensBefore != 0 || e.TokensAfter != 0 {
		args = append(args, "tokens_before", e.TokensBefore, "tokens_after", e.TokensAfter)
	}
	l.log.Debug("memory", args...)
	if l.next != nil {
		l.next.Observe(e)
	}
}
