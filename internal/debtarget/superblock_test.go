package debtarget

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nightshift-dev/nightshift/internal/testenv"
)

// hostDev is the device number (st_dev) of path on this machine, the
// number `stat -c %d` prints.
func hostDev(t *testing.T, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Dev
}

// rootOptions is this machine's root file system's options, as findmnt
// prints them (the superblock's among them: errors=, ro).
func rootOptions(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("findmnt", "-no", "OPTIONS", "/").Output()
	if err != nil {
		t.Fatalf("findmnt -no OPTIONS /: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// devsInside parses `stat -c %d` of each path, one number a line.
func devsInside(t *testing.T, out string, n int) []uint64 {
	t.Helper()
	f := strings.Fields(out)
	if len(f) != n {
		t.Fatalf("stat -c %%d printed %q; want %d numbers", out, n)
	}
	var devs []uint64
	for _, s := range f {
		d, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("stat -c %%d printed %q: %v", out, err)
		}
		devs = append(devs, d)
	}
	return devs
}

// TestRootOwnSuperblock: a Sandbox target (it keeps CAP_SYS_ADMIN, so
// commands committed there can remount) has its / on an overlay, a
// superblock of its own, and its /sys on a sysfs superblock other than
// this machine's. So `mount -o remount,errors=panic /` inside (once it
// changed this machine's root) fails or changes only the target: this
// machine's root options are the same after it. The overlay shows the
// target's writes at Root on this machine, its tree stays unchanged under
// it, and Close leaves no mount.
//
// The remount is run only after the device checks passed: were / the
// machine's superblock, the test stops before touching it.
func TestRootOwnSuperblock(t *testing.T) {
	testenv.NeedRoot(t, "the target's namespaces, chroot and mounts")
	before := rootOptions(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	tg, err := Start(ctx, Options{Sandbox: true, Log: testLog{t}, HostKeys: testHostKeys(t)})
	if err != nil {
		t.Fatalf("start the Debian 12 target: %v", err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			tg.Close()
		}
	})
	c := dial(t, tg)

	in := devsInside(t, run(t, c, "stat -c %d / /sys").Stdout, 2)
	for _, p := range []string{"/", tg.Dir, filepath.Join(tg.Dir, "lower")} {
		if d := hostDev(t, p); in[0] == d {
			t.Fatalf("the target's / is on device %d, the device of this machine's %s: a remount inside would change it", in[0], p)
		}
	}
	if d := hostDev(t, "/sys"); in[1] == d {
		t.Fatalf("the target's /sys is on device %d, this machine's /sys superblock", d)
	}
	if d := hostDev(t, tg.Root); in[0] != d {
		t.Errorf("the target's / is on device %d, its Root %s on this machine on %d; want the same overlay", in[0], tg.Root, d)
	}
	mi := run(t, c, `awk '$5 == "/"' /proc/self/mountinfo`).Stdout
	if !strings.Contains(mi, " - overlay ") {
		t.Fatalf("the target's / in its mountinfo: %q; want an overlay", mi)
	}

	r := run(t, c, "mount -o remount,errors=panic /; echo exit=$?; findmnt -no FSTYPE,OPTIONS /")
	t.Logf("inside: %s %s", r.Stdout, r.Stderr)
	if after := rootOptions(t); after != before {
		t.Fatalf("mount -o remount,errors=panic / in the target changed this machine's root options from %q to %q", before, after)
	}
	if !strings.Contains(r.Stdout, "overlay") {
		t.Errorf("the target's / after the remount: %q; want still the overlay", r.Stdout)
	}

	// Writes inside show at Root on this machine and go to the upper
	// layer, not into the unpacked tree.
	run(t, c, "echo inside > /etc/nightshift-probe && rm /etc/debian_version")
	if b, err := os.ReadFile(filepath.Join(tg.Root, "etc/nightshift-probe")); err != nil || string(b) != "inside\n" {
		t.Errorf("the target's write at Root: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(tg.Root, "etc/debian_version")); !os.IsNotExist(err) {
		t.Errorf("a file removed inside is still at Root: %v", err)
	}
	if _, err := os.Stat(filepath.Join(tg.Dir, "lower/etc/debian_version")); err != nil {
		t.Errorf("a removal inside reached the unpacked tree: %v", err)
	}
	if _, err := os.Stat(filepath.Join(tg.Dir, "lower/etc/nightshift-probe")); !os.IsNotExist(err) {
		t.Errorf("a write inside reached the unpacked tree: %v", err)
	}

	dir := tg.Dir
	c.Close()
	closed = true
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	if m := mountsUnder(dir); len(m) != 0 {
		t.Errorf("mounts left: %q", m)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists after Close (%v)", dir, err)
	}
	if after := rootOptions(t); after != before {
		t.Errorf("this machine's root options changed from %q to %q", before, after)
	}
}
