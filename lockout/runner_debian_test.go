package lockout_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/lockout"
)

// TestRunnerWithoutSandbox: on a host where no sandbox runs (--sandbox
// auto), each command runs under the net: a lockout is undone with the
// canary's reason in the Exec's evidence (verdict rolled_back), /etc/ssh and
// ~/.ssh come back byte for byte and a fresh login works; a legitimate
// change stays.
func TestRunnerWithoutSandbox(t *testing.T) {
	tg := startSystem(t)
	ctx := context.Background()
	g := guard(t, tg, "root", 8*time.Second)
	r := lockout.NewRunner(g, client(t, tg, "root"), 15*time.Second)

	before := manifest(t, tg.Root, protected...)
	ex, err := r.Run(ctx, `echo "DenyUsers root" >> /etc/ssh/sshd_config && systemctl reload ssh`)
	require.NoError(t, err)
	require.NotNil(t, ex.Evidence, "the lockout was not rolled back")
	require.Equal(t, nightshift.VerdictRolledBack, ex.Evidence.Verdict)
	require.True(t, strings.Contains(strings.Join(ex.Evidence.Reasons, " "), "DenyUsers"), "reasons %q", ex.Evidence.Reasons)
	require.Equal(t, nightshift.ActionBlocked, nightshift.ActionOf(ex, nil))
	require.NoError(t, freshLogin(ctx, tg, "root"))
	require.Empty(t, diff(before, manifest(t, tg.Root, protected...)))

	ex, err = r.Run(ctx, `echo "ClientAliveInterval 300" >> /etc/ssh/sshd_config && systemctl reload ssh`)
	require.NoError(t, err)
	require.Nil(t, ex.Evidence, "a legitimate change was rolled back: %+v", ex.Evidence)
	require.Equal(t, 0, ex.ExitCode)
	require.NoError(t, freshLogin(ctx, tg, "root"))
}
