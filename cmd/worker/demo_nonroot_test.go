package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift/internal/testenv"
)

// nobody is the unprivileged user the demo is run as when the tests run as
// root (Debian's nobody/nogroup).
const nobody = "65534"

// TestDemoWithoutRoot runs the README's first command as a user without
// privileges, on a PATH with only the tools the scripted commands use (no
// sshd, ssh or bwrap): the built worker binary, started by setpriv as
// nobody when the tests run as root, with a home and a temporary directory
// of its own and nothing else of the environment.
func TestDemoWithoutRoot(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the worker binary")
	}
	// A directory every user can read: t.TempDir's are root's alone.
	top, err := os.MkdirTemp("", "nightshift-demo-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	if err := os.Chmod(top, 0o755); err != nil {
		t.Fatal(err)
	}
	worker := filepath.Join(top, "worker")
	if out, err := exec.Command("go", "build", "-o", worker, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	bin := filepath.Join(top, "bin")
	home := filepath.Join(top, "home")
	for _, d := range []string{bin, home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range demoTools {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + bin, "HOME=" + home, "TMPDIR=" + home}
	cmd := exec.Command(worker, "demo")
	if os.Geteuid() == 0 {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			testenv.Unavailable(t, "setpriv (util-linux) is needed to run the demo as nobody: %v", err)
		}
		if err := os.Chown(home, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		cmd = exec.Command(setpriv, "--reuid", nobody, "--regid", nobody, "--clear-groups", "--", worker, "demo")
	}
	cmd.Env, cmd.Dir = env, home
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("demo as an unprivileged user: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errOut.String())
	}
	for _, want := range []string{
		"in-process SSH server", "now says: PermitRootLogin no",
		"sshd_disable_root_login             fixed      3",
		"auditd_data_retention_max_log_file  not_fixed  25",
		"The last history block the model saw", "refused 0 commands",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
	if errOut.Len() != 0 {
		t.Errorf("demo wrote to stderr:\n%s", errOut.String())
	}
}
