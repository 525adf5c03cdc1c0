package debtarget

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrRootFS: the target's root file system (the overlay over the unpacked
// tree) could not be made.
var ErrRootFS = errors.New("mount the debian target's root")

// rootFS is a target's root: the unpacked tree (Dir/lower, a symbolic
// link to the tree unpacked once per tarball, see unpacked) under an
// overlay mounted at Dir/root in this process's mount namespace, its
// writes in Dir/upper (Dir/work is the overlay's work directory). The
// overlay is a superblock of its own: a remount of / inside the target
// (remount,ro, errors=…) changes that superblock, never the one of the
// file system Dir is on (this machine's root, for a temporary Dir).
//
// A reaper (a shell waiting on a pipe from this process) unmounts it if
// this process dies without Close (a test binary's timeout, SIGKILL): the
// mount is in this machine's mount namespace, which outlives the target's.
type rootFS struct {
	dir, root string
	mounted   bool
	reaper    *exec.Cmd
	reaperIn  io.WriteCloser
}

// reaperScript waits for its stdin: "keep" (Close unmounts) ends it;
// end of file (this process died) unmounts $1, trying for ten seconds while
// it is busy.
const reaperScript = `read -r v
[ "$v" = keep ] && exit 0
for i in 1 2 3 4 5 6 7 8 9 10; do umount "$1" 2>/dev/null && exit 0; sleep 1; done
exit 1`

// mountRoot mounts the overlay over tarball's unpacked tree (dir/lower
// links to it) at dir/root; the caller unmounts it with unmount, also
// after an error.
func mountRoot(ctx context.Context, tarball, dir string) (*rootFS, error) {
	// The overlay's option string separates its fields with ',' and lower
	// layers with ':'; a backslash escapes them.
	if strings.ContainsAny(dir, ",:\\\n") {
		return nil, fmt.Errorf("debtarget: directory %q has a ',', ':', '\\' or newline, which overlayfs options cannot carry: %w", dir, ErrRootFS)
	}
	r := &rootFS{dir: dir, root: filepath.Join(dir, "root")}
	upper, work := filepath.Join(dir, "upper"), filepath.Join(dir, "work")
	for _, d := range []string{upper, work, r.root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return r, fmt.Errorf("debtarget: %w", err)
		}
	}
	lower, err := unpacked(ctx, tarball)
	if err != nil {
		return r, err
	}
	if err := os.Symlink(lower, filepath.Join(dir, "lower")); err != nil {
		return r, fmt.Errorf("debtarget: %w", err)
	}
	if strings.ContainsAny(lower, ",:\\\n") {
		return r, fmt.Errorf("debtarget: directory %q has a ',', ':', '\\' or newline, which overlayfs options cannot carry: %w", lower, ErrRootFS)
	}
	// The upper layer's root carries the tree's own mode and owner (the
	// overlay's / shows the upper's).
	fi, err := os.Stat(lower)
	if err != nil {
		return r, fmt.Errorf("debtarget: %w", err)
	}
	if st, ok := fi.Sys().(*unix.Stat_t); ok {
		if err := os.Chown(upper, int(st.Uid), int(st.Gid)); err != nil {
			return r, fmt.Errorf("debtarget: %w", err)
		}
	}
	if err := os.Chmod(upper, fi.Mode().Perm()); err != nil {
		return r, fmt.Errorf("debtarget: %w", err)
	}
	// redirect_dir=on: a directory of the tree renames in place, as on a
	// host's own file system (without it rename(2) of one fails with EXDEV).
	// The source names the target's root, so its mounts can be found in
	// any mount namespace's mountinfo.
	opts := "lowerdir=" + lower + ",upperdir=" + upper + ",workdir=" + work + ",redirect_dir=on"
	r.reaper = exec.Command("sh", "-c", reaperScript, "sh", r.root)
	// Its own process group: a Ctrl-C of the test run must not end it
	// before this process.
	r.reaper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if r.reaperIn, err = r.reaper.StdinPipe(); err != nil {
		return r, fmt.Errorf("debtarget: %w", err)
	}
	if err := r.reaper.Start(); err != nil {
		r.reaper = nil
		return r, fmt.Errorf("debtarget: start the root's reaper: %w: %v", ErrRootFS, err)
	}
	if err := unix.Mount(r.root, r.root, "overlay", 0, opts); err != nil {
		return r, fmt.Errorf("debtarget: overlay at %s: %w: %v", r.root, ErrRootFS, err)
	}
	r.mounted = true
	return r, nil
}

// unmount unmounts the overlay (never lazily: a mount it cannot remove is
// left for Close's ErrMountsLeft check to report). The target's namespaces
// must be gone. A busy mount is tried again for a few seconds (a process
// this one started in the root, such as a chroot, may be ending).
func (r *rootFS) unmount() error {
	if r == nil {
		return nil
	}
	if r.reaper != nil {
		io.WriteString(r.reaperIn, "keep\n")
		r.reaperIn.Close()
		r.reaper.Wait()
		r.reaper = nil
	}
	if !r.mounted {
		return nil
	}
	var err error
	for i := 0; i < 50; i++ {
		if err = unix.Unmount(r.root, 0); err == nil || errors.Is(err, unix.EINVAL) {
			// EINVAL: not a mount point (any more).
			r.mounted = false
			return nil
		}
		if !errors.Is(err, unix.EBUSY) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("debtarget: unmount %s: %w", r.root, err)
}

// unpacked returns the directory holding tarball's tree, unpacking it the
// first time: beside the tarball, named after its size and modification
// time (a rebuilt tarball gets a tree of its own), shared read-only by the
// overlays of every target of every process. An overlay never writes its
// lower layer, so one unpacked tree serves them all, where each target
// unpacked (and removed) ≈370 MB of its own. The tree is unpacked into a
// temporary directory beside it and renamed into place, so a tree that
// exists is whole; two processes unpacking at once both finish, and the
// one that renames second removes its copy and uses the first.
func unpacked(ctx context.Context, tarball string) (string, error) {
	fi, err := os.Stat(tarball)
	if err != nil {
		return "", fmt.Errorf("debtarget: unpack %s: %w: %v", tarball, ErrBuild, err)
	}
	tree := fmt.Sprintf("%s.unpacked-%d-%d", tarball, fi.Size(), fi.ModTime().UnixNano())
	if st, err := os.Stat(tree); err == nil && st.IsDir() {
		return tree, nil
	}
	tmp, err := os.MkdirTemp(filepath.Dir(tarball), filepath.Base(tarball)+".unpacking-")
	if err != nil {
		return "", fmt.Errorf("debtarget: %w", err)
	}
	if out, err := exec.CommandContext(ctx, "tar", "--numeric-owner", "--xattrs", "-I", "zstd", "-xf", tarball, "-C", tmp).CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("debtarget: unpack %s: %w: %v: %s", tarball, ErrBuild, err, bytes.TrimSpace(out))
	}
	if err := os.Rename(tmp, tree); err != nil {
		// Another process renamed its tree first (EEXIST, ENOTEMPTY).
		os.RemoveAll(tmp)
		if st, serr := os.Stat(tree); serr != nil || !st.IsDir() {
			return "", fmt.Errorf("debtarget: unpack %s: %w", tarball, err)
		}
	}
	return tree, nil
}
