package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/internal/goldenfile"

	"github.com/nightshift-dev/nightshift"
)

func testdata(name string) string { return filepath.Join("..", "testdata", "report", name) }

// loadRun reads testdata/report/run.json.
func loadRun(t testing.TB) *Run {
	t.Helper()
	data, err := os.ReadFile(testdata("run.json"))
	require.NoError(t, err)
	var run Run
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&run), "run.json")
	return &run
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, testdata(name), got)
}

func TestGolden(t *testing.T) {
	run := loadRun(t)
	for _, tt := range []struct {
		file  string
		write func(*bytes.Buffer, *Run) error
	}{
		{"summary.golden.json", func(b *bytes.Buffer, r *Run) error { return WriteJSON(b, r) }},
		{"junit.golden.xml", func(b *bytes.Buffer, r *Run) error { return WriteJUnit(b, r) }},
		{"report.golden.html", func(b *bytes.Buffer, r *Run) error { return WriteHTML(b, r) }},
	} {
		t.Run(tt.file, func(t *testing.T) {
			var a, b bytes.Buffer
			require.NoError(t, tt.write(&a, run))
			require.NoError(t, tt.write(&b, run))
			require.Equal(t, a.String(), b.String(), "two renders of the same run differ")
			golden(t, tt.file, a.Bytes())
		})
	}
}

func TestSummary(t *testing.T) {
	s := NewSummary(loadRun(t))
	want := Totals{Results: 7, Rules: 4, Hosts: 2, Attempts: 9, Commands: 9, Passed: 2,
		Outcomes: map[nightshift.RuleStatus]int{nightshift.RuleFixed: 1, nightshift.RuleCompliant: 1, nightshift.RuleNotFixed: 1, nightshift.RuleGaveUp: 1, nightshift.RuleNotApplicable: 1, nightshift.RuleCheckError: 1, nightshift.RuleUnreachable: 1}}
	assert.Equal(t, want, s.Totals)
	require.Len(t, s.Hosts, 2)
	assert.Equal(t, "web01.example.com", s.Hosts[0].Host)
	assert.Equal(t, 3, s.Hosts[0].Results, "results of %s", s.Hosts[0].Host)
	assert.Equal(t, 1, s.Hosts[0].Passed, "passed on %s", s.Hosts[0].Host)
	require.Greater(t, len(s.Results), 2)
	r := s.Results[2]
	assert.Equal(t, "audit_rules_immutable", r.Rule)
	assert.Equal(t, 14012, r.MaxPromptTokens, "max prompt tokens")
	assert.Equal(t, 14336, r.Limit, "limit")
	assert.Equal(t, 5, r.Attempts, "attempts")
	assert.Equal(t, 4, r.Commands, "commands")
	assert.EqualValues(t, 4350, s.DurationSeconds, "duration")
	// The documented field names are the ones written.
	var buf bytes.Buffer
	require.NoError(t, WriteJSON(&buf, loadRun(t)))
	var generic struct {
		Top     map[string]any
		Results []map[string]any `json:"results"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &generic.Top))
	require.NoError(t, json.Unmarshal(buf.Bytes(), &generic))
	require.NotEmpty(t, generic.Results)
	for _, k := range []string{"version", "name", "model", "started", "finished", "duration_seconds", "totals", "hosts", "results"} {
		_, ok := generic.Top[k]
		assert.True(t, ok, "summary lacks %q", k)
	}
	for _, k := range []string{"rule", "title", "host", "outcome", "reason", "duration_seconds", "attempts", "commands", "max_prompt_tokens", "limit", "attempt_details"} {
		_, ok := generic.Results[0][k]
		assert.True(t, ok, "summary result lacks %q", k)
	}
}

func TestValidate(t *testing.T) {
	ok := TaskResult{Rule: "r", Host: "h", Outcome: nightshift.RuleFixed}
	tests := []struct {
		name    string
		results []TaskResult
		wantErr bool
	}{
		{"empty run", nil, false},
		{"one result", []TaskResult{ok}, false},
		{"no rule", []TaskResult{{Host: "h", Outcome: nightshift.RuleFixed}}, true},
		{"no host", []TaskResult{{Rule: "r", Outcome: nightshift.RuleFixed}}, true},
		{"unknown outcome", []TaskResult{{Rule: "r", Host: "h", Outcome: nightshift.RuleStatus(42)}}, true},
		{"no outcome", []TaskResult{{Rule: "r", Host: "h"}}, true},
		{"duplicate", []TaskResult{ok, ok}, true},
		{"negative tokens", []TaskResult{{Rule: "r", Host: "h", Outcome: nightshift.RuleFixed, Attempts: []Attempt{{Number: 1, PromptTokens: -1}}}}, true},
		{"same rule other host", []TaskResult{ok, {Rule: "r", Host: "h2", Outcome: nightshift.RuleNotFixed}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := &Run{Results: tt.results}
			err := run.Validate()
			if (err != nil) != tt.wantErr {
				t.Fatalf("Validate() = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			for _, w := range []func() error{
				func() error { return WriteJSON(&bytes.Buffer{}, run) },
				func() error { return WriteJUnit(&bytes.Buffer{}, run) },
				func() error { return WriteHTML(&bytes.Buffer{}, run) },
			} {
				if err := w(); (err != nil) != tt.wantErr {
					t.Errorf("writer error = %v, wantErr %v", err, tt.wantErr)
				}
			}
		})
	}
}

// junitDoc is a reader for what WriteJUnit writes.
type junitDoc struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Suites   []struct {
		Name    string `xml:"name,attr"`
		Tests   int    `xml:"tests,attr"`
		Skipped int    `xml:"skipped,attr"`
		Cases   []struct {
			Name      string  `xml:"name,attr"`
			Classname string  `xml:"classname,attr"`
			Skipped   *string `xml:"skipped"`
			Failure   *struct {
				Type    string `xml:"type,attr"`
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Error *struct {
				Type    string `xml:"type,attr"`
				Message string `xml:"message,attr"`
			} `xml:"error"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestJUnitCases(t *testing.T) {
	run := loadRun(t)
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, run); err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Tests != 7 || doc.Failures != 2 || doc.Errors != 2 {
		t.Errorf("tests/failures/errors = %d/%d/%d, want 7/2/2", doc.Tests, doc.Failures, doc.Errors)
	}
	kinds := map[string]string{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			kind := "pass"
			switch {
			case c.Skipped != nil:
				kind = "skipped"
			case c.Failure != nil:
				kind = "failure:" + c.Failure.Type
			case c.Error != nil:
				kind = "error:" + c.Error.Type
			}
			if c.Classname != s.Name {
				t.Errorf("case %s classname %q in suite %q", c.Name, c.Classname, s.Name)
			}
			kinds[c.Name+"@"+s.Name] = kind
		}
	}
	want := map[string]string{
		"sshd_disable_root_login@web01.example.com": "pass",
		"sshd_disable_root_login@db01.example.com":  "pass",
		"audit_rules_immutable@web01.example.com":   "failure:not_fixed",
		"audit_rules_immutable@db01.example.com":    "failure:gave_up",
		"grub2_audit_argument@web01.example.com":    "skipped",
		"grub2_audit_argument@db01.example.com":     "error:check_error",
		"package_telnet_removed@db01.example.com":   "error:unreachable",
	}
	for k, v := range want {
		if kinds[k] != v {
			t.Errorf("%s = %q, want %q", k, kinds[k], v)
		}
	}
	if len(kinds) != len(want) {
		t.Errorf("%d test cases, want %d", len(kinds), len(want))
	}
}

// xmllint validates file against the committed Jenkins/Ant JUnit schema.
func xmllint(t *testing.T, file string) error {
	t.Helper()
	path, err := exec.LookPath("xmllint")
	if err != nil {
		t.Fatal("xmllint not found: run scripts/install-test-deps.sh (Debian libxml2-utils)")
	}
	out, err := exec.Command(path, "--noout", "--schema", testdata("jenkins-junit.xsd"), file).CombinedOutput()
	if err != nil {
		return errors.New(string(out))
	}
	return nil
}

func TestJUnitValidatesAgainstSchema(t *testing.T) {
	runs := map[string]*Run{"sample": loadRun(t), "hostile": hostileRun(), "empty": {Name: "empty"}}
	for name, run := range runs {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteJUnit(&buf, run); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "junit.xml")
			if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := xmllint(t, file); err != nil {
				t.Errorf("schema validation failed:\n%s", err)
			}
		})
	}
	// The validator does reject what the schema forbids: a test case without
	// a name, and elements out of the schema's order.
	for name, bad := range map[string]string{
		"no name":   `<testsuites><testsuite name="h" tests="1"><testcase classname="h"/></testsuite></testsuites>`,
		"bad order": `<testsuites><testsuite name="h" tests="1"><testcase name="r"><failure/><skipped/></testcase></testsuite></testsuites>`,
	} {
		file := filepath.Join(t.TempDir(), "bad.xml")
		if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := xmllint(t, file); err == nil {
			t.Errorf("%s: xmllint accepted an invalid document", name)
		}
	}
}

// hostileRun holds text that would break out of HTML or XML if it were not
// escaped: markup, CDATA ends, quotes, control characters, invalid UTF-8.
func hostileRun() *Run {
	const evil = `</code></pre><script>alert(1)</script><img src=x onerror=alert(2)>"'&amp;]]><!--`
	exit := 1
	return &Run{
		Name:     "night <b>" + evil,
		Model:    `model"><svg onload=alert(3)>`,
		Started:  time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Finished: time.Date(2026, 1, 2, 4, 4, 5, 0, time.UTC),
		Results: []TaskResult{{
			Rule: "rule" + evil, Title: evil, Host: "host" + evil, Outcome: nightshift.RuleNotFixed,
			Reason: "reason\x00\x1b[31m" + evil + "\xff\xfe",
			Attempts: []Attempt{{Number: 1, PromptTokens: 100, Limit: 200, Check: evil, Commands: []Command{{
				Command: "echo '" + evil + "'", Action: "ran", ExitCode: &exit, Check: "fail",
				Output: "\x07\x08 output " + evil, Detail: evil,
			}}}},
		}, {
			Rule: "r2", Host: "host" + evil, Outcome: nightshift.RuleNotApplicable, Reason: evil,
		}},
	}
}

func TestEscaping(t *testing.T) {
	run := hostileRun()
	var html bytes.Buffer
	if err := WriteHTML(&html, run); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<script", "<img", "<svg onload", "<b>", "\x00", "\x1b"} {
		if strings.Contains(html.String(), bad) {
			t.Errorf("HTML contains unescaped %q", bad)
		}
	}
	if !strings.Contains(html.String(), "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("HTML does not show the escaped command text")
	}

	var junit bytes.Buffer
	if err := WriteJUnit(&junit, run); err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(junit.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit with hostile text is not well-formed: %v", err)
	}
	c := doc.Suites[0].Cases[0]
	if c.Name != run.Results[0].Rule || doc.Suites[0].Name != run.Results[0].Host {
		t.Errorf("names did not survive: %q, %q", c.Name, doc.Suites[0].Name)
	}
	if c.Failure == nil || !strings.Contains(c.Failure.Message, "<script>alert(1)</script>") || !strings.Contains(c.Failure.Message, "\uFFFD") {
		t.Errorf("failure message did not survive escaping: %+v", c.Failure)
	}
	if !strings.Contains(c.SystemOut, "echo '</code></pre><script>") {
		t.Errorf("system-out lost the command: %q", c.SystemOut)
	}

	var js bytes.Buffer
	if err := WriteJSON(&js, run); err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Results[0].AttemptDetails[0].Commands[0].Command != run.Results[0].Attempts[0].Commands[0].Command {
		t.Error("JSON did not round-trip the command")
	}
}

func TestXMLSafe(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"tab\tnl\ncr\r", "tab\tnl\ncr\r"},
		{"nul\x00esc\x1b", "nul\uFFFDesc\uFFFD"},
		{"bad\xffutf8", "bad\uFFFDutf8"},
		{"\uFFFE", "\uFFFD"},
		{"emoji 🌙", "emoji 🌙"},
	}
	for _, tt := range tests {
		if got := xmlSafe(tt.in); got != tt.want {
			t.Errorf("xmlSafe(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestChartGeometry(t *testing.T) {
	g := ruleGroup{Rule: "r", Results: []TaskResult{
		{Host: "a", Outcome: nightshift.RuleNotFixed, Attempts: []Attempt{{Number: 1, PromptTokens: 1000, Limit: 8000}, {Number: 2, PromptTokens: 9000, Limit: 8000}}},
		{Host: "b", Outcome: nightshift.RuleCompliant},
	}}
	c := newChart(g)
	if c == nil || len(c.Series) != 1 || len(c.Series[0].Dots) != 2 || len(c.Limits) != 1 {
		t.Fatalf("chart = %+v", c)
	}
	if !c.Series[0].Dots[1].OverTheLimit || c.Series[0].Dots[0].OverTheLimit {
		t.Error("over-the-limit flags wrong")
	}
	// Higher token counts are drawn higher (smaller y); the limit lies between.
	y := func(s string) float64 {
		var f float64
		if err := json.Unmarshal([]byte(s), &f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	y1, y2, yl := y(c.Series[0].Dots[0].Y), y(c.Series[0].Dots[1].Y), y(c.Limits[0].Y)
	if !(y2 < yl && yl < y1 && y1 < plotBase && y2 >= plotTop) {
		t.Errorf("y: attempt1 %v, attempt2 %v, limit %v", y1, y2, yl)
	}
	if newChart(ruleGroup{Rule: "r", Results: []TaskResult{{Host: "b", Outcome: nightshift.RuleCompliant}}}) != nil {
		t.Error("a chart for a rule without attempts")
	}
	for _, tt := range []struct{ in, want int }{{0, 10}, {9, 10}, {11, 20}, {14336, 20000}, {15600, 20000}, {21000, 25000}, {26000, 50000}, {100, 100}} {
		if got := niceCeil(tt.in); got != tt.want {
			t.Errorf("niceCeil(%d) = %d, want %d", tt.in, got, tt.want)
		}
	}
	for _, tt := range []struct {
		in   int
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {14336, "14,336"}, {-1234567, "-1,234,567"}} {
		if got := comma(tt.in); got != tt.want {
			t.Errorf("comma(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
