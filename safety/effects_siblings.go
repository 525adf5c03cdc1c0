package safety

import (
	"regexp"
	"strings"
)

// Sibling kernel parameters. A network parameter exists per interface
// (net.ipv4.conf.IFACE.KEY) with two sets that fix it for every
// interface: "all" (the interfaces now) and "default" (the ones created
// later). Hardening guides set both (CIS: send_redirects in all and
// default), and a check names one. The other of the pair is in the
// rule's scope, at a value the check accepts for its own key whatever
// profile it runs with: the check's value check, with the sibling's name
// in place of its key and satisfied by every value the datastream gives
// (a variable whose selectors allow 0 and 1 allows neither for the
// sibling), judges the sibling's lines (valueHarm) and its sysctl -w
// (sysctlScope). A sibling
// of a key whose value the check does not state is not in scope: what it
// may be set to is not known.

// siblingKey returns the "all"/"default" sibling of a per-interface
// kernel parameter, or "".
func siblingKey(k string) string {
	for _, p := range []string{"net.ipv4.conf.", "net.ipv6.conf."} {
		rest, ok := strings.CutPrefix(k, p)
		if !ok {
			continue
		}
		if key, ok := strings.CutPrefix(rest, "all."); ok {
			return p + "default." + key
		}
		if key, ok := strings.CutPrefix(rest, "default."); ok {
			return p + "all." + key
		}
	}
	return ""
}

// withSiblings returns pol with the siblings of its kernel parameters
// whose values the check states: each in Sysctl, its value check in
// valueChecks and in siblings.
func (pol EffectsPolicy) withSiblings() EffectsPolicy {
	keys := sysctlKeys(pol)
	for k := range keys {
		s := siblingKey(k)
		if s == "" || keys[s] {
			continue
		}
		for _, c := range pol.valueChecks {
			var re string
			switch {
			case strings.Contains(c.Pattern, regexp.QuoteMeta(k)):
				re = strings.ReplaceAll(c.Pattern, regexp.QuoteMeta(k), "-?"+regexp.QuoteMeta(s))
			case strings.Contains(c.Pattern, k):
				// The "-" prefix of a sysctl.d line (ignore a failure)
				// does not hide the sibling from its value check.
				re = strings.ReplaceAll(c.Pattern, k, "-?"+regexp.QuoteMeta(s))
			default:
				continue
			}
			sc := c
			sc.Pattern, sc.every = re, true
			if pol.siblings == nil {
				pol.siblings = map[string]ValueCheck{}
			}
			pol.siblings[s] = sc
			pol.valueChecks = append(pol.valueChecks, sc)
			pol.Sysctl = append(pol.Sysctl, s)
			break
		}
	}
	return pol
}

// siblingValue judges sysctl's setting of a sibling key (k=v): "" when
// the check's value check accepts v, else why not.
func siblingValue(pol EffectsPolicy, k, v string, isSet bool) (why string, sibling bool) {
	c, ok := pol.siblings[k]
	if !ok {
		return "", false
	}
	if !isSet {
		return k + ", the sibling of the rule's kernel parameter, is set without a value the record shows", true
	}
	if acc, known := c.accepts(strings.TrimSpace(v)); !acc || !known {
		return k + "=" + v + ": not " + c.Operation + " " + strings.Join(c.Values, " and ") + ", every value the rule's check may want for " + k + "'s sibling, its own key", true
	}
	return "", true
}
