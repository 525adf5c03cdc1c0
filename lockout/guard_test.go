package lockout_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	nightshift "github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/lockout"
	"github.com/nightshift-dev/nightshift/sshexec"
)

// runnerFunc is a Runner whose answers the test writes: the host side is
// proven on the Debian target; these tests cover what the Go side makes
// of each answer.
type runnerFunc func(ctx context.Context, command string) (nightshift.Exec, error)

func (f runnerFunc) Run(ctx context.Context, command string) (nightshift.Exec, error) {
	return f(ctx, command)
}

func answer(stdout string, exit int) runnerFunc {
	return func(context.Context, string) (nightshift.Exec, error) {
		return nightshift.Exec{Stdout: stdout, ExitCode: exit}, nil
	}
}

func TestNewConfig(t *testing.T) {
	cases := []struct {
		name string
		cfg  lockout.Config
		err  string
	}{
		{"no user", lockout.Config{}, "User is empty"},
		{"user with a space", lockout.Config{User: "a b"}, "not a plain login name"},
		{"user with a quote", lockout.Config{User: "a'b"}, "not a plain login name"},
		{"relative dir", lockout.Config{User: "root", Dir: "var/lib"}, "not an absolute path"},
		{"root dir", lockout.Config{User: "root", Dir: "/"}, "not an absolute path"},
		{"dir with ..", lockout.Config{User: "root", Dir: "/var/../etc"}, "not an absolute path"},
		{"dir with a space", lockout.Config{User: "root", Dir: "/var/lib/a b"}, "not an absolute path"},
		{"deadline too short", lockout.Config{User: "root", Deadline: time.Millisecond}, "below 100ms"},
		{"addr with a comma", lockout.Config{User: "root", Addr: "1.2.3.4,user=x"}, "separator"},
		{"port out of range", lockout.Config{User: "root", LocalPort: 70000}, "out of range"},
		{"defaults", lockout.Config{User: "ops"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := lockout.New(c.cfg)
			if c.err != "" {
				require.ErrorIs(t, err, lockout.ErrConfig)
				assert.Contains(t, err.Error(), c.err)
				return
			}
			require.NoError(t, err)
			got := g.Config()
			assert.Equal(t, lockout.DefaultDir, got.Dir)
			assert.Equal(t, lockout.DefaultDeadline, got.Deadline)
			assert.Equal(t, lockout.DefaultLoginTimeout, got.LoginTimeout)
			assert.Equal(t, lockout.DefaultLoginRetry, got.LoginRetry)
		})
	}
}

func TestCheckAnswers(t *testing.T) {
	cases := []struct {
		name     string
		runner   runnerFunc
		lockouts []string
		warnings []string
		err      error
		errText  string
	}{
		{"ok", answer("E\n", 0), nil, nil, nil, ""},
		{"lockouts and a warning", answer("L\twould lock out root's SSH login at the next sshd restart: PermitRootLogin no\nW\tsomething\nS\tskipped\nE\n", 0),
			[]string{"would lock out root's SSH login at the next sshd restart: PermitRootLogin no"}, []string{"something"}, nil, ""},
		{"cut before the end marker", answer("L\tx\n", 0), nil, nil, nil, "incomplete"},
		{"unknown line", answer("garbage\nE\n", 0), nil, nil, nil, "unexpected line"},
		{"script failed", answer("", 2), nil, nil, lockout.ErrHost, "exit 2"},
		{"connection lost", func(context.Context, string) (nightshift.Exec, error) {
			return nightshift.Exec{}, errors.New("connection lost")
		}, nil, nil, nil, "connection lost"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := lockout.New(lockout.Config{User: "root"})
			require.NoError(t, err)
			res, err := g.Check(context.Background(), c.runner)
			if c.errText != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.errText)
				if c.err != nil {
					assert.ErrorIs(t, err, c.err)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.lockouts, res.Lockouts)
			assert.Equal(t, c.warnings, res.Warnings)
			assert.Equal(t, len(c.lockouts) == 0, res.OK())
			assert.Contains(t, res.Skipped, "fresh login: no LoginFunc configured")
		})
	}
}

// TestCheckFreshLogin: a failed fresh login is a lockout named after the
// latent check's reasons; a refused connection is tried again within
// LoginRetry, a refused authentication is not.
func TestCheckFreshLogin(t *testing.T) {
	dialErr := &sshexec.OpError{Host: "h", Op: sshexec.OpDial, Err: errors.New("connection refused")}
	authErr := &sshexec.OpError{Host: "h", Op: sshexec.OpAuth, Err: errors.New("no supported methods remain")}
	cases := []struct {
		name    string
		answers []error // the LoginFunc's errors, in turn; nil: it works
		ok      bool
		calls   int32
		reason  string
	}{
		{"works", []error{nil}, true, 1, ""},
		{"refused then works", []error{dialErr, dialErr, nil}, true, 3, ""},
		{"auth refused", []error{authErr, nil}, false, 1, "a fresh login failed: sshexec: auth h: no supported methods remain"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			login := func(ctx context.Context, command string) (nightshift.Exec, error) {
				n := calls.Add(1)
				if err := c.answers[min(int(n), len(c.answers))-1]; err != nil {
					return nightshift.Exec{}, err
				}
				return nightshift.Exec{Stdout: lockout.DefaultCommandOutput + "\n"}, nil
			}
			g, err := lockout.New(lockout.Config{User: "root", FreshLogin: login, LoginRetry: 5 * time.Second})
			require.NoError(t, err)
			res, err := g.Check(context.Background(), answer("L\tlatent reason\nE\n", 0))
			require.NoError(t, err)
			assert.Equal(t, c.calls, calls.Load())
			assert.True(t, res.FreshLogin)
			assert.Equal(t, "latent reason", res.Reason(), "the latent check's reason comes first")
			if c.ok {
				assert.Equal(t, []string{"latent reason"}, res.Lockouts)
				return
			}
			require.Len(t, res.Lockouts, 2)
			assert.Contains(t, res.Lockouts[1], c.reason)
		})
	}
}

func TestArmAndDisarmAnswers(t *testing.T) {
	g, err := lockout.New(lockout.Config{User: "root"})
	require.NoError(t, err)
	ctx := context.Background()
	sw, err := g.Arm(ctx, answer("ARMED detached\nDIR /var/lib/nightshift/lockout/switch/x\n", 0), lockout.ArmOptions{ID: "x"})
	require.NoError(t, err)
	assert.Equal(t, lockout.TriggerDetached, sw.Trigger)
	assert.Equal(t, "/var/lib/nightshift/lockout/switch/x", sw.Dir)

	_, err = g.Arm(ctx, answer("BUSY other\nDIR d\n", 0), lockout.ArmOptions{})
	var armed *lockout.ArmedError
	require.ErrorAs(t, err, &armed)
	assert.Equal(t, "other", armed.ID)
	_, err = g.Arm(ctx, answer("EXISTS\n", 0), lockout.ArmOptions{ID: "x"})
	require.ErrorIs(t, err, lockout.ErrArmed)
	_, err = g.Arm(ctx, answer("something else\n", 0), lockout.ArmOptions{})
	require.ErrorIs(t, err, lockout.ErrHost)
	_, err = g.Arm(ctx, answer("", 0), lockout.ArmOptions{ID: "bad id"})
	require.ErrorIs(t, err, lockout.ErrConfig)
	_, err = g.Arm(ctx, answer("", 0), lockout.ArmOptions{Deadline: time.Millisecond})
	require.ErrorIs(t, err, lockout.ErrConfig)

	for _, c := range []struct {
		out string
		err error
	}{
		{"DISARMED\n", nil},
		{"FIRED restored\n", lockout.ErrFired},
		{"FIRED fired\n", lockout.ErrFired},
		{"UNKNOWN\n", lockout.ErrUnknownSwitch},
		{"what\n", lockout.ErrHost},
	} {
		err := g.Disarm(ctx, answer(c.out, 0), sw)
		if c.err == nil {
			assert.NoError(t, err, c.out)
		} else {
			assert.ErrorIs(t, err, c.err, c.out)
		}
	}
}

func TestRequiresAccessChange(t *testing.T) {
	cases := []struct {
		rule, user string
		needs      bool
		change     string
	}{
		{"sshd_disable_root_login", "root", true, "PermitRootLogin no"},
		{"xccdf_org.ssgproject.content_rule_sshd_disable_root_login", "root", true, "PermitRootLogin no"},
		{"sshd_disable_root_login", "ops", false, ""},
		{"sshd_disable_pubkey_auth", "ops", true, "PubkeyAuthentication no"},
		{"sshd_set_idle_timeout", "root", false, ""},
		{"", "root", false, ""},
	}
	for _, c := range cases {
		t.Run(c.rule+"/"+c.user, func(t *testing.T) {
			ch, ok := lockout.RequiresAccessChange(c.rule, c.user)
			assert.Equal(t, c.needs, ok)
			if !c.needs {
				return
			}
			assert.Equal(t, c.rule, ch.Rule)
			assert.True(t, strings.HasPrefix(ch.Change, c.change), ch.Change)
			assert.NotEmpty(t, ch.Reason)
		})
	}
}

// TestProtectLoginFailsBefore: when the fresh login already fails before
// the commit, Protect neither arms a switch nor commits, and says the host
// was locked out before this change (ErrLockedOut), not that the change
// locked it out. The host side is proven on the Debian target
// (sandbox's TestLatentLockoutNotBlamedOnLaterCommits).
func TestProtectLoginFailsBefore(t *testing.T) {
	authErr := &sshexec.OpError{Host: "h", Op: sshexec.OpAuth, Err: errors.New("no supported methods remain")}
	login := func(context.Context, string) (nightshift.Exec, error) { return nightshift.Exec{}, authErr }
	g, err := lockout.New(lockout.Config{User: "root", FreshLogin: login})
	require.NoError(t, err)
	var commands []string
	r := runnerFunc(func(_ context.Context, command string) (nightshift.Exec, error) {
		commands = append(commands, command)
		return nightshift.Exec{Stdout: "E\n"}, nil // the latent check: nothing found
	})
	committed := false
	out, err := g.Protect(context.Background(), r, lockout.ArmOptions{}, time.Second, func(context.Context) error {
		committed = true
		return nil
	})
	require.ErrorIs(t, err, lockout.ErrLockedOut)
	var le *lockout.LockedOutError
	require.ErrorAs(t, err, &le)
	assert.True(t, le.Before)
	assert.Contains(t, err.Error(), "root's SSH login already failed before this command")
	assert.Contains(t, err.Error(), "no supported methods remain")
	assert.False(t, committed, "nothing may be committed on a host whose login already fails")
	assert.False(t, out.RolledBack, "the change is not blamed")
	assert.Len(t, commands, 1, "only the latent check ran on the host (no switch armed)")
}
