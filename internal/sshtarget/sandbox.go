package sshtarget

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// ErrSandbox is wrapped by Start's error when the sandbox cannot be set up.
var ErrSandbox = errors.New("sshtarget: sandbox unavailable")

// sandboxCaps is the capability bounding set of the sandboxed sshd and of
// every command it runs: what sshd needs to authenticate, drop privileges
// and chroot its privilege-separated child, and what a root shell needs to
// edit files it may write. Everything that reaches beyond the sandbox —
// mounts (SYS_ADMIN), the network configuration and firewall (NET_ADMIN,
// NET_RAW), rebooting (SYS_BOOT), modules, the clock, raw devices, mknod —
// is left out, so `iptables -F`, `reboot` or `mkfs` fail inside.
const sandboxCaps = "-all,+chown,+dac_override,+dac_read_search,+fowner,+fsetid,+kill,+setgid,+setuid,+setpcap,+sys_chroot,+audit_write,+net_bind_service"

// sandboxed returns the command that runs sshd with args inside a
// bubblewrap sandbox: the host's root file system bound read-only, a
// private /tmp and /var/tmp, a minimal /dev, a new /proc in a new PID
// namespace, new IPC and UTS namespaces (hostname "nightshift-target"), the
// network namespace shared so that sshd listens on the host's loopback, and
// the capability bounding set reduced to sandboxCaps by setpriv. dir and
// writable are bound read-write at their own paths. The sandbox dies with
// the process that started it.
func sandboxed(sshd string, args []string, dir string, writable []string, home homeDir) (*exec.Cmd, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: it needs root (it creates namespaces and drops capabilities)", ErrSandbox)
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, fmt.Errorf("%w: bwrap not found (install the Debian package bubblewrap): %v", ErrSandbox, err)
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return nil, fmt.Errorf("%w: setpriv not found (Debian package util-linux): %v", ErrSandbox, err)
	}
	a := []string{
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/tmp",
		"--tmpfs", "/var/tmp",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--hostname", "nightshift-target",
		"--die-with-parent",
	}
	// sshd's privilege separation directory must exist inside.
	a = append(a, "--ro-bind", "/run/sshd", "/run/sshd")
	for _, p := range append([]string{dir}, writable...) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("%w: writable path %q: %v", ErrSandbox, p, err)
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, fmt.Errorf("%w: writable path: %v", ErrSandbox, err)
		}
		a = append(a, "--bind", abs, abs)
	}
	if home.dir != "" {
		a = append(a, "--bind", home.dir, home.mountpoint)
	}
	a = append(a, "--", setpriv, "--bounding-set", sandboxCaps, "--inh-caps", "-all", "--", sshd)
	a = append(a, args...)
	return exec.Command(bwrap, a...), nil
}
