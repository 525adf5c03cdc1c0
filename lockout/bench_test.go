package lockout_test

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/internal/debtarget"
	"github.com/nightshift-dev/nightshift/lockout"
	"github.com/nightshift-dev/nightshift/sshexec"
)

// BenchmarkCanary measures, on the Debian target with root's kept
// connection, what the lockout net adds to one changing command: the
// canary (fresh login and latent check, concurrently), each part alone,
// the snapshot, the whole Protect around a commit that keeps the login,
// and arming plus disarming the switch.
func BenchmarkCanary(b *testing.B) {
	tg := startSystem(b)
	ctx := context.Background()
	kept := client(b, tg, "root")
	g := guard(b, tg, "root", time.Minute)
	latent, err := lockout.New(lockout.Config{User: "root", Key: publicKey(b, tg), Addr: "127.0.0.1", LocalPort: 22})
	require.NoError(b, err)
	_, err = kept.Run(ctx, "true") // the kept connection is open before timing
	require.NoError(b, err)
	login := lockout.SSHLogin(tg.SSHConfig("root"))
	b.Run("canary", func(b *testing.B) {
		withCPU(b, tg, func(own *sshexec.Client) {
			res, err := g.Check(ctx, own)
			if err != nil || !res.OK() {
				b.Fatalf("%v %q", err, res.Lockouts)
			}
		})
	})
	b.Run("latent-check", func(b *testing.B) {
		withCPU(b, tg, func(own *sshexec.Client) {
			res, err := latent.Check(ctx, own)
			if err != nil || !res.OK() {
				b.Fatalf("%v %q", err, res.Lockouts)
			}
		})
	})
	b.Run("fresh-login", func(b *testing.B) {
		withCPU(b, tg, func(*sshexec.Client) {
			if _, err := login(ctx, lockout.DefaultCommand); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("snapshot", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s, err := g.Snapshot(ctx, kept)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			require.NoError(b, g.Remove(ctx, kept, s))
			b.StartTimer()
		}
	})
	b.Run("protect", func(b *testing.B) {
		// The whole net around one commit that keeps the login: arm (with
		// its snapshot), the canary, disarm.
		noop := func(context.Context) error { return nil }
		for i := 0; i < b.N; i++ {
			out, err := g.Protect(ctx, kept, lockout.ArmOptions{}, time.Minute, noop)
			if err != nil || out.RolledBack {
				b.Fatalf("%v %+v", err, out)
			}
		}
	})
	b.Run("arm-disarm", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			sw, err := g.Arm(ctx, kept, lockout.ArmOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if err := g.Disarm(ctx, kept, sw); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// withCPU runs op b.N times with a kept connection of its own and reports,
// besides the wall time, the CPU time op costs: on the target (sshd's
// listener, which reaps every login's processes, the kept connection's
// included once it is closed) and in this process. On a loaded machine
// the wall time includes waiting for a CPU; the CPU time does not.
func withCPU(b *testing.B, tg *debtarget.SystemTarget, op func(own *sshexec.Client)) {
	own := client(b, tg, "root")
	_, err := own.Run(context.Background(), "true")
	require.NoError(b, err)
	host0 := listenerCPU(b, tg)
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		op(own)
	}
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	own.Close()
	time.Sleep(300 * time.Millisecond) // the connection's sshd exits and is reaped
	host := listenerCPU(b, tg) - host0
	self := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	b.ReportMetric(float64(host.Microseconds())/1000/float64(b.N), "host-cpu-ms/op")
	b.ReportMetric(float64(self.Microseconds())/1000/float64(b.N), "worker-cpu-ms/op")
}

// listenerCPU is the CPU time of the target's sshd listener and of the
// children it has reaped (every login's processes), from its /proc stat.
func listenerCPU(b *testing.B, tg *debtarget.SystemTarget) time.Duration {
	b.Helper()
	out, err := tg.Exec(context.Background(), "cat /proc/$(cat /run/sshd.pid)/stat; getconf CLK_TCK")
	require.NoError(b, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(b, lines, 2)
	f := strings.Fields(lines[0][strings.LastIndex(lines[0], ")")+2:])
	tck, err := strconv.Atoi(lines[1])
	require.NoError(b, err)
	var ticks int
	for _, i := range []int{11, 12, 13, 14} { // utime stime cutime cstime, counted from the state field
		n, err := strconv.Atoi(f[i])
		require.NoError(b, err)
		ticks += n
	}
	return time.Duration(ticks) * time.Second / time.Duration(tck)
}
