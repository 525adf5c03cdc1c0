package textcut

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestMiddle(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    string
		limit int
		want  string
		cut   int
	}{
		{"fits", "hello", 5, "hello", 0},
		{"no limit", strings.Repeat("x", 100), -1, strings.Repeat("x", 100), 0},
		{"even", "0123456789", 4, "01" + fmt.Sprintf(Marker, 6) + "89", 6},
		{"odd limit keeps a longer tail", "0123456789", 5, "01" + fmt.Sprintf(Marker, 5) + "789", 5},
		{"zero keeps nothing", "abc", 0, fmt.Sprintf(Marker, 3), 3},
		// "é" is 2 bytes: the head moves back, the tail forward, never splitting it.
		{"runes kept whole", "aébcdé", 4, "a" + fmt.Sprintf(Marker, 5) + "é", 5},
		{"invalid bytes repaired", "ab\xffcd", 10, "ab\uFFFDcd", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, cut := Middle(tc.in, tc.limit)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.cut, cut)
			assert.True(t, utf8.ValidString(got))
		})
	}
}

func TestMiddleAlwaysValid(t *testing.T) {
	s := strings.Repeat("日本語テキスト", 50)
	for limit := 0; limit < 60; limit++ {
		got, cut := Middle(s, limit)
		if !utf8.ValidString(got) {
			t.Fatalf("limit %d: invalid UTF-8 %q", limit, got)
		}
		if kept := len(got) - len(fmt.Sprintf(Marker, cut)); kept > limit || kept+cut != len(s) {
			t.Fatalf("limit %d: kept %d bytes, cut %d of %d", limit, kept, cut, len(s))
		}
	}
}

func TestHead(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"a longer text", 8, "a lon…"},
		{"日本語", 7, "日…"}, // 3-byte runes: 4 bytes of room hold one
		{"abc", 2, "…"},
		{"abcd", 0, "…"},
	} {
		got := Head(tc.in, tc.n)
		assert.Equal(t, tc.want, got, "Head(%q, %d)", tc.in, tc.n)
		assert.True(t, utf8.ValidString(got))
		if tc.n >= len(Ellipsis) {
			assert.LessOrEqual(t, len(got), tc.n)
		}
	}
}
