package recipes_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/internal/goldenfile"
	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/recipes"
)

// exportOf is a night's recipes: two rules, two keys of one of them, a
// command with quotes, Jinja-looking braces and a newline.
func exportOf(dir string) recipes.Export {
	at := time.Date(2026, 11, 27, 3, 4, 5, 0, time.UTC)
	deb := nightshift.RecipeKey{Rule: "marker_present", OS: "debian", Version: "12", PackageManager: "apt-get"}
	ubu := nightshift.RecipeKey{Rule: "marker_present", OS: "ubuntu", Version: "24.04", PackageManager: "apt-get"}
	braces := nightshift.RecipeKey{Rule: "braces_written", OS: "debian", Version: "12", PackageManager: "apt-get"}
	check := func(p string) nightshift.RecipeCheck {
		return nightshift.RecipeCheck{Command: "test -f " + filepath.Join(dir, p)}
	}
	return recipes.Export{Title: "journal night.db run 3", Recipes: []nightshift.Recipe{
		{ID: "r-ubu", Key: ubu, Commands: []string{"touch " + filepath.Join(dir, "marker")}, Check: check("marker"), Fixes: 1,
			Proofs: []nightshift.RecipeProof{{Host: "u1", Run: "3", At: at, Check: "pass: exit 0: compliant"}}},
		{ID: "r-deb", Key: deb, Commands: []string{"mkdir -p " + dir, "touch '" + filepath.Join(dir, "marker") + "'"}, Check: check("marker"), Fixes: 2,
			Proofs: []nightshift.RecipeProof{{Host: "web1", Run: "3", At: at, Check: "pass: exit 0: compliant",
				Changes: []nightshift.FileChange{{Path: filepath.Join(dir, "marker"), Change: nightshift.ChangeCreated}}},
				{Host: "web2", Run: "3", At: at.Add(time.Minute), Replayed: true}}},
		{ID: "r-braces", Key: braces, Commands: []string{"printf '{{ x }} %s\\n' \"$HOME\" > " + filepath.Join(dir, "braces") + "\n: done"},
			Check: nightshift.RecipeCheck{Command: "grep -q '{{ x }}' " + filepath.Join(dir, "braces"), Failing: []int{1, 2}}, Fixes: 1},
	}}
}

// TestExportGolden: the playbook and the script, byte for byte, and the
// same bytes from the recipes in another order.
func TestExportGolden(t *testing.T) {
	const dir = "/var/tmp/nightshift-export-test"
	e := exportOf(dir)
	out := t.TempDir()
	require.NoError(t, e.WriteAnsible(out))
	require.NoError(t, e.WriteShell(filepath.Join(out, "fix.sh")))
	for _, f := range []string{"site.yml", "tasks/marker_present.yml", "tasks/braces_written.yml", "fix.sh"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		require.NoError(t, err)
		goldenfile.Check(t, filepath.Join("testdata", "export", strings.ReplaceAll(f, "/", "_")+".golden"), b)
	}
	st, err := os.Stat(filepath.Join(out, "fix.sh"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), st.Mode().Perm())

	// Determinism: the recipes in reverse order give the same files.
	rev := exportOf(dir)
	for i, j := 0, len(rev.Recipes)-1; i < j; i, j = i+1, j-1 {
		rev.Recipes[i], rev.Recipes[j] = rev.Recipes[j], rev.Recipes[i]
	}
	out2 := t.TempDir()
	require.NoError(t, rev.WriteAnsible(out2))
	require.NoError(t, rev.WriteShell(filepath.Join(out2, "fix.sh")))
	for _, f := range []string{"site.yml", "tasks/marker_present.yml", "tasks/braces_written.yml", "fix.sh"} {
		a, _ := os.ReadFile(filepath.Join(out, f))
		b, _ := os.ReadFile(filepath.Join(out2, f))
		assert.Equal(t, string(a), string(b), f)
	}
}

func TestExportRefusesRecipesWithoutCheck(t *testing.T) {
	e := exportOf("/x")
	e.Recipes[1].Check.Command = " "
	err := e.WriteAnsible(t.TempDir())
	assert.True(t, errors.Is(err, recipes.ErrNoCheck), "got %v", err)
	assert.ErrorIs(t, e.WriteShell(filepath.Join(t.TempDir(), "x.sh")), recipes.ErrNoCheck)
}

// TestExportAnsibleSyntax: ansible-playbook (ansible-core from Debian's
// packages, installed by the test command) accepts the playbook.
func TestExportAnsibleSyntax(t *testing.T) {
	bin, err := exec.LookPath("ansible-playbook")
	if err != nil {
		testenv.Unavailable(t, "ansible-playbook (Debian's ansible-core): %v", err)
	}
	out := t.TempDir()
	require.NoError(t, exportOf("/var/tmp/x").WriteAnsible(out))
	cmd := exec.CommandContext(context.Background(), bin, "--syntax-check", "-i", "localhost,", filepath.Join(out, "site.yml"))
	cmd.Env = append(os.Environ(), "ANSIBLE_LOCAL_TEMP="+t.TempDir(), "ANSIBLE_HOME="+t.TempDir(), "ANSIBLE_NOCOLOR=1")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	t.Logf("%s", b)
}

// TestExportShellRuns: real bash runs the script: on this machine's key
// (read from its os-release) the matching recipe runs once, its re-check
// passes, and a second run changes nothing. The recipes here write only
// into the test's directory.
func TestExportShellRuns(t *testing.T) {
	key, err := exec.Command("bash", "-c", recipes.KeyCommand).Output()
	require.NoError(t, err)
	f := strings.Fields(string(key))
	require.GreaterOrEqual(t, len(f), 2, "key %q", key)
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")
	k := nightshift.RecipeKey{Rule: "marker_present", OS: f[0], Version: f[1]}
	if len(f) > 2 {
		k.PackageManager = f[2]
	}
	other := k
	other.OS = "elsewhere"
	e := recipes.Export{Title: "test", Recipes: []nightshift.Recipe{
		{ID: "r-here", Key: k, Commands: []string{"echo ran >> " + filepath.Join(dir, "log"), "touch " + marker}, Check: nightshift.RecipeCheck{Command: "test -f " + marker}},
		{ID: "r-there", Key: other, Commands: []string{"touch " + filepath.Join(dir, "wrong-key")}, Check: nightshift.RecipeCheck{Command: "false"}},
	}}
	script := filepath.Join(t.TempDir(), "fix.sh")
	require.NoError(t, e.WriteShell(script))
	for range 2 {
		b, err := exec.Command("bash", script).CombinedOutput()
		require.NoError(t, err, "%s", b)
	}
	log, err := os.ReadFile(filepath.Join(dir, "log"))
	require.NoError(t, err)
	assert.Equal(t, "ran\n", string(log), "the second run found the rule compliant and ran nothing")
	assert.NoFileExists(t, filepath.Join(dir, "wrong-key"), "a recipe of another key ran")

	// A recipe whose re-check fails makes the script exit 1.
	e.Recipes[0].Commands = []string{"true"}
	e.Recipes[0].Check.Command = "test -f " + filepath.Join(dir, "never")
	require.NoError(t, e.WriteShell(script))
	err = exec.Command("bash", script).Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 1, ee.ExitCode())
}
