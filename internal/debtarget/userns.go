package debtarget

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// idMapSize is how many user and group IDs, from 0, the target's user
// namespace maps to the same IDs on this machine: every ID a Debian root
// file system uses (system accounts, LoginUser, nobody at 65534), so files
// keep their owners inside and out. It is less than the whole range on
// purpose: pam_loginuid takes a uid_map of all 2^32-1 IDs for this
// machine's own namespace and then fails the login, where it cannot
// write /proc/self/loginuid (only this machine's CAP_AUDIT_CONTROL may).
const idMapSize = 65536

// userNamespace makes the user namespace a target runs in: IDs 0 to
// idMapSize-1 mapped to themselves (setgroups allowed, for sshd and sudo).
// It is held by the returned file (a short-lived process made it; Go
// writes the maps before that process runs anything).
func userNamespace() (*os.File, error) {
	ids := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: idMapSize}}
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER, UidMappings: ids, GidMappings: ids,
		GidMappingsEnableSetgroups: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("debtarget: %w: a user namespace: %v", ErrStart, err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	f, err := os.Open("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/ns/user")
	if err != nil {
		return nil, fmt.Errorf("debtarget: %w: the user namespace: %v", ErrStart, err)
	}
	return f, nil
}

// rootSetup is the first half of both targets' PID 1 scripts, run as this
// machine's root in the new mount and PID namespaces: it mounts the
// target's kernel interfaces and /dev in $K (Dir/kernel, seen only in
// these namespaces), then enters the user namespace on fd 3 and runs $S2
// there in new mount, UTS and IPC namespaces ($NET adds a network
// namespace), with $R $H $CAPS $NET as its arguments.
//
// What it mounts here is locked in the new mount namespace, which belongs
// to the user namespace: the target's root can neither unmount it (to
// reveal what is under it) nor make it writable, however many capabilities
// it keeps, and the kernel refuses it a new proc, and a sysfs that is not
// read-only, since those would show more than the locked ones. That
// matters because the target's root is this machine's uid 0, which the
// kernel lets write every sysctl, /proc/sysrq-trigger and every
// root-writable sysfs attribute through a writable mount, whatever its
// capabilities: so /proc/sys, /proc/sysrq-trigger and the other
// kernel-wide files under /proc are bound read-only, and /sys is a
// read-only sysfs (mounted from a throwaway network namespace: sysfs has
// one superblock per network namespace, and one mounted in this machine's
// would be this machine's /sys superblock). /dev is a tmpfs with device
// nodes of the target's own (made here, where mknod is allowed; never
// binds of this machine's, which a chmod inside would change for the whole
// machine).
const rootSetup = `mount --make-rprivate /
K="${R%/*}/kernel"
mkdir -p "$K/proc" "$K/sys" "$K/dev"
mount -t proc -o nosuid,nodev,noexec proc "$K/proc"
for p in sys sysrq-trigger irq bus fs acpi scsi; do
	[ ! -e "$K/proc/$p" ] || { mount --bind "$K/proc/$p" "$K/proc/$p" && mount -o remount,bind,ro "$K/proc/$p"; }
done
unshare --net mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$K/sys"
mount -t tmpfs -o mode=755,nosuid tmpfs "$K/dev"
mknod -m 666 "$K/dev/null" c 1 3
mknod -m 666 "$K/dev/zero" c 1 5
mknod -m 666 "$K/dev/full" c 1 7
mknod -m 666 "$K/dev/random" c 1 8
mknod -m 666 "$K/dev/urandom" c 1 9
mknod -m 666 "$K/dev/tty" c 5 0
mkdir -p "$K/dev/pts" "$K/dev/shm"
ln -s pts/ptmx "$K/dev/ptmx"
ln -s /proc/self/fd "$K/dev/fd"
exec nsenter --user=/proc/self/fd/3 -- unshare --mount --uts --ipc $NET --propagation private -- sh -c "$S2" sh "$R" "$H" "$CAPS" "$NET"
`

// userSetup is the start of both targets' $S2, run as root of the user
// namespace: the loopback interface of the target's own network namespace
// (with $NET), the hostname ($H), then the target's root: a bind of $R
// with binds of $K's proc, sys and dev (each bind's top is the target's
// own mount, so the root has no locked mount under it, which a recording
// sandbox's overlay of / requires; the read-only parts under /proc stay
// locked), a private devpts, /run and /tmp, and the pivot into it, the
// machine's root detached.
const userSetup = `set -eu
R="$1"; H="$2"; CAPS="$3"; NET="$4"; K="${R%/*}/kernel"
exec 3<&-
[ -z "$NET" ] || ip link set lo up
hostname "$H"
mount --bind "$R" "$R"
mount --rbind "$K/proc" "$R/proc"
mount --bind "$K/sys" "$R/sys"
mount --bind "$K/dev" "$R/dev"
mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$R/dev/pts"
mount -t tmpfs -o mode=755,nosuid,nodev tmpfs "$R/run"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$R/tmp"
cd "$R"
pivot_root . mnt
cd /
umount -l /mnt
`

// setupArgs are the arguments of sh -c rootSetup.
func setupArgs(root, hostname string, caps []string, ownNet bool, stage2 string) []string {
	net := ""
	if ownNet {
		net = "--net"
	}
	return []string{"sh", "-c", "set -eu\nR=\"$1\"; H=\"$2\"; CAPS=\"$3\"; NET=\"$4\"; S2=\"$5\"\n" + rootSetup,
		"sh", root, hostname, strings.Join(caps, ","), net, userSetup + stage2}
}
