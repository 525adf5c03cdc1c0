package ssgfix

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/internal/goldenfile"
)

// The captures of real oscap runs made by testdata/scap/oscap/capture.sh.
const scapDir = "../../testdata/scap"

const (
	rulePrefix = "xccdf_org.ssgproject.content_rule_"
	anssiHigh  = "xccdf_org.ssgproject.content_profile_anssi_bp28_high"
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

// TestParseCaptured reads the script OpenSCAP 1.3.7 generated on
// the Debian 12 target (testdata/scap/oscap/capture.sh) for five rules:
// accounts_tmout passed, grub2_password does not apply, so neither gets a
// fix; aide_periodic_cron_checking ships none (OpenSCAP's "IS MISSING"
// placeholder); sshd_disable_root_login and package_audit_installed get
// SSG's text, kept in a golden file.
func TestParseCaptured(t *testing.T) {
	r := captured(t, "generate-fix")
	fixes, err := Parse(r.out.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, len(fixes))
	for id := range fixes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if want := []string{"package_audit_installed", "sshd_disable_root_login"}; !slices.Equal(ids, want) {
		t.Fatalf("fixes for %q, want %q", ids, want)
	}
	var b strings.Builder
	for _, id := range ids {
		if strings.Contains(fixes[id], "Remediating rule") || strings.Contains(fixes[id], "####") {
			t.Errorf("%s: generator lines left in the fix:\n%s", id, fixes[id])
		}
		b.WriteString("== " + id + "\n" + fixes[id] + "\n")
	}
	goldenfile.Check(t, filepath.Join(scapDir, "golden", "generate-fix.txt"), []byte(b.String()))
}

func TestParseErrors(t *testing.T) {
	begin := func(i, n int, id string) string {
		return "# BEGIN fix (" + string(rune('0'+i)) + " / " + string(rune('0'+n)) + ") for '" + id + "'\n"
	}
	end := func(id string) string { return "# END fix for '" + id + "'\n" }
	tests := []struct {
		name, script string
		want         map[string]string
		wantErr      bool
	}{
		{"empty", "", map[string]string{}, false},
		{"header only", "#!/usr/bin/env bash\n# nothing failed\n", map[string]string{}, false},
		{"one fix", begin(1, 1, rulePrefix+"a") + "####\n(>&2 echo \"Remediating rule 1/1: 'x'\")\necho fixed\n\n" + end(rulePrefix+"a"), map[string]string{"a": "echo fixed"}, false},
		{"comment-only fix kept", begin(1, 1, "b") + "# nothing to do\n" + end("b"), map[string]string{"b": "# nothing to do"}, false},
		{"missing fix", begin(1, 1, "b") + "(>&2 echo \"FIX FOR THIS RULE 'b' IS MISSING!\")\n" + end("b"), map[string]string{}, false},
		{"empty body", begin(1, 1, "b") + end("b"), map[string]string{}, false},
		{"unterminated", begin(1, 1, "a") + "echo\n", nil, true},
		{"end without begin", end("a"), nil, true},
		{"mismatched end", begin(1, 1, "a") + end("b"), nil, true},
		{"nested", begin(1, 2, "a") + begin(2, 2, "b") + end("b") + end("a"), nil, true},
		{"count mismatch", begin(1, 2, "a") + end("a"), nil, true},
		{"inconsistent totals", begin(1, 2, "a") + end("a") + begin(2, 3, "b") + end("b"), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.script)
			if tt.wantErr {
				if !errors.Is(err, ErrScript) {
					t.Fatalf("err = %v, want ErrScript", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// TestCommand: the command is the one capture.sh ran for the
// captured script.
func TestCommand(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(scapDir, "oscap", "capture.sh"))
	if err != nil {
		t.Fatal(err)
	}
	got := Command("", "/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml", anssiHigh,
		[]string{"accounts_tmout", rulePrefix + "sshd_disable_root_login", "package_audit_installed", "aide_periodic_cron_checking", "grub2_password"})
	want := `f=$(mktemp) && cd /tmp && oscap xccdf eval --skip-valid --results "$f" --profile ` + anssiHigh +
		` --rule ` + rulePrefix + `accounts_tmout --rule ` + rulePrefix + `sshd_disable_root_login --rule ` + rulePrefix + `package_audit_installed` +
		` --rule ` + rulePrefix + `aide_periodic_cron_checking --rule ` + rulePrefix + `grub2_password` +
		` /usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml >/dev/null 2>&1; oscap xccdf generate fix --fix-type bash --result-id xccdf_org.open-scap_testresult_` + anssiHigh +
		` "$f"; rc=$?; rm -f "$f"; exit $rc`
	if got != want {
		t.Fatalf("Command =\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(string(b), "generate fix --fix-type bash --result-id") {
		t.Errorf("capture.sh no longer captures generate-fix")
	}
	q := Command("/opt/o scap", "/d s.xml", "p'1", []string{"a"})
	for _, part := range []string{`'/opt/o scap' xccdf eval`, `--profile 'p'\''1'`, `'/d s.xml' >/dev/null`, `--result-id 'xccdf_org.open-scap_testresult_p'\''1'`} {
		if !strings.Contains(q, part) {
			t.Errorf("quoted command lacks %q:\n%s", part, q)
		}
	}
}

func TestGenerate(t *testing.T) {
	ok := captured(t, "generate-fix")
	tests := []struct {
		name    string
		runner  nightshift.Runner
		ds      string
		rules   []string
		want    int
		wantErr string
	}{
		{"captured", ok, "/ds.xml", []string{"sshd_disable_root_login"}, 2, ""},
		{"oscap failed", &replay{out: nightshift.Exec{ExitCode: 1, Stderr: "WARNING: Skipping x\nOpenSCAP Error: Unable to open file\n"}}, "/ds.xml", []string{"a"}, 0, "exit 1: OpenSCAP Error: Unable to open file"},
		{"timed out", &replay{out: nightshift.Exec{ExitCode: -1, TimedOut: true}}, "/ds.xml", []string{"a"}, 0, "exit -1"},
		{"runner error", &replay{err: errors.New("connection lost")}, "/ds.xml", []string{"a"}, 0, "connection lost"},
		{"nil runner", nil, "/ds.xml", []string{"a"}, 0, "nil runner"},
		{"no rules", ok, "/ds.xml", nil, 0, "required"},
		{"no datastream", ok, "", []string{"a"}, 0, "required"},
		{"bad script", &replay{out: nightshift.Exec{Stdout: "# BEGIN fix (1 / 1) for 'a'\n"}}, "/ds.xml", []string{"a"}, 0, "does not end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fixes, err := Generate(context.Background(), tt.runner, tt.ds, anssiHigh, tt.rules)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(fixes) != tt.want {
				t.Fatalf("%d fixes, %v; want %d", len(fixes), err, tt.want)
			}
			if rp, isReplay := tt.runner.(*replay); isReplay && rp.commands[len(rp.commands)-1] != Command("", tt.ds, anssiHigh, tt.rules) {
				t.Errorf("ran %q", rp.commands)
			}
		})
	}
}

// FuzzParse: any script yields fixes or ErrScript, never a
// panic, and every fix is non-empty.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join(scapDir, "oscap", "generate-fix.stdout")); err == nil {
		f.Add(string(b))
	}
	f.Add("# BEGIN fix (1 / 1) for 'a'\necho\n# END fix for 'a'\n")
	f.Add("# BEGIN fix (9 / 99999999999999999999) for 'a'\n")
	f.Fuzz(func(t *testing.T, in string) {
		fixes, err := Parse(in)
		if err != nil {
			if !errors.Is(err, ErrScript) {
				t.Fatalf("error %v does not match ErrScript", err)
			}
			return
		}
		for id, fix := range fixes {
			if strings.TrimSpace(fix) == "" {
				t.Fatalf("empty fix for %q", id)
			}
		}
	})
}
