package main

import (
	"strings"
	"testing"
)

// Bad fleet invocations are usage errors (exit 2) naming the problem,
// before any connection to Temporal.
func TestFleetUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", []string{"fleet"}, "no subcommand"},
		{"unknown subcommand", []string{"fleet", "launch"}, `unknown subcommand "launch"`},
		{"start without rules", []string{"fleet", "start", "--inventory", "x.yaml"}, "--rules and --inventory are required"},
		{"start datastream", []string{"fleet", "start", "--datastream", "/ds.xml", "--inventory", "x"}, "--datastream is not supported"},
		{"start reports without wait", []string{"fleet", "start", "--rules", "r", "--inventory", "i", "--html", "h"}, "need --wait"},
		{"start wait and schedule", []string{"fleet", "start", "--rules", "r", "--inventory", "i", "--wait", "--schedule", "0 2 * * *"}, "cannot be combined"},
		{"start short heartbeat", []string{"fleet", "start", "--rules", "r", "--inventory", "i", "--heartbeat", "10ms"}, "--heartbeat"},
		{"start missing rules file", []string{"fleet", "start", "--rules", "/nonexistent.yaml", "--inventory", "i"}, "nonexistent.yaml"},
		{"serve empty zone", []string{"fleet", "serve", "--zone", ""}, "--zone must not be empty"},
		{"serve negative slots", []string{"fleet", "serve", "--model-slots", "-1"}, "must not be negative"},
		{"status no run", []string{"fleet", "status"}, "exactly one RUN"},
		{"report two runs", []string{"fleet", "report", "a", "b"}, "exactly one RUN"},
		{"cancel nothing", []string{"fleet", "cancel"}, "exactly one RUN, or --schedule"},
		{"bad flag", []string{"fleet", "serve", "--nope"}, "not defined"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := cli(t, "", tt.args...)
			if code != exitUsage || !strings.Contains(out+errOut, tt.want) {
				t.Fatalf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, exitUsage, tt.want, out, errOut)
			}
		})
	}
}

func TestFleetHelp(t *testing.T) {
	for _, sub := range []string{"serve", "start", "status", "report", "cancel"} {
		code, out, errOut := cli(t, "", "fleet", sub, "--help")
		if code != exitOK || !strings.Contains(out+errOut, "worker fleet "+sub) {
			t.Errorf("fleet %s --help: exit %d\n%s%s", sub, code, out, errOut)
		}
	}
}
