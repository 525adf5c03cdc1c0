package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nightshift-dev/nightshift/fleet"
	"github.com/nightshift-dev/nightshift/orchestrate"
	"github.com/nightshift-dev/nightshift/worker"
)

const fleetServeUsage = `Usage:
  worker fleet serve --temporal ADDR [--namespace NS] --zone ZONE [flags]

A worker process of a fleet: works on the hosts of ZONE (their SSH keys and
known_hosts are this machine's), runs night workflows, and with
--model-slots N makes at most N model calls at once for the whole fleet (the
fleet-wide cap is the sum of the slots of the processes serving them;
--model-rate caps the calls started per second across the fleet, enforced by
the Temporal server). Runs until SIGINT or SIGTERM.
`

const fleetServeExamples = `
Examples:
  worker fleet serve --zone default --base-url http://gpu1:8000/v1
  worker fleet serve --temporal temporal.internal:7233 --zone dc2 --model-slots 0 \
                     --identity ~/.ssh/nightshift --known-hosts ~/.ssh/known_hosts
`

func runFleetServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var tf temporalFlags
	m := &runMeta{}
	var zone string
	var modelSlots, hostSlots, hostConns int
	var hostIdle time.Duration
	var modelRate float64
	var maxReplyBytes int64
	var tokenizers stringList
	fs := flag.NewFlagSet("worker fleet serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addTemporalFlags(fs, &tf)
	fs.StringVar(&zone, "zone", fleet.DefaultZone, "the `ZONE` whose hosts this process works on")
	fs.IntVar(&modelSlots, "model-slots", 2, "model calls this process makes at once (0: none)")
	fs.Float64Var(&modelRate, "model-rate", 0, "fleet-wide cap on model calls started per `SECOND` (0: none)")
	fs.IntVar(&hostSlots, "host-slots", 64, "host activities (probe, check, command) at once")
	fs.IntVar(&hostConns, "host-conns", fleet.DefaultMaxIdleConns, "SSH connections kept open between a host's activities, least recently used closed first (0: none)")
	fs.DurationVar(&hostIdle, "host-idle", fleet.DefaultIdleConnTimeout, "close a kept SSH connection unused this long")
	fs.Var(&tokenizers, "tokenizer", "tokenizer to load before serving: qwen3, qwen2.5 or a tokenizer.json `FILE` (repeatable; default qwen3)")
	fs.StringVar(&m.BaseURL, "base-url", "http://localhost:8000/v1", "OpenAI-compatible `URL` of the model server")
	fs.StringVar(&m.APIKeyEnv, "api-key-env", "OPENAI_API_KEY", "environment `VARIABLE` holding the API key")
	fs.Int64Var(&maxReplyBytes, "max-reply-bytes", worker.DefaultMaxReplyBytes,
		"cap on a model reply's body in `BYTES`; a longer reply is not read past the cap and is retried as a server fault")
	fs.StringVar(&m.Identity, "identity", "", "private key `FILE` (default: ssh-agent and ~/.ssh/id_*; an inventory's own wins)")
	fs.StringVar(&m.KnownHosts, "known-hosts", "", "known_hosts `FILE` (default ~/.ssh/known_hosts)")
	fs.BoolVar(&m.AcceptNew, "accept-new-host-key", false, "trust unknown host keys on first use (a changed key is still refused)")
	fs.DurationVar(&m.CommandTimeout, "command-timeout", 5*time.Minute, "timeout of each command on a host (0: none)")
	rest, err := parseFleetFlags(fs, fleetServeUsage, fleetServeExamples, args)
	if err != nil {
		return err
	}
	switch {
	case len(rest) > 0:
		return usagef("fleet serve: unexpected argument %q", rest[0])
	case zone == "":
		return usagef("fleet serve: --zone must not be empty")
	case modelSlots < 0 || modelRate < 0 || hostSlots < 1:
		return usagef("fleet serve: --model-slots and --model-rate must not be negative, --host-slots must be positive")
	case hostConns < 0 || hostIdle <= 0:
		return usagef("fleet serve: --host-conns must not be negative, --host-idle must be positive")
	case maxReplyBytes <= 0:
		return usagef("fleet serve: --max-reply-bytes %d must be positive", maxReplyBytes)
	}
	if err := validateServe(m, tokenizers); err != nil {
		return err
	}
	c, err := tf.dial(ctx, stderr)
	if err != nil {
		return err
	}
	defer c.Close()
	base := sshBase(m, nil)
	base.OnDialFailure = dialNotices(stderr)
	acts := &fleet.Activities{Connector: orchestrate.SSHConnector{Base: base}, MaxIdleConns: hostConns, IdleConnTimeout: hostIdle}
	if hostConns == 0 {
		acts.MaxIdleConns = -1 // the flag's 0 is none; the field's zero is the default
	}
	if modelSlots > 0 {
		acts.Model, err = worker.NewClient(worker.ClientConfig{BaseURL: m.BaseURL, APIKey: os.Getenv(m.APIKeyEnv), MaxReplyBytes: maxReplyBytes})
		if err != nil {
			return &usageError{err}
		}
	}
	sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(stdout, "fleet serve: zone %s (queue %s), night queue %s, model slots %d, on %s namespace %s\n",
		zone, fleet.ZoneQueue(zone), fleet.NightQueue, modelSlots, tf.addr, tf.namespace)
	err = fleet.Serve(sctx, fleet.ServeConfig{Client: c, Zone: zone, Activities: acts, ModelSlots: modelSlots,
		ModelRate: modelRate, HostSlots: hostSlots, Tokenizers: tokenizers})
	if err != nil {
		return &usageError{err}
	}
	return nil
}
