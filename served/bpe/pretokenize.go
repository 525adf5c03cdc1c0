package bpe

import (
	"unicode"
	"unicode/utf8"
)

// The Split regexes this package recognises. Go's regexp cannot run them
// (no look-ahead), so each has a hand-written scanner, splitQwen below, that
// reproduces Oniguruma's leftmost, first-alternative-wins semantics as HF
// tokenizers runs them. They are recognised by exact text: any other regex is
// refused with an *UnsupportedError.
const (
	// patternQwen is Qwen2 / Qwen2.5 / Qwen3's pre-tokenizer split.
	patternQwen = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// patternLlama3 is Llama 3 / 3.1 / 3.2's: as Qwen's, with digits in runs of up to three.
	patternLlama3 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// patternGPT2 is the regex of ByteLevel(use_regex=true), GPT-2's.
	patternGPT2 = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
)

// splitter cuts text into pieces: given a non-empty s and a start i < len(s),
// it returns the end of the piece starting at i. The supported regexes match
// at every position, so pieces are contiguous and cover s.
type splitter func(s string, i int) int

func splitterFor(pattern string) splitter {
	switch pattern {
	case patternQwen:
		return func(s string, i int) int { return splitQwen(s, i, 1) }
	case patternLlama3:
		return func(s string, i int) int { return splitQwen(s, i, 3) }
	case patternGPT2:
		return splitGPT2
	}
	return nil
}

// Character classes, as Oniguruma sees them for UTF-8 with Unicode
// properties: \s is White_Space, \p{L} is general category L, \p{N} is N.
const (
	clsL = 1 << iota
	clsN
	clsS
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := range utf8.RuneSelf {
		r := rune(c)
		switch {
		case unicode.IsLetter(r):
			t[c] = clsL
		case unicode.IsNumber(r):
			t[c] = clsN
		case unicode.Is(unicode.White_Space, r):
			t[c] = clsS
		}
	}
	return t
}()

func class(r rune) uint8 {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	switch {
	case unicode.IsLetter(r):
		return clsL
	case unicode.IsNumber(r):
		return clsN
	case unicode.Is(unicode.White_Space, r):
		return clsS
	}
	return 0
}

// at decodes the rune at s[i:], with its class and width. i must be < len(s).
func at(s string, i int) (rune, uint8, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), asciiClass[c], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return r, class(r), n
}

// runOf returns the end of the run of runes of class cls starting at i,
// taking at most max runes (max ≤ 0: unlimited).
func runOf(s string, i int, cls uint8, max int) int {
	for k := 0; i < len(s) && (max <= 0 || k < max); k++ {
		_, c, n := at(s, i)
		if c != cls {
			break
		}
		i += n
	}
	return i
}

// contraction returns the end of a contraction ('s 't 're 've 'm 'll 'd)
// starting at i, or -1. With fold, letters match case-insensitively under
// Unicode simple case folding, so 's also matches 'S and 'ſ (U+017F).
func contraction(s string, i int, fold bool) int {
	if s[i] != '\'' || i+1 >= len(s) {
		return -1
	}
	r, _, n := at(s, i+1)
	if fold {
		r = foldASCII(r)
	}
	j := i + 1 + n
	switch r {
	case 's', 't', 'm', 'd':
		return j
	case 'r', 'v', 'l':
		if j >= len(s) {
			return -1
		}
		r2, _, n2 := at(s, j)
		if fold {
			r2 = foldASCII(r2)
		}
		if (r == 'l' && r2 == 'l') || (r != 'l' && r2 == 'e') {
			return j + n2
		}
	}
	return -1
}

// foldASCII maps the runes whose simple case folding is one of the ASCII
// letters in the contractions to that letter.
func foldASCII(r rune) rune {
	switch {
	case 'A' <= r && r <= 'Z':
		return r + 'a' - 'A'
	case r == 'ſ': // U+017F LATIN SMALL LETTER LONG S folds to s
		return 's'
	}
	return r
}

// splitQwen scans one match of patternQwen (maxDigits 1) or patternLlama3
// (maxDigits 3) starting at i.
func splitQwen(s string, i int, maxDigits int) int {
	// (?i:'s|'t|'re|'ve|'m|'ll|'d)
	if j := contraction(s, i, true); j >= 0 {
		return j
	}
	r0, c0, n0 := at(s, i)
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if c0 == clsL {
		return runOf(s, i+n0, clsL, 0)
	}
	if c0 != clsN && r0 != '\r' && r0 != '\n' && i+n0 < len(s) {
		if _, c1, n1 := at(s, i+n0); c1 == clsL {
			return runOf(s, i+n0+n1, clsL, 0)
		}
	}
	// \p{N} or \p{N}{1,3}
	if c0 == clsN {
		return runOf(s, i, clsN, maxDigits)
	}
	// ` ?[^\s\p{L}\p{N}]+[\r\n]*`
	if j := punctRun(s, i, r0, c0, n0); j >= 0 {
		return crlfRun(s, j)
	}
	// c0 is white space from here on.
	end := runOf(s, i, clsS, 0)
	// \s*[\r\n]+ : up to the last \r or \n of the white-space run.
	for k := end - 1; k >= i; k-- {
		if s[k] == '\r' || s[k] == '\n' {
			return k + 1
		}
	}
	return spaceRun(s, i, end)
}

// splitGPT2 scans one match of patternGPT2 starting at i.
func splitGPT2(s string, i int) int {
	if j := contraction(s, i, false); j >= 0 {
		return j
	}
	r0, c0, n0 := at(s, i)
	//  ?\p{L}+ and  ?\p{N}+
	if c0 == clsL || c0 == clsN {
		return runOf(s, i+n0, c0, 0)
	}
	if r0 == ' ' && i+1 < len(s) {
		if _, c1, n1 := at(s, i+1); c1 == clsL || c1 == clsN {
			return runOf(s, i+1+n1, c1, 0)
		}
	}
	//  ?[^\s\p{L}\p{N}]+
	if j := punctRun(s, i, r0, c0, n0); j >= 0 {
		return j
	}
	return spaceRun(s, i, runOf(s, i, clsS, 0))
}

// punctRun matches ` ?[^\s\p{L}\p{N}]+` at i (whose rune is r0, class c0,
// width n0) and returns its end, or -1.
func punctRun(s string, i int, r0 rune, c0 uint8, n0 int) int {
	j := i
	if r0 == ' ' && i+1 < len(s) {
		if _, c1, _ := at(s, i+1); c1 == 0 {
			j = i + 1
		}
	} else if c0 != 0 {
		return -1
	}
	if j == i && c0 != 0 {
		return -1
	}
	return runOf(s, j, 0, 0)
}

// crlfRun returns the end of the run of \r and \n starting at i.
func crlfRun(s string, i int) int {
	for i < len(s) && (s[i] == '\r' || s[i] == '\n') {
		i++
	}
	return i
}

// spaceRun resolves `\s+(?!\S)|\s+` for the white-space run s[i:end]: the
// whole run when it ends the text, else the run without its last rune
// (which then starts the next piece), unless that would leave nothing.
func spaceRun(s string, i, end int) int {
	if end == len(s) {
		return end
	}
	_, last := utf8.DecodeLastRuneInString(s[i:end])
	if end-last > i {
		return end - last
	}
	return end
}
