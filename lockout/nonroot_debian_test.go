package lockout_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/internal/debtarget"
	"github.com/nightshift-dev/nightshift/lockout"
	"github.com/nightshift-dev/nightshift/sshexec"
)

// TestLockoutsWithoutRoot: a login that cannot become root (where the
// sandbox cannot run) still has the net over its own home directory and
// ~/.ssh: the snapshot and the switch live under
// ~/.local/state/nightshift/lockout, the canary's fresh login and its
// home checks run, and the checks that need root say they were skipped.
func TestLockoutsWithoutRoot(t *testing.T) {
	tg := startSystem(t)
	ctx := context.Background()
	user := debtarget.LoginUser
	cfg := tg.SSHConfig(user) // no sudo
	cfg.DialTimeout = 5 * time.Second
	kept, err := sshexec.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { kept.Close() })
	cases := []struct {
		name, cmd string
		locks     bool
		reason    string
	}{
		{"chmod 0777 ~", "chmod 0777 ~", true, "StrictModes"},
		{"chmod g+w ~/.ssh", "chmod g+w ~/.ssh", true, "StrictModes"},
		{"rm ~/.ssh/authorized_keys", "rm ~/.ssh/authorized_keys", true, "AuthorizedKeysFile"},
		{"chmod 0750 ~", "chmod 0750 ~", false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := guard(t, tg, user, 10*time.Second)
			before := manifest(t, tg.Root, "home/"+user+"/.ssh")
			home := manifest(t, tg.Root, "home/"+user)["/home/"+user]
			out, err := g.Protect(ctx, kept, lockout.ArmOptions{}, 15*time.Second, func(ctx context.Context) error {
				_, err := kept.Run(ctx, c.cmd)
				return err
			})
			require.NoError(t, err)
			t.Logf("%+v", out)
			assert.Equal(t, c.locks, out.RolledBack)
			assert.Contains(t, out.Reason, c.reason)
			assert.Contains(t, out.Canary.Skipped, "not root: sshd configuration, shadow and PAM checks need root (give the login sudo)")
			require.NoError(t, freshLogin(ctx, tg, user))
			if c.locks {
				assert.Empty(t, diff(before, manifest(t, tg.Root, "home/"+user+"/.ssh")))
				assert.Equal(t, home, manifest(t, tg.Root, "home/"+user)["/home/"+user], "the home directory's mode and owner")
				return
			}
			// Put the legitimate change back for the next case.
			_, err = kept.Run(ctx, "chmod 0700 ~")
			require.NoError(t, err)
		})
	}
	ex, err := kept.Run(ctx, "ls ~/.local/state/nightshift/lockout/switch | wc -l")
	require.NoError(t, err)
	assert.Equal(t, "4\n", ex.Stdout, "the switches live under the login's home")
}
