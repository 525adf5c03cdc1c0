package goldenfile

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fakeT records what Check reports instead of failing the real test.
type fakeT struct {
	testing.TB
	errors []string
	fatal  string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.errors = append(f.errors, format)
}

// Fatalf stops the goroutine, as testing.T's does.
func (f *fakeT) Fatalf(format string, args ...any) {
	f.fatal = format
	runtime.Goexit()
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.golden")
	tests := []struct {
		name      string
		update    bool
		got       string
		wantError bool
		wantFatal bool
	}{
		{"missing file", false, "a", false, true},
		{"update writes", true, "a\n", false, false},
		{"same", false, "a\n", false, false},
		{"differs", false, "b\n", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			*update = tt.update
			defer func() { *update = false }()
			f := &fakeT{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				Check(f, path, []byte(tt.got))
			}()
			<-done
			if (len(f.errors) > 0) != tt.wantError || (f.fatal != "") != tt.wantFatal {
				t.Errorf("errors %q, fatal %q; want error %v, fatal %v", f.errors, f.fatal, tt.wantError, tt.wantFatal)
			}
			if tt.wantFatal && !strings.Contains(f.fatal, "-update") {
				t.Errorf("fatal %q does not say how to create the file", f.fatal)
			}
		})
	}
}
