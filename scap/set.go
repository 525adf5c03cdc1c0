package scap

import (
	"fmt"
	"github.com/nightshift-dev/nightshift/rules"
	"strings"
)

// Options chooses the rules Datastream.Set builds.
type Options struct {
	// Profile is the XCCDF profile (full or short id); required.
	Profile string
	// Rules are full or short rule ids; empty means every rule the profile
	// selects.
	Rules []string
	// TargetPath is where the datastream is on the target; empty means the
	// name it was loaded under.
	TargetPath string
	// Oscap is the oscap command on the target; empty means "oscap".
	Oscap string
}

// Set builds worker rules from the datastream: each Rule has the short id
// (sshd_set_keepalive), the title, the description and rationale as plain
// text with the profile's values substituted, the values the check uses as
// Hints, and an Check against the profile. Unknown profiles and rules
// are errors matching ErrUnknownProfile and ErrUnknownRule.
func (d *Datastream) Set(opts Options) (*rules.Set, error) {
	p, err := d.Profile(opts.Profile)
	if err != nil {
		return nil, err
	}
	ids := opts.Rules
	if len(ids) == 0 {
		ids = p.Rules
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("scap: datastream %s: profile %s: %w", d.name, p.ID, rules.ErrNoRules)
	}
	target := opts.TargetPath
	if target == "" {
		target = d.name
	}
	out := make([]rules.Rule, 0, len(ids))
	seen := map[string]bool{}
	for _, id := range ids {
		r, err := d.rule(id, p.Values)
		if err != nil {
			return nil, err
		}
		if seen[r.ID] {
			continue
		}
		seen[r.ID] = true
		// The rule's scope: the files its OVAL check reads (scope.go),
		// judged default-deny whatever it is; ScopeNote says why it is
		// empty where no check or no path could give it.
		fs, oval := d.Scope(r.ID)
		out = append(out, rules.Rule{
			Paths:       fs.Paths,
			ScopeNote:   ScopeNote(fs, oval),
			Units:       fs.Units,
			Sysctl:      fs.Sysctl,
			Keys:        fs.Keys,
			ID:          r.ShortID,
			Title:       r.Title,
			Description: joinText(r.Description, "Rationale: ", r.Rationale),
			Hints:       valueHints(d, r, p),
			Check:       Check{Datastream: target, Profile: p.ID, Rule: r.ID, Oscap: opts.Oscap},
			Pos:         rules.Position{File: d.name},
		})
	}
	set, err := rules.NewSet(out...)
	if err != nil {
		return nil, fmt.Errorf("scap: datastream %s: %w", d.name, err)
	}
	return set, nil
}

// NoOVALNote is the ScopeNote of a rule without an OVAL check.
const NoOVALNote = "has no OVAL check to derive its paths from (a YAML rule with paths: can stand in for it)"

// ScopeNote is the rules.Rule.ScopeNote of a rule whose derived scope is
// fs (oval false: the rule has no OVAL check, Datastream.Scope's bool):
// why its paths are empty where no check or no path could give them; ""
// otherwise (safety's default: its check reads no files).
func ScopeNote(fs FileScope, oval bool) string {
	switch {
	case !oval:
		return NoOVALNote
	case !fs.Complete && len(fs.Unresolved) > 0:
		return "has no paths: its OVAL check reads what no path scopes (" + fs.Unresolved[0] + ")"
	}
	return ""
}

func joinText(desc, label, more string) string {
	if more == "" {
		return desc
	}
	if desc == "" {
		return label + more
	}
	return desc + "\n\n" + label + more
}

// valueHints lists the profile's values the rule's check uses, one a line:
// "sshd_idle_timeout_value (SSH session Idle time) = 300".
func valueHints(d *Datastream, r Rule, p Profile) string {
	var b strings.Builder
	for _, id := range r.Values {
		if b.Len() == 0 {
			b.WriteString("Values of profile " + p.ShortID + " the check uses:\n")
		}
		b.WriteString(ShortID(id))
		if t := d.values[id].title; t != "" {
			b.WriteString(" (" + t + ")")
		}
		b.WriteString(" = " + p.Values[id] + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}
