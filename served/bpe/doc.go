// Package bpe is an exact, pure-Go implementation of HuggingFace's byte-level
// BPE tokenizers: it loads a tokenizer.json and encodes text to the same IDs
// as the HF tokenizers library (Rust) does for
// encode(text, add_special_tokens=False), with no cgo and no network.
//
// The contract:
//
//   - Load reads a tokenizer.json whose model is BPE over the GPT-2 byte-level
//     alphabet. Anything it cannot reproduce exactly is refused with an
//     *UnsupportedError naming the feature (errors.Is(err, ErrUnsupported)):
//     other models (Unigram, WordPiece, WordLevel), BPE dropout,
//     byte_fallback, subword prefixes and suffixes, normalizers other than
//     NFC/NFD/NFKC/NFKD and Sequences of them, pre-tokenizers other than
//     ByteLevel (alone, or last after Split(Regex, Isolated) steps with a
//     recognised regex), decoders other than ByteLevel, truncation and
//     padding. A file that is not a usable tokenizer.json (bad JSON, no
//     model, a merge naming a token missing from the vocabulary) gives an
//     error wrapping ErrMalformed that names the problem. Load never panics.
//   - The recognised Split regexes are Qwen2/2.5/3's, Llama 3's (digits in
//     runs of up to three) and GPT-2's, matched by their exact text. Go's
//     regexp cannot run them (they use (?!\S)), so each has a hand-written
//     scanner reproducing Oniguruma's semantics as HF uses them: \s is
//     Unicode White_Space, \p{L} and \p{N} are Unicode categories (Go's
//     tables, Unicode 15.0), and (?i) folds case as Unicode does ('ſ is a
//     contraction).
//   - Encode follows HF's pipeline: invalid UTF-8 is first replaced by one
//     U+FFFD per maximal invalid subpart (as String::from_utf8_lossy does);
//     added tokens with normalized=false are split out leftmost-longest,
//     honouring lstrip, rstrip and single_word; the rest is normalized and
//     the normalized added tokens are split out; the pre-tokenizer cuts the
//     rest into pieces and each piece is merged by BPE, lowest merge rank
//     first and leftmost on ties, with ignore_merges honoured. Post-processors
//     are never applied (no BOS is added). Count is len(Encode) without the
//     slice. Decode is HF's decode(ids, skip_special_tokens=False).
//   - Merging is O(n log n) in the piece length (a priority queue over a
//     linked list of symbols), so long lines cost linear-ish time.
//
// Exactness is checked by golden tests that compare every ID of a corpus of
// several hundred items (logs, shell, JSON, CRLF, white-space runs, NFD, CJK,
// emoji, special tokens in text, invalid UTF-8, 100 KB lines) with the IDs
// HF tokenizers produced, for Qwen3, Qwen2.5, Llama 3, Llama 3.1 and
// synthetic variants exercising the GPT-2 regex, add_prefix_space,
// ignore_merges and the added-token flags.
//
// Concurrency: a *Tokenizer is immutable after Load and safe for concurrent
// use by any number of goroutines; Encode, Count and Decode share no mutable
// state except pooled scratch buffers.
package bpe
