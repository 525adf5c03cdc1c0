package sandbox_test

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift/safety"
	"github.com/nightshift-dev/nightshift/scap"
)

var (
	corpusScope = flag.String("corpus.scope", "", "run TestHostileCorpora's commands as proposals for this SSG rule (short id): judged with StrictScope under the scope scap derives from its OVAL check")
	refusalDump = flag.String("falserefusals.effects", "", "write each TestFalseRefusals command's effects and verdicts to this file, one JSON object a line")
)

// ssgDatastream is where the Debian 12 target's root holds SSG's
// datastream.
const ssgDatastream = "usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml"

// ssgScopes derives every SSG rule's file scope from the datastream in the
// target root (scap.LoadScopes).
func ssgScopes(t testing.TB, root string) map[string]scap.FileScope {
	t.Helper()
	d, err := scap.Load(filepath.Join(root, ssgDatastream))
	if err != nil {
		t.Fatalf("derive the SSG rules' scopes: %v", err)
	}
	scopes := map[string]scap.FileScope{}
	for _, id := range d.RuleIDs() {
		if fs, ok := d.Scope(id); ok {
			scopes[scap.ShortID(id)] = fs
		}
	}
	return scopes
}

// scopedPolicy is base judged as the worker judges a proposal for an SSG
// rule: with the rule's derived scope, default-deny (StrictScope) when the
// derivation is complete; base unchanged otherwise (and for rules without
// an OVAL check).
func scopedPolicy(base safety.EffectsPolicy, scopes map[string]scap.FileScope, rule string) (safety.EffectsPolicy, bool) {
	fs, ok := scopes[rule]
	if !ok || !fs.Complete {
		return base, false
	}
	base.Scope, base.StrictScope = fs.Paths, true
	return base, true
}

func scopeString(p safety.EffectsPolicy) string {
	if !p.StrictScope {
		return "(no strict scope)"
	}
	return "[" + strings.Join(p.Scope, " ") + "]"
}
