package lockout_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"

	nightshift "github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/internal/debtarget"
	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/lockout"
)

// lockoutCase is one command run by the worker's login, and whether it
// locks that login out (now or at sshd's next restart). The oracle of the
// test is not this column alone: after the canary, sshd is restarted the
// way the host would and a fresh login is tried; the real sshd decides,
// and the column must agree with it.
type lockoutCase struct {
	name string
	// cmd is run through the kept connection; {U} is the login's name.
	cmd string
	// locks says whether it locks out root and the unprivileged login.
	locksRoot, locksUser bool
	// reason is a substring the canary's first reason must carry.
	reason string
}

var lockoutCases = []lockoutCase{
	// The lockouts listed in issue 20, as root and (written for that
	// login where the issue names root) as the unprivileged login.
	{"chmod 0777 home", "chmod 0777 ~{U}", true, true, "StrictModes"},
	{"rm authorized_keys", "rm ~{U}/.ssh/authorized_keys", true, true, "AuthorizedKeysFile"},
	{"DenyUsers login + reload", `echo "DenyUsers {U}" >> /etc/ssh/sshd_config && systemctl reload ssh`, true, true, "DenyUsers {U}"},
	{"DenyUsers root + reload", `echo "DenyUsers root" >> /etc/ssh/sshd_config && systemctl reload ssh`, true, false, "DenyUsers root"},
	{"PermitRootLogin no + restart", `sed -i "s/^#*PermitRootLogin.*/PermitRootLogin no/" /etc/ssh/sshd_config && systemctl restart ssh`, true, false, "PermitRootLogin no"},
	{"PermitRootLogin no, no restart", `sed -i "s/^#*PermitRootLogin.*/PermitRootLogin no/" /etc/ssh/sshd_config`, true, false, "would lock out root's SSH login at the next sshd restart: PermitRootLogin no"},
	{"nft drop port 22", "nft add rule inet filter input tcp dport 22 drop", true, true, "fresh login failed"},
	{"touch /etc/nologin", "touch /etc/nologin", false, true, "nologin"},
	{"usermod -s nologin", "usermod -s /usr/sbin/nologin {U}", true, true, "/usr/sbin/nologin"},
	{"auth requisite pam_deny.so", `echo "auth requisite pam_deny.so" >> /etc/pam.d/sshd`, false, false, ""},
	{"account requisite pam_deny.so", `echo "account requisite pam_deny.so" >> /etc/pam.d/sshd`, true, true, "pam_deny"},
	{"chmod 000 sshd_config", "chmod 000 /etc/ssh/sshd_config", false, false, ""},
	// More that bite at the next restart or at once.
	{"usermod -e 1", "usermod -e 1 {U}", true, true, "expired"},
	{"Port 2222", `echo "Port 2222" >> /etc/ssh/sshd_config`, true, true, "port 22"},
	{"Match Address of the worker: PermitRootLogin no", "printf 'Match Address 127.0.0.1\\n    PermitRootLogin no\\n' >> /etc/ssh/sshd_config", true, false, "PermitRootLogin no"},
	{"AuthenticationMethods with password", `echo "AuthenticationMethods publickey,password" >> /etc/ssh/sshd_config`, true, true, "AuthenticationMethods"},
	{"pam_access deny", `echo "-:{U}:ALL" >> /etc/security/access.conf && echo "account required pam_access.so" >> /etc/pam.d/sshd`, true, true, "pam_access"},
	{"bad sshd_config + restart", `echo "NoSuchOption yes" >> /etc/ssh/sshd_config`, true, true, "sshd -t"},
	// No false positives: legitimate changes that keep the login working.
	{"ClientAliveInterval", `echo "ClientAliveInterval 300" >> /etc/ssh/sshd_config && systemctl reload ssh`, false, false, ""},
	{"MaxAuthTries", `sed -i "s/^#*MaxAuthTries.*/MaxAuthTries 3/" /etc/ssh/sshd_config && systemctl restart ssh`, false, false, ""},
	{"Match block", "printf 'Match Address 10.0.0.0/8\\n    PasswordAuthentication no\\n    PermitRootLogin no\\n' >> /etc/ssh/sshd_config && systemctl restart ssh", false, false, ""},
	{"PermitRootLogin prohibit-password", `sed -i "s/^#*PermitRootLogin.*/PermitRootLogin prohibit-password/" /etc/ssh/sshd_config && systemctl restart ssh`, false, false, ""},
	{"chmod 0700 home", "chmod 0700 ~{U}", false, false, ""},
	{"usermod -L (key login stays)", "usermod -L {U}", false, false, ""},
	{"DenyUsers someone else", `echo "DenyUsers mallory" >> /etc/ssh/sshd_config && systemctl reload ssh`, false, false, ""},
}

func publicKey(t testing.TB, tg *debtarget.SystemTarget) ssh.PublicKey {
	t.Helper()
	b, err := os.ReadFile(tg.IdentityFile + ".pub")
	require.NoError(t, err)
	k, _, _, _, err := ssh.ParseAuthorizedKey(b)
	require.NoError(t, err)
	return k
}

func guard(t testing.TB, tg *debtarget.SystemTarget, user string, deadline time.Duration) *lockout.Guard {
	t.Helper()
	login := tg.SSHConfig(user)
	login.DialTimeout = 4 * time.Second
	// As a worker configured with how the host sees it: the forwarder
	// connects from 127.0.0.1 to port 22 inside the target.
	g, err := lockout.New(lockout.Config{User: user, Key: publicKey(t, tg), Deadline: deadline, Addr: "127.0.0.1", LocalPort: 22,
		FreshLogin: lockout.SSHLogin(login), LoginTimeout: 6 * time.Second})
	require.NoError(t, err)
	return g
}

// protected are the trees whose every byte, mode and owner must come back.
var protected = []string{"etc", "root", "home/" + debtarget.LoginUser}

func TestLockoutsOnDebian(t *testing.T) {
	for _, user := range []string{"root", debtarget.LoginUser} {
		t.Run(user, func(t *testing.T) {
			tg := startSystem(t)
			if !tg.HasNft {
				lookNft(t)
			}
			ctx := context.Background()
			// The host's firewall as Debian's nftables.conf sets it up.
			_, err := tg.Exec(ctx, "nft add table inet filter && nft add chain inet filter input '{ type filter hook input priority 0; policy accept; }'")
			require.NoError(t, err)
			for _, c := range lockoutCases {
				t.Run(c.name, func(t *testing.T) { runLockoutCase(t, tg, user, c) })
			}
		})
	}
}

func lookNft(t testing.TB) {
	t.Helper()
	if _, err := lookPath("nft"); err != nil {
		testenv.Unavailable(t, "nft (nftables) not installed: the firewall lockout needs it")
	}
}

func runLockoutCase(t *testing.T, tg *debtarget.SystemTarget, user string, c lockoutCase) {
	ctx := context.Background()
	locks := c.locksRoot
	if user != "root" {
		locks = c.locksUser
	}
	cmd := strings.ReplaceAll(c.cmd, "{U}", user)
	// Longer than the canary's 10 s bound in the firewall case, so the
	// switch fires only after the oracle (restart and a fresh login).
	g := guard(t, tg, user, 20*time.Second)
	kept := client(t, tg, user)
	require.NoError(t, freshLogin(ctx, tg, user), "before the case")
	before := manifest(t, tg.Root, protected...)

	snap, err := g.Snapshot(ctx, kept)
	require.NoError(t, err)
	sw, err := g.Arm(ctx, kept, lockout.ArmOptions{Snapshot: snap})
	require.NoError(t, err)
	armed := time.Now()
	t.Cleanup(func() {
		// Whatever failed, the next case must be able to arm.
		if err := g.Disarm(ctx, client(t, tg, user), sw); err != nil && !errors.Is(err, lockout.ErrFired) {
			t.Errorf("disarm at the end of the case: %v", err)
		}
	})

	cctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	ex, err := kept.Run(cctx, cmd)
	cancel()
	t.Logf("%s: exit %d err %v %s", cmd, ex.ExitCode, err, strings.TrimSpace(ex.Stderr))

	cctx, cancel = context.WithTimeout(ctx, 10*time.Second)
	res, cerr := g.Check(cctx, kept)
	cancel()
	canaryLocked := cerr != nil || !res.OK()
	t.Logf("canary: locked=%v err=%v lockouts=%q warnings=%q skipped=%q took %v (login %v, check %v)",
		canaryLocked, cerr, res.Lockouts, res.Warnings, res.Skipped, res.Took, res.LoginTook, res.CheckTook)

	// The oracle: restart sshd as the host would, then a fresh login.
	out, rerr := tg.Exec(ctx, "/usr/local/sbin/systemctl restart ssh")
	truthErr := freshLogin(ctx, tg, user)
	t.Logf("after a restart of sshd (%v %s): fresh login error %v", rerr, strings.TrimSpace(out), truthErr)
	assert.Equal(t, locks, truthErr != nil, "the real sshd disagrees with the case table")
	assert.Equal(t, truthErr != nil, canaryLocked, "the canary disagrees with the real sshd")
	if locks && c.reason != "" && cerr == nil {
		assert.Contains(t, res.Reason(), strings.ReplaceAll(c.reason, "{U}", user))
	}

	if canaryLocked {
		// Restore through the connection still open, or let the switch.
		rctx, cancel := context.WithTimeout(ctx, 8*time.Second)
		rerr := g.Restore(rctx, kept, snap)
		cancel()
		if rerr != nil {
			t.Logf("restore through the kept connection failed (%v); waiting for the switch", rerr)
			waitLogin(t, tg, user, armed.Add(20*time.Second+15*time.Second))
		}
	} else {
		// A legitimate change stays: undo it outside the code under test
		// so the next case starts from the same state.
		require.NoError(t, g.Disarm(ctx, kept, sw))
		require.NoError(t, g.Restore(ctx, kept, snap))
	}
	waitLogin(t, tg, user, time.Now().Add(5*time.Second)) // after the restore (sshd restarted)
	if canaryLocked {
		kept2 := client(t, tg, user)
		if err := g.Disarm(ctx, kept2, sw); err != nil {
			require.ErrorIs(t, err, lockout.ErrFired)
			// The switch fired: let its restore finish.
			waitState(t, g, kept2, sw)
		}
	}
	assert.Empty(t, diff(before, manifest(t, tg.Root, protected...)), "protected trees after the restore")
}

// waitLogin polls fresh logins until one works or the deadline passes.
func waitLogin(t testing.TB, tg *debtarget.SystemTarget, user string, deadline time.Time) time.Duration {
	t.Helper()
	took, err := pollLogin(tg, user, deadline)
	if err != nil {
		t.Fatalf("no fresh login as %s by the deadline: %v", user, err)
	}
	return took
}

func pollLogin(tg *debtarget.SystemTarget, user string, deadline time.Time) (time.Duration, error) {
	start := time.Now()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := freshLogin(ctx, tg, user)
		cancel()
		if err == nil {
			return time.Since(start), nil
		}
		if time.Now().After(deadline) {
			return 0, err
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// waitState waits until a fired switch has finished its restore.
func waitState(t testing.TB, g *lockout.Guard, r nightshift.Runner, sw *lockout.Switch) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); ; {
		st, log, err := g.State(context.Background(), r, sw)
		require.NoError(t, err)
		if st == lockout.StateRestored {
			assert.NotContains(t, log, "FAIL", "the switch's restore log")
			return
		}
		require.Equal(t, lockout.StateFired, st)
		if time.Now().After(end) {
			t.Fatalf("the switch did not finish its restore: %s", log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
