package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	tworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// ErrConfig is wrapped by every configuration error of Serve.
var ErrConfig = errors.New("invalid fleet configuration")

// ServeConfig configures one worker process of a fleet.
type ServeConfig struct {
	// Client is connected to the Temporal frontend (required), with
	// DataConverter as its data converter (without it, large signals can
	// trip the SDK's deadlock detector on a busy process).
	Client client.Client
	// Zone is the zone whose hosts this process works on; "" is DefaultZone.
	Zone string
	// Activities reach the zone's hosts and the model server (required;
	// Model may be nil when ModelSlots is 0).
	Activities *Activities
	// Workflows runs the night and host workflows; nil means a new one.
	Workflows *Workflows
	// ModelSlots is how many model calls this process makes at once (its
	// share of the fleet-wide cap: the cap is the sum over the processes
	// serving the model queue). Zero means this process serves no model
	// calls.
	ModelSlots int
	// ModelRate, when positive, is the fleet-wide cap on model calls started
	// per second, enforced by the Temporal server for the model queue
	// (TaskQueueActivitiesPerSecond; the last worker to poll sets it).
	ModelRate float64
	// HostSlots caps the host activities (probe, check, command) this
	// process runs at once. Zero means 64.
	HostSlots int
	// Tokenizers are loaded before the workers start (nights naming
	// another one load it on first use). Nil means "qwen3".
	Tokenizers []string
	// NoNight stops this process from polling the night queue.
	NoNight bool
	// Logger receives the SDK's logs; nil means slog's default.
	Logger *slog.Logger
}

// The registrations of each queue's worker, under the names the fleet's
// histories use: Serve registers each on its queue's worker; the tests
// register all three on one test environment.

// registerZone registers what a zone's queue runs: host workflows and
// host activities.
func registerZone(w tworker.Registry, wf *Workflows, a *Activities) {
	w.RegisterWorkflowWithOptions(wf.host, workflow.RegisterOptions{Name: hostWorkflowName})
	w.RegisterActivityWithOptions(a.probe, activity.RegisterOptions{Name: probeActivity})
	w.RegisterActivityWithOptions(a.check, activity.RegisterOptions{Name: checkActivity})
	w.RegisterActivityWithOptions(a.command, activity.RegisterOptions{Name: commandActivity})
	w.RegisterActivityWithOptions(a.sandboxProbe, activity.RegisterOptions{Name: sandboxProbeActivity})
	w.RegisterActivityWithOptions(a.undoTrials, activity.RegisterOptions{Name: undoActivity})
	w.RegisterActivityWithOptions(a.datastream, activity.RegisterOptions{Name: datastreamActivity})
}

// registerNight registers what the night queue runs: night, undo and
// recipe book workflows, and the book's read activity (with c, the
// process's Temporal client; nil fails the read: nights then keep their
// recipes to themselves).
func registerNight(w tworker.Registry, wf *Workflows, c client.Client) {
	w.RegisterWorkflowWithOptions(wf.night, workflow.RegisterOptions{Name: nightWorkflowName})
	w.RegisterWorkflowWithOptions(wf.undo, workflow.RegisterOptions{Name: undoWorkflowName})
	w.RegisterWorkflowWithOptions(wf.book, workflow.RegisterOptions{Name: bookWorkflowName})
	w.RegisterActivityWithOptions(bookReader{c}.read, activity.RegisterOptions{Name: bookReadActivity})
}

// registerModel registers what the model queue runs: model calls.
func registerModel(w tworker.Registry, a *Activities) {
	w.RegisterActivityWithOptions(a.modelCall, activity.RegisterOptions{Name: modelActivity})
}

// Serve runs the process's Temporal workers until ctx ends: the zone's
// queue (host workflows, host activities), the night queue (night
// workflows) unless NoNight, and the model queue when ModelSlots > 0.
// Activities in flight when ctx ends are given a few seconds to finish.
func Serve(ctx context.Context, cfg ServeConfig) error {
	switch {
	case cfg.Client == nil || cfg.Activities == nil:
		return fmt.Errorf("%w: Client and Activities are required", ErrConfig)
	case cfg.ModelSlots < 0 || cfg.ModelRate < 0 || cfg.HostSlots < 0:
		return fmt.Errorf("%w: ModelSlots, ModelRate and HostSlots must not be negative", ErrConfig)
	case cfg.ModelSlots > 0 && cfg.Activities.Model == nil:
		return fmt.Errorf("%w: ModelSlots needs Activities.Model", ErrConfig)
	}
	if cfg.Workflows == nil {
		cfg.Workflows = &Workflows{}
	}
	if cfg.Tokenizers == nil {
		cfg.Tokenizers = []string{"qwen3"}
	}
	if err := cfg.Workflows.Preload(cfg.Tokenizers...); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if cfg.HostSlots == 0 {
		cfg.HostSlots = 64
	}
	a := cfg.Activities
	var ws []tworker.Worker
	zone := tworker.New(cfg.Client, ZoneQueue(cfg.Zone), tworker.Options{MaxConcurrentActivityExecutionSize: cfg.HostSlots})
	registerZone(zone, cfg.Workflows, a)
	ws = append(ws, zone)
	if !cfg.NoNight {
		night := tworker.New(cfg.Client, NightQueue, tworker.Options{})
		registerNight(night, cfg.Workflows, cfg.Client)
		ws = append(ws, night)
	}
	if cfg.ModelSlots > 0 {
		model := tworker.New(cfg.Client, modelQueue, tworker.Options{
			MaxConcurrentActivityExecutionSize: cfg.ModelSlots,
			TaskQueueActivitiesPerSecond:       cfg.ModelRate,
			// One poller per slot at most: a poll holds no slot but an
			// extra poller would fetch a task it cannot start yet.
			MaxConcurrentActivityTaskPollers: max(2, min(cfg.ModelSlots, 4)),
		})
		registerModel(model, a)
		ws = append(ws, model)
	}
	for i, w := range ws {
		if err := w.Start(); err != nil {
			for _, s := range ws[:i] {
				s.Stop()
			}
			return fmt.Errorf("fleet: start worker: %w", err)
		}
	}
	<-ctx.Done()
	for _, w := range ws {
		w.Stop()
	}
	_ = a.Close()
	return nil
}
