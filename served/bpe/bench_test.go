package bpe_test

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift/served/bpe"
	"github.com/pkoukk/tiktoken-go"
	"golang.org/x/text/unicode/norm"
)

// benchTexts returns the corpus without its ~100 KB lines, those lines, and
// a ~130 KB chat prompt dense in special tokens.
func benchTexts(b *testing.B) (short, long []string, chat string) {
	for _, it := range corpus(b) {
		if it.Long {
			long = append(long, it.Text)
		} else {
			short = append(short, it.Text)
		}
		if it.Name == "chat-prompt" {
			chat = strings.Repeat(it.Text, 8)
		}
	}
	return short, long, chat
}

func totalLen(texts []string) int64 {
	n := 0
	for _, s := range texts {
		n += len(s)
	}
	return int64(n)
}

// tiktokenFor builds pkoukk/tiktoken-go's CoreBPE from the same
// vocabulary: ranks are the IDs (by construction of these vocabularies the
// merge order), the same split regex, and the added tokens as specials.
func tiktokenFor(b *testing.B, tok *bpe.Tokenizer, pattern string) *tiktoken.Tiktoken {
	b.Helper()
	ranks := map[string]int{}
	specials := map[string]int{}
	set := map[string]any{}
	isAdded := map[int]bool{}
	for _, a := range tok.AddedTokens() {
		specials[a.Content] = a.ID
		set[a.Content] = true
		isAdded[a.ID] = true
	}
	for id := range tok.VocabSize() {
		if !isAdded[id] {
			ranks[bpe.TokenBytes(tok, id)] = id
		}
	}
	core, err := tiktoken.NewCoreBPE(ranks, specials, pattern)
	if err != nil {
		b.Fatal(err)
	}
	return tiktoken.NewTiktoken(core, nil, set)
}

func benchEncode(b *testing.B, texts []string, encode func(string) int) {
	b.SetBytes(totalLen(texts))
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range texts {
			encode(s)
		}
	}
}

const qwenPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// BenchmarkEncode measures throughput (MB/s) on the Qwen3 tokenizer, beside
// pkoukk/tiktoken-go (with an NFC pre-pass) on the same inputs.
func BenchmarkEncode(b *testing.B) {
	tok := load(b, "qwen3")
	short, long, chat := benchTexts(b)
	var tk *tiktoken.Tiktoken
	tiktokenEncode := func(s string) int {
		return len(tk.Encode(norm.NFC.String(s), []string{"all"}, nil))
	}
	sets := []struct {
		name  string
		texts []string
	}{{"corpus", short}, {"long-lines", long}, {"chat-130KB", []string{chat}}}
	for _, set := range sets {
		b.Run("bpe/"+set.name, func(b *testing.B) {
			benchEncode(b, set.texts, func(s string) int { return len(tok.Encode(s)) })
		})
		b.Run("bpe-count/"+set.name, func(b *testing.B) {
			benchEncode(b, set.texts, tok.Count)
		})
		b.Run("tiktoken-go/"+set.name, func(b *testing.B) {
			if tk == nil {
				tk = tiktokenFor(b, tok, qwenPattern)
			}
			benchEncode(b, set.texts, tiktokenEncode)
		})
	}
}

// BenchmarkEncodeParallel is Encode on the corpus from GOMAXPROCS goroutines
// sharing one tokenizer.
func BenchmarkEncodeParallel(b *testing.B) {
	tok := load(b, "qwen3")
	short, _, _ := benchTexts(b)
	b.SetBytes(totalLen(short))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			for _, s := range short {
				tok.Encode(s)
			}
		}
	})
}

// BenchmarkLoad measures loading Qwen3's tokenizer.json (uncompressed, from
// memory) and reports the live heap held by one loaded tokenizer.
func BenchmarkLoad(b *testing.B) {
	raw := readTokenizerJSON(b, "qwen3")
	b.SetBytes(int64(len(raw)))
	var tok *bpe.Tokenizer
	for b.Loop() {
		var err error
		if tok, err = bpe.Load(bytes.NewReader(raw)); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	// Live heap with the tokenizer, minus live heap once it is garbage.
	var with, without runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&with)
	runtime.KeepAlive(tok)
	tok = nil
	runtime.GC()
	runtime.ReadMemStats(&without)
	b.ReportMetric(float64(int64(with.HeapAlloc)-int64(without.HeapAlloc))/(1<<20), "live-heap-MB")
}
