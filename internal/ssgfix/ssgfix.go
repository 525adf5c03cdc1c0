package ssgfix

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/scap"
)

// errMissing: Generate was called without a datastream, a profile or rules.
var errMissing = errors.New("nothing to generate")

// ErrScript: the output of `oscap xccdf generate fix` could not be read.
var ErrScript = errors.New("invalid oscap fix script")

// TestResultPrefix is the prefix of the XCCDF TestResult id OpenSCAP
// 1.3 gives an evaluation: the profile's full id follows it.
const TestResultPrefix = "xccdf_org.open-scap_testresult_"

// Generate asks OpenSCAP on the target for the datastream's bash
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
func Generate(ctx context.Context, r nightshift.Runner, datastream, profile string, ruleIDs []string) (map[string]string, error) {
	if r == nil {
		return nil, errors.New("ssgfix: generate oscap fixes: nil runner")
	}
	if datastream == "" || profile == "" || len(ruleIDs) == 0 {
		return nil, fmt.Errorf("ssgfix: generate oscap fixes: datastream, profile and rules are required: %w", errMissing)
	}
	out, err := r.Run(ctx, Command("", datastream, profile, ruleIDs))
	if err != nil {
		return nil, fmt.Errorf("ssgfix: generate oscap fixes: %w", err)
	}
	if out.ExitCode != 0 || out.TimedOut || out.Signal != "" {
		return nil, fmt.Errorf("ssgfix: generate oscap fixes: exit %d: %s", out.ExitCode, firstError(out.Stderr))
	}
	return Parse(out.Stdout)
}

// Command is the shell command Generate runs on the target.
// oscap "" means "oscap". Rule ids may be short or full.
func Command(oscap, datastream, profile string, ruleIDs []string) string {
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
	eval := quote(oscap) + ` xccdf eval --skip-valid --results "$f" --profile ` + quote(profile)
	for _, id := range full {
		eval += " --rule " + quote(id)
	}
	eval += " " + quote(datastream)
	return `f=$(mktemp) && cd /tmp && ` + eval + ` >/dev/null 2>&1; ` +
		quote(oscap) + ` xccdf generate fix --fix-type bash --result-id ` + quote(TestResultPrefix+profile) +
		` "$f"; rc=$?; rm -f "$f"; exit $rc`
}

var (
	fixBegin = regexp.MustCompile(`^# BEGIN fix \((\d+) / (\d+)\) for '([^']+)'$`)
	fixEnd   = regexp.MustCompile(`^# END fix for '([^']+)'$`)
)

// Parse splits a script made by `oscap xccdf generate fix
// --fix-type bash` at its "# BEGIN fix (i / n) for 'ID'" and "# END fix for
// 'ID'" markers into short rule id → fix text (trimmed, without the
// separator and the "Remediating rule" progress line). A rule whose fix
// is missing (OpenSCAP then echoes "FIX FOR THIS RULE 'ID' IS MISSING!")
// has no entry. Unpaired or
// nested markers, or a count that disagrees with n, are errors matching
// ErrScript.
func Parse(script string) (map[string]string, error) {
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
				return nil, fmt.Errorf("ssgfix: line %d: fix for %s begins inside the fix for %s: %w", i+1, m[3], cur, ErrScript)
			}
			n, _ := strconv.Atoi(m[2])
			if total != 0 && n != total {
				return nil, fmt.Errorf("ssgfix: line %d: fix count %d, earlier %d: %w", i+1, n, total, ErrScript)
			}
			total, cur, body = n, m[3], nil
			found++
			continue
		}
		if m := fixEnd.FindStringSubmatch(line); m != nil {
			if m[1] != cur {
				return nil, fmt.Errorf("ssgfix: line %d: end of the fix for %q, expected %q: %w", i+1, m[1], cur, ErrScript)
			}
			if text := fixBody(body); text != "" && !missingFix(text) {
				fixes[scap.ShortID(cur)] = text
			}
			cur = ""
			continue
		}
		if cur != "" {
			body = append(body, line)
		}
	}
	if cur != "" {
		return nil, fmt.Errorf("ssgfix: the fix for %s does not end: %w", cur, ErrScript)
	}
	if found != total {
		return nil, fmt.Errorf("ssgfix: %d fixes, the script announces %d: %w", found, total, ErrScript)
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

// quote quotes s for a POSIX shell; plain words stay as they are.
func quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@,+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// firstError is the first line of oscap's stderr that is not one of its
// warnings about the remote OVAL component SSG's datastreams name.
func firstError(stderr string) string {
	for line := range strings.SplitSeq(stderr, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "WARNING: Datastream component") && !strings.HasPrefix(line, "WARNING: Skipping ") {
			return line
		}
	}
	return "no error message"
}
