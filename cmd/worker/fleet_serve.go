package main

import (
	"context"
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
  worker fleet serve --config FILE [flags]

A worker process of a fleet: works on the hosts of ZONE (their SSH keys and
known_hosts are this machine's), runs night workflows, and with
--model-slots N makes at most N model calls at once for the whole fleet (the
fleet-wide cap is the sum of the slots of the processes serving them;
--model-rate caps the calls started per second across the fleet, enforced by
the Temporal server). Runs until SIGINT or SIGTERM.

` + configHelp

const fleetServeExamples = `
Examples:
  worker fleet serve --zone default --base-url http://gpu1:8000/v1
  worker fleet serve --temporal temporal.internal:7233 --zone dc2 --model-slots 0 \
                     --identity ~/.ssh/nightshift --known-hosts ~/.ssh/known_hosts
  worker fleet serve --config /etc/nightshift/serve.yaml
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
	var config string
	fs := newFlags(cmdServe, stderr)
	bindTemporalFlags(fs, &tf)
	for name, p := range map[string]any{
		"zone": &zone, "model-slots": &modelSlots, "model-rate": &modelRate, "host-slots": &hostSlots, "host-conns": &hostConns,
		"host-idle": &hostIdle, "tokenizer": &tokenizers, "base-url": &m.BaseURL, "api-key-env": &m.APIKeyEnv,
		"max-reply-bytes": &maxReplyBytes, "identity": &m.Identity, "known-hosts": &m.KnownHosts, "accept-new-host-key": &m.AcceptNew,
		"command-timeout": &m.CommandTimeout, "config": &config,
	} {
		fs.bind(name, p)
	}
	setUsage(fs.FlagSet, fleetServeUsage, fleetServeExamples)
	rest, err := fs.parse(args)
	if err != nil {
		return err
	}
	// The file and the environment fill what the command line left, before
	// anything is checked.
	if err := fs.applyConfig(); err != nil {
		return err
	}
	if err := checkTemporalFlags(fs.FlagSet); err != nil {
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
