package bpe

import (
	"strings"
	"unicode/utf8"
)

// lossy returns s with each maximal invalid UTF-8 subpart replaced by one
// U+FFFD, as Rust's String::from_utf8_lossy, Python's errors="replace" and
// the WHATWG TextDecoder do (Unicode's "substitution of maximal subparts").
// Go's own conversions replace each invalid byte instead.
func lossy(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			b.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || n > 1 {
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		i += maximalSubpart(s[i:])
		b.WriteRune(utf8.RuneError)
	}
	return b.String()
}

// maximalSubpart returns the length (≥ 1) of the maximal prefix of s, which
// starts with an invalid sequence, that is a prefix of some well-formed
// UTF-8 sequence (Unicode Table 3-7).
func maximalSubpart(s string) int {
	c := s[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case 0xC2 <= c && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case 0xE1 <= c && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case 0xF1 <= c && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for k := 0; k < need && n < len(s); k++ {
		d := s[n]
		if k > 0 {
			lo, hi = 0x80, 0xBF
		}
		if d < lo || d > hi {
			break
		}
		n++
	}
	return n
}
