package scap

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/internal/textcut"
	"github.com/nightshift-dev/nightshift/rules"
)

// Check evaluates one XCCDF rule with OpenSCAP on the target:
//
//	oscap xccdf eval --skip-valid --progress --profile P --rule R DS
//
// and reads the rule's result from oscap's progress lines ("RULE:RESULT").
// pass and fixed are nightshift.CheckPass; fail is nightshift.CheckFail; notapplicable is
// nightshift.CheckNotApplicable; error, unknown, notchecked, notselected and
// informational are nightshift.CheckError, with the result named in Detail — none of
// them ever reads as fixed. A missing result, an oscap exit status other
// than 0 or 2, a signal or a timeout is nightshift.CheckError too.
type Check struct {
	// Datastream is the path of the source datastream on the target.
	Datastream string
	// Profile and Rule are XCCDF ids; full ids are safest (oscap matches a
	// short profile id as a suffix).
	Profile, Rule string
	// Oscap is the oscap command on the target; empty means "oscap".
	Oscap string
}

// Kind returns "oscap".
func (Check) Kind() string { return "oscap" }

// String returns the command Evaluate runs.
func (c Check) String() string {
	return oscapCommand(c.Oscap, c.Datastream, c.Profile, []string{c.Rule})
}

// Evaluate runs oscap for the rule through r. The error is non-nil only when
// the outcome is unknown (the runner failed, ctx ended, the check is
// incomplete); the result then has nightshift.CheckError.
func (c Check) Evaluate(ctx context.Context, r nightshift.Runner) (rules.CheckResult, error) {
	res, err := EvaluateMany(ctx, r, []Check{c})
	if len(res) == 0 {
		return rules.CheckResult{Status: nightshift.CheckError, ExitCode: -1, Detail: "not run"}, err
	}
	return res[0], err
}

// EvaluateMany evaluates several oscap checks with one oscap run per
// (oscap, datastream, profile), so the datastream is loaded once. Results
// are in the order of checks. The error joins the failures of the runs
// whose outcome is unknown; the other results are valid.
func EvaluateMany(ctx context.Context, r nightshift.Runner, checks []Check) ([]rules.CheckResult, error) {
	results := make([]rules.CheckResult, len(checks))
	type key struct{ oscap, ds, profile string }
	groups := map[key][]int{}
	var order []key
	for i, c := range checks {
		results[i] = rules.CheckResult{Status: nightshift.CheckError, ExitCode: -1, Detail: "not run"}
		if c.Datastream == "" || c.Profile == "" || c.Rule == "" {
			results[i].Detail = "incomplete oscap check (datastream, profile and rule are required)"
			continue
		}
		k := key{c.Oscap, c.Datastream, c.Profile}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	var errs []error
	for i, c := range checks {
		if c.Datastream == "" || c.Profile == "" || c.Rule == "" {
			errs = append(errs, fmt.Errorf("scap: oscap check %d: %w", i, rules.ErrNoCheck))
		}
	}
	if r == nil {
		return results, errors.Join(append(errs, errors.New("scap: evaluate oscap check: nil runner"))...)
	}
	for _, k := range order {
		idx := groups[k]
		ids := make([]string, 0, len(idx))
		for _, i := range idx {
			if id := checks[i].Rule; !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		if err := ctx.Err(); err != nil {
			for _, i := range idx {
				results[i].Detail = "not run: " + err.Error()
			}
			errs = append(errs, fmt.Errorf("scap: evaluate oscap check: %w", err))
			continue
		}
		out, err := r.Run(ctx, oscapCommand(k.oscap, k.ds, k.profile, ids))
		if err != nil {
			for _, i := range idx {
				results[i].Detail = "oscap could not run: " + err.Error()
				results[i].Output = capOutput(out.Stdout, out.Stderr)
			}
			errs = append(errs, fmt.Errorf("scap: run oscap: %w", err))
			continue
		}
		byRule := ParseProgress(out.Stdout)
		stderr := oscapStderr(out.Stderr)
		for _, i := range idx {
			results[i] = classifyOscap(checks[i].Rule, byRule, out, stderr)
		}
	}
	return results, errors.Join(errs...)
}

// ParseProgress reads the progress lines of `oscap xccdf eval
// --progress` ("xccdf_..._rule_x:fail") into rule id → result. Other lines
// are ignored; a rule reported twice keeps its last result.
func ParseProgress(stdout string) map[string]string {
	m := map[string]string{}
	for line := range strings.SplitSeq(stdout, "\n") {
		line = strings.TrimSpace(line)
		i := strings.LastIndexByte(line, ':')
		if i <= 0 || !strings.HasPrefix(line, "xccdf_") || strings.ContainsAny(line[:i], " \t") {
			continue
		}
		m[line[:i]] = line[i+1:]
	}
	return m
}

// oscapStderr drops oscap's warnings about the remote OVAL component SSG's
// datastreams reference (the target never fetches it), which would repeat
// in every prompt.
func oscapStderr(s string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(s, "\n") {
		if strings.HasPrefix(line, "WARNING: Datastream component") || strings.HasPrefix(line, "WARNING: Skipping ") || line == "" {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func classifyOscap(rule string, byRule map[string]string, out nightshift.Exec, stderr string) rules.CheckResult {
	res := rules.CheckResult{Status: nightshift.CheckError, ExitCode: out.ExitCode}
	result, found := byRule[rule]
	if !found {
		// oscap matches --rule exactly; a short id never appears.
		result, found = byRule["xccdf_org.ssgproject.content_rule_"+rule]
	}
	if found {
		res.Output = capOutput("oscap: "+ShortID(rule)+": "+result+"\n", stderr)
	} else {
		res.Output = capOutput("", stderr)
	}
	switch {
	case out.TimedOut:
		res.ExitCode, res.Detail = -1, "oscap timed out"
		return res
	case out.Signal != "":
		res.ExitCode, res.Detail = -1, "oscap killed by signal "+out.Signal
		return res
	case out.ExitCode != 0 && out.ExitCode != 2:
		res.Detail = "oscap exit " + strconv.Itoa(out.ExitCode) + ": " + firstLine(stderr, "evaluation error")
		return res
	case !found:
		res.Detail = "oscap reported no result for " + ShortID(rule)
		return res
	}
	switch result {
	case "pass", "fixed":
		res.Status, res.Detail = nightshift.CheckPass, "oscap: "+result+": compliant"
	case "fail":
		res.Status, res.Detail = nightshift.CheckFail, "oscap: fail: not compliant"
	case "notapplicable":
		res.Status, res.Detail = nightshift.CheckNotApplicable, "oscap: notapplicable: the rule does not apply to this host"
	case "notchecked":
		res.Detail = "oscap: notchecked: the rule has no automated check"
	case "notselected":
		res.Detail = "oscap: notselected: the rule is not selected by the profile"
	case "informational":
		res.Detail = "oscap: informational: the rule is not scored"
	default: // error, unknown
		res.Detail = "oscap: " + result + ": the check could not decide"
	}
	return res
}

func firstLine(s, def string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return def
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// oscapCommand builds the oscap command line with every argument
// single-quoted for the target's shell.
func oscapCommand(oscap, ds, profile string, ruleIDs []string) string {
	if oscap == "" {
		oscap = "oscap"
	}
	var b strings.Builder
	b.WriteString(oscapQuote(oscap))
	b.WriteString(" xccdf eval --skip-valid --progress --profile ")
	b.WriteString(oscapQuote(profile))
	for _, id := range ruleIDs {
		b.WriteString(" --rule ")
		b.WriteString(oscapQuote(id))
	}
	b.WriteByte(' ')
	b.WriteString(oscapQuote(ds))
	return b.String()
}

// oscapQuote quotes s for a POSIX shell; plain words stay as they are.
func oscapQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@,+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// capOutput joins stdout and stderr as rules' shell checks do and keeps at
// most about rules.MaxCheckOutput bytes, head and tail around the marker.
func capOutput(stdout, stderr string) string {
	s := stdout
	if stderr != "" {
		if s != "" && s[len(s)-1] != '\n' {
			s += "\n"
		}
		s += stderr
	}
	out, _ := textcut.Middle(s, rules.MaxCheckOutput)
	return out
}
