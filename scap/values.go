package scap

import (
	"slices"
	"strings"

	"github.com/nightshift-dev/nightshift/safety"
)

// valueCandidates is every value the datastream gives an XCCDF value (by
// full id): its default, its selectors' values and the profiles'
// set-values. None for an unknown id.
func (d *Datastream) valueCandidates(id string) []string {
	v, ok := d.values[id]
	if !ok {
		return nil
	}
	var out []string
	if v.def != "" {
		out = append(out, v.def)
	}
	for _, s := range v.selectors {
		out = append(out, s)
	}
	for _, p := range d.profiles {
		for _, sv := range p.sets {
			if sv.IDRef == id {
				out = append(out, strings.TrimSpace(sv.Text))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// deriveValueChecks returns the values a rule's check states for lines of
// its files (safety.ValueCheck): for every textfilecontent54 test the
// check requires (reached through criteria and extended definitions
// without a negation on the way, check_existence not none_exist), whose
// object has a literal pattern (or a set of objects with the same one),
// each subexpression of its states (state operator AND, or one state) with a literal value or an external
// variable's values (external: the XCCDF values the rule exports to it,
// every value the datastream gives them).
func deriveValueChecks(defs []string, byID map[string]ovalNode, external func(ovalVar string) []string) []safety.ValueCheck {
	var out []safety.ValueCheck
	seen := map[string]bool{}
	var walk func(n ovalNode)
	walk = func(n ovalNode) {
		if n.attr("negate") == "true" {
			return // a negated criterion: its state is what the rule must not hold
		}
		switch {
		case n.XMLName.Local == "criterion":
			if t, ok := byID[n.attr("test_ref")]; ok && !seen[t.attr("id")] {
				seen[t.attr("id")] = true
				out = append(out, testValueChecks(t, byID, external)...)
			}
			return
		case n.XMLName.Local == "extend_definition":
			if d, ok := byID[n.attr("definition_ref")]; ok && !seen[d.attr("id")] {
				seen[d.attr("id")] = true
				walk(d)
			}
			return
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	for _, id := range defs {
		if d, ok := byID[id]; ok {
			seen[id] = true
			walk(d)
		}
	}
	return out
}

// testValueChecks is what one textfilecontent54 test states.
func testValueChecks(t ovalNode, byID map[string]ovalNode, external func(string) []string) []safety.ValueCheck {
	if t.XMLName.Local != "textfilecontent54_test" || t.attr("check_existence") == "none_exist" {
		return nil
	}
	var pattern string
	var states []ovalNode
	for _, c := range t.Children {
		switch c.XMLName.Local {
		case "object":
			pattern = objectPattern(byID[c.attr("object_ref")], byID)
		case "state":
			if s, ok := byID[c.attr("state_ref")]; ok {
				states = append(states, s)
			}
		}
	}
	// Several states under OR: a value may satisfy any one of them.
	if pattern == "" || len(states) > 1 && t.attr("state_operator") != "" && t.attr("state_operator") != "AND" {
		return nil
	}
	var out []safety.ValueCheck
	for _, s := range states {
		if s.attr("operator") != "" && s.attr("operator") != "AND" {
			continue
		}
		for _, sub := range s.Children {
			if sub.XMLName.Local != "subexpression" {
				continue
			}
			var vals []string
			if v := sub.attr("var_ref"); v != "" {
				if n, ok := byID[v]; !ok || n.XMLName.Local != "external_variable" {
					continue // computed from the host: not known
				}
				vals = external(v)
			} else {
				vals = []string{strings.TrimSpace(sub.Text)}
			}
			if len(vals) == 0 {
				continue
			}
			out = append(out, safety.ValueCheck{Pattern: pattern, Operation: sub.attr("operation"), Datatype: sub.attr("datatype"), Values: vals})
		}
	}
	return out
}

// objectPattern is a textfilecontent54 object's literal pattern, or the
// one pattern every object of its set has; "" otherwise.
func objectPattern(o ovalNode, byID map[string]ovalNode) string {
	if p := o.child("pattern"); p != nil {
		if p.attr("var_ref") != "" {
			return ""
		}
		return strings.TrimSpace(p.Text)
	}
	set := o.child("set")
	if set == nil {
		return ""
	}
	pattern := ""
	for _, c := range set.Children {
		if c.XMLName.Local != "object_reference" {
			if c.XMLName.Local == "filter" {
				return "" // a filter narrows the items: not every line
			}
			continue
		}
		p := objectPattern(byID[strings.TrimSpace(c.Text)], byID)
		if p == "" || pattern != "" && p != pattern {
			return ""
		}
		pattern = p
	}
	return pattern
}
