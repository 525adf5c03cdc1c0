package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/nightshift-dev/nightshift/fleet"
)

const fleetUsage = `Usage:
  worker fleet serve  --temporal ADDR [--namespace NS] --zone ZONE [flags]
  worker fleet start  --temporal ADDR --rules FILE|DIR --inventory FILE [--schedule CRON] [flags]
  worker fleet status --temporal ADDR RUN
  worker fleet report --temporal ADDR RUN [--html FILE] [--junit FILE] [--json-report FILE]
  worker fleet cancel --temporal ADDR RUN | --schedule ID
  worker fleet undo   --temporal ADDR --inventory FILE RUN [--host NAME] [--rule ID]
  worker fleet export --temporal ADDR RUN (--ansible DIR | --shell FILE)

Runs nights on Temporal (https://temporal.io) instead of one 'worker run'
process: a night workflow per run, a host workflow per host on the task queue
of the host's zone (inventory variable nightshift_zone; default one zone), the
same rules, attempt loop, memory, lessons, recipes and reports. 'serve' is a worker
process for one zone (run several per zone for fail-over); every serve process
also runs night workflows and, with --model-slots, model calls, whose sum over
the processes is the fleet-wide cap on model calls in flight.

A command whose worker process dies while it runs is reported 'unknown' and
never run again; probes, checks and model calls are retried.

Every subcommand takes --temporal, --namespace and, for a frontend that
demands mutual TLS, --tls-cert and --tls-key (the client's certificate),
--tls-ca (the CA that signed the frontend's) and --tls-server-name; the files
are checked before anything is dialled.

Run 'worker help fleet SUBCOMMAND' (or 'worker fleet SUBCOMMAND --help') for
a subcommand's flags and examples. The examples below use Temporal's dev
server.

Examples:
  temporal server start-dev --headless &
  worker fleet serve --zone default --base-url http://gpu1:8000/v1 &
  worker fleet start --rules rules/ --inventory hosts.yaml --id tonight --wait --html night.html
  worker fleet status tonight
`

func runFleet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, fleetUsage)
		return usagef("fleet: no subcommand given")
	}
	switch args[0] {
	case "serve":
		return runFleetServe(ctx, args[1:], stdout, stderr)
	case "start":
		return runFleetStart(ctx, args[1:], stdout, stderr)
	case "status":
		return runFleetStatus(ctx, args[1:], stdout, stderr)
	case "report":
		return runFleetReport(ctx, args[1:], stdout, stderr)
	case "cancel":
		return runFleetCancel(ctx, args[1:], stdout, stderr)
	case "undo":
		return runFleetUndo(ctx, args[1:], stdout, stderr)
	case "export":
		return runFleetExport(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, fleetUsage)
		return errHelp
	}
	fmt.Fprint(stderr, fleetUsage)
	return usagef("fleet: unknown subcommand %q", args[0])
}

// temporalFlags say which Temporal frontend and namespace to use.
type temporalFlags struct {
	addr, namespace string
	verbose         bool
	tls             fleet.TLS
}

// bindTemporalFlags declares the flags every fleet subcommand takes.
func bindTemporalFlags(fs *flags, t *temporalFlags) {
	for name, p := range map[string]any{"temporal": &t.addr, "namespace": &t.namespace, "v": &t.verbose,
		"tls-cert": &t.tls.Cert, "tls-key": &t.tls.Key, "tls-ca": &t.tls.CA, "tls-server-name": &t.tls.ServerName} {
		fs.bind(name, p)
	}
}

// options are the client options of the flags; the TLS files are read and
// checked (a usage error when they are not right).
func (t temporalFlags) options(stderr io.Writer) (client.Options, error) {
	level := slog.LevelError
	if t.verbose {
		level = slog.LevelDebug
	}
	logger := tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})))
	opts := client.Options{HostPort: t.addr, Namespace: t.namespace, Logger: logger, DataConverter: fleet.DataConverter()}
	cfg, err := t.tls.Config()
	if err != nil {
		return opts, &usageError{err}
	}
	opts.ConnectionOptions.TLS = cfg
	return opts, nil
}

// dial connects to the Temporal frontend.
func (t temporalFlags) dial(ctx context.Context, stderr io.Writer) (client.Client, error) {
	opts, err := t.options(stderr)
	if err != nil {
		return nil, err
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, &unreachable{fmt.Errorf("temporal at %s: %w", t.addr, err)}
	}
	return c, nil
}

// parseFleetFlags parses args (flags anywhere among the positional
// arguments), mapping -h to errHelp (the help: usage, flags, examples) and
// bad flags to usage errors, checks --temporal and the TLS files, and
// returns the positional arguments.
func parseFleetFlags(fs *flags, usage, examples string, args []string) ([]string, error) {
	setUsage(fs.FlagSet, usage, examples)
	rest, err := fs.parse(args)
	if err != nil {
		return nil, err
	}
	if err := checkTemporalFlags(fs.FlagSet); err != nil {
		return nil, err
	}
	return rest, nil
}

// checkTemporalFlags checks --temporal and the TLS files, before the
// model server or Temporal is dialled.
func checkTemporalFlags(fs *flag.FlagSet) error {
	if err := checkHostPort("--temporal", fs.Lookup("temporal").Value.String(), false); err != nil {
		return err
	}
	t := fleet.TLS{Cert: fs.Lookup("tls-cert").Value.String(), Key: fs.Lookup("tls-key").Value.String(),
		CA: fs.Lookup("tls-ca").Value.String(), ServerName: fs.Lookup("tls-server-name").Value.String()}
	if _, err := t.Config(); err != nil {
		return &usageError{err}
	}
	return nil
}
