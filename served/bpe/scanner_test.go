package bpe

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2"

	"github.com/nightshift-dev/nightshift/internal/testenv"
)

// pieces splits s with sp.
func pieces(sp splitter, s string) []string {
	var out []string
	for i := 0; i < len(s); {
		j := sp(s, i)
		if j <= i || j > len(s) {
			return append(out, fmt.Sprintf("<splitter returned %d at %d>", j, i))
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}

// regexPieces splits s as HF's Split(Isolated) does, with regexp2 running
// the regex: matches and the gaps between them.
func regexPieces(tb testing.TB, re *regexp2.Regexp, s string) []string {
	tb.Helper()
	runes := []rune(s)
	var out []string
	last := 0
	m, err := re.FindRunesMatch(runes)
	for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
		if m.Index > last {
			out = append(out, string(runes[last:m.Index]))
		}
		if m.Length > 0 {
			out = append(out, string(runes[m.Index:m.Index+m.Length]))
		}
		last = m.Index + m.Length
	}
	if err != nil {
		tb.Fatal(err)
	}
	if last < len(runes) {
		out = append(out, string(runes[last:]))
	}
	return out
}

func TestScannerCases(t *testing.T) {
	t.Parallel()
	qwen, llama, gpt2 := splitterFor(patternQwen), splitterFor(patternLlama3), splitterFor(patternGPT2)
	tests := []struct {
		name string
		sp   splitter
		in   string
		want []string
	}{
		{"qwen words", qwen, "Hello world", []string{"Hello", " world"}},
		{"qwen contractions any case", qwen, "it'S we'LL I'Re", []string{"it", "'S", " we", "'LL", " I", "'Re"}},
		{"qwen long s folds to s", qwen, "it'ſ", []string{"it", "'ſ"}},
		{"qwen digits one by one", qwen, "x 2025", []string{"x", " ", "2", "0", "2", "5"}},
		{"llama digits by three", llama, "x 2025", []string{"x", " ", "202", "5"}},
		{"qwen punct with space and newlines", qwen, "a ...\r\n\nb", []string{"a", " ...\r\n\n", "b"}},
		{"qwen spaces before word", qwen, "a    b", []string{"a", "   ", " b"}},
		{"qwen trailing spaces", qwen, "a   ", []string{"a", "   "}},
		{"qwen newline run with spaces", qwen, "a \n \n  b", []string{"a", " \n \n", " ", " b"}},
		{"qwen tab before letters", qwen, "\tx", []string{"\tx"}},
		{"qwen newline never prefixes letters", qwen, "\nx", []string{"\n", "x"}},
		{"qwen nbsp before letters", qwen, "\u00a0x", []string{"\u00a0x"}},
		{"qwen ideographic space run", qwen, "a\u3000\u3000b", []string{"a", "\u3000", "\u3000b"}},
		{"qwen space before digit", qwen, "a 1", []string{"a", " ", "1"}},
		{"gpt2 contractions case-sensitive", gpt2, "it'S it's", []string{"it", "'", "S", " it", "'s"}},
		{"gpt2 space digits", gpt2, "a 123", []string{"a", " 123"}},
		{"gpt2 no newline after punct", gpt2, "a.\n", []string{"a", ".", "\n"}},
		{"single char", qwen, "x", []string{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pieces(tt.sp, tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("pieces(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// regexp2 folds case with .NET's rules, which lack Oniguruma's ſ → s (the
// golden data shows HF treats 'ſ as a contraction); inputs with ſ are
// compared by the golden tests instead.
func comparable(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 'ſ') }

var scannerPatterns = []string{patternQwen, patternLlama3, patternGPT2}

func checkScanner(t *testing.T, res []*regexp2.Regexp, s string) {
	t.Helper()
	for i, p := range scannerPatterns {
		got, want := pieces(splitterFor(p), s), regexPieces(t, res[i], s)
		if !slices.Equal(got, want) {
			t.Fatalf("pattern %d on %q:\nscanner %q\nregexp2 %q", i, s, got, want)
		}
	}
}

func compileAll(t testing.TB) []*regexp2.Regexp {
	var res []*regexp2.Regexp
	for _, p := range scannerPatterns {
		re, err := regexp2.Compile(p, regexp2.None)
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, re)
	}
	return res
}

// TestScannerMatchesRegexp2 runs the scanners and regexp2 over the golden
// corpus (its valid UTF-8 items without ſ).
func TestScannerMatchesRegexp2(t *testing.T) {
	t.Parallel()
	res := compileAll(t)
	f, err := os.Open("../../testdata/tokenizer/corpus/corpus.jsonl")
	if err != nil {
		t.Fatalf("golden corpus: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	n := 0
	for sc.Scan() {
		var it struct {
			Text string
			Long bool
		}
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			t.Fatal(err)
		}
		if it.Long || !comparable(it.Text) {
			continue // regexp2 is quadratic on some 100 KB lines
		}
		checkScanner(t, res, it.Text)
		n++
	}
	if n < 300 {
		t.Fatalf("only %d corpus items compared", n)
	}
}

func FuzzScanner(f *testing.F) {
	for _, s := range []string{"Hello world", "it's 'LL", " \n\t x", "a   b  ", "1234567", "...\r\n", "\u00a0\u3000x", "日本 語", "e\u0301"} {
		f.Add(s)
	}
	res := compileAll(f)
	f.Fuzz(func(t *testing.T, s string) {
		// regexp2 backtracks; keep inputs short so it stays fast.
		if !comparable(s) || len(s) > 256 {
			return
		}
		checkScanner(t, res, s)
	})
}

func TestLossy(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"ok", "ok"},
		{"a\xffb", "a\ufffdb"},
		{"\xe2\x82", "\ufffd"},                 // truncated 3-byte sequence: one
		{"\xe2\x82\xe2\x82\xac", "\ufffd€"},    // then a valid one
		{"\xf0\x9f\x98 x", "\ufffd x"},         // truncated 4-byte
		{"\xc0\xaf", "\ufffd\ufffd"},           // overlong lead: one per byte
		{"\xed\xa0\x80", "\ufffd\ufffd\ufffd"}, // surrogate
		{"\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"},
		{"\x80\x80", "\ufffd\ufffd"},
		{"\xe0\xa0", "\ufffd"},
		{"\xf0\x90\x80\xc3\xa9", "\ufffdé"},
	}
	for _, tt := range tests {
		if got := lossy(tt.in); got != tt.want {
			t.Errorf("lossy(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestMergeNaiveEqualsHeap checks the two merge strategies agree, on every
// piece of the corpus long enough for both to matter.
func TestMergeNaiveEqualsHeap(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../models/qwen3/tokenizer.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	tok := loadGz(t, raw)
	inputs := []string{strings.Repeat(" ", 200), strings.Repeat("ab", 100), strings.Repeat("=-", 90) + "x", "sshd_config_permit_root_login_disabled_for_all_users", strings.Repeat("日本語", 30)}
	for _, s := range inputs {
		var a, b workspace
		syms := func() []int32 {
			var out []int32
			for i := 0; i < len(s); i++ {
				out = append(out, tok.byteID[s[i]])
			}
			return out
		}
		got, want := tok.merges.mergeNaive(syms(), &a), tok.merges.mergeHeap(syms(), &b)
		if !slices.Equal(got, want) {
			t.Errorf("%q: naive %v, heap %v", s, got, want)
		}
	}
}

// TestScannerRandom compares the scanners with regexp2 on random strings
// over an alphabet of the characters the regexes distinguish.
func TestScannerRandom(t *testing.T) {
	t.Parallel()
	res := compileAll(t)
	alphabet := []string{"a", "Z", "é", "中", "1", "٣", "½", " ", "  ", "\t", "\n", "\r", "\u00a0", "\u3000", "\u2028", "\u0085",
		"'", "'s", "'S", "'ll", "'LL", "'re", "'Ve", "'d", "'t", "'m", ".", "-", "<", "|", "😀", "\u200d", "\u0301", "\x00", "\v"}
	rng := rand.New(rand.NewPCG(testenv.Seed(t, 1), 2))
	for range 3000 {
		var b strings.Builder
		for range rng.IntN(24) + 1 {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		checkScanner(t, res, b.String())
	}
}
