// Package testenv holds what the module's tests share about their
// environment, so that each rule has one implementation:
//
//   - A test that needs root, a tool, a device or a service it cannot have
//     calls Unavailable (or NeedRoot): it skips on a developer's machine and
//     fails where the environment variable CI is set, because the test
//     command (make test, which runs scripts/install-test-deps.sh as root)
//     provides everything the tests need there.
//   - A test of what happens without root (a "needs root" refusal) starts
//     with Unprivileged, which runs it again as an unprivileged user
//     through setpriv when the tests run as root, so that it runs in CI.
//   - A test that makes random choices takes its seed from Seed, which
//     logs it with the command line that repeats the run: -seed=N, else
//     $NIGHTSHIFT_SEED, else the test's own default.
//   - A pure-compute test over a big input set reads Race (whether the
//     binary was built with -race) to check a deterministic sample under
//     the race detector; make test runs it again without -race on the
//     whole set (the Makefile's FULL list).
//
// It registers the -seed flag, so a test package that imports it must not
// declare its own. Its functions are safe for concurrent use by parallel
// tests.
package testenv

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"testing"
)

// SeedEnv is the environment variable Seed reads when -seed is not given.
const SeedEnv = "NIGHTSHIFT_SEED"

// seed is a test flag, as flag.Uint64 in a _test.go file would be; it is
// read only by Seed.
var seed = flag.String("seed", "", "seed of the tests' random choices (default $"+SeedEnv+", else each test's own)")

// CI reports whether the tests run under CI (the environment variable CI is
// set and not empty).
func CI() bool { return os.Getenv("CI") != "" }

// Unavailable ends t because something it needs is missing: it fails under
// CI and skips elsewhere. The message says what is missing.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if CI() {
		t.Fatalf("%s (CI is set: the test command must provide it; see scripts/install-test-deps.sh)", msg)
	}
	t.Skip(msg)
}

// NeedRoot calls Unavailable unless the process runs as root; why says what
// root is needed for.
func NeedRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		Unavailable(t, "needs root for %s (the test command runs as root in CI: sudo make test)", why)
	}
}

// Seed returns the seed of t's random choices: the -seed flag if given,
// else $NIGHTSHIFT_SEED if set, else def. It logs the seed and how to
// repeat the run with it. A seed that does not parse fails t.
func Seed(t testing.TB, def uint64) uint64 {
	t.Helper()
	s, from := *seed, "-seed"
	if s == "" {
		s, from = os.Getenv(SeedEnv), "$"+SeedEnv
	}
	v := def
	if s != "" {
		var err error
		if v, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s: %v", from, err)
		}
	}
	t.Logf("seed %d (repeat with -seed=%d or %s=%d)", v, v, SeedEnv, v)
	return v
}
