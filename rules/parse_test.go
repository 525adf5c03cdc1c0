package rules

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/rules/golden")

const testdataDir = "../testdata/rules"

// golden compares got with testdata/rules/golden/name, or rewrites it with
// -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(testdataDir, "golden", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./rules -run %s -update to create it)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file %s:\n--- got ---\n%s--- want ---\n%s", t.Name(), path, got, want)
	}
}

// TestInvalidGolden parses every invalid rule file and compares the error
// messages with the golden files.
func TestInvalidGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testdataDir, "invalid", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no invalid rule files: %v", err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			set, err := Parse(name, data)
			if err == nil {
				t.Fatalf("Parse accepted an invalid file: %v", set.IDs())
			}
			var verrs ValidationErrors
			if !errors.As(err, &verrs) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("error is %T, want ValidationErrors matching ErrInvalid: %v", err, err)
			}
			for _, ve := range verrs {
				if ve.File != name || ve.Msg == "" {
					t.Errorf("incomplete error: %#v", ve)
				}
			}
			golden(t, strings.TrimSuffix(name, ".yaml")+".golden", err.Error()+"\n")
		})
	}
}

// TestValidGolden loads the directory of valid rules and records what was
// understood.
func TestValidGolden(t *testing.T) {
	set, err := Load(filepath.Join(testdataDir, "valid"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range set.Rules() {
		fmt.Fprintf(&b, "%s\t%s\n", filepath.Base(r.Pos.File)+":"+fmt.Sprint(r.Pos.Line), r.ID)
		fmt.Fprintf(&b, "  title: %q\n  description: %q\n  check (%s): %q\n  banned: %q\n  hints: %q\n  max_attempts: %d\n",
			r.Title, r.Description, r.Check.Kind(), r.Check.String(), r.Banned, r.Hints, r.MaxAttempts)
	}
	golden(t, "valid.golden", b.String())
}

func TestLoadDuplicateAcrossFiles(t *testing.T) {
	dir := filepath.Join(testdataDir, "dupdir")
	_, err := Load(dir)
	if !errors.Is(err, ErrDuplicateID) {
		t.Fatalf("Load = %v, want ErrDuplicateID", err)
	}
	msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "dupdir/")
	if !strings.Contains(msg, "20-more.yml") || !strings.Contains(msg, "10-sshd.yaml:2") {
		t.Errorf("error does not name both places: %s", msg)
	}
	golden(t, "dupdir.golden", msg+"\n")
}

func TestLoadSingleFileAndSetAPI(t *testing.T) {
	set, err := Load(filepath.Join(testdataDir, "valid", "sshd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ids := set.IDs()
	want := []string{"sshd_disable_root_login", "sshd_disable_empty_passwords", "sshd_set_idle_timeout", "sshd_set_max_auth_tries"}
	if strings.Join(ids, ",") != strings.Join(want, ",") || set.Len() != len(want) {
		t.Fatalf("IDs = %v, want %v", ids, want)
	}
	r, ok := set.Get("sshd_disable_root_login")
	if !ok || r.MaxAttempts != 20 || r.Title != "Disable SSH root login" || r.Pos.Line != 3 {
		t.Fatalf("Get = %+v, %v", r, ok)
	}
	if r.Check.String() != `grep -Eq '^[[:space:]]*PermitRootLogin[[:space:]]+no' /etc/ssh/sshd_config` {
		t.Errorf("check = %q", r.Check)
	}
	// Copies: changing a returned rule does not change the set.
	r.Banned[0] = "changed"
	again, _ := set.Get("sshd_disable_root_login")
	if again.Banned[0] != "systemctl (restart|stop) ssh" {
		t.Error("Get returned a rule sharing memory with the set")
	}
	if _, ok := set.Get("nope"); ok {
		t.Error("Get found an unknown id")
	}
	var nilSet *Set
	if _, ok := nilSet.Get("x"); ok || nilSet.IDs() != nil || nilSet.Len() != 0 {
		t.Error("nil Set not empty")
	}
	// The rule's ban list adds its patterns to the defaults.
	bl, err := again.BanList(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, banned := bl.Match("sudo systemctl restart ssh"); !banned {
		t.Error("rule ban pattern not applied")
	}
	if _, banned := bl.Match("rm -rf /"); !banned {
		t.Error("defaults lost in rule ban list")
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want os.ErrNotExist", err)
	}
	if _, err := Load(dir); !errors.Is(err, ErrNoRules) {
		t.Errorf("empty directory: %v, want ErrNoRules", err)
	}
	big := filepath.Join(dir, "big.yaml")
	data := []byte("rules:\n" + strings.Repeat("# padding padding padding padding\n", MaxFileSize/30))
	if err := os.WriteFile(big, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(big)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "big.yaml: file is larger than 4 MiB") {
		t.Errorf("large file: %v, want ErrTooLarge naming the file", err)
	}
	if _, err := Parse("big.yaml", data); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Parse of a large file: %v", err)
	}
	// A directory reports the problems of every file, not just the first.
	sub := filepath.Join(dir, "two")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(sub, "a.yaml"), []byte("rules:\n  - id: a\n"), 0o644)
	os.WriteFile(filepath.Join(sub, "b.yml"), []byte("rules:\n  - id: B\n    check: 'true'\n"), 0o644)
	os.WriteFile(filepath.Join(sub, ".hidden.yaml"), []byte("garbage: ["), 0o644)
	_, err = Load(sub)
	var verrs ValidationErrors
	if !errors.As(err, &verrs) || len(verrs) != 2 || !strings.HasSuffix(verrs[0].File, "a.yaml") || !strings.HasSuffix(verrs[1].File, "b.yml") {
		t.Errorf("two bad files: %v", err)
	}
}

func TestValidationErrorFormat(t *testing.T) {
	tests := []struct {
		e    ValidationError
		want string
	}{
		{ValidationError{File: "a.yaml", Line: 3, Column: 5, Field: "rules[0].id", Msg: "bad"}, "a.yaml:3: rules[0].id: bad"},
		{ValidationError{File: "a.yaml", Msg: "empty"}, "a.yaml: empty"},
		{ValidationError{File: "a.yaml", Line: 2, Msg: "not valid YAML: x"}, "a.yaml:2: not valid YAML: x"},
		{ValidationError{Msg: "bare"}, "bare"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name, yaml string
		check      func(Rule) bool
	}{
		{"anchors and aliases", "common: &b ['wget']\nrules:\n  - id: a\n    check: 'true'\n    banned: *b\n", nil},
		{"null optional fields", "rules:\n  - id: a\n    check: 'true'\n    title:\n    banned:\n    max_attempts:\n", func(r Rule) bool { return r.Title == "" && r.MaxAttempts == 0 }},
		{"scalar check that YAML types as bool", "rules:\n  - id: a\n    check: true\n", func(r Rule) bool { return r.Check.String() == "true" }},
		{"hex max_attempts", "rules:\n  - id: a\n    check: 'true'\n    max_attempts: 0x10\n", func(r Rule) bool { return r.MaxAttempts == 16 }},
		{"max_attempts at the limit", "rules:\n  - id: a\n    check: 'true'\n    max_attempts: 1000\n", func(r Rule) bool { return r.MaxAttempts == 1000 }},
		{"id with dots and dashes", "rules:\n  - id: xccdf_org.ssgproject.content_rule_a-b_c\n    check: 'true'\n", nil},
		{"a scope with units, sysctl and keys", "rules:\n  - id: a\n    check: 'true'\n    paths: [/etc/sysctl.d]\n    units: [auditd.service, 'systemd-fsck@dev-sda1.service']\n    sysctl: [kernel.kptr_restrict, net/ipv4/ip_forward]\n    keys: [PermitRootLogin]\n",
			func(r Rule) bool {
				return r.ScopeNote == "" && slices.Equal(r.Units, []string{"auditd.service", "systemd-fsck@dev-sda1.service"}) &&
					slices.Equal(r.Sysctl, []string{"kernel.kptr_restrict", "net/ipv4/ip_forward"}) && slices.Equal(r.Keys, []string{"PermitRootLogin"})
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.yaml
			if tt.name == "anchors and aliases" {
				data = "rules:\n  - id: a\n    check: 'true'\n    banned: &b ['wget']\n  - id: b\n    check: 'true'\n    banned: *b\n"
			}
			set, err := Parse("t.yaml", []byte(data))
			if err != nil {
				t.Fatal(err)
			}
			r, _ := set.Get(set.IDs()[0])
			if tt.check != nil && !tt.check(r) {
				t.Errorf("unexpected rule %+v", r)
			}
		})
	}
}

func TestNewSet(t *testing.T) {
	a := Rule{ID: "a", Check: ShellCheck{Command: "true"}, Banned: []string{"x"}}
	b := Rule{ID: "b", Check: ShellCheck{Command: "false"}}
	set, err := NewSet(a, b)
	if err != nil {
		t.Fatal(err)
	}
	a.Banned[0] = "changed"
	if got, _ := set.Get("a"); got.Banned[0] != "x" || strings.Join(set.IDs(), ",") != "a,b" {
		t.Errorf("set %v holds %+v; want a copy of a, then b", set.IDs(), got)
	}
	if _, err := NewSet(a, b, a); !errors.Is(err, ErrDuplicateID) || !strings.Contains(err.Error(), `"a"`) {
		t.Errorf("a repeated id: %v; want ErrDuplicateID naming it", err)
	}
}

func TestParseScopeNamesRejected(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"units: auditd", "rules[0].units: must be a list, each a systemd unit name (auditd.service), not"},
		{"units: ['a b']", "rules[0].units[0]: must be a systemd unit name (auditd.service), not"},
		{"sysctl: ['kernel']", "rules[0].sysctl[0]: must be a kernel parameter (kernel.kptr_restrict), not"},
		{"sysctl: ['x=1']", "rules[0].sysctl[0]: must be a kernel parameter"},
		{"keys: ['1x']", "rules[0].keys[0]: must be a configuration keyword (PermitRootLogin), not"},
		{"keys: [[a]]", "rules[0].keys[0]: must be a configuration keyword"},
		{"paths: [/]", "rules[0].paths[0]: must be a file or directory below /"},
		{"paths: ['/*/x']", "the first component of a pattern must be literal"},
		{"paths: ['/home/[a']", "is not a path.Match pattern"},
		{"paths: [etc/x]", "rules[0].paths[0]: must be an absolute path"},
	}
	for _, tt := range tests {
		_, err := Parse("t.yaml", []byte("rules:\n  - id: a\n    check: 'true'\n    "+tt.yaml+"\n"))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.yaml, err, tt.want)
		}
	}
}

// TestParseScope: every rule is judged default-deny, so the loader says
// which rules declare no paths (ScopeNote, Undeclared) and accepts
// patterns of one component (/home/*/.bashrc).
func TestParseScope(t *testing.T) {
	tests := []struct {
		name, yaml string
		paths      []string
		note       string
	}{
		{"no paths", "", nil, NoPathsNote},
		{"empty paths", "paths: []", nil, ""},
		{"files and trees", "paths: [/etc/ssh/sshd_config, /etc/ssh/sshd_config.d/]", []string{"/etc/ssh/sshd_config", "/etc/ssh/sshd_config.d"}, ""},
		{"a pattern", "paths: ['/home/*/.bashrc', '/home/*/.ssh']", []string{"/home/*/.bashrc", "/home/*/.ssh"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := Parse("t.yaml", []byte("rules:\n  - id: a\n    check: 'true'\n    "+tt.yaml+"\n  - id: b\n    check: 'true'\n    paths: [/etc/x]\n"))
			if err != nil {
				t.Fatal(err)
			}
			r, _ := set.Get("a")
			if !slices.Equal(r.Paths, tt.paths) || r.ScopeNote != tt.note {
				t.Errorf("paths %q note %q, want %q %q", r.Paths, r.ScopeNote, tt.paths, tt.note)
			}
			var undeclared []string
			for _, u := range set.Rules() {
				if u.Undeclared() {
					undeclared = append(undeclared, u.ID)
				}
			}
			if want := tt.note != ""; want != slices.Equal(undeclared, []string{"a"}) || !want && len(undeclared) > 0 {
				t.Errorf("undeclared %q (note %q)", undeclared, tt.note)
			}
		})
	}
}
