package scap

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/nightshift-dev/nightshift/internal/readfile"
	"github.com/nightshift-dev/nightshift/rules"
)

// The excerpt is cut from the real ssg-debian12-ds.xml (ssg-debian 0.1.76)
// by testdata/scap/make-excerpt.py.
const scapDir = "../testdata/scap"

var update = flag.Bool("update", false, "rewrite the golden files under testdata/scap/golden")

var excerpt = filepath.Join(scapDir, "ssg-debian12-excerpt.xml")

const (
	rulePrefix = "xccdf_org.ssgproject.content_rule_"
	standard   = "xccdf_org.ssgproject.content_profile_standard"
	anssiHigh  = "xccdf_org.ssgproject.content_profile_anssi_bp28_high"
)

func loadExcerpt(t testing.TB) *Datastream {
	t.Helper()
	d, err := Load(excerpt)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func scapGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(scapDir, "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./scap -run %s -update)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run with -update after checking):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestDatastreamExcerpt(t *testing.T) {
	d := loadExcerpt(t)
	if got, want := d.Benchmark(), "xccdf_org.ssgproject.content_benchmark_DEBIAN-12"; got != want {
		t.Errorf("Benchmark() = %q, want %q", got, want)
	}
	if got, want := d.Len(), 12; got != want {
		t.Errorf("Len() = %d, want %d", got, want)
	}
	if got := d.ProfileIDs(); len(got) != 2 || got[0] != anssiHigh || got[1] != standard {
		t.Errorf("ProfileIDs() = %q", got)
	}
	for _, id := range d.RuleIDs() {
		r, err := d.Rule(id)
		if err != nil {
			t.Fatal(err)
		}
		if !r.HasBashFix() {
			t.Errorf("%s: no bash fix; every excerpt rule has one in SSG 0.1.76", id)
		}
		if r.Title == "" || r.Description == "" {
			t.Errorf("%s: empty title or description", id)
		}
		if strings.Contains(r.Description, "html:") || strings.Contains(r.Description, "xccdf-1.2:") {
			t.Errorf("%s: markup left in description", id)
		}
	}
}

func TestDatastreamRuleIDs(t *testing.T) {
	d := loadExcerpt(t)
	tests := []struct {
		id, wantID, wantTitle string
		wantErr               error
	}{
		{"sshd_disable_root_login", rulePrefix + "sshd_disable_root_login", "Disable SSH Root Login", nil},
		{rulePrefix + "sshd_disable_root_login", rulePrefix + "sshd_disable_root_login", "Disable SSH Root Login", nil},
		{"package_audit_installed", rulePrefix + "package_audit_installed", "Ensure the audit Subsystem is Installed", nil},
		{"no_such_rule", "", "", ErrUnknownRule},
		{rulePrefix + "no_such_rule", "", "", ErrUnknownRule},
		{"", "", "", ErrUnknownRule},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			r, err := d.Rule(tt.id)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Rule(%q) error = %v, want %v", tt.id, err, tt.wantErr)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "ssg-debian12-excerpt.xml") {
					t.Errorf("error %q does not name the file", err)
				}
				return
			}
			if r.ID != tt.wantID || r.ShortID != ShortID(tt.wantID) || r.Title != tt.wantTitle {
				t.Errorf("Rule(%q) = %q %q %q", tt.id, r.ID, r.ShortID, r.Title)
			}
		})
	}
}

func TestShortID(t *testing.T) {
	tests := []struct{ in, want string }{
		{rulePrefix + "sshd_set_keepalive", "sshd_set_keepalive"},
		{standard, "standard"},
		{"xccdf_org.ssgproject.content_value_var_accounts_tmout", "var_accounts_tmout"},
		{"xccdf_org.ssgproject.content_group_ssh", "ssh"},
		{"sshd_set_keepalive", "sshd_set_keepalive"},
		{"xccdf_odd", "xccdf_odd"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := ShortID(tt.in); got != tt.want {
			t.Errorf("ShortID(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDatastreamProfiles(t *testing.T) {
	d := loadExcerpt(t)
	const tmout = "xccdf_org.ssgproject.content_value_var_accounts_tmout"
	const minlen = "xccdf_org.ssgproject.content_value_var_password_pam_minlen"
	tests := []struct {
		profile   string
		wantID    string
		wantRules int
		values    map[string]string
		wantErr   error
	}{
		// Counts and values as ssg-debian12-ds.xml 0.1.76 defines them.
		{"standard", standard, 4, map[string]string{tmout: "600", minlen: "15"}, nil},
		{standard, standard, 4, map[string]string{tmout: "600"}, nil},
		{"anssi_bp28_high", anssiHigh, 10, map[string]string{tmout: "600", minlen: "15"}, nil},
		{"nope", "", 0, nil, ErrUnknownProfile},
	}
	for _, tt := range tests {
		t.Run(tt.profile, func(t *testing.T) {
			p, err := d.Profile(tt.profile)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Profile(%q) error = %v, want %v", tt.profile, err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if p.ID != tt.wantID || p.ShortID != ShortID(tt.wantID) || p.Title == "" {
				t.Errorf("Profile(%q) = %q %q %q", tt.profile, p.ID, p.ShortID, p.Title)
			}
			if len(p.Rules) != tt.wantRules {
				t.Errorf("Profile(%q) selects %d rules %q, want %d", tt.profile, len(p.Rules), p.Rules, tt.wantRules)
			}
			for id, want := range tt.values {
				if got := p.Values[id]; got != want {
					t.Errorf("Profile(%q).Values[%s] = %q, want %q", tt.profile, ShortID(id), got, want)
				}
			}
		})
	}
}

// TestDatastreamSetGolden renders the rules the worker gets for both
// profiles: ids, titles, plain-text descriptions with the profile's values,
// value hints and the oscap command.
func TestDatastreamSetGolden(t *testing.T) {
	d := loadExcerpt(t)
	for _, profile := range []string{"standard", "anssi_bp28_high"} {
		t.Run(profile, func(t *testing.T) {
			set, err := d.Set(Options{Profile: profile, TargetPath: "/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml"})
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, r := range set.Rules() {
				fmt.Fprintf(&b, "== %s\ntitle: %s\ncheck (%s): %s\nhints:\n%s\ndescription:\n%s\n\n", r.ID, r.Title, r.Check.Kind(), r.Check, r.Hints, r.Description)
			}
			scapGolden(t, "set-"+profile+".txt", b.String())
		})
	}
}

func TestDatastreamSetSelection(t *testing.T) {
	d := loadExcerpt(t)
	tests := []struct {
		name    string
		opts    Options
		want    []string
		wantErr error
	}{
		{"short and full ids, duplicates once", Options{Profile: "standard", Rules: []string{"sshd_set_keepalive", rulePrefix + "accounts_tmout", "sshd_set_keepalive"}},
			[]string{"sshd_set_keepalive", "accounts_tmout"}, nil},
		{"rule outside the profile is allowed", Options{Profile: "standard", Rules: []string{"sysctl_kernel_kptr_restrict"}},
			[]string{"sysctl_kernel_kptr_restrict"}, nil},
		{"unknown rule", Options{Profile: "standard", Rules: []string{"nope"}}, nil, ErrUnknownRule},
		{"unknown profile", Options{Profile: "nope"}, nil, ErrUnknownProfile},
		{"no profile", Options{}, nil, ErrUnknownProfile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := d.Set(tt.opts)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got := set.IDs(); strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("IDs() = %q, want %q", got, tt.want)
			}
			for _, r := range set.Rules() {
				c, ok := r.Check.(Check)
				if !ok || c.Profile != standard || c.Rule != rulePrefix+r.ID || c.Datastream != excerpt {
					t.Errorf("%s: check = %#v", r.ID, r.Check)
				}
			}
		})
	}
}

func TestParseDatastreamErrors(t *testing.T) {
	const head = `<?xml version="1.0"?><Benchmark xmlns="http://checklists.nist.gov/xccdf/1.2" id="b">`
	tests := []struct {
		name, in string
		want     error
	}{
		{"empty", "", ErrInvalid},
		{"not xml", "hello", ErrInvalid},
		{"xccdf 1.1", `<Benchmark xmlns="http://checklists.nist.gov/xccdf/1.1" id="b"><Rule id="r"/></Benchmark>`, ErrInvalid},
		{"truncated", head + `<Rule id="xccdf_x_rule_a"><title>A</title>`, ErrInvalid},
		{"no rules", head + `</Benchmark>`, rules.ErrNoRules},
		{"rule without id", head + `<Rule><title>A</title></Rule></Benchmark>`, ErrInvalid},
		{"duplicate rule", head + `<Rule id="xccdf_x_rule_a"/><Rule id="xccdf_x_rule_a"/></Benchmark>`, rules.ErrDuplicateID},
		{"two benchmarks", `<c>` + head + `<Rule id="xccdf_x_rule_a"/></Benchmark>` + head + `</Benchmark></c>`, ErrInvalid},
		{"profile without id", head + `<Profile><title>P</title></Profile><Rule id="xccdf_x_rule_a"/></Benchmark>`, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.in), "bad.xml")
			if !errors.Is(err, tt.want) {
				t.Fatalf("error = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), "bad.xml") {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
	if _, err := Load(filepath.Join(scapDir, "missing.xml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want ErrNotExist", err)
	}
}

func TestProfileExtends(t *testing.T) {
	const doc = `<Benchmark xmlns="http://checklists.nist.gov/xccdf/1.2" id="b">
<Profile id="xccdf_x_profile_base"><title>Base</title><select idref="xccdf_x_rule_a" selected="true"/><refine-value idref="xccdf_x_value_v" selector="big"/></Profile>
<Profile id="xccdf_x_profile_top" extends="xccdf_x_profile_base"><title>Top</title><select idref="xccdf_x_rule_b" selected="true"/><set-value idref="xccdf_x_value_w">7</set-value></Profile>
<Profile id="xccdf_x_profile_loop" extends="xccdf_x_profile_loop"><title>Loop</title></Profile>
<Profile id="xccdf_x_profile_orphan" extends="xccdf_x_profile_gone"><title>Orphan</title></Profile>
<Value id="xccdf_x_value_v"><value>1</value><value selector="big">100</value></Value>
<Value id="xccdf_x_value_w"><value>2</value></Value>
<Rule id="xccdf_x_rule_a" selected="false"><title>A <sub idref="xccdf_x_value_v"/></title></Rule>
<Rule id="xccdf_x_rule_b" selected="false"><title>B</title></Rule>
<Rule id="xccdf_x_rule_c" selected="true"><title>C <sub idref="xccdf_x_value_missing"/></title></Rule>
</Benchmark>`
	d, err := Parse(strings.NewReader(doc), "x.xml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := d.Profile("top")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Rules, ","); got != "xccdf_x_rule_a,xccdf_x_rule_b,xccdf_x_rule_c" {
		t.Errorf("top selects %s", got)
	}
	if p.Values["xccdf_x_value_v"] != "100" || p.Values["xccdf_x_value_w"] != "7" {
		t.Errorf("top values = %v", p.Values)
	}
	set, err := d.Set(Options{Profile: "top"})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"a": "A 100", "c": "C <missing>"} {
		if r, _ := set.Get(id); r.Title != want {
			t.Errorf("rule %s title = %q, want %q", id, r.Title, want)
		}
	}
	if r, err := d.Rule("a"); err != nil || r.Title != "A 1" {
		t.Errorf("Rule(a) title = %q (%v), want the default value", r.Title, err)
	}
	if _, err := d.Profile("loop"); !errors.Is(err, ErrInvalid) {
		t.Errorf("Profile(loop) = %v, want ErrInvalid", err)
	}
	if _, err := d.Profile("orphan"); !errors.Is(err, ErrUnknownProfile) {
		t.Errorf("Profile(orphan) = %v, want ErrUnknownProfile", err)
	}
}

func TestRichTextPlain(t *testing.T) {
	const doc = `<Benchmark xmlns="http://checklists.nist.gov/xccdf/1.2" xmlns:h="http://www.w3.org/1999/xhtml" id="b">
<Value id="xccdf_x_value_v"><value>42</value></Value>
<Rule id="xccdf_x_rule_a"><title xml:lang="en">First</title><title xml:lang="fr">Premier</title>
<description>  Set   <h:code>X</h:code> to <sub idref="xccdf_x_value_v" use="legacy"/>:<h:br/><h:br/>
<h:br/><h:pre>X 42</h:pre><h:ul><h:li>one</h:li><h:li>two</h:li></h:ul>&lt;tag&gt; &amp; done</description></Rule></Benchmark>`
	d, err := Parse(strings.NewReader(doc), "x.xml")
	if err != nil {
		t.Fatal(err)
	}
	r, err := d.Rule("a")
	if err != nil {
		t.Fatal(err)
	}
	if r.Title != "First" {
		t.Errorf("title = %q, want the first xml:lang variant", r.Title)
	}
	want := "Set X to 42:\n\nX 42\n\n- one\n\n- two\n\n<tag> & done"
	if r.Description != want {
		t.Errorf("description =\n%q\nwant\n%q", r.Description, want)
	}
}

// TestLoadRefusesSpecialFiles: a FIFO given as the datastream is refused by
// name, never opened for a blocking read.
func TestLoadRefusesSpecialFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "ds.xml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(fifo); !errors.Is(err, readfile.ErrNotRegular) || !strings.Contains(err.Error(), "ds.xml") {
		t.Errorf("Load(fifo): %v; want the file named as not regular", err)
	}
}
