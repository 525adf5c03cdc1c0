package debtarget

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/sshexec"
)

// targetMounts reads, from this machine, the mount table of the
// namespaces whose PID 1 is pid: "MOUNTPOINT FSTYPE OPTIONS" a line.
func targetMounts(t *testing.T, pid int) []string {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/mountinfo", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		for i, f := range fields {
			if f == "-" && i+1 < len(fields) && len(fields) > 5 {
				out = append(out, unescapeMountinfo(fields[4])+" "+fields[i+1]+" "+fields[5])
				break
			}
		}
	}
	return out
}

// mountAt is the line of targetMounts whose mount point is mp (the last,
// the one on top), or "".
func mountAt(mounts []string, mp string) string {
	var m string
	for _, l := range mounts {
		if strings.HasPrefix(l, mp+" ") {
			m = l
		}
	}
	return m
}

// pid1 is the target's PID 1 as this machine sees it: the one child of
// the unshare process Start ran.
func (t *Target) pid1(tb testing.TB) int {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", t.cmd.Process.Pid, t.cmd.Process.Pid))
	var pid int
	if err != nil || len(strings.Fields(string(b))) != 1 {
		tb.Fatalf("the target's PID 1: %v %q", err, b)
	}
	fmt.Sscan(string(b), &pid)
	return pid
}

// TestSandboxTargetCannotReachMachine runs, as root inside a Sandbox
// target (the one that keeps CAP_SYS_ADMIN and CAP_MKNOD so a recording
// sandbox can run there), what would reach this machine's kernel, disks or
// clock, and checks from outside that none of it did: the target runs in
// its own user namespace, so its capabilities cover only what its own
// namespaces own. Each row's command must fail inside, and the target's
// mount table, read from this machine, must show the guard still in
// place. The last rows are what the target must still do in its own
// namespaces (what a recording sandbox needs).
//
// /proc/sysrq-trigger is probed with "h" (help into the kernel log), never
// "b": a target whose guard were missing would reboot the machine.
func TestSandboxTargetCannotReachMachine(t *testing.T) {
	testenv.NeedRoot(t, "the target's namespaces, chroot and mounts")
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	var root unix.Stat_t
	if err := unix.Stat("/", &root); err != nil {
		t.Fatal(err)
	}
	disk := fmt.Sprintf("%d %d", unix.Major(root.Dev), unix.Minor(root.Dev))
	sysBefore := mountAt(targetMounts(t, os.Getpid()), "/sys")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	tg, err := Start(ctx, Options{Sandbox: true, Log: testLog{t}, HostKeys: testHostKeys(t)})
	if err != nil {
		t.Fatalf("start the Debian 12 target: %v", err)
	}
	t.Cleanup(func() {
		if err := tg.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	c := dial(t, tg)
	pid := tg.pid1(t)
	ro := func(mp string) func(t *testing.T, mounts []string) {
		return func(t *testing.T, mounts []string) {
			m := mountAt(mounts, mp)
			if m == "" || !strings.HasPrefix(strings.Fields(m)[2], "ro") {
				t.Errorf("the target's %s, seen from this machine: %q; want it mounted read-only", mp, m)
			}
		}
	}
	roIfHere := func(mp string) func(t *testing.T, mounts []string) {
		if _, err := os.Stat(mp); err != nil {
			return nil
		}
		return ro(mp)
	}
	noMount := func(mp string) func(t *testing.T, mounts []string) {
		return func(t *testing.T, mounts []string) {
			if m := mountAt(mounts, mp); m != "" {
				t.Errorf("the target mounted %q", m)
			}
		}
	}
	noNode := func(path string) func(t *testing.T, mounts []string) {
		return func(t *testing.T, mounts []string) {
			if fi, err := os.Lstat(path); err == nil {
				t.Errorf("the target made %s: %v", path, fi.Mode())
			}
		}
	}
	refused := []struct {
		name, cmd string
		outside   func(t *testing.T, mounts []string)
	}{
		{"devtmpfs", "mkdir -p /mnt/dev && mount -t devtmpfs none /mnt/dev", noMount("/mnt/dev")},
		// A node of this machine's root disk, then a mount of it (from
		// /dev, a tmpfs without nodev): this machine's root superblock.
		{"mknod the machine's disk", "mknod /root/disk b " + disk, noNode(filepath.Join(tg.Root, "root/disk"))},
		{"mount the machine's disk", "mkdir -p /mnt/disk && mknod /dev/nightshift-disk b " + disk + " && mount /dev/nightshift-disk /mnt/disk", noMount("/mnt/disk")},
		{"remount /sys read-write", "mount -o remount,bind,rw /sys || mount -o remount,rw /sys", ro("/sys")},
		{"remount /proc/sys read-write", "mount -o remount,bind,rw /proc/sys || umount /proc/sys; echo 1 > /proc/sys/vm/drop_caches", ro("/proc/sys")},
		{"a proc of its own", "mkdir -p /mnt/proc && mount -t proc proc /mnt/proc && echo 1 > /mnt/proc/sys/vm/drop_caches", noMount("/mnt/proc")},
		{"a sysfs of its own", "mkdir -p /mnt/sys && mount -t sysfs sysfs /mnt/sys", noMount("/mnt/sys")},
		// A kernel without CONFIG_MAGIC_SYSRQ has no such file: the write
		// then fails anyway.
		{"sysrq", "mount -o remount,bind,rw /proc/sysrq-trigger || umount /proc/sysrq-trigger; echo h > /proc/sysrq-trigger", roIfHere("/proc/sysrq-trigger")},
		// finit_module (313 on x86_64) of a file that is no module: EPERM
		// without CAP_SYS_MODULE, ENOEXEC with it; ENOSYS from a kernel
		// without modules (this machine's: then no one loads any).
		{"load a module", `perl -e 'open(my $f, "<", "/etc/hostname") or die; my $p = ""; syscall(313, fileno($f), $p, 0) == 0 and exit 0; print "$!\n"; exit(($! == 1 || $! == 38) ? 1 : 0)'`, nil},
		{"set the clock", "date -s @$(date +%s)", nil},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, c, tt.cmd)
			t.Logf("%s: exit %d, %q", tt.cmd, r.ExitCode, r.Stderr)
			if r.ExitCode == 0 {
				t.Errorf("%s: succeeded in the target (%q %q); want it refused", tt.cmd, r.Stdout, r.Stderr)
			}
			if tt.outside != nil {
				tt.outside(t, targetMounts(t, pid))
			}
		})
	}
	if m := mountAt(targetMounts(t, os.Getpid()), "/sys"); m != sysBefore {
		t.Errorf("this machine's /sys changed from %q to %q", sysBefore, m)
	}

	// What the target does in namespaces of its own.
	allowed := []struct{ name, cmd, want string }{
		{"its own hostname", "hostname nightshift-other && hostname", "nightshift-other"},
		{"tmpfs", "mount -t tmpfs none /mnt && touch /mnt/x && umount /mnt && echo ok", "ok"},
		{"overlay", "mkdir -p /run/o/l /run/o/u /run/o/w /run/o/m && echo lower > /run/o/l/f && " +
			"mount -t overlay overlay -o lowerdir=/run/o/l,upperdir=/run/o/u,workdir=/run/o/w,userxattr /run/o/m && " +
			"rm /run/o/m/f && stat -c %F:%t:%T /run/o/u/f && umount /run/o/m", "character special file:0:0"},
		{"a PID namespace", "unshare --pid --fork sh -c 'echo $$'", "1"},
		{"its own /dev/null", "chmod 600 /dev/null && stat -c %a /dev/null && chmod 666 /dev/null", "600"},
	}
	for _, tt := range allowed {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, c, tt.cmd)
			if r.ExitCode != 0 || strings.TrimSpace(r.Stdout) != tt.want {
				t.Errorf("%s: exit %d, %q %q; want %q", tt.cmd, r.ExitCode, r.Stdout, r.Stderr, tt.want)
			}
		})
	}
	if h, err := os.Hostname(); err != nil || h != hostname {
		t.Errorf("this machine's hostname changed from %q to %q (%v)", hostname, h, err)
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode().Perm() != 0o666 {
		t.Errorf("this machine's /dev/null: %v %v; want mode 0666", fi.Mode(), err)
	}
}

// TestSystemTargetFirewallIsOwn: a Sandbox StartSystem target changes
// the firewall of its own network namespace (its root keeps CAP_NET_ADMIN
// over it), and the table it adds is not in this machine's ruleset.
func TestSystemTargetFirewallIsOwn(t *testing.T) {
	testenv.NeedRoot(t, "the target's namespaces, chroot and mounts")
	if _, err := exec.LookPath("nft"); err != nil {
		testenv.Unavailable(t, "nft: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	tg, err := StartSystem(ctx, Options{Sandbox: true, Log: testLog{t}, HostKeys: testHostKeys(t)})
	if err != nil {
		t.Fatalf("start the Debian 12 target: %v", err)
	}
	t.Cleanup(func() {
		if err := tg.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	cfg := tg.SSHConfig("root")
	cfg.CommandTimeout = time.Minute
	c, err := sshexec.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const table = "nightshift_userns_probe"
	r := run(t, c, "nft add table inet "+table+" && nft list tables")
	if r.ExitCode != 0 || !strings.Contains(r.Stdout, table) {
		t.Fatalf("nft add table in the target: exit %d, %q %q", r.ExitCode, r.Stdout, r.Stderr)
	}
	out, err := exec.Command("nft", "list", "tables").CombinedOutput()
	if err != nil {
		t.Fatalf("nft list tables on this machine: %v: %s", err, out)
	}
	if strings.Contains(string(out), table) {
		t.Errorf("the target's table is in this machine's ruleset: %s", out)
	}
}
