package bpe_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/served/bpe"
)

var update = flag.Bool("update", false, "regenerate testdata/tokenizer/golden by running scripts/golden-tokenizer.js (needs node and `npm ci` in scripts/)")

// moduleRoot is two levels up from this package.
const moduleRoot = "../.."

type corpusItem struct {
	Name   string `json:"name"`
	Text   string `json:"text"`
	Base64 string `json:"base64"`
	Long   bool   `json:"long"`
}

var corpusOnce = sync.OnceValues(func() ([]corpusItem, error) {
	path := filepath.Join(moduleRoot, "testdata/tokenizer/corpus/corpus.jsonl")
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var items []corpusItem
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var it corpusItem
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, len(items)+1, err)
		}
		if it.Base64 != "" {
			raw, err := base64.StdEncoding.DecodeString(it.Base64)
			if err != nil {
				return nil, fmt.Errorf("%s item %s: %w", path, it.Name, err)
			}
			it.Text = string(raw)
		}
		items = append(items, it)
	}
	return items, sc.Err()
})

func corpus(tb testing.TB) []corpusItem {
	tb.Helper()
	items, err := corpusOnce()
	if err != nil {
		tb.Fatalf("golden corpus: %v (regenerate with python3 testdata/tokenizer/corpus/generate.py)", err)
	}
	return items
}

// tokenizerPath finds a tokenizer: the Qwen files embedded by budget, the
// Llama files fetched by scripts/fetch-tokenizers.sh.
func tokenizerPath(name string) string {
	switch name {
	case "qwen3", "qwen2.5":
		return filepath.Join("../models", name, "tokenizer.json.gz")
	}
	dir := os.Getenv("NIGHTSHIFT_TOKENIZERS_DIR")
	if dir == "" {
		dir = filepath.Join(moduleRoot, ".cache/tokenizers")
	}
	return filepath.Join(dir, name, "tokenizer.json")
}

// readTokenizerJSON returns a tokenizer.json's bytes, failing the test
// loudly when it is absent.
func readTokenizerJSON(tb testing.TB, name string) []byte {
	tb.Helper()
	path := tokenizerPath(name)
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("tokenizer %s: %v\n\tthe Llama files are not committed (Meta's licence): run scripts/fetch-tokenizers.sh (make deps does)", name, err)
	}
	if filepath.Ext(path) == ".gz" {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			tb.Fatalf("tokenizer %s: %v", name, err)
		}
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(zr); err != nil {
			tb.Fatalf("tokenizer %s: %v", name, err)
		}
		raw = buf.Bytes()
	}
	return raw
}

type variant struct {
	Name   string                     `json:"name"`
	Base   string                     `json:"base"`
	Set    map[string]json.RawMessage `json:"set"`
	Model  map[string]json.RawMessage `json:"model"`
	Append []json.RawMessage          `json:"append_added_tokens"`
}

func variants(tb testing.TB) []variant {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join(moduleRoot, "testdata/tokenizer/variants.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var v struct{ Variants []variant }
	if err := json.Unmarshal(raw, &v); err != nil {
		tb.Fatal(err)
	}
	return v.Variants
}

// tokenizerJSON returns the tokenizer.json of a real tokenizer or of a
// synthetic variant, patched exactly as scripts/golden-tokenizer.js does.
func tokenizerJSON(tb testing.TB, name string) []byte {
	tb.Helper()
	for _, v := range variants(tb) {
		if v.Name != name {
			continue
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(readTokenizerJSON(tb, v.Base), &doc); err != nil {
			tb.Fatal(err)
		}
		for k, val := range v.Set {
			doc[k] = val
		}
		var model, added = map[string]json.RawMessage{}, []json.RawMessage{}
		mustJSON(tb, json.Unmarshal(doc["model"], &model))
		mustJSON(tb, json.Unmarshal(doc["added_tokens"], &added))
		for k, val := range v.Model {
			model[k] = val
		}
		doc["model"] = mustMarshal(tb, model)
		doc["added_tokens"] = mustMarshal(tb, append(added, v.Append...))
		return mustMarshal(tb, doc)
	}
	return readTokenizerJSON(tb, name)
}

func mustJSON(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

func mustMarshal(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	mustJSON(tb, err)
	return b
}

var (
	tokMu    sync.Mutex
	tokCache = map[string]*bpe.Tokenizer{}
)

// load returns the named tokenizer, loaded once per test binary.
func load(tb testing.TB, name string) *bpe.Tokenizer {
	tb.Helper()
	tokMu.Lock()
	defer tokMu.Unlock()
	if t, ok := tokCache[name]; ok {
		return t
	}
	t, err := bpe.Load(bytes.NewReader(tokenizerJSON(tb, name)))
	if err != nil {
		tb.Fatalf("load %s: %v", name, err)
	}
	tokCache[name] = t
	return t
}

type golden struct {
	Tokenizer    string            `json:"tokenizer"`
	Reference    string            `json:"reference"`
	CorpusSHA256 string            `json:"corpus_sha256"`
	IDs          [][]int           `json:"ids"`
	Decoded      map[string]string `json:"decoded"`
}

var allTokenizers = []string{"qwen3", "qwen2.5", "llama3", "llama3.1", "synthetic-gpt2-regex", "synthetic-gpt2-prefix", "synthetic-flags"}

func readGolden(t *testing.T, name string) golden {
	t.Helper()
	path := filepath.Join(moduleRoot, "testdata/tokenizer/golden", name+".json.gz")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden IDs for %s: %v\n\tregenerate: (cd scripts && npm ci) && scripts/fetch-tokenizers.sh && node scripts/golden-tokenizer.js (or go test -run TestGolden -update)", name, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var g golden
	if err := json.NewDecoder(zr).Decode(&g); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return g
}

// raceStride is how TestGolden samples the corpus under -race: every
// raceStride-th item (testenv.Race). The whole corpus is checked by the
// run without -race that make test also does (the Makefile's FULL list).
const raceStride = 5

// TestGolden compares every ID of every corpus item with what HF tokenizers
// (Rust) produced, for the four real tokenizers and the synthetic variants,
// and checks Count and Decode against the same data. Under -race it checks
// every raceStride-th item (a deterministic sample; the tokenizer's
// concurrency is TestConcurrent's), without it every item.
func TestGolden(t *testing.T) {
	t.Parallel()
	if *update {
		cmd := exec.Command("node", "scripts/golden-tokenizer.js")
		cmd.Dir = moduleRoot
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("node scripts/golden-tokenizer.js: %v", err)
		}
	}
	items := corpus(t)
	corpusRaw, err := os.ReadFile(filepath.Join(moduleRoot, "testdata/tokenizer/corpus/corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(corpusRaw)
	for _, name := range allTokenizers {
		t.Run(name, func(t *testing.T) {
			g := readGolden(t, name)
			if g.CorpusSHA256 != hex.EncodeToString(sum[:]) || len(g.IDs) != len(items) {
				t.Fatalf("golden %s is for another corpus (sha256 %s, %d items; corpus has %d): regenerate with node scripts/golden-tokenizer.js", name, g.CorpusSHA256, len(g.IDs), len(items))
			}
			tok := load(t, name)
			bad, checked := 0, 0
			for i, it := range items {
				if testenv.Race && i%raceStride != 0 {
					continue
				}
				checked++
				got := tok.Encode(it.Text)
				want := g.IDs[i]
				if !slices.Equal(got, want) {
					bad++
					if bad <= 10 {
						k := 0
						for k < len(got) && k < len(want) && got[k] == want[k] {
							k++
						}
						t.Errorf("item %d %q: %d IDs, want %d; first difference at %d: got %v, want %v",
							i, it.Name, len(got), len(want), k, window(got, k), window(want, k))
					}
					continue
				}
				if n := tok.Count(it.Text); n != len(want) {
					t.Errorf("item %d %q: Count = %d, want %d", i, it.Name, n, len(want))
				}
				wantText, ok := g.Decoded[strconv.Itoa(i)]
				if !ok {
					if it.Base64 != "" {
						t.Fatalf("golden %s has no decoded text for byte item %d: regenerate it", name, i)
					}
					wantText = it.Text
				}
				if d := tok.Decode(want); d != wantText {
					t.Errorf("item %d %q: Decode = %q, want %q", i, it.Name, clip(d), clip(wantText))
				}
			}
			if bad > 0 {
				t.Errorf("%s: %d of %d items differ from HF tokenizers", name, bad, checked)
			}
			if checked < len(items) {
				t.Logf("%s: %d of the %d items checked (every %dth: -race); make test checks them all without -race", name, checked, len(items), raceStride)
			}
		})
	}
}

func window(ids []int, k int) []int {
	return ids[max(0, k-2):min(len(ids), k+4)]
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
