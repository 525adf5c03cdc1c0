// Package textcut shortens text for a model's prompt, the journal or a
// report, always on UTF-8 boundaries and always with the same marks, so a
// reader (or a model) learns one sign for "something was cut here":
//
//   - [Middle] keeps a long text's head and tail around the [Marker] line,
//     "[… N bytes cut …]": command output, check output, journal texts,
//     report outputs. sshexec's streaming capture writes the same Marker.
//   - [Head] shortens a label, a message or a quoted argument to a byte
//     limit ending in [Ellipsis], "…".
//
// Both return valid UTF-8 when given valid UTF-8; Middle also repairs
// invalid input (each invalid byte sequence becomes U+FFFD) because what it
// returns is stored and shown. Cutting to terminal columns (progress) or to
// a token budget (memory, distill) is a different job and lives there.
//
// The package holds no state; its functions are safe for concurrent use.
package textcut

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Marker is the line put where Middle cut bytes from a text, formatted with
// their count.
const Marker = "\n[… %d bytes cut …]\n"

// Ellipsis ends a text Head shortened.
const Ellipsis = "…"

// Middle keeps s whole when it fits in limit bytes (limit < 0: no limit),
// else its first limit/2 and last limit-limit/2 bytes, each moved inward to
// a rune boundary, joined by Marker (not counted in limit). It returns the
// text, valid UTF-8, and the number of bytes cut.
func Middle(s string, limit int) (string, int) {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if limit < 0 || len(s) <= limit {
		return s, 0
	}
	head, start := limit/2, len(s)-(limit-limit/2)
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	cut := start - head
	return s[:head] + fmt.Sprintf(Marker, cut) + s[start:], cut
}

// Head keeps s whole when it fits in n bytes, else its longest prefix that
// ends on a rune boundary and fits in n bytes together with Ellipsis, then
// Ellipsis. An n below len(Ellipsis) gives Ellipsis alone.
func Head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n-len(Ellipsis), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + Ellipsis
}
