package lockout_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/lockout"
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
	b.Run("canary", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			res, err := g.Check(ctx, kept)
			if err != nil || !res.OK() {
				b.Fatalf("%v %q", err, res.Lockouts)
			}
		}
	})
	b.Run("latent-check", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			res, err := latent.Check(ctx, kept)
			if err != nil || !res.OK() {
				b.Fatalf("%v %q", err, res.Lockouts)
			}
		}
	})
	b.Run("fresh-login", func(b *testing.B) {
		login := lockout.SSHLogin(tg.SSHConfig("root"))
		for i := 0; i < b.N; i++ {
			if _, err := login(ctx, lockout.DefaultCommand); err != nil {
				b.Fatal(err)
			}
		}
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
