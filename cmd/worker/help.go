package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
)

// flagGroup is a titled group of flags in a help text.
type flagGroup struct {
	title string
	names []string
}

// fixGroups groups the main mode's flags; every flag of the main mode is
// in one group (TestFixHelpGroupsEveryFlag).
var fixGroups = []flagGroup{
	{"Target (the rules and the host)", []string{"rules", "datastream", "profile", "rule", "host", "identity", "known-hosts",
		"accept-new-host-key", "command-timeout", "max-attempts", "sandbox", "sudo"}},
	{"Model (the server)", []string{"base-url", "model", "api-key-env", "retry-deadline", "request-timeout", "max-reply-bytes", "verify-count"}},
	{"Memory (the prompt's budget)", []string{"tokenizer", "tokenizer-backend", "context-window", "max-tokens", "keep-turns", "distiller"}},
	{"Output", []string{"json", "v", "dry-run"}},
}

// setUsage makes fs's usage print usage, the flags (in groups when groups
// is not nil, else all in name order) and then examples.
func setUsage(fs *flag.FlagSet, usage, examples string, groups []flagGroup) {
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprint(w, usage)
		printFlags(w, fs, groups)
		fmt.Fprint(w, examples)
	}
}

// printFlags prints the flags as "--name VALUE" with their usage and
// non-zero default, under each group's title, or all in name order.
func printFlags(w io.Writer, fs *flag.FlagSet, groups []flagGroup) {
	if groups == nil {
		fmt.Fprintln(w, "\nFlags:")
		fs.VisitAll(func(f *flag.Flag) { printFlag(w, f) })
		return
	}
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, name := range g.names {
			if f := fs.Lookup(name); f != nil {
				printFlag(w, f)
			}
		}
	}
}

func printFlag(w io.Writer, f *flag.Flag) {
	name, usage := flag.UnquoteUsage(f)
	if name == "bool" { // flag's name for a bool's value: none is needed
		name = ""
	}
	head := "  --" + f.Name
	if len(f.Name) == 1 {
		head = "  -" + f.Name
	}
	if name != "" {
		head += " " + name
	}
	fmt.Fprintln(w, head)
	if !zeroDefault(f.DefValue) {
		usage += fmt.Sprintf(" (default %s)", f.DefValue)
	}
	fmt.Fprintf(w, "        %s\n", strings.ReplaceAll(usage, "\n", "\n        "))
}

func zeroDefault(v string) bool {
	switch v {
	case "", "0", "false", "0s", "[]":
		return true
	}
	return false
}

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
		printFlags(stdout, fs, fixGroups)
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
