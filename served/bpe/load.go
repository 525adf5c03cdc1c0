package bpe

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/nightshift-dev/nightshift/internal/readfile"
)

// maxID bounds token IDs so the decode table stays small.
const maxID = 1 << 24

// MaxFileSize bounds a tokenizer.json (the largest common ones are about
// 35 MB); Load refuses more with an error wrapping ErrMalformed.
const MaxFileSize = 128 << 20

// LoadFile loads a HuggingFace tokenizer.json from path, which must be a
// regular file (a FIFO or a device such as /dev/zero is refused by name).
func LoadFile(path string) (*Tokenizer, error) {
	f, err := readfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("bpe: open tokenizer: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > MaxFileSize {
		return nil, fmt.Errorf("%w (file %s)", malformed("tokenizer.json is larger than %d MiB", MaxFileSize>>20), path)
	}
	t, err := Load(f)
	if err != nil {
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	return t, nil
}

// Load reads a HuggingFace tokenizer.json. It returns an error wrapping
// ErrMalformed when the file is not a usable tokenizer.json, and an
// *UnsupportedError (errors.Is(err, ErrUnsupported)) naming the feature
// when it needs something this package does not reproduce exactly.
func Load(r io.Reader) (*Tokenizer, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("bpe: read tokenizer: %w", err)
	}
	if len(data) > MaxFileSize {
		return nil, malformed("tokenizer.json is larger than %d MiB", MaxFileSize>>20)
	}
	f, m, mergesRaw, err := parseFile(data)
	if err != nil {
		return nil, err
	}
	if !isNull(f.Truncation) {
		return nil, unsupported("truncation (Encode never truncates)")
	}
	if !isNull(f.Padding) {
		return nil, unsupported("padding (Encode never pads)")
	}
	t := &Tokenizer{unkID: -1, cache: newPieceCache()}
	if t.forms, err = parseNormalizer(f.Normalizer, 0); err != nil {
		return nil, err
	}
	if t.stages, err = parsePreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}
	if err := parseDecoder(f.Decoder); err != nil {
		return nil, err
	}
	if err := checkModel(m, mergesRaw != nil); err != nil {
		return nil, err
	}
	if err := t.buildModel(m, mergesRaw); err != nil {
		return nil, err
	}
	if err := t.buildAdded(f.AddedTokens, m.Vocab); err != nil {
		return nil, err
	}
	return t, nil
}

// parseFile reads the top level of a tokenizer.json and its model, leaving
// the merges raw.
func parseFile(data []byte) (*fileJSON, *modelJSON, json.RawMessage, error) {
	var f fileJSON
	var m *modelJSON
	var merges json.RawMessage
	s := &jscan{data: data}
	err := s.object(func(key []byte) error {
		if string(key) == "model" {
			if s.peek() == 'n' {
				_, err := s.skip()
				return err
			}
			var err error
			m, merges, err = parseModel(s)
			return err
		}
		raw, err := s.skip()
		if err != nil {
			return err
		}
		var dst any
		switch string(key) {
		case "added_tokens":
			dst = &f.AddedTokens
		case "normalizer":
			f.Normalizer = raw
		case "pre_tokenizer":
			f.PreTokenizer = raw
		case "post_processor":
			f.PostProcessor = raw
		case "decoder":
			f.Decoder = raw
		case "truncation":
			f.Truncation = raw
		case "padding":
			f.Padding = raw
		}
		if dst != nil {
			if err := json.Unmarshal(raw, dst); err != nil {
				return fmt.Errorf("%s: %v", key, err)
			}
		}
		return nil
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return nil, nil, nil, malformed("tokenizer.json: %v", err)
	}
	if m == nil {
		return nil, nil, nil, malformed("tokenizer.json has no model")
	}
	return &f, m, merges, nil
}

// parseModel reads the model object: the vocab with the fast scanner, the
// merges left raw, the other fields through encoding/json.
func parseModel(s *jscan) (*modelJSON, json.RawMessage, error) {
	var m modelJSON
	var merges json.RawMessage
	rest := map[string]json.RawMessage{}
	vocabNotObject := false
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "vocab":
			if s.peek() != '{' { // not a BPE vocabulary: refused below
				_, err := s.skip()
				vocabNotObject = true
				return err
			}
			m.Vocab = make(map[string]int64, 1<<17)
			return s.object(func(tok []byte) error {
				id, err := s.integer()
				if err != nil {
					return fmt.Errorf("vocab %q: %w", tok, err)
				}
				if _, dup := m.Vocab[string(tok)]; dup {
					return fmt.Errorf("vocab: token %q appears twice", tok)
				}
				m.Vocab[string(tok)] = id
				return nil
			})
		case "merges": // parseMerges reads them strictly
			raw, err := s.skipNested()
			if err != nil {
				return err
			}
			if !isNull(raw) {
				merges = raw
			}
			return nil
		}
		raw, err := s.skip()
		if err != nil {
			return err
		}
		rest[string(key)] = raw
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("model: %w", err)
	}
	if len(rest) > 0 {
		b, err := json.Marshal(rest)
		if err == nil {
			err = json.Unmarshal(b, &m)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("model: %w", err)
		}
	}
	if vocabNotObject && (m.Type == nil || *m.Type == "BPE") {
		return nil, nil, errors.New("model: vocab is not an object of token: id")
	}
	return &m, merges, nil
}

// buildModel builds the vocabulary, merge table and decode table.
func (t *Tokenizer) buildModel(m *modelJSON, merges json.RawMessage) error {
	top := int64(-1)
	for tok, id := range m.Vocab {
		if id < 0 || id >= maxID {
			return unsupported("token %q has id %d outside [0, %d)", tok, id, maxID)
		}
		top = max(top, id)
	}
	t.tokens = make([]string, top+1)
	t.modelSize = len(m.Vocab)
	taken := make([]bool, top+1)
	for tok, id := range m.Vocab {
		if taken[id] {
			a, b := min(tok, t.tokens[id]), max(tok, t.tokens[id])
			return malformed("vocab: tokens %q and %q have the same id %d", a, b, id)
		}
		taken[id] = true
		t.tokens[id] = tok
	}
	t.ignoreMerges = m.IgnoreMerges
	if m.UnkToken != nil {
		id, ok := m.Vocab[*m.UnkToken]
		if !ok {
			return malformed("unk_token %q is not in the vocab", *m.UnkToken)
		}
		t.unkID, t.fuseUnk = int32(id), m.FuseUnk
	}
	t.merges = make(mergeTable, len(m.Vocab))
	var buf []byte
	return parseMerges(merges, func(rank int, a, b []byte) error {
		ia, okA := m.Vocab[string(a)]
		ib, okB := m.Vocab[string(b)]
		if !okA || !okB {
			missing := a
			if okA {
				missing = b
			}
			return malformed("merge %d (%q %q) names token %q, which is not in the vocab", rank+1, a, b, missing)
		}
		buf = append(append(buf[:0], a...), b...)
		c, ok := m.Vocab[string(buf)]
		if !ok {
			return malformed("merge %d (%q %q) makes %q, which is not in the vocab", rank+1, a, b, buf)
		}
		// As in HF, a repeated pair keeps its last rank.
		t.merges[pairKey(int32(ia), int32(ib))] = uint64(rank)<<32 | uint64(uint32(c))
		return nil
	})
}

// buildAdded registers the added tokens the way HF's AddedVocabulary does
// when a tokenizer.json is deserialized: a token whose content is already in
// the vocabulary takes that ID, any other the next free one, and the split
// patterns are the special tokens then the others, partitioned by their
// normalized flag.
//
// Two added tokens the file gives one id, or an added token the file gives
// the id of another vocabulary token, are refused as malformed (HF only
// warns, then numbers them its own way).
func (t *Tokenizer) buildAdded(list []addedTokenJSON, vocab map[string]int64) error {
	stated := map[int]string{}
	for _, j := range list {
		if other, dup := stated[j.ID]; dup && other != j.Content {
			a, b := min(other, j.Content), max(other, j.Content)
			return malformed("added_tokens: tokens %q and %q have the same id %d", a, b, j.ID)
		}
		stated[j.ID] = j.Content
		if j.ID >= 0 && j.ID < len(t.tokens) && t.tokens[j.ID] != "" && t.tokens[j.ID] != j.Content {
			return malformed("added_tokens: token %q has id %d, the vocab's %q", j.Content, j.ID, t.tokens[j.ID])
		}
	}
	byContent := map[string]int32{}
	byID := map[int32]*addedToken{}
	var specials, others []*addedToken
	specialSet := map[string]bool{}
	maxAdded := int32(-1)
	for i := range list {
		j := &list[i]
		tok := &addedToken{
			AddedToken: AddedToken{Content: j.Content, Special: j.Special},
			singleWord: j.SingleWord, lstrip: j.LStrip, rstrip: j.RStrip,
			normalized: j.Normalized == nil || *j.Normalized,
		}
		if j.Normalized == nil {
			tok.normalized = !j.Special
		}
		if tok.Special && tok.Content != "" && !specialSet[tok.Content] {
			specials = append(specials, tok)
			specialSet[tok.Content] = true
		}
		if tok.Content == "" || slices.ContainsFunc(values(byID), func(o *addedToken) bool { return sameAdded(o, tok) }) {
			continue
		}
		id, ok := byContent[tok.Content]
		if !ok {
			if v, inVocab := vocab[tok.Content]; inVocab {
				id, ok = int32(v), true
			}
		}
		if !ok {
			size := int32(t.modelSize)
			switch {
			case maxAdded < 0:
				id = size
			case maxAdded >= size || size == 0:
				id = maxAdded + 1
			default:
				id = size
			}
		}
		if id >= maxID {
			return unsupported("added token %q would have id %d, beyond %d", tok.Content, id, maxID)
		}
		tok.ID = int(id)
		byContent[tok.Content] = id
		byID[id] = tok
		maxAdded = max(maxAdded, id)
		if !specialSet[tok.Content] {
			others = append(others, tok)
		}
	}
	var raw, normed []*addedToken
	var rawPat, normPat []string
	for _, tok := range append(specials, others...) {
		id := byContent[tok.Content]
		flags := byID[id]
		if tok.normalized {
			normed = append(normed, flags)
			normPat = append(normPat, t.normalize(tok.Content))
		} else {
			raw = append(raw, flags)
			rawPat = append(rawPat, tok.Content)
		}
	}
	t.raw = newMatcher(raw, rawPat)
	t.normed = newMatcher(normed, normPat)

	// The decode table covers the model vocabulary and the added tokens.
	for id, tok := range byID {
		if int(id) >= len(t.tokens) {
			t.tokens = append(t.tokens, make([]string, int(id)+1-len(t.tokens))...)
		}
		t.tokens[id] = tok.Content
		t.added = append(t.added, tok.AddedToken)
	}
	slices.SortFunc(t.added, func(a, b AddedToken) int { return a.ID - b.ID })
	t.vocabSize = t.modelSize
	for _, a := range t.added {
		if _, inVocab := vocab[a.Content]; !inVocab {
			t.vocabSize++
		}
	}
	t.buildDecode(vocab)
	return nil
}

func values(m map[int32]*addedToken) []*addedToken {
	out := make([]*addedToken, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func sameAdded(a, b *addedToken) bool {
	return a.Content == b.Content && a.Special == b.Special && a.singleWord == b.singleWord &&
		a.lstrip == b.lstrip && a.rstrip == b.rstrip && a.normalized == b.normalized
}

// buildDecode precomputes each ID's bytes as HF's ByteLevel decoder yields
// them: the byte-level decoding when every rune is in the alphabet, else the
// token's own UTF-8. Model tokens written wholly in the byte-level alphabet
// also go in the encoding vocabulary, keyed by their bytes (slices of the
// same blob); the others can never come out of byte-level BPE.
func (t *Tokenizer) buildDecode(vocab map[string]int64) {
	t.decOff = make([]uint32, len(t.tokens)+1)
	byteLevel := make([]bool, len(t.tokens))
	var blob []byte
	for id, tok := range t.tokens {
		if raw, ok := fromByteLevel(tok); ok {
			blob = append(blob, raw...)
			byteLevel[id] = true
		} else {
			blob = append(blob, tok...)
		}
		t.decOff[id+1] = uint32(len(blob))
	}
	t.decBlob = string(blob)
	t.vocab = make(map[string]int32, t.modelSize)
	for id, tok := range t.tokens {
		if byteLevel[id] {
			if v, ok := vocab[tok]; ok && int(v) == id {
				t.vocab[t.decBlob[t.decOff[id]:t.decOff[id+1]]] = int32(id)
			}
		}
	}
	for b := range 256 {
		t.byteID[b] = -1
		if id, ok := t.vocab[string([]byte{byte(b)})]; ok {
			t.byteID[b] = id
		}
	}
	t.tokens = nil
}

// normalize applies the declared normalizer.
func (t *Tokenizer) normalize(s string) string {
	for _, f := range t.forms {
		if !f.IsNormalString(s) {
			s = f.String(s)
		}
	}
	return s
}
