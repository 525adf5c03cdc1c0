package scap

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift"
)

// replay is a Runner answering every command with one real oscap run
// captured by testdata/scap/oscap/capture.sh, and recording the commands.
type replay struct {
	out      nightshift.Exec
	err      error
	commands []string
}

func (r *replay) Run(_ context.Context, command string) (nightshift.Exec, error) {
	r.commands = append(r.commands, command)
	return r.out, r.err
}

func captured(t *testing.T, name string) *replay {
	t.Helper()
	dir := filepath.Join(scapDir, "oscap")
	read := func(ext string) string {
		b, err := os.ReadFile(filepath.Join(dir, name+ext))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	code, err := strconv.Atoi(strings.TrimSpace(read(".exit")))
	if err != nil {
		t.Fatal(err)
	}
	return &replay{out: nightshift.Exec{ExitCode: code, Stdout: read(".stdout"), Stderr: read(".stderr")}}
}

func TestOscapCheckCaptured(t *testing.T) {
	const ds = "/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml"
	tests := []struct {
		capture    string
		rule       string
		want       nightshift.CheckStatus
		wantDetail string
		wantExit   int
	}{
		{"fail-many", "sshd_disable_root_login", nightshift.CheckFail, "oscap: fail", 2},
		{"fail-many", "accounts_tmout", nightshift.CheckFail, "oscap: fail", 2},
		{"fail-many", "sysctl_kernel_kptr_restrict", nightshift.CheckFail, "oscap: fail", 2},
		{"fail-many", "package_audit_installed", nightshift.CheckError, "oscap reported no result for package_audit_installed", 2},
		{"pass-and-fail", "accounts_tmout", nightshift.CheckPass, "oscap: pass", 2},
		{"pass-and-fail", "sshd_disable_root_login", nightshift.CheckFail, "oscap: fail", 2},
		{"notapplicable", "sshd_disable_root_login", nightshift.CheckNotApplicable, "oscap: notapplicable", 0},
		{"notapplicable", "accounts_tmout", nightshift.CheckNotApplicable, "oscap: notapplicable", 0},
		{"unknown-profile", "accounts_tmout", nightshift.CheckError, "oscap exit 1: No profile matching", 1},
		{"unknown-rule", "nosuchrule", nightshift.CheckError, "oscap exit 1: OpenSCAP Error: Rule", 1},
		{"missing-datastream", "accounts_tmout", nightshift.CheckError, "oscap exit 1", 1},
	}
	for _, tt := range tests {
		t.Run(tt.capture+"/"+tt.rule, func(t *testing.T) {
			r := captured(t, tt.capture)
			c := Check{Datastream: ds, Profile: anssiHigh, Rule: rulePrefix + tt.rule}
			res, err := c.Evaluate(context.Background(), r)
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			if res.Status != tt.want || !strings.HasPrefix(res.Detail, tt.wantDetail) || res.ExitCode != tt.wantExit {
				t.Errorf("result = %s %q exit %d, want %s %q… exit %d", res.Status, res.Detail, res.ExitCode, tt.want, tt.wantDetail, tt.wantExit)
			}
			if res.Passed() != (tt.want == nightshift.CheckPass) {
				t.Errorf("Passed() = %v", res.Passed())
			}
			if strings.Contains(res.Output, "WARNING: Skipping") {
				t.Errorf("the remote-OVAL warnings reached the output:\n%s", res.Output)
			}
			if len(r.commands) != 1 || r.commands[0] != c.String() {
				t.Errorf("commands = %q, want [%q]", r.commands, c.String())
			}
		})
	}
}

// TestOscapResults covers every XCCDF result, including those no captured
// run shows (notchecked, notselected, informational, unknown, fixed).
func TestOscapResults(t *testing.T) {
	tests := []struct {
		result string
		want   nightshift.CheckStatus
	}{
		{"pass", nightshift.CheckPass},
		{"fixed", nightshift.CheckPass},
		{"fail", nightshift.CheckFail},
		{"notapplicable", nightshift.CheckNotApplicable},
		{"error", nightshift.CheckError},
		{"unknown", nightshift.CheckError},
		{"notchecked", nightshift.CheckError},
		{"notselected", nightshift.CheckError},
		{"informational", nightshift.CheckError},
		{"garbage", nightshift.CheckError},
	}
	for _, tt := range tests {
		t.Run(tt.result, func(t *testing.T) {
			r := &replay{out: nightshift.Exec{ExitCode: 2, Stdout: rulePrefix + "a:" + tt.result + "\n"}}
			res, err := Check{Datastream: "ds.xml", Profile: "p", Rule: rulePrefix + "a"}.Evaluate(context.Background(), r)
			if err != nil || res.Status != tt.want || !strings.Contains(res.Detail, tt.result) {
				t.Errorf("%s: %s %q, %v; want %s", tt.result, res.Status, res.Detail, err, tt.want)
			}
		})
	}
}

func TestOscapCheckFailures(t *testing.T) {
	ok := nightshift.Exec{Stdout: rulePrefix + "a:pass\n"}
	tests := []struct {
		name    string
		check   Check
		runner  nightshift.Runner
		ctx     func() context.Context
		want    nightshift.CheckStatus
		wantErr bool
	}{
		{"pass", Check{Datastream: "d", Profile: "p", Rule: rulePrefix + "a"}, &replay{out: ok}, nil, nightshift.CheckPass, false},
		{"short id reported by full id", Check{Datastream: "d", Profile: "p", Rule: "a"}, &replay{out: ok}, nil, nightshift.CheckPass, false},
		{"timeout", Check{Datastream: "d", Profile: "p", Rule: "a"}, &replay{out: nightshift.Exec{TimedOut: true, Stdout: ok.Stdout}}, nil, nightshift.CheckError, false},
		{"signal", Check{Datastream: "d", Profile: "p", Rule: "a"}, &replay{out: nightshift.Exec{Signal: "KILL", Stdout: ok.Stdout}}, nil, nightshift.CheckError, false},
		{"not installed", Check{Datastream: "d", Profile: "p", Rule: "a"}, &replay{out: nightshift.Exec{ExitCode: 127, Stderr: "sh: oscap: not found"}}, nil, nightshift.CheckError, false},
		{"runner error", Check{Datastream: "d", Profile: "p", Rule: "a"}, &replay{err: errors.New("connection lost")}, nil, nightshift.CheckError, true},
		{"nil runner", Check{Datastream: "d", Profile: "p", Rule: "a"}, nil, nil, nightshift.CheckError, true},
		{"incomplete", Check{Profile: "p", Rule: "a"}, &replay{out: ok}, nil, nightshift.CheckError, true},
		{"cancelled", Check{Datastream: "d", Profile: "p", Rule: "a"}, &replay{out: ok}, func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}, nightshift.CheckError, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx()
			}
			res, err := tt.check.Evaluate(ctx, tt.runner)
			if res.Status != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("Evaluate = %s %q, %v; want %s, error %v", res.Status, res.Detail, err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestEvaluateManyOneRunPerProfile: rules sharing a datastream and profile
// are checked by a single oscap run, each rule once.
func TestEvaluateManyOneRunPerProfile(t *testing.T) {
	r := captured(t, "fail-many")
	mk := func(profile, rule string) Check {
		return Check{Datastream: "/ds.xml", Profile: profile, Rule: rulePrefix + rule}
	}
	checks := []Check{mk(anssiHigh, "accounts_tmout"), mk(anssiHigh, "no_direct_root_logins"), mk(anssiHigh, "accounts_tmout"), mk(standard, "sshd_disable_root_login")}
	res, err := EvaluateMany(context.Background(), r, checks)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.commands) != 2 {
		t.Fatalf("%d oscap runs, want 2: %q", len(r.commands), r.commands)
	}
	if got := strings.Count(r.commands[0], "--rule "); got != 2 {
		t.Errorf("first run names %d rules, want 2: %s", got, r.commands[0])
	}
	for i, c := range checks {
		if res[i].Status != nightshift.CheckFail {
			t.Errorf("%s: %s %q", c.Rule, res[i].Status, res[i].Detail)
		}
	}
}

func TestOscapCommandQuoting(t *testing.T) {
	c := Check{Datastream: "/path with space/it's.xml", Profile: "p", Rule: "r;rm -rf /", Oscap: "/opt/oscap"}
	want := `/opt/oscap xccdf eval --skip-valid --progress --profile p --rule 'r;rm -rf /' '/path with space/it'\''s.xml'`
	if got := c.String(); got != want {
		t.Errorf("String() =\n%s\nwant\n%s", got, want)
	}
	if c.Kind() != "oscap" {
		t.Errorf("Kind() = %q", c.Kind())
	}
}

func TestParseOscapProgress(t *testing.T) {
	in := "--- Starting Evaluation ---\nTitle\tX\nxccdf_a_rule_x:pass\r\n xccdf_a_rule_y:fail \nxccdf_a_rule_x:fail\nnot a line\nxccdf_with space:pass\n:pass\nxccdf_a_rule_z:\n"
	got := ParseProgress(in)
	want := map[string]string{"xccdf_a_rule_x": "fail", "xccdf_a_rule_y": "fail", "xccdf_a_rule_z": ""}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}
