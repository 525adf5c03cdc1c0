package sandbox_test

import (
	"context"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift/sandbox"
)

// TestOutputCap: output past Config.OutputCap is cut, and the bytes cut
// are counted, per stream.
func TestOutputCap(t *testing.T) {
	h := debian(t)
	ctx := context.Background()
	sb := sandbox.New(h.c, sandbox.Config{OutputCap: 1000})
	tests := []struct {
		name, cmd string
		out       int
		outCut    int64
		errText   string
		errCut    int64
	}{
		{"over the cap", "head -c 5000 /dev/zero | tr '\\0' a; echo err >&2", 1000, 4000, "err\n", 0},
		{"at the cap", "head -c 1000 /dev/zero | tr '\\0' b; head -c 1001 /dev/zero >&2", 1000, 0, strings.Repeat("\x00", 1000), 1},
		{"nothing", "true", 0, 0, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, err := sb.Try(ctx, tc.cmd)
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Discard(ctx, tr)
			ex := tr.Exec
			if len(ex.Stdout) != tc.out || ex.StdoutCut != tc.outCut || ex.Stderr != tc.errText || ex.StderrCut != tc.errCut {
				t.Fatalf("stdout %d bytes (cut %d), stderr %q (cut %d); want %d (cut %d), %q (cut %d)",
					len(ex.Stdout), ex.StdoutCut, clipText(ex.Stderr), ex.StderrCut, tc.out, tc.outCut, clipText(tc.errText), tc.errCut)
			}
		})
	}
}

func clipText(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}
