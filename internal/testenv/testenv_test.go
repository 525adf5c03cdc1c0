package testenv

import (
	"runtime"
	"strings"
	"testing"
)

// fakeT records what the helpers report instead of ending the real test.
type fakeT struct {
	testing.TB
	fatal, skip string
	logs        []string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Logf(format string, args ...any) {
	f.logs = append(f.logs, format)
}

// Fatalf and Skip stop the goroutine, as testing.T's do.
func (f *fakeT) Fatalf(format string, args ...any) {
	f.fatal = format
	runtime.Goexit()
}

func (f *fakeT) Skip(args ...any) {
	f.skip = "skip"
	runtime.Goexit()
}

func run(fn func(t *fakeT)) *fakeT {
	f := &fakeT{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f
}

func TestUnavailableFailsUnderCI(t *testing.T) {
	for _, tc := range []struct {
		ci         string
		fail, skip bool
	}{{"", false, true}, {"true", true, false}, {"1", true, false}} {
		t.Setenv("CI", tc.ci)
		f := run(func(f *fakeT) { Unavailable(f, "no %s here", "tool") })
		if (f.fatal != "") != tc.fail || (f.skip != "") != tc.skip {
			t.Errorf("CI=%q: fatal %q, skip %q; want fail %v, skip %v", tc.ci, f.fatal, f.skip, tc.fail, tc.skip)
		}
	}
}

func TestSeed(t *testing.T) {
	t.Setenv(SeedEnv, "")
	var v uint64
	if f := run(func(f *fakeT) { v = Seed(f, 7) }); len(f.logs) != 1 || !strings.Contains(f.logs[0], "seed %d") {
		t.Errorf("Seed logged %q, want the seed", f.logs)
	}
	if v != 7 {
		t.Errorf("default: got %d, want 7", v)
	}
	t.Setenv(SeedEnv, "42")
	run(func(f *fakeT) { v = Seed(f, 7) })
	if v != 42 {
		t.Errorf("$%s=42: got %d", SeedEnv, v)
	}
	t.Setenv(SeedEnv, "x")
	if f := run(func(f *fakeT) { v = Seed(f, 7) }); f.fatal == "" {
		t.Errorf("$%s=x: no failure", SeedEnv)
	}
}
