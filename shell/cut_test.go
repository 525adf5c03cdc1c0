package shell

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLongConstructCutOnRuneBoundary: a problem's construct longer than 200
// bytes is shortened with the ellipsis without splitting a UTF-8 sequence.
func TestLongConstructCutOnRuneBoundary(t *testing.T) {
	src := "eval \"echo " + strings.Repeat("é", 300) + "$X\""
	a := Analyze(src, Config{})
	if len(a.Problems) == 0 {
		t.Fatalf("no problem reported for %q", src)
	}
	for _, p := range a.Problems {
		if !utf8.ValidString(p.Construct) || len(p.Construct) > 200 {
			t.Errorf("construct %q (%d bytes): want valid UTF-8 of at most 200 bytes", p.Construct, len(p.Construct))
		}
	}
	if c := a.Problems[0].Construct; !strings.HasSuffix(c, "…") {
		t.Errorf("construct %q does not end in the ellipsis", c)
	}
}
