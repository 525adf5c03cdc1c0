package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// signals is how a command that works on hosts answers SIGINT and SIGTERM,
// from its start to its end. The first signal closes stop (each host
// finishes its current step, records it and starts nothing new) and ends
// start, the context of everything done before the work begins (waiting
// for the model server, reading a datastream from the hosts): a wait there
// ends at once. The second signal also ends hard: everything stops at once,
// the journal still consistent.
//
// signal.Notify installs the handlers even when the process was started
// with SIGINT ignored (as a shell starts a background job of a
// non-interactive script), so Ctrl-C and `kill -INT` stop it as they would
// in the foreground.
type signals struct {
	stop       chan struct{}
	start      context.Context
	hard       context.Context
	cancelHard context.CancelFunc
	ch         chan os.Signal
	done       chan struct{}
}

// catchSignals starts catching SIGINT and SIGTERM; close stops it.
func catchSignals(ctx context.Context, stderr io.Writer) *signals {
	s := &signals{stop: make(chan struct{}), ch: make(chan os.Signal, 2), done: make(chan struct{})}
	s.hard, s.cancelHard = context.WithCancel(ctx)
	start, cancelStart := context.WithCancel(s.hard)
	s.start = start
	signal.Notify(s.ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		defer cancelStart()
		select {
		case <-s.done:
			return
		case <-s.hard.Done():
			return
		case <-s.ch:
			fmt.Fprintln(stderr, "worker: stopping after the current step (signal again to stop now)")
			close(s.stop)
			cancelStart()
		}
		select {
		case <-s.done:
		case <-s.hard.Done():
		case <-s.ch:
			s.cancelHard()
		}
	}()
	return s
}

// close stops catching signals and ends the contexts.
func (s *signals) close() {
	signal.Stop(s.ch)
	close(s.done)
	s.cancelHard()
}

// stopped reports whether a signal has come.
func (s *signals) stopped() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

// startErr is err from a step of the start-up, or the stop that ended it.
func (s *signals) startErr(err error, what string) error {
	if err != nil && s.stopped() {
		return &stoppedAtStart{what}
	}
	return err
}

// stoppedAtStart reports a command stopped by a signal before its work
// began: exit 1, as any stop before the end.
type stoppedAtStart struct{ what string }

func (e *stoppedAtStart) Error() string {
	return fmt.Sprintf("stopped by a signal while %s; nothing was run on any host", e.what)
}
func (e *stoppedAtStart) ExitCode() int { return exitNotFixed }
