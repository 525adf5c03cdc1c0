package lockout_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/lockout"
)

// TestProtectOnDebian runs the whole flow a worker runs around one commit:
// a lockout undone through the kept connection, one undone by the switch
// because the commit cut that connection, and a legitimate change kept.
func TestProtectOnDebian(t *testing.T) {
	tg := startSystem(t)
	ctx := context.Background()
	if !tg.HasNft {
		lookNft(t)
	}
	_, err := tg.Exec(ctx, "nft add table inet filter && nft add chain inet filter input '{ type filter hook input priority 0; policy accept; }'")
	require.NoError(t, err)
	cases := []struct {
		name, cmd  string
		rolledBack bool
		fired      bool // the switch fired (the commit cut the kept connection)
		reason     string
	}{
		{"PermitRootLogin no", `sed -i "s/^#*PermitRootLogin.*/PermitRootLogin no/" /etc/ssh/sshd_config`, true, false,
			"would lock out root's SSH login at the next sshd restart: PermitRootLogin no"},
		{"nft drop cuts the kept connection", "nft add rule inet filter input tcp dport 22 drop", true, true, "fresh login failed"},
		{"ClientAliveInterval kept", `echo "ClientAliveInterval 300" >> /etc/ssh/sshd_config && systemctl reload ssh`, false, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := manifest(t, tg.Root, protected...)
			g := guard(t, tg, "root", 8*time.Second)
			kept := client(t, tg, "root")
			out, err := g.Protect(ctx, kept, lockout.ArmOptions{}, 15*time.Second, func(ctx context.Context) error {
				cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
				defer cancel()
				_, err := kept.Run(cctx, c.cmd)
				return err
			})
			require.NoError(t, err)
			t.Logf("outcome: rolled back %v by kept %v: %q; after: %+v", out.RolledBack, out.ByKeptConnection, out.Reason, out.After)
			assert.Equal(t, c.rolledBack, out.RolledBack)
			assert.Equal(t, c.fired, out.SwitchFired)
			if !c.fired {
				assert.Equal(t, c.rolledBack, out.ByKeptConnection)
			}
			assert.Contains(t, out.Reason, c.reason)
			require.NoError(t, freshLogin(ctx, tg, "root"))
			if c.rolledBack {
				require.NotNil(t, out.After)
				assert.True(t, out.After.OK(), "the canary after the undo: %q", out.After.Lockouts)
				assert.Empty(t, diff(before, manifest(t, tg.Root, protected...)))
				return
			}
			cfg, err := os.ReadFile(filepath.Join(tg.Root, "etc/ssh/sshd_config"))
			require.NoError(t, err)
			assert.Contains(t, string(cfg), "ClientAliveInterval 300", "a change that keeps the login working stays")
		})
	}
}
