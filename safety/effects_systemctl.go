package safety

import "strings"

// systemctl's options change what a verb does as much as the verb itself:
// `start --job-mode=isolate cron.service` stops every unit cron does not
// pull in (ssh among them), `--root`, `--host` and `--machine` act on
// another system the judge does not see, `-i` ignores the inhibitors a
// shutdown honours. The verbs are judged by unitVerb; the options by an
// allow-list: those that only change how systemctl reports, waits or
// asks, and those whose meaning the verb's judgement already covers
// (--now with enable, disable or mask; --signal and --kill-whom with kill,
// judged by sshdHangup). Any other option refuses the action, naming it.

// systemctlValueOptions take a value in the next word unless written
// with "=".
var systemctlValueOptions = map[string]bool{
	"-t": true, "--type": true, "-p": true, "--property": true, "-s": true, "--signal": true,
	"--kill-whom": true, "--kill-who": true, "-n": true, "--lines": true, "-o": true, "--output": true,
	"--state": true, "--job-mode": true,
}

// systemctlHarmless are the options allowed with any verb.
var systemctlHarmless = map[string]bool{
	"--now": true, "--no-block": true, "-q": true, "--quiet": true, "--no-pager": true, "--no-legend": true,
	"--no-ask-password": true, "--system": true, "--no-reload": true, "--runtime": true, "-f": true, "--force": true,
	"-l": true, "--full": true, "-a": true, "--all": true, "--value": true, "-P": true, "--plain": true,
	"--failed": true, "--show-types": true, "--reverse": true, "--before": true, "--after": true, "--wait": true,
	"--no-warn": true, "--recursive": true, "-r": true, "--legend=false": true,
	// value options, judged below by their value where it matters
	"-t": true, "--type": true, "-p": true, "--property": true, "-s": true, "--signal": true,
	"--kill-whom": true, "--kill-who": true, "-n": true, "--lines": true, "-o": true, "--output": true,
	"--state": true, "--job-mode": true,
}

// systemctlJobModes are the --job-mode values that queue the job as a
// plain start or stop would: isolate stops every other unit, flush
// cancels queued jobs, ignore-dependencies and ignore-requirements start
// a unit without what it needs.
var systemctlJobModes = map[string]bool{"fail": true, "replace": true, "replace-irreversibly": true}

// systemctlOptions returns why systemctl's options in args are not run,
// or "".
func systemctlOptions(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return ""
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name, value, hasValue := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "--") && len(a) > 2 {
			// Short options run together (-qf) or a short option with
			// its value attached (-sHUP).
			if systemctlValueOptions[a[:2]] {
				name, value, hasValue = a[:2], a[2:], true
			} else {
				for _, c := range a[1:] {
					if o := "-" + string(c); !systemctlHarmless[o] || systemctlValueOptions[o] {
						return "systemctl " + o + " (in " + a + ") is not an option the worker runs"
					}
				}
				continue
			}
		}
		if !systemctlHarmless[name] {
			return "systemctl " + name + " is not an option the worker runs (it can change what the verb does, or where)"
		}
		if systemctlValueOptions[name] && !hasValue {
			if i+1 >= len(args) {
				return "systemctl " + name + " needs a value"
			}
			i++
			value = args[i]
		}
		if name == "--job-mode" && !systemctlJobModes[value] {
			return "systemctl --job-mode=" + value + " would queue the job beyond the unit (isolate stops every unit it does not pull in, ssh among them)"
		}
	}
	return ""
}
