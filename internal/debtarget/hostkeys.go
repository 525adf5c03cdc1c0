package debtarget

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// HostKeys is a set of the host keys a Debian install has in /etc/ssh
// (ssh-keygen -A: RSA, ECDSA and ed25519), made once by NewHostKeys and
// given to any number of targets through Options.HostKeys, so that each
// start does not pay for a new RSA key. Targets that share a HostKeys
// have the same host keys, as clones of one image do. It is read-only
// after NewHostKeys and safe for concurrent use.
type HostKeys struct {
	files map[string][]byte // base name under /etc/ssh → contents
}

// NewHostKeys generates a set of host keys with ssh-keygen -A in a
// temporary directory, which it removes.
func NewHostKeys(ctx context.Context) (*HostKeys, error) {
	dir, err := os.MkdirTemp("", "nightshift-hostkeys-")
	if err != nil {
		return nil, fmt.Errorf("debtarget: host keys: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Join(dir, "etc", "ssh"), 0o755); err != nil {
		return nil, fmt.Errorf("debtarget: host keys: %w", err)
	}
	if out, err := exec.CommandContext(ctx, "ssh-keygen", "-A", "-f", dir).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("debtarget: ssh-keygen -A: %w: %s", err, bytes.TrimSpace(out))
	}
	names, err := filepath.Glob(filepath.Join(dir, "etc", "ssh", "ssh_host_*"))
	if err != nil || len(names) == 0 {
		return nil, fmt.Errorf("debtarget: ssh-keygen -A made no host keys in %s: %w", dir, ErrBuild)
	}
	hk := &HostKeys{files: map[string][]byte{}}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("debtarget: host keys: %w", err)
		}
		hk.files[filepath.Base(n)] = b
	}
	return hk, nil
}

// hostKeys gives root its /etc/ssh host keys: hk's when it is not nil,
// else new ones (ssh-keygen -A in the root).
func hostKeys(ctx context.Context, root string, hk *HostKeys) error {
	if hk == nil {
		if out, err := exec.CommandContext(ctx, "chroot", root, "ssh-keygen", "-A").CombinedOutput(); err != nil {
			return fmt.Errorf("debtarget: ssh-keygen -A in the root: %w: %s", err, bytes.TrimSpace(out))
		}
		return nil
	}
	for name, b := range hk.files {
		mode := os.FileMode(0o600)
		if filepath.Ext(name) == ".pub" {
			mode = 0o644
		}
		if err := os.WriteFile(filepath.Join(root, "etc", "ssh", name), b, mode); err != nil {
			return fmt.Errorf("debtarget: host keys: %w", err)
		}
	}
	return nil
}
