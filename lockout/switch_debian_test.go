package lockout_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/internal/debtarget"
	"github.com/nightshift-dev/nightshift/lockout"
	"github.com/nightshift-dev/nightshift/sshexec"
)

// helperEnv carries the worker helper's instructions (see
// TestHelperWorker).
const helperEnv = "NIGHTSHIFT_LOCKOUT_HELPER"

// TestHelperWorker is not a test: it is the worker process that
// TestSwitchSurvivesSIGKILL starts and kills. It arms a switch, commits a
// lockout through its kept connection, says so and waits to be killed.
func TestHelperWorker(t *testing.T) {
	spec := os.Getenv(helperEnv)
	if spec == "" {
		return
	}
	f := strings.Split(spec, "\x1f") // port, identity, known_hosts, user, deadline ms, command
	port, _ := strconv.Atoi(f[0])
	ms, _ := strconv.Atoi(f[4])
	cfg := sshexec.Config{Host: "127.0.0.1", Port: port, User: f[3], NoAgent: true, IdentityFiles: []string{f[1]},
		KnownHostsFiles: []string{f[2]}, Sudo: f[3] != "root"}
	c, err := sshexec.New(cfg)
	require.NoError(t, err)
	g, err := lockout.New(lockout.Config{User: f[3], Deadline: time.Duration(ms) * time.Millisecond})
	require.NoError(t, err)
	ctx := context.Background()
	sw, err := g.Arm(ctx, c, lockout.ArmOptions{Restore: "echo restore-command-ran > /var/tmp/nightshift-restore-" + f[3]})
	require.NoError(t, err)
	ex, err := c.Run(ctx, f[5])
	require.NoError(t, err)
	require.Equal(t, 0, ex.ExitCode, ex.Stderr)
	fmt.Printf("APPLIED %s\n", sw.ID)
	time.Sleep(10 * time.Minute)
}

// TestSwitchSurvivesSIGKILL: a worker process arms the switch, commits a
// lockout and is killed with SIGKILL (its connection drops with it, never
// disarmed). The switch on the host restores access by itself.
func TestSwitchSurvivesSIGKILL(t *testing.T) {
	for _, user := range []string{"root", debtarget.LoginUser} {
		t.Run(user, func(t *testing.T) {
			tg := startSystem(t)
			ctx := context.Background()
			before := manifest(t, tg.Root, protected...)
			const deadline = 15 * time.Second
			lock := fmt.Sprintf(`echo "DenyUsers %s" >> /etc/ssh/sshd_config && systemctl reload ssh`, user)
			spec := strings.Join([]string{strconv.Itoa(tg.Port), tg.IdentityFile, tg.KnownHostsFile, user,
				strconv.Itoa(int(deadline.Milliseconds())), lock}, "\x1f")
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWorker$", "-test.count=1")
			cmd.Env = append(os.Environ(), helperEnv+"="+spec)
			out, err := cmd.StdoutPipe()
			require.NoError(t, err)
			cmd.Stderr = os.Stderr
			require.NoError(t, cmd.Start())
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			id := ""
			var said []string
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if s, ok := strings.CutPrefix(sc.Text(), "APPLIED "); ok {
					id = s
					break
				}
				said = append(said, sc.Text())
			}
			require.NotEmpty(t, id, "the worker helper did not apply the lockout: %s", strings.Join(said, "\n"))
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			killed := time.Now()
			cmd.Wait()
			require.Error(t, freshLogin(ctx, tg, user), "the lockout is in place after the kill")

			took, err := pollLogin(tg, user, killed.Add(deadline+20*time.Second))
			if err != nil {
				out, _ := tg.Exec(ctx, "cd /var/lib/nightshift/lockout/switch/"+id+" && cat state fire.log; cat /run/sshd.pid; grep ' 0A ' /proc/net/tcp /proc/net/tcp6")
				t.Fatalf("no fresh login as %s by the deadline: %v; the switch on the host: %s", user, err, out)
			}
			t.Logf("a fresh login as %s works again %v after the SIGKILL (deadline %v from arming)", user, took, deadline)
			g, err := lockout.New(lockout.Config{User: user})
			require.NoError(t, err)
			kept := client(t, tg, user)
			sw := &lockout.Switch{ID: id}
			// The restore may still be finishing (sshd is back first).
			var st lockout.State
			var log string
			for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
				st, log, err = g.State(ctx, kept, sw)
				require.NoError(t, err)
				if st == lockout.StateRestored {
					break
				}
			}
			require.Equal(t, lockout.StateRestored, st, log)
			assert.NotContains(t, log, "FAIL")
			require.ErrorIs(t, g.Disarm(ctx, kept, sw), lockout.ErrFired)
			require.ErrorIs(t, g.Disarm(ctx, kept, sw), lockout.ErrFired, "Disarm of a fired switch says so every time")
			b, err := os.ReadFile(filepath.Join(tg.Root, "var/tmp/nightshift-restore-"+user))
			require.NoError(t, err, "the caller's restore command ran")
			assert.Equal(t, "restore-command-ran\n", string(b))
			assert.Empty(t, diff(before, manifest(t, tg.Root, protected...)), "protected trees after the switch fired")
		})
	}
}

// TestSwitchArmDisarm: Disarm is idempotent and keeps the change; one
// switch at a time per host; IDs are single-use; a switch that fired
// before Disarm makes Disarm fail with ErrFired.
func TestSwitchArmDisarm(t *testing.T) {
	tg := startSystem(t)
	ctx := context.Background()
	kept := client(t, tg, "root")
	g, err := lockout.New(lockout.Config{User: "root", Deadline: 30 * time.Second})
	require.NoError(t, err)

	a, err := g.Arm(ctx, kept, lockout.ArmOptions{ID: "first"})
	require.NoError(t, err)
	assert.Equal(t, lockout.TriggerDetached, a.Trigger, "no systemd as PID 1 in the target")
	assert.Equal(t, lockout.DefaultDir+"/switch/first", a.Dir)

	_, err = g.Arm(ctx, kept, lockout.ArmOptions{ID: "second"})
	var armed *lockout.ArmedError
	require.ErrorAs(t, err, &armed)
	assert.Equal(t, "first", armed.ID)

	// A reader of the state file that read "armed\n" before Disarm and
	// reads on after it (as State's and Disarm's cat do while the switch
	// changes state) must not see the tail of the new state: rewritten in
	// place, "disarmed\n" would add "ed" — the flake "unexpected output:
	// ed" (cat read "fired\n", then the rest of "restored\n").
	_, err = kept.Run(ctx, `d=`+a.Dir+`; rm -f /tmp/torn.new; ( exec 3<"$d/state"; head -c 6 <&3; n=0
		until [ "$(cat "$d/state")" = disarmed ] || [ $n -ge 400 ]; do sleep 0.05; n=$((n + 1)); done
		cat <&3; echo END ) >/tmp/torn.new 2>&1 </dev/null & sleep 0.3`)
	require.NoError(t, err)
	_, err = kept.Run(ctx, `echo "ClientAliveInterval 120" >> /etc/ssh/sshd_config`)
	require.NoError(t, err)
	require.NoError(t, g.Disarm(ctx, kept, a))
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		ex, err := kept.Run(ctx, "cat /tmp/torn.new")
		require.NoError(t, err)
		if strings.HasSuffix(ex.Stdout, "END\n") {
			assert.Equal(t, "armed\nEND\n", ex.Stdout, "a reader across Disarm read a torn state")
			break
		}
		require.True(t, time.Now().Before(end), "the reader did not finish: %q", ex.Stdout)
	}
	require.NoError(t, g.Disarm(ctx, kept, a), "a second Disarm")
	st, _, err := g.State(ctx, kept, a)
	require.NoError(t, err)
	assert.Equal(t, lockout.StateDisarmed, st)
	_, err = g.Arm(ctx, kept, lockout.ArmOptions{ID: "first"})
	require.ErrorIs(t, err, lockout.ErrArmed, "an ID is single-use")

	// A short deadline: it fires before Disarm and restores the file.
	b, err := g.Arm(ctx, kept, lockout.ArmOptions{Deadline: 300 * time.Millisecond})
	require.NoError(t, err)
	_, err = kept.Run(ctx, `echo "MaxAuthTries 4" >> /etc/ssh/sshd_config`)
	require.NoError(t, err)
	for end := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		st, log, err := g.State(ctx, kept, b)
		require.NoError(t, err)
		if st == lockout.StateRestored {
			break
		}
		require.True(t, time.Now().Before(end), "the switch did not fire: %s %s", st, log)
	}
	err = g.Disarm(ctx, kept, b)
	require.ErrorIs(t, err, lockout.ErrFired)
	cfg, err := os.ReadFile(filepath.Join(tg.Root, "etc/ssh/sshd_config"))
	require.NoError(t, err)
	assert.Contains(t, string(cfg), "ClientAliveInterval 120", "the disarmed switch's change stays")
	assert.NotContains(t, string(cfg), "MaxAuthTries 4", "the fired switch's change is undone")

	err = g.Disarm(ctx, kept, &lockout.Switch{ID: "never-armed"})
	require.ErrorIs(t, err, lockout.ErrUnknownSwitch)
	// sshd was restarted by the switch: a login may meet it without a
	// listener for a moment, as the canary allows for.
	waitLogin(t, tg, "root", time.Now().Add(5*time.Second))
}
