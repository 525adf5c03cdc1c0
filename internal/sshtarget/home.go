package sshtarget

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
)

// homeDir is an empty directory mounted over the login user's home in the
// target's mount namespace.
type homeDir struct {
	dir        string // Dir/home; "" when sshd runs in the machine's namespace
	mountpoint string // the login user's home directory
}

// cleanHome creates Dir/home for the login user when Start runs as root
// (only root can make the mount namespace it is mounted in).
func (t *Target) cleanHome() (homeDir, error) {
	if os.Geteuid() != 0 {
		return homeDir{}, nil
	}
	u, err := user.Lookup(t.User)
	if err != nil {
		return homeDir{}, fmt.Errorf("sshtarget: user %q: %w", t.User, err)
	}
	if u.HomeDir == "" || u.HomeDir == "/" {
		return homeDir{}, nil
	}
	if _, err := os.Stat(u.HomeDir); err != nil {
		return homeDir{}, nil // nothing to hide
	}
	dir := filepath.Join(t.Dir, "home")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return homeDir{}, fmt.Errorf("sshtarget: create home directory: %w", err)
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return homeDir{}, fmt.Errorf("sshtarget: user %q: uid %q: %w", t.User, u.Uid, err)
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return homeDir{}, fmt.Errorf("sshtarget: user %q: gid %q: %w", t.User, u.Gid, err)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		return homeDir{}, fmt.Errorf("sshtarget: home directory: %w", err)
	}
	return homeDir{dir: dir, mountpoint: u.HomeDir}, nil
}

// withHome runs sshd in a new mount namespace (unshare(1), util-linux) where
// home.dir is bind-mounted over home.mountpoint. Mount events do not
// propagate back to the machine.
func withHome(sshd string, args []string, home homeDir) *exec.Cmd {
	const script = `mount --bind "$1" "$2" || exit 1; shift 2; exec "$@"`
	a := []string{"--mount", "--propagation", "private", "--", "/bin/sh", "-c", script, "sh", home.dir, home.mountpoint, sshd}
	return exec.Command("unshare", append(a, args...)...)
}
