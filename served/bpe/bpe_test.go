package bpe_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/nightshift-dev/nightshift/served/bpe"
	"golang.org/x/text/unicode/norm"
)

// tiny builds a small byte-level tokenizer.json with the given parts
// replaced (pass "" to keep the default).
func tiny(model, normalizer, preTokenizer, decoder, extra string) string {
	if model == "" {
		model = `{"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "Ġ": 3, "Ġab": 4}, "merges": ["a b", "Ġ ab"]}`
	}
	if normalizer == "" {
		normalizer = "null"
	}
	if preTokenizer == "" {
		preTokenizer = `{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}`
	}
	if decoder == "" {
		decoder = `{"type": "ByteLevel"}`
	}
	return fmt.Sprintf(`{"version": "1.0", "added_tokens": [], "normalizer": %s, "pre_tokenizer": %s, "decoder": %s, "model": %s%s}`,
		normalizer, preTokenizer, decoder, model, extra)
}

// withAdded is tiny's tokenizer with these added_tokens.
func withAdded(tokens string) string {
	return strings.Replace(tiny("", "", "", "", ""), `"added_tokens": []`, `"added_tokens": [`+tokens+`]`, 1)
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		json        string
		unsupported bool   // else malformed
		mention     string // the error must name this
	}{
		{"unigram", tiny(`{"type": "Unigram", "vocab": [["a", 0.0]]}`, "", "", "", ""), true, `"Unigram"`},
		{"wordpiece", tiny(`{"type": "WordPiece", "vocab": {"a": 0}}`, "", "", "", ""), true, `"WordPiece"`},
		{"wordlevel", tiny(`{"type": "WordLevel", "vocab": {"a": 0}}`, "", "", "", ""), true, `"WordLevel"`},
		{"dropout", tiny(`{"type": "BPE", "dropout": 0.1, "vocab": {"a": 0}, "merges": []}`, "", "", "", ""), true, "dropout"},
		{"byte fallback", tiny(`{"type": "BPE", "byte_fallback": true, "vocab": {"a": 0}, "merges": []}`, "", "", "", ""), true, "byte_fallback"},
		{"subword prefix", tiny(`{"type": "BPE", "continuing_subword_prefix": "##", "vocab": {"a": 0}, "merges": []}`, "", "", "", ""), true, "continuing_subword_prefix"},
		{"unknown normalizer", tiny("", `{"type": "Lowercase"}`, "", "", ""), true, `"Lowercase"`},
		{"unknown normalizer in sequence", tiny("", `{"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Strip"}]}`, "", "", ""), true, `"Strip"`},
		{"unknown pre-tokenizer", tiny("", "", `{"type": "Whitespace"}`, "", ""), true, `"Whitespace"`},
		{"metaspace", tiny("", "", `{"type": "Metaspace", "replacement": "▁"}`, "", ""), true, `"Metaspace"`},
		{"unknown split regex", tiny("", "", `{"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "\\w+"}, "behavior": "Isolated", "invert": false}, {"type": "ByteLevel", "use_regex": false}]}`, "", ""), true, `\\w+`},
		{"split behavior", tiny("", "", `{"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "x"}, "behavior": "Removed", "invert": false}, {"type": "ByteLevel"}]}`, "", ""), true, `"Removed"`},
		{"no byte level", tiny("", "", "null", "", ""), true, "pre_tokenizer"},
		{"unknown decoder", tiny("", "", "", `{"type": "WordPiece"}`, ""), true, `decoder "WordPiece"`},
		{"truncation", tiny("", "", "", "", `, "truncation": {"max_length": 8}`), true, "truncation"},
		{"truncated json", tiny("", "", "", "", "")[:60], false, "tokenizer.json"},
		{"not json", "tokenizer", false, "tokenizer.json"},
		{"no model", `{"version": "1.0", "added_tokens": []}`, false, "no model"},
		{"duplicate ids", tiny(`{"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []}`, "", "", "", ""), false, `vocab: tokens "a" and "b" have the same id 0`},
		{"duplicate added ids", withAdded(`{"id": 5, "content": "<x>", "special": true}, {"id": 5, "content": "<y>", "special": true}`), false, `added_tokens: tokens "<x>" and "<y>" have the same id 5`},
		{"added id of a vocab token", withAdded(`{"id": 0, "content": "<x>", "special": true}`), false, `added_tokens: token "<x>" has id 0, the vocab's`},
		{"duplicate token", tiny(`{"type": "BPE", "vocab": {"a": 0, "a": 1}, "merges": []}`, "", "", "", ""), false, `vocab: token "a" appears twice`},
		{"null model", `{"version": "1.0", "model": null}`, false, "no model"},
		{"merge token not in vocab", tiny(`{"type": "BPE", "vocab": {"a": 0}, "merges": ["a c"]}`, "", "", "", ""), false, `"c"`},
		{"merge result not in vocab", tiny(`{"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a b"]}`, "", "", "", ""), false, `"ab"`},
		{"bad merge string", tiny(`{"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a b c"]}`, "", "", "", ""), false, "merge 1"},
		{"bad merge pair", tiny(`{"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": [["a"]]}`, "", "", "", ""), false, "merge 1"},
		{"negative id", tiny(`{"type": "BPE", "vocab": {"a": -1}, "merges": []}`, "", "", "", ""), false, "vocab"},
		{"unk not in vocab", tiny(`{"type": "BPE", "unk_token": "<unk>", "vocab": {"a": 0}, "merges": []}`, "", "", "", ""), false, "<unk>"},
		{"trailing garbage", tiny("", "", "", "", "") + "x", false, "trailing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok, err := bpe.Load(strings.NewReader(tt.json))
			if err == nil {
				t.Fatalf("Load succeeded (%v), want an error", tok != nil)
			}
			var ue *bpe.UnsupportedError
			if got := errors.As(err, &ue); got != tt.unsupported || errors.Is(err, bpe.ErrUnsupported) != tt.unsupported {
				t.Errorf("unsupported = %v, want %v: %v", got, tt.unsupported, err)
			}
			if !tt.unsupported && !errors.Is(err, bpe.ErrMalformed) {
				t.Errorf("error does not wrap ErrMalformed: %v", err)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not mention %q", err, tt.mention)
			}
		})
	}
}

func TestLoadFileMissing(t *testing.T) {
	t.Parallel()
	_, err := bpe.LoadFile("testdata/no-such-tokenizer.json")
	if err == nil || !strings.Contains(err.Error(), "no-such-tokenizer.json") {
		t.Fatalf("LoadFile of a missing file: %v", err)
	}
}

func TestTinyModel(t *testing.T) {
	t.Parallel()
	tok, err := bpe.Load(strings.NewReader(tiny("", "", "", "", "")))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in   string
		want []int
	}{
		{"", nil},
		{"ab", []int{2}},
		{"ab ab", []int{2, 4}},
		{"ba", []int{1, 0}},
		{"abc", []int{2}}, // 'c' is not in the vocabulary and there is no unk_token: dropped, as HF does
	}
	for _, tt := range tests {
		if got := tok.Encode(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Encode(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	if got := tok.VocabSize(); got != 5 {
		t.Errorf("VocabSize = %d, want 5", got)
	}
	if got := tok.Decode([]int{2, 4, 99, -1}); got != "ab ab" {
		t.Errorf("Decode skipping unknown IDs = %q", got)
	}
}

func TestQwen3Facts(t *testing.T) {
	t.Parallel()
	tok := load(t, "qwen3")
	if got := tok.VocabSize(); got != 151669 {
		t.Errorf("VocabSize = %d, want 151669", got)
	}
	added := tok.AddedTokens()
	if len(added) != 26 || added[0] != (bpe.AddedToken{ID: 151643, Content: "<|endoftext|>", Special: true}) {
		t.Fatalf("AddedTokens = %d tokens, first %+v", len(added), added[0])
	}
	i := slices.IndexFunc(added, func(a bpe.AddedToken) bool { return a.Content == "<think>" })
	if i < 0 || added[i].ID != 151667 || added[i].Special {
		t.Errorf("<think> = %+v, want ID 151667, not special", added[i])
	}
	if got := tok.Encode("<|im_start|>user"); !slices.Equal(got, []int{151644, 872}) {
		t.Errorf("Encode = %v", got)
	}
	added[0].Content = "mutated"
	if tok.AddedTokens()[0].Content != "<|endoftext|>" {
		t.Error("AddedTokens exposes internal state")
	}
}

// TestConcurrent shares one tokenizer among 8 goroutines (run under -race).
func TestConcurrent(t *testing.T) {
	t.Parallel()
	tok := load(t, "qwen3")
	items := corpus(t)
	want := make([][]int, len(items))
	for i, it := range items {
		if !it.Long {
			want[i] = tok.Encode(it.Text)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range items {
				i := (k + g*37) % len(items)
				if items[i].Long {
					continue
				}
				if got := tok.Encode(items[i].Text); !slices.Equal(got, want[i]) {
					errs <- fmt.Sprintf("goroutine %d item %d: differs", g, i)
					return
				}
				if n := tok.Count(items[i].Text); n != len(want[i]) {
					errs <- fmt.Sprintf("goroutine %d item %d: Count %d", g, i, n)
					return
				}
				_ = tok.Decode(want[i])
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func FuzzEncode(f *testing.F) {
	for _, s := range []string{"", "Hello <|im_start|>world", "it'S 123 \r\n\t  x", "\xff\xfe", "e\u0301 日本", "<think>\n</think>", strings.Repeat(" ", 100)} {
		f.Add(s)
	}
	tok := load(f, "qwen3")
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.Encode(s)
		if n := tok.Count(s); n != len(ids) {
			t.Fatalf("Count = %d, len(Encode) = %d", n, len(ids))
		}
		if !utf8.ValidString(s) {
			return
		}
		if got, want := tok.Decode(ids), norm.NFC.String(s); got != want && !strings.Contains(s, "<|") && !strings.Contains(s, "<") {
			t.Fatalf("Decode(Encode(%q)) = %q, want NFC %q", s, got, want)
		}
	})
}

func FuzzLoad(f *testing.F) {
	f.Add(tiny("", "", "", "", ""))
	f.Add(tiny(`{"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]], "ignore_merges": true, "unk_token": "a", "fuse_unk": true}`, `{"type":"NFC"}`, "", "", ""))
	f.Add(`{"added_tokens": [{"id": 9, "content": "<x>", "special": true, "normalized": false, "lstrip": true, "rstrip": true, "single_word": true}], "model": {"vocab": {"\u0120": 0}, "merges": []}, "pre_tokenizer": {"type": "ByteLevel"}, "decoder": {"type": "ByteLevel"}}`)
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := bpe.Load(strings.NewReader(s))
		if err != nil {
			if !errors.Is(err, bpe.ErrMalformed) && !errors.Is(err, bpe.ErrUnsupported) {
				t.Fatalf("error matches neither ErrMalformed nor ErrUnsupported: %v", err)
			}
			return
		}
		for _, in := range []string{"", "ab ab", "<x> a\xff", "'s  \n"} {
			if ids := tok.Encode(in); len(ids) != tok.Count(in) {
				t.Fatalf("Count differs on %q", in)
			}
			_ = tok.Decode(tok.Encode(in))
		}
	})
}
