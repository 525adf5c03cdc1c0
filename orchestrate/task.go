package orchestrate

import (
	"strings"

	"github.com/nightshift-dev/nightshift/internal/textcut"
	"github.com/nightshift-dev/nightshift/report"

	"github.com/nightshift-dev/nightshift"
)

// DefaultOutputCap bounds each command's output in a report, in bytes,
// when the caller gives no cap.
const DefaultOutputCap = 2000

// OutcomeUnknownStderr is what the worker reads as the stderr of a command
// whose outcome is unknown because the worker stopped while it ran (a
// crash, a kill, a fleet worker that died): it is not run again, and the
// worker's re-check tells what it did.
const OutcomeUnknownStderr = "command outcome unknown: the worker stopped while this command ran; it was not run again\n"

// outcomeUnknownDetail is a lost command's detail in a report.
const outcomeUnknownDetail = "outcome unknown: the worker stopped while the command ran"

// RuleRef names a rule of a night.
type RuleRef struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
}

// Command is one command of a task as the report shows it.
type Command struct {
	Attempt int            `json:"attempt"`
	Command report.Command `json:"command"`
}

// Attempt is the end of one attempt.
type Attempt struct {
	N            int    `json:"n"`
	PromptTokens int    `json:"prompt_tokens"`
	Limit        int    `json:"limit"`
	Check        string `json:"check"`
}

// Task is how one rule went on one host: what a report shows of it. A
// fleet's host workflow returns its tasks as they are; the journal's are
// rebuilt from its steps (package batch).
type Task struct {
	Rule     string             `json:"rule"`
	Title    string             `json:"title,omitempty"`
	Host     string             `json:"host"`
	Finished bool               `json:"finished"`
	Outcome  nightshift.Outcome `json:"outcome"`
	Commands []Command          `json:"commands,omitempty"`
	Attempts []Attempt          `json:"attempts,omitempty"`
	// UsagePromptTokens and CachedTokens sum the model server's usage over
	// the task's answered model calls (usage.prompt_tokens and
	// usage.prompt_tokens_details.cached_tokens), finished or not. Zero in
	// results of fleet nights recorded before fleets carried usage.
	UsagePromptTokens int `json:"usage_prompt_tokens,omitempty"`
	CachedTokens      int `json:"cached_tokens,omitempty"`
}

// AddCommand appends a command of attempt n; 0 is the replay of a recipe,
// before any model call.
func (t *Task) AddCommand(n int, c report.Command) {
	t.Commands = append(t.Commands, Command{Attempt: max(n, 0), Command: c})
}

// Checked records the re-check after a command of attempt n: the last
// command, if it belongs to attempt n, shows its status.
func (t *Task) Checked(n int, status nightshift.CheckStatus) {
	if n >= 0 && len(t.Commands) > 0 {
		if c := &t.Commands[len(t.Commands)-1]; c.Attempt == n {
			c.Command.Check = status.String()
		}
	}
}

// Usage adds an answered model call's usage.
func (t *Task) Usage(prompt, cached int) {
	t.UsagePromptTokens += prompt
	t.CachedTokens += cached
}

// EndAttempt records the end of attempt n.
func (t *Task) EndAttempt(n, promptTokens, limit int, check nightshift.CheckStatus, gaveUp bool) {
	t.Attempts = append(t.Attempts, Attempt{N: n, PromptTokens: promptTokens, Limit: limit, Check: nightshift.AttemptCheck(check, gaveUp)})
}

// CommandEntry is a command that ran as a report shows it: its exit status
// when it exited (not timed out, no error), its output (stdout, then
// stderr) longer than outputCap bytes (0: DefaultOutputCap) cut around the
// marker (textcut.Middle), and its error, if any, as the detail. The
// command, its output and its error are masked (nightshift.RedactText,
// nightshift.Exec.Redacted): a report shows no password hash or private
// key.
func CommandEntry(command string, action nightshift.Action, ex nightshift.Exec, errText string, outputCap int) report.Command {
	if outputCap <= 0 {
		outputCap = DefaultOutputCap
	}
	ex = ex.Redacted()
	rc := report.Command{Command: nightshift.RedactText(command), Action: action.String(), Detail: nightshift.RedactText(errText), Evidence: ex.Evidence}
	if !ex.TimedOut && errText == "" {
		code := ex.ExitCode
		rc.ExitCode = &code
	}
	out := ex.Stdout
	if ex.Stderr != "" {
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		out += ex.Stderr
	}
	rc.Output, _ = textcut.Middle(out, outputCap)
	return rc
}

// UnknownEntry marks rc as a command whose outcome is unknown: the worker
// stopped while it ran.
func UnknownEntry(rc report.Command) report.Command {
	rc.Action, rc.ExitCode = nightshift.ActionUnknown.String(), nil
	if rc.Detail == "" {
		rc.Detail = outcomeUnknownDetail
	}
	return rc
}
