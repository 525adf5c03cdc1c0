package rules

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// ErrFixScript: the output of `oscap xccdf generate fix` could not be read.
var ErrFixScript = errors.New("invalid oscap fix script")

// OscapTestResultPrefix is the prefix of the XCCDF TestResult id OpenSCAP
// 1.3 gives an evaluation: the profile's full id follows it.
const OscapTestResultPrefix = "xccdf_org.open-scap_testresult_"

// OscapFixes asks OpenSCAP on the target for the datastream's bash
// remediations of the given rules, as a user of SSG gets them: it evaluates
// the rules with --results into a temporary file and runs
//
//	oscap xccdf generate fix --fix-type bash --result-id xccdf_org.open-scap_testresult_PROFILE RESULTS
//
// (OpenSCAP 1.3.7 has no per-rule option; the results restrict the script
// to the rules that failed). profile must be the profile's full id. The
// returned map goes from a rule's short id to its fix text, without the
// generator's progress line; rules that passed, do not apply or ship no
// bash fix have no entry. Fix scripts can exit 0 while failing: only a
// re-check tells whether one worked.
func OscapFixes(ctx context.Context, r nightshift.Runner, datastream, profile string, ruleIDs []string) (map[string]string, error) {
	if r == nil {
		return nil, errors.New("rules: generate oscap fixes: nil runner")
	}
	if datastream == "" || profile == "" || len(ruleIDs) == 0 {
		return nil, fmt.Errorf("rules: generate oscap fixes: datastream, profile and rules are required: %w", ErrNoCheck)
	}
	out, err := r.Run(ctx, OscapFixCommand("", datastream, profile, ruleIDs))
	if err != nil {
		return nil, fmt.Errorf("rules: generate oscap fixes: %w", err)
	}
	if out.ExitCode != 0 || out.TimedOut || out.Signal != "" {
		return nil, fmt.Errorf("rules: generate oscap fixes: exit %d: %s", out.ExitCode, firstLine(oscapStderr(out.Stderr), "no error message"))
	}
	return ParseFixScript(out.Stdout)
}

// OscapFixCommand is the shell command OscapFixes runs on the target.
// oscap "" means "oscap". Rule ids may be short or full.
func OscapFixCommand(oscap, datastream, profile string, ruleIDs []string) string {
	if oscap == "" {
		oscap = "oscap"
	}
	full := make([]string, len(ruleIDs))
	for i, id := range ruleIDs {
		full[i] = id
		if !strings.HasPrefix(id, "xccdf_") {
			full[i] = "xccdf_org.ssgproject.content_rule_" + id
		}
	}
	eval := strings.Replace(oscapCommand(oscap, datastream, profile, full), " --progress ", " ", 1)
	eval = strings.Replace(eval, " --skip-valid ", ` --skip-valid --results "$f" `, 1)
	return `f=$(mktemp) && cd /tmp && ` + eval + ` >/dev/null 2>&1; ` +
		oscapQuote(oscap) + ` xccdf generate fix --fix-type bash --result-id ` + oscapQuote(OscapTestResultPrefix+profile) +
		` "$f"; rc=$?; rm -f "$f"; exit $rc`
}

var (
	fixBegin = regexp.MustCompile(`^# BEGIN fix \((\d+) / (\d+)\) for '([^']+)'$`)
	fixEnd   = regexp.MustCompile(`^# END fix for '([^']+)'$`)
)

// ParseFixScript splits a script made by `oscap xccdf generate fix
// --fix-type bash` at its "# BEGIN fix (i / n) for 'ID'" and "# END fix for
// 'ID'" markers into short rule id → fix text (trimmed, without the
// separator and the "Remediating rule" progress line). A rule whose fix
// is missing (OpenSCAP then echoes "FIX FOR THIS RULE 'ID' IS MISSING!")
// has no entry. Unpaired or
// nested markers, or a count that disagrees with n, are errors matching
// ErrFixScript.
func ParseFixScript(script string) (map[string]string, error) {
	fixes := map[string]string{}
	var (
		cur          string
		body         []string
		total, found int
	)
	lines := strings.Split(script, "\n")
	for i, line := range lines {
		if m := fixBegin.FindStringSubmatch(line); m != nil {
			if cur != "" {
				return nil, fmt.Errorf("rules: line %d: fix for %s begins inside the fix for %s: %w", i+1, m[3], cur, ErrFixScript)
			}
			n, _ := strconv.Atoi(m[2])
			if total != 0 && n != total {
				return nil, fmt.Errorf("rules: line %d: fix count %d, earlier %d: %w", i+1, n, total, ErrFixScript)
			}
			total, cur, body = n, m[3], nil
			found++
			continue
		}
		if m := fixEnd.FindStringSubmatch(line); m != nil {
			if m[1] != cur {
				return nil, fmt.Errorf("rules: line %d: end of the fix for %q, expected %q: %w", i+1, m[1], cur, ErrFixScript)
			}
			if text := fixBody(body); text != "" && !missingFix(text) {
				fixes[ShortID(cur)] = text
			}
			cur = ""
			continue
		}
		if cur != "" {
			body = append(body, line)
		}
	}
	if cur != "" {
		return nil, fmt.Errorf("rules: the fix for %s does not end: %w", cur, ErrFixScript)
	}
	if found != total {
		return nil, fmt.Errorf("rules: %d fixes, the script announces %d: %w", found, total, ErrFixScript)
	}
	return fixes, nil
}

// fixBody drops the separator line and the generator's progress line.
func fixBody(lines []string) string {
	for len(lines) > 0 {
		l := strings.TrimSpace(lines[0])
		if l == "" || strings.Trim(l, "#") == "" || strings.HasPrefix(l, `(>&2 echo "Remediating rule`) {
			lines = lines[1:]
			continue
		}
		break
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// missingFix reports OpenSCAP's placeholder for a rule without a fix of
// the requested type.
func missingFix(text string) bool {
	return !strings.Contains(text, "\n") && strings.Contains(text, "FIX FOR THIS RULE '") && strings.Contains(text, "' IS MISSING")
}
