package scap

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/rules"
)

// FuzzParseDatastream: any input yields a Datastream or an error, never a
// panic; a Datastream answers every query for every profile it lists.
func FuzzParseDatastream(f *testing.F) {
	if b, err := os.ReadFile(excerpt); err == nil {
		f.Add(string(b))
	}
	f.Add(`<Benchmark xmlns="http://checklists.nist.gov/xccdf/1.2" id="b"><Profile id="p" extends="p"/><Rule id="xccdf_x_rule_a"><description>a<sub idref="v"/><br/></description></Rule></Benchmark>`)
	f.Add(`<Benchmark xmlns="http://checklists.nist.gov/xccdf/1.2" id="b"><Value id="v"><value selector="s">1</value></Value><Profile id="q"><refine-value idref="v" selector="t"/><select idref="xccdf_x_rule_a" selected="true"/></Profile><Rule id="xccdf_x_rule_a"/></Benchmark>`)
	f.Fuzz(func(t *testing.T, in string) {
		d, err := Parse(strings.NewReader(in), "fuzz.xml")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.xml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, id := range d.RuleIDs() {
			if _, err := d.Rule(id); err != nil {
				t.Fatalf("listed rule %q: %v", id, err)
			}
		}
		for _, p := range d.ProfileIDs() {
			if _, err := d.Set(Options{Profile: p}); err != nil && !strings.Contains(err.Error(), "fuzz.xml") {
				t.Fatalf("profile %q: %v", p, err)
			}
		}
	})
}

// FuzzOscapOutput: any oscap output is classified without panicking, and
// only a "pass" or "fixed" progress line for the rule reads as compliant.
func FuzzOscapOutput(f *testing.F) {
	f.Add("xccdf_a_rule_x:pass\n", "", 0)
	f.Add("xccdf_a_rule_x:fail\n", "WARNING: Skipping x\n", 2)
	f.Add("xccdf_a_rule_x:pass\nxccdf_a_rule_x:error\n", "", 1)
	f.Fuzz(func(t *testing.T, stdout, stderr string, code int) {
		r := &replay{out: nightshift.Exec{ExitCode: code, Stdout: stdout, Stderr: stderr}}
		res, err := Check{Datastream: "d", Profile: "p", Rule: "xccdf_a_rule_x"}.Evaluate(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		if res.Passed() {
			v := ParseProgress(stdout)["xccdf_a_rule_x"]
			if (v != "pass" && v != "fixed") || (code != 0 && code != 2) {
				t.Fatalf("compliant from %q (exit %d)", stdout, code)
			}
		}
		if len(res.Output) > rules.MaxCheckOutput+64 {
			t.Fatalf("output of %d bytes", len(res.Output))
		}
	})
}
