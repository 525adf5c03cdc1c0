package memory

import (
	"strings"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/distill"
)

// Step is one tool call of a turn and what became of it: the facts its
// summary line is written from and, once, what the tool printed. The model
// is shown Before, then the output — "stdout:" and "stderr:" sections for
// what is not empty, "(no output)" for a command that ran (ActionRan,
// ActionTimedOut) and printed nothing — then After. Only the fields a
// call has need be set: a tool that ran a command and printed something
// is Step{Command: cmd, Stdout: out, ExitCode: code}.
type Step struct {
	// Tool is the tool the model called. Empty with a Command means a
	// command-running tool (nightshift.ToolApply).
	Tool string
	// Command is the command the call proposed, as the model wrote it: the
	// ledger's key (in canonical form).
	Command string
	// Reason is the model's stated reason, or a give-up's reason.
	Reason string
	// Action is what became of the call. The zero value, ActionNone, with
	// a Command means ActionRan.
	Action nightshift.Action
	// ExitCode and Signal say how a command that ran ended.
	ExitCode int
	Signal   string
	// Stdout and Stderr are what the command printed: shown to the model
	// and read (error lines, error classes) for the summary line.
	Stdout, Stderr string
	// Before and After are what the model is told about the call ahead of
	// the output (its exit status, why it was refused…) and after it
	// (what it changed).
	Before, After string
	// Note explains a blocked, refused or malformed call for its summary
	// line (the ban pattern, what was wrong with it).
	Note string
	// Changes are the files the command changed, when the runner knows
	// them (the summary line names them).
	Changes []nightshift.FileChange
}

// Shown returns what the model is shown of the step (see Step).
func (s Step) Shown() string {
	var b strings.Builder
	b.WriteString(s.Before)
	section := func(name, out string) {
		if out == "" {
			return
		}
		b.WriteString(name + ":\n")
		b.WriteString(out)
		if !strings.HasSuffix(out, "\n") {
			b.WriteByte('\n')
		}
	}
	switch {
	case s.Stdout != "" || s.Stderr != "":
		section("stdout", s.Stdout)
		section("stderr", s.Stderr)
	case s.Action == nightshift.ActionRan || s.Action == nightshift.ActionTimedOut:
		b.WriteString("(no output)\n")
	}
	b.WriteString(s.After)
	return b.String()
}

// facts is the step as the distiller reads it. Its text is masked
// (nightshift.RedactText): the summary line is a prompt of ours, not the
// model's own tool call, and a model distiller sends it to a server.
func (s Step) facts() distill.Step {
	r := nightshift.RedactText
	return distill.Step{Tool: s.Tool, Command: r(s.Command), Reason: r(s.Reason), Action: s.Action, ExitCode: s.ExitCode,
		Signal: s.Signal, Stdout: r(s.Stdout), Stderr: r(s.Stderr), Note: r(s.Note), Changes: s.Changes}
}
