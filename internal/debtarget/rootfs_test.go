package debtarget

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/testenv"
)

// smallTarball writes a zstd tarball of a one-file tree, a stand-in for
// the Debian root where only the overlay is under test.
func smallTarball(t *testing.T) string {
	t.Helper()
	tree := t.TempDir()
	if err := os.WriteFile(filepath.Join(tree, "hello"), []byte("lower\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tarball := filepath.Join(t.TempDir(), "root.tar.zst")
	if out, err := exec.Command("tar", "-I", "zstd", "-cf", tarball, "-C", tree, ".").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v: %s", err, out)
	}
	return tarball
}

// TestRootFS: the overlay shows the tree with the writes made through it,
// which land in the upper layer; unmount leaves no mount; a directory the
// overlay's options cannot carry is refused by name.
func TestRootFS(t *testing.T) {
	testenv.NeedRoot(t, "overlay mounts")
	dir := t.TempDir()
	r, err := mountRoot(context.Background(), smallTarball(t), dir)
	if err != nil {
		r.unmount()
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.root, "hello"), []byte("upper\n"), 0o644); err != nil {
		t.Error(err)
	}
	for p, want := range map[string]string{"root/hello": "upper\n", "upper/hello": "upper\n", "lower/hello": "lower\n"} {
		if b, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v; want %q", p, b, err, want)
		}
	}
	if err := r.unmount(); err != nil {
		t.Fatal(err)
	}
	if m := mountsUnder(dir); len(m) != 0 {
		t.Errorf("mounts left after unmount: %q", m)
	}
	if _, err := mountRoot(context.Background(), "/nonexistent", filepath.Join(t.TempDir(), "a,b")); err == nil || !strings.Contains(err.Error(), "a,b") {
		t.Errorf("a directory with a comma: %v; want an error naming it", err)
	}
}

// TestRootReaper: when the process that mounted a target's root dies
// without Close (SIGKILL here), the reaper unmounts it from this machine's
// mount namespace.
func TestRootReaper(t *testing.T) {
	if dir := os.Getenv("NIGHTSHIFT_REAPER_DIR"); dir != "" {
		// The child: mount, say so, wait to be killed.
		if _, err := mountRoot(context.Background(), os.Getenv("NIGHTSHIFT_REAPER_TARBALL"), dir); err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString("mounted\n")
		time.Sleep(time.Hour)
		return
	}
	testenv.NeedRoot(t, "overlay mounts")
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRootReaper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "NIGHTSHIFT_REAPER_DIR="+dir, "NIGHTSHIFT_REAPER_TARBALL="+smallTarball(t))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "mounted\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child said %q; want mounted", line)
	}
	if m := mountsUnder(dir); len(m) != 1 {
		t.Fatalf("mounts under %s with the child alive: %q; want its overlay", dir, m)
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for len(mountsUnder(dir)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if m := mountsUnder(dir); len(m) != 0 {
		t.Fatalf("the overlay of a killed process is still mounted: %q", m)
	}
}
