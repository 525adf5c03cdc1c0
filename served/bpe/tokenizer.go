package bpe

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Tokenizer is a loaded byte-level BPE tokenizer. It is immutable after Load
// and safe for concurrent use by any number of goroutines.
type Tokenizer struct {
	forms  []norm.Form // the normalizer, flattened
	stages []stage     // the pre-tokenizer
	raw    *matcher    // added tokens matched before normalization
	normed *matcher    // added tokens matched after it

	vocab        map[string]int32 // token bytes → ID, byte-level tokens only
	byteID       [256]int32       // the ID of each single byte, -1 if absent
	merges       mergeTable
	ignoreMerges bool
	unkID        int32 // -1 without an unk_token
	fuseUnk      bool

	tokens  []string // during Load only
	decOff  []uint32 // decBlob[decOff[id]:decOff[id+1]] is id's bytes
	decBlob string

	cache *pieceCache

	added     []AddedToken
	modelSize int
	vocabSize int
}

// Encode returns the token IDs of text, identical to HF tokenizers'
// encode(text, add_special_tokens=False).ids: added tokens are split out
// first, the rest is normalized, pre-tokenized and merged; no post-processor
// runs. Invalid UTF-8 is first replaced as String::from_utf8_lossy does.
func (t *Tokenizer) Encode(text string) []int {
	e := encoder{t: t, out: make([]int, 0, len(text)/3+1)}
	e.run(text)
	e.release()
	return e.out
}

// Count returns len(t.Encode(text)) without building the slice.
func (t *Tokenizer) Count(text string) int {
	e := encoder{t: t, countOnly: true}
	e.run(text)
	e.release()
	return e.n
}

// Decode returns the text of ids as HF tokenizers' decode(ids,
// skip_special_tokens=False) does with the ByteLevel decoder: added tokens
// are written as their content, IDs outside the vocabulary are skipped, and
// byte sequences that are not valid UTF-8 become U+FFFD as in
// String::from_utf8_lossy.
func (t *Tokenizer) Decode(ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		if id >= 0 && id+1 < len(t.decOff) {
			b.WriteString(t.decBlob[t.decOff[id]:t.decOff[id+1]])
		}
	}
	return lossy(b.String())
}

// TokenBytes returns the raw bytes of one token, which need not be valid
// UTF-8 on their own (a byte-level token can hold part of a character), or
// nil for an unknown ID.
func (t *Tokenizer) TokenBytes(id int) []byte {
	if id < 0 || id+1 >= len(t.decOff) {
		return nil
	}
	return []byte(t.decBlob[t.decOff[id]:t.decOff[id+1]])
}

// AddedTokens returns the added tokens (special and not) in ID order.
func (t *Tokenizer) AddedTokens() []AddedToken {
	out := make([]AddedToken, len(t.added))
	copy(out, t.added)
	return out
}

// VocabSize returns the number of distinct tokens, model vocabulary and
// added tokens together: HF's get_vocab_size(with_added_tokens=True).
func (t *Tokenizer) VocabSize() int { return t.vocabSize }

// encoder is the state of one Encode or Count call.
type encoder struct {
	t         *Tokenizer
	out       []int
	n         int
	countOnly bool
	w         *workspace
	syms      []int32
}

func (e *encoder) release() {
	if e.w != nil {
		e.w.ids = e.syms[:0]
		workspaces.Put(e.w)
		e.w = nil
	}
}

func (e *encoder) emit(id int32) {
	e.n++
	if !e.countOnly {
		e.out = append(e.out, int(id))
	}
}

func (e *encoder) run(text string) {
	text = lossy(text)
	e.t.raw.split(text, e.gap, e.addedToken)
}

func (e *encoder) addedToken(a *addedToken) { e.emit(int32(a.ID)) }

// gap handles text between raw added tokens: normalize, then split out the
// normalized added tokens.
func (e *encoder) gap(s string) {
	s = e.t.normalize(s)
	e.t.normed.split(s, e.pretokenized, e.addedToken)
}

func (e *encoder) pretokenized(s string) { e.stage(0, s) }

// stage runs pre-tokenizer stage k on s, then the later stages on each
// piece, and finally the model.
func (e *encoder) stage(k int, s string) {
	if k == len(e.t.stages) {
		e.model(s)
		return
	}
	st := &e.t.stages[k]
	if st.prefixSpace && !strings.HasPrefix(s, " ") {
		s = " " + s
	}
	if st.split == nil {
		e.stage(k+1, s)
		return
	}
	for i := 0; i < len(s); {
		j := st.split(s, i)
		if j <= i { // cannot happen for the supported patterns; never loop
			j = i + 1
			for j < len(s) && !utf8.RuneStart(s[j]) {
				j++
			}
		}
		e.stage(k+1, s[i:j])
		i = j
	}
}

// model runs BPE on one pre-token.
func (e *encoder) model(piece string) {
	t := e.t
	if len(piece) == 1 && t.byteID[piece[0]] >= 0 {
		e.emit(t.byteID[piece[0]])
		return
	}
	if t.ignoreMerges {
		if id, ok := t.vocab[piece]; ok {
			e.emit(id)
			return
		}
	}
	cacheable := len(piece) <= cacheMaxPiece
	if cacheable {
		if ids, ok := t.cache.get(piece); ok {
			if e.countOnly {
				e.n += len(ids)
			} else {
				e.n += len(ids)
				e.out = append32(e.out, ids)
			}
			return
		}
	}
	if e.w == nil {
		e.w = workspaces.Get().(*workspace)
		e.syms = e.w.ids[:0]
	}
	syms := e.syms[:0]
	pendingUnk := false
	for i := 0; i < len(piece); i++ {
		id := t.byteID[piece[i]]
		if id >= 0 {
			if pendingUnk {
				syms = append(syms, t.unkID)
				pendingUnk = false
			}
			syms = append(syms, id)
			continue
		}
		// A byte missing from the vocabulary is unk_token (consecutive ones
		// fused with fuse_unk) or, without one, dropped, as in HF.
		if t.unkID < 0 {
			continue
		}
		if pendingUnk && !t.fuseUnk {
			syms = append(syms, t.unkID)
		}
		pendingUnk = true
	}
	if pendingUnk {
		syms = append(syms, t.unkID)
	}
	syms = t.merges.merge(syms, e.w)
	if cacheable {
		t.cache.put(piece, syms)
	}
	if e.countOnly {
		e.n += len(syms)
	} else {
		e.n += len(syms)
		e.out = append32(e.out, syms)
	}
	e.syms = syms
}

func append32(dst []int, ids []int32) []int {
	for _, id := range ids {
		dst = append(dst, int(id))
	}
	return dst
}
