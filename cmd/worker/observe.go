package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/lessons"
	"github.com/nightshift-dev/nightshift/metrics"
	"github.com/nightshift-dev/nightshift/progress"
	"github.com/nightshift-dev/nightshift/recipes"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

// observeFlags are the flags of run and resume that watch a run rather
// than shape it; they are not recorded with the run.
type observeFlags struct {
	metricsAddr string
	noProgress  bool
	noLessons   bool
	noRecipes   bool
}

// validate checks --metrics-addr before anything is dialled.
func (o observeFlags) validate() error {
	if o.metricsAddr == "" {
		return nil
	}
	return checkHostPort("--metrics-addr", o.metricsAddr, true)
}

// observers are what watches a batch run: progress, metrics, lessons.
type observers struct {
	progress *progress.Progress
	metrics  *metrics.Metrics
	store    *lessons.SQLite
	source   *lessons.Source
	recipes  worker.Recipes
	counter  served.Tokenizer
	logger   *slog.Logger
	jctx     context.Context // for lessons' writes: they outlive a hard stop
	stops    []func() error  // run by close, in reverse order
	notices  retryNotices    // a line per retried model call (w nil: none)
}

// startObservers sets up what o asks for. The lessons store keeps its own
// tables in the journal's SQLite file and writes them through the journal's
// single writer connection.
func startObservers(ctx context.Context, j *journal.Journal, o observeFlags, tok served.Tokenizer, logger *slog.Logger, stderr io.Writer) (_ *observers, err error) {
	obs := &observers{counter: tok, logger: logger, jctx: context.WithoutCancel(ctx)}
	defer func() {
		if err != nil {
			obs.close()
		}
	}()
	if !o.noLessons {
		if obs.store, err = lessons.NewSQLite(ctx, j, lessons.SQLiteConfig{}); err != nil {
			return nil, err
		}
		obs.stops = append(obs.stops, obs.store.Close)
		obs.source = lessons.NewSource(obs.store, lessons.SourceConfig{})
	}
	// Recipes are always proved into the journal's file; --no-recipes only
	// stops their replay.
	rs, err := recipes.NewSQLite(ctx, j, nil)
	if err != nil {
		return nil, err
	}
	obs.recipes = worker.Recipes{Store: rs, NoReplay: o.noRecipes}
	if o.metricsAddr != "" {
		if obs.metrics, err = metrics.New(metrics.Config{}); err != nil {
			return nil, err
		}
		ln, err := net.Listen("tcp", o.metricsAddr)
		if err != nil {
			return nil, fmt.Errorf("metrics address: %w", err)
		}
		sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan error, 1)
		go func() { done <- obs.metrics.Serve(sctx, ln) }()
		obs.stops = append(obs.stops, func() error { cancel(); return <-done })
		fmt.Fprintf(stderr, "worker: serving metrics on http://%s/metrics\n", ln.Addr())
	}
	if !o.noProgress {
		if obs.progress, err = progress.New(progress.Config{Out: stderr}); err != nil {
			return nil, err
		}
		if obs.progress.Live() {
			tctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { _ = obs.progress.Run(tctx, time.Second); close(done) }()
			obs.stops = append(obs.stops, func() error { cancel(); <-done; return nil })
		}
		obs.stops = append(obs.stops, obs.progress.Close)
	}
	return obs, nil
}

// configure hooks the observers into a batch configuration.
func (obs *observers) configure(cfg *batch.Config) {
	if obs.metrics != nil {
		cfg.Worker.Chat = obs.metrics.Model(cfg.Worker.Chat)
		cfg.Worker.Observer = obs.metrics
		cfg.Connector = timedConnector{cfg.Connector, obs.metrics}
	}
	if obs.source != nil {
		cfg.Worker.Lessons = obs.source
	}
	cfg.Worker.Recipes = obs.recipes
	if obs.progress != nil {
		cfg.Progress = obs.progress
	}
	cfg.HostObserver = obs.hostObserver
}

// hostObserver returns the observer of one host's worker: its progress
// line and its lessons recorder.
func (obs *observers) hostObserver(host string) nightshift.Observer {
	var out nightshift.Observers
	if obs.notices.w != nil {
		n := obs.notices
		n.host = host
		out = append(out, n)
	}
	if obs.progress != nil {
		out = append(out, obs.progress.Observer(host))
	}
	if obs.store != nil {
		rec, err := lessons.NewRecorder(lessons.RecorderConfig{Store: obs.store, Host: host, Counter: obs.counter})
		if err != nil {
			obs.logger.Warn("lessons not recorded", "host", host, "err", err)
		} else {
			out = append(out, lessonWriter{obs, rec, host})
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// close stops the observers: the last progress, the metrics server, the
// lessons store.
func (obs *observers) close() error {
	var errs []error
	for i := len(obs.stops) - 1; i >= 0; i-- {
		errs = append(errs, obs.stops[i]())
	}
	obs.stops = nil
	return errors.Join(errs...)
}

// lessonWriter records a host's lessons and stores them when a rule ends,
// before the host goes on to its next rule (and before other hosts reach
// the rule, when they come later).
type lessonWriter struct {
	obs  *observers
	rec  *lessons.Recorder
	host string
}

func (l lessonWriter) Observe(e nightshift.Event) {
	l.rec.Observe(e)
	if e.Kind == nightshift.EventRuleEnd {
		if err := l.rec.Flush(l.obs.jctx); err != nil {
			l.obs.logger.Warn("lessons not stored; kept for the next rule's end", "host", l.host, "rule", e.Rule, "err", err)
		}
	}
}

// timedConnector wraps each host's target so that metrics time its
// commands.
type timedConnector struct {
	inner nightshift.Connector
	m     *metrics.Metrics
}

func (c timedConnector) Connect(ctx context.Context, h inventory.Host) (nightshift.Target, error) {
	t, err := c.inner.Connect(ctx, h)
	if err != nil {
		return nil, err
	}
	return timedTarget{c.m.Target(t), t}, nil
}

type timedTarget struct {
	nightshift.Runner
	closer io.Closer
}

func (t timedTarget) Close() error { return t.closer.Close() }
