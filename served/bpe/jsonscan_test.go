package bpe

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/nightshift-dev/nightshift/internal/testenv"
)

// strCases are JSON string literals (and broken ones) at the edges of
// jscan.str's fast path: escapes, control characters, UTF-8 that is
// invalid (a stray byte, an overlong form, a surrogate, a cut rune) or
// valid (U+FFFD itself, 'Ġ'), a missing closing quote.
var strCases = []string{
	`""`, `"a"`, `"Ġab"`, `"a b"`, `"\u0120"`, `"a\"b"`, `"a\\"`, `"a\\\"b"`, `"\\\\"`, `"tab\tx"`,
	"\"a\tb\"", "\"a\nb\"", "\"\x00\"", "\"\x1f\\n\"", "\"\\n\x01\"",
	"\"\xff\"", "\"a\xc0\x80b\"", "\"\xed\xa0\x80\"", "\"\xe2\x82\"", "\"\xef\xbf\xbd\"", "\"\xc4\xa0\xc4\"",
	"\"\xff\x01\"", `"`, `"abc`, `"abc\"`, `"abc\\`, "\"\xc4\xa0",
}

// TestStrMatchesEncodingJSON: jscan.str decodes the string a literal
// starts with as encoding/json's Decoder does (the oracle: the same value,
// ending at the same byte) and fails where it fails, on the cases above and
// on random literals over an alphabet of the bytes that matter.
func TestStrMatchesEncodingJSON(t *testing.T) {
	check := func(t *testing.T, lit string) {
		t.Helper()
		var want string
		dec := json.NewDecoder(bytes.NewReader([]byte(lit)))
		wantErr := dec.Decode(&want) // the first value only
		s := &jscan{data: []byte(lit)}
		got, err := s.str()
		switch {
		case (err != nil) != (wantErr != nil):
			t.Errorf("str(%q): error %v, encoding/json's %v", lit, err, wantErr)
		case err == nil && (string(got) != want || int64(s.pos) != dec.InputOffset()):
			t.Errorf("str(%q) = %q, ending at byte %d; want %q, ending at byte %d", lit, got, s.pos, want, dec.InputOffset())
		}
	}
	for _, lit := range strCases {
		check(t, lit)
	}
	rng := rand.New(rand.NewPCG(testenv.Seed(t, 25), 0))
	alphabet := [][]byte{[]byte("a"), []byte(" "), []byte(`\`), []byte(`"`), []byte(`\"`), []byte(`\\`), []byte(`\u0041`),
		[]byte("\n"), []byte("\x1f"), []byte("Ġ"), []byte("\xc4"), []byte("\xa0"), []byte("\xff"), []byte("\xef\xbf\xbd")}
	for range 20000 {
		lit := []byte(`"`)
		for range rng.IntN(8) {
			lit = append(lit, alphabet[rng.IntN(len(alphabet))]...)
		}
		if rng.IntN(8) > 0 {
			lit = append(lit, '"')
		}
		check(t, string(lit))
	}
}

// TestSkipNestedMatchesSkip: on valid JSON values (the merges' shapes and
// the others a model may hold), skipNested ends where skip does and returns
// the same bytes; on a string or array that does not end it fails.
func TestSkipNestedMatchesSkip(t *testing.T) {
	for _, v := range []string{
		`["a b", "Ġ ab"]`, `[["a", "b"], ["Ġ", "ab"]]`, `[]`, `null`, `12`, `true`, `"x"`, `{"a": [1, {"b": "]"}]}`,
		`["a\"] b", "\\", "[", "{"]`, `[["\\\"", "x"]]`, ` [ "a b" ] `,
	} {
		for _, tail := range []string{"", ", \"next\": 1}", "}"} {
			data := []byte(v + tail)
			a, b := &jscan{data: data}, &jscan{data: data}
			want, wantErr := a.skip()
			got, err := b.skipNested()
			if wantErr != nil || err != nil || !bytes.Equal(got, want) || a.pos != b.pos {
				t.Errorf("%q: skipNested %q at %d (%v), skip %q at %d (%v)", data, got, b.pos, err, want, a.pos, wantErr)
			}
		}
	}
	for _, v := range []string{`["a b", "c`, `["a b"`, `[["a", "b"]`, `"a\"`, `[`} {
		s := &jscan{data: []byte(v)}
		if raw, err := s.skipNested(); err == nil {
			t.Errorf("skipNested(%q) = %q, want an error", v, raw)
		}
	}
}
