package testenv

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Nobody is the unprivileged user (and group) Unprivileged runs a test as
// when the tests run as root: Debian's nobody and nogroup.
const Nobody = "65534"

// Unprivileged lets a test of what happens without root (a refusal such as
// "needs root") run whoever runs the tests. Without root it returns true:
// the caller runs its body. As root it runs the calling test again in a
// copy of the test binary as Nobody, through
//
//	setpriv --reuid=65534 --regid=65534 --clear-groups
//
// with a home and a temporary directory of its own (the child cannot read
// root's), fails t when that run fails or does not run the test, and
// returns false: the caller returns. The body must not need the package
// directory (the child runs in its temporary directory). setpriv missing
// is Unavailable.
func Unprivileged(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return true
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		Unavailable(t, "setpriv (util-linux) is needed to run %s as an unprivileged user: %v", t.Name(), err)
	}
	// A directory nobody can enter: the test binary's own (go test's build
	// directory) and t.TempDir are root's alone.
	dir, err := os.MkdirTemp("", "nightshift-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "test.bin")
	if err := copyExecutable(bin); err != nil {
		t.Fatalf("copy the test binary for %s: %v", t.Name(), err)
	}
	parts := strings.Split(t.Name(), "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	cmd := exec.Command(setpriv, "--reuid="+Nobody, "--regid="+Nobody, "--clear-groups", "--",
		bin, "-test.run="+strings.Join(parts, "/"), "-test.count=1", "-test.v")
	cmd.Dir = home
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + home}
	if CI() {
		cmd.Env = append(cmd.Env, "CI="+os.Getenv("CI"))
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s as uid %s: %v\n%s", t.Name(), Nobody, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()+" ") {
		t.Fatalf("%s as uid %s did not run the test:\n%s", t.Name(), Nobody, out)
	}
	t.Logf("ran as uid %s through setpriv:\n%s", Nobody, out)
	return false
}

// copyExecutable copies the running test binary to path, mode 0755.
func copyExecutable(path string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	src, err := os.Open(exe)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}
