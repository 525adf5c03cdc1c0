package safety

import (
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// parseHarm refuses a configuration its own program accepted before the
// command and rejects after it (nightshift.ConfigParse, gathered by the
// sandbox): sudo that refuses to run for everyone, apt that fails every
// command. The reason names the program and its first error line. A
// configuration that already failed on the host is not the command's
// doing and is not refused; a side the sandbox did not check refuses
// nothing. A sudoers that visudo rejects, for a worker that logs in as
// another user than root, takes the worker's own sudo away: a lockout.
func parseHarm(e nightshift.Effects, pol EffectsPolicy) []Refusal {
	var out []Refusal
	for _, c := range e.Parses {
		if !c.Broken() {
			continue
		}
		prog, _, _ := strings.Cut(c.Program, " ")
		reason := "would leave " + c.File + " a configuration " + prog + " rejects (" + c.Program + ": " + firstErrorLine(c.Message) +
			"); it parsed before the command"
		entry := "config-parse"
		if prog == "visudo" && pol.Login != "root" {
			entry = "lockout"
			reason += "; sudo would refuse to run, for " + pol.Login + " too"
		}
		out = append(out, Refusal{Entry: entry, Reason: reason})
	}
	return out
}

// firstErrorLine is the first line of a parser's output that says what
// failed: apt's "E: …", visudo's ">>> FILE: syntax error near line N <<<",
// else the first non-blank line; cut at 200 bytes.
func firstErrorLine(msg string) string {
	lines := strings.Split(msg, "\n")
	first := ""
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if first == "" {
			first = l
		}
		if strings.HasPrefix(l, "E: ") || strings.Contains(l, "syntax error") || strings.Contains(l, "parse error") {
			first = l
			break
		}
	}
	if first == "" {
		return "it failed without a message"
	}
	if len(first) > 200 {
		first = strings.ToValidUTF8(first[:200], "") + "…"
	}
	return first
}
