package main

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// helpTopics are the subcommands 'worker help' knows, with the arguments
// that make each print its help.
var helpTopics = map[string][]string{
	"fix":             {"--help"}, // the main mode
	"run":             {"run", "--help"},
	"resume":          {"resume", "--help"},
	"history":         {"history", "--help"},
	"undo":            {"undo", "--help"},
	"recipes":         {"recipes", "--help"},
	"export":          {"export", "--help"},
	"demo":            {"demo", "--help"},
	"simulate-server": {"simulate-server", "--help"},
	"tokens":          {"tokens", "--help"},
	"check-command":   {"check-command", "--help"},
	"fleet":           {"fleet", "--help"},
}

// runHelp is 'worker help [SUBCOMMAND]' and 'worker --help': the overview
// with the main mode's flags, or one subcommand's help, on stdout.
func runHelp(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stdout, mainUsage)
		fs := newFixFlagSet(&fixFlags{}, stdout)
		fmt.Fprint(stdout, "\nFlags of the main mode (worker --rules … --rule … --host …):\n")
		printFlags(stdout, fs.FlagSet)
		fmt.Fprint(stdout, fixExamples)
		return errHelp
	}
	if len(args) == 2 && args[0] == "fleet" {
		return run(ctx, []string{"fleet", args[1], "--help"}, nil, stdout, stdout)
	}
	if len(args) > 1 {
		return usagef("help: one subcommand at a time (got %s)", strings.Join(args, " "))
	}
	topic, ok := helpTopics[args[0]]
	if !ok {
		return usagef("help: unknown subcommand %q (want one of run, resume, history, demo, simulate-server, tokens, check-command, fleet, or fix for the main mode)", args[0])
	}
	if args[0] == "fix" {
		fs := newFixFlagSet(&fixFlags{}, stdout)
		fs.Usage()
		return errHelp
	}
	// Help asked for is the output: it goes to stdout.
	return run(ctx, topic, nil, stdout, stdout)
}

// helpOutput is where help goes: stdout when args ask for it (-h, -help
// or --help before any "--"), so that 'worker run --help | less' works;
// else stderr, where usage errors go.
func helpOutput(args []string, stdout, stderr io.Writer) io.Writer {
	for _, a := range args {
		switch a {
		case "--":
			return stderr
		case "-h", "-help", "--help":
			return stdout
		}
	}
	return stderr
}
