package lockout_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/internal/debtarget"
	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/sshexec"
)

// startSystem starts a Debian 12 target whose worker logs in through the
// root's own sshd (debtarget.StartSystem), or ends t when it cannot.
func startSystem(t testing.TB) *debtarget.SystemTarget {
	t.Helper()
	testenv.NeedRoot(t, "a Debian 12 target in namespaces")
	for _, tool := range []string{"unshare", "nsenter", "setpriv", "zstd", "ssh-keygen", "ip"} {
		if _, err := lookPath(tool); err != nil {
			testenv.Unavailable(t, "%s not installed", tool)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	tg, err := debtarget.StartSystem(ctx, debtarget.Options{HostKeys: hostKeys(t)})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, tg.Close()) })
	return tg
}

// One set of host keys (debtarget.NewHostKeys) for every Debian target
// this test binary starts: an RSA host key costs more than half a second
// of CPU per start, and these tests prove nothing about the keys.
var (
	hostKeysOnce sync.Once
	hostKeysSet  *debtarget.HostKeys
	hostKeysErr  error
)

func hostKeys(t testing.TB) *debtarget.HostKeys {
	t.Helper()
	hostKeysOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		hostKeysSet, hostKeysErr = debtarget.NewHostKeys(ctx)
	})
	if hostKeysErr != nil {
		t.Fatalf("host keys for the Debian targets: %v", hostKeysErr)
	}
	return hostKeysSet
}

func lookPath(name string) (string, error) {
	for _, dir := range []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found", name)
}

// client is a kept connection to the target as user (root, or the
// unprivileged login with sudo).
func client(t testing.TB, tg *debtarget.SystemTarget, user string) *sshexec.Client {
	t.Helper()
	cfg := tg.SSHConfig(user)
	cfg.Sudo = user != "root"
	cfg.DialTimeout = 5 * time.Second
	cfg.CommandTimeout = 20 * time.Second
	cfg.KillGrace = 500 * time.Millisecond
	c, err := sshexec.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// freshLogin reports whether a new login as user runs a command (the
// oracle: the real sshd decides).
func freshLogin(ctx context.Context, tg *debtarget.SystemTarget, user string) error {
	cfg := tg.SSHConfig(user)
	cfg.DialTimeout = 4 * time.Second
	cfg.Redial.MaxTries = 1
	c, err := sshexec.New(cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	ex, err := c.Run(ctx, "id -un")
	if err != nil {
		return err
	}
	if ex.ExitCode != 0 || strings.TrimSpace(ex.Stdout) != user {
		return fmt.Errorf("id -un: exit %d, %q %q", ex.ExitCode, ex.Stdout, ex.Stderr)
	}
	return nil
}

// manifest lists every entry under the given paths of the target's root
// (type, mode, owner, content hash or link target), read from this
// machine, so it does not depend on the code under test or on SSH.
func manifest(t testing.TB, root string, paths ...string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, p := range paths {
		base := filepath.Join(root, p)
		err := filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) && path == base {
					m[p] = "absent"
					return nil
				}
				return err
			}
			fi, err := os.Lstat(path)
			if err != nil {
				return err
			}
			st := fi.Sys().(*syscall.Stat_t)
			e := fmt.Sprintf("%v %o %d:%d", fi.Mode().Type(), fi.Mode().Perm()|fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky), st.Uid, st.Gid)
			switch {
			case fi.Mode().IsRegular():
				b, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				sum := sha256.Sum256(b)
				e += " " + hex.EncodeToString(sum[:])
			case fi.Mode()&fs.ModeSymlink != 0:
				l, _ := os.Readlink(path)
				e += " -> " + l
			}
			rel, _ := filepath.Rel(root, path)
			m["/"+rel] = e
			return nil
		})
		require.NoError(t, err)
	}
	return m
}

// diff lists the entries that differ between two manifests.
func diff(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, fmt.Sprintf("%s: %q -> %q", k, v, b[k]))
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			out = append(out, fmt.Sprintf("%s: new %q", k, v))
		}
	}
	sort.Strings(out)
	return out
}
