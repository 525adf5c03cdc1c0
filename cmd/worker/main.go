// Command worker fixes compliance rules on Linux hosts with a model served by
// vLLM, keeping every prompt inside the model's context window.
//
// Run `worker --help` for the subcommands and examples.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit codes.
const (
	exitOK          = 0 // every rule compliant, or a subcommand succeeded
	exitNotFixed    = 1 // some rule was not fixed
	exitUsage       = 2 // usage or configuration error
	exitUnreachable = 3 // the model server or the host was unreachable
)

// usageError marks an error as the user's (bad flag, bad file): exit code 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// exitCoder lets an error choose its exit code.
type exitCoder interface{ ExitCode() int }

func main() {
	// Subcommands that run for long handle SIGINT/SIGTERM themselves (the
	// first signal stops after the current step, the second at once).
	err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	os.Exit(exitCode(err, os.Stderr))
}

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, errHelp) {
		return exitOK
	}
	var q quietExit
	if errors.As(err, &q) {
		return int(q)
	}
	fmt.Fprintf(stderr, "worker: %v\n", err)
	var ec exitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	var ue *usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitNotFixed
}

// errHelp is returned after help was printed on request.
var errHelp = errors.New("help requested")

const mainUsage = `worker fixes compliance rules on Linux hosts with a model served by vLLM.

Usage:
  worker --rules FILE|DIR --rule ID [--rule ID …] --host [user@]host[:port] [flags]
  worker run --rules FILE|DIR --inventory FILE --journal FILE [flags]
  worker resume JOURNAL
  worker history JOURNAL [--run ID] [--prune AGE]
  worker undo JOURNAL --run ID [--host NAME] [--rule ID]
  worker recipes list|show|pin|retire|activate JOURNAL [RECIPE]
  worker export JOURNAL --run ID (--ansible DIR | --shell FILE)
  worker fleet serve|start|status|report|cancel [flags]
  worker demo [--sshd]
  worker simulate-server [--policy NAME] [--fix RULE=COMMAND …]
  worker tokens [--tokenizer qwen3|qwen2.5|FILE] [--ids] < text
  worker tokens --chat [--tokenizer qwen3|qwen2.5|FILE] < request.json
  worker check-command [--rules FILE|DIR --rule ID] [--json] < command

Subcommands:
  run              many rules on many hosts, every step in a journal; reports (JSON, JUnit, HTML)
  resume           continue a run after a crash, a kill or a stop
  history          list the runs and tasks of a journal; prune old runs
  undo             restore the files a run's committed commands changed, byte for byte
  recipes          list, show, pin and retire the fixes nights proved (replayed before the model)
  export           write a run's proven fixes as an Ansible playbook or a shell script
  fleet            run nights on Temporal: zone workers, schedules, one model cap across machines
  demo             two sample rules end to end on this machine, nothing to install (simulated vLLM and host)
  simulate-server  serve a vLLM-faithful OpenAI-compatible API with scripted answers (no GPU)
  tokens           count tokens of text, or the prompt tokens vLLM computes for a chat request
  check-command    say whether the worker would run a command (allowed / blocked: REASON)

Run 'worker help SUBCOMMAND' (or 'worker SUBCOMMAND --help') for a
subcommand's flags and examples, 'worker help fix' for the main mode's.
`

// run is the whole program: main only maps its error to an exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, mainUsage)
		return usagef("no subcommand or flags given")
	}
	stderr = helpOutput(args, stdout, stderr)
	if strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "-help" && args[0] != "--help" {
		return runFix(ctx, args, stdout, stderr)
	}
	switch args[0] {
	case "tokens":
		return runTokens(ctx, args[1:], stdin, stdout, stderr)
	case "simulate-server":
		return runSimulate(ctx, args[1:], stdout, stderr)
	case "demo":
		return runDemo(ctx, args[1:], stdout, stderr)
	case "run":
		return runRun(ctx, args[1:], stdout, stderr)
	case "resume":
		return runResume(ctx, args[1:], stdout, stderr)
	case "history":
		return runHistory(ctx, args[1:], stdout, stderr)
	case "undo":
		return runUndo(ctx, args[1:], stdout, stderr)
	case "recipes":
		return runRecipes(ctx, args[1:], stdout, stderr)
	case "export":
		return runExport(ctx, args[1:], stdout, stderr)
	case "check-command":
		return runCheckCommand(ctx, args[1:], stdin, stdout, stderr)
	case "fleet":
		return runFleet(ctx, args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		return runHelp(ctx, args[1:], stdout)
	default:
		fmt.Fprint(stderr, mainUsage)
		return usagef("unknown subcommand %q", args[0])
	}
}
