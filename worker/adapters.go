package worker

import (
	"context"
	"log/slog"

	"github.com/nightshift-dev/nightshift/memory"
	"github.com/nightshift-dev/nightshift/rules"
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

// runnerAdapter lets rules evaluate checks through the worker's Target.
type runnerAdapter struct{ t Target }

func (a runnerAdapter) Run(ctx context.Context, command string) (rules.ExecResult, error) {
	ex, err := a.t.Run(ctx, command)
	return rules.ExecResult{ExitCode: ex.ExitCode, Signal: ex.Signal, TimedOut: ex.TimedOut, Stdout: ex.Stdout, Stderr: ex.Stderr}, err
}
