package bpe

import (
	"bytes"
	"encoding/json"
	"errors"

	"golang.org/x/text/unicode/norm"
)

// fileJSON is the part of a tokenizer.json that decides encoding.
type fileJSON struct {
	AddedTokens   []addedTokenJSON `json:"added_tokens"`
	Normalizer    json.RawMessage  `json:"normalizer"`
	PreTokenizer  json.RawMessage  `json:"pre_tokenizer"`
	PostProcessor json.RawMessage  `json:"post_processor"`
	Decoder       json.RawMessage  `json:"decoder"`
	Truncation    json.RawMessage  `json:"truncation"`
	Padding       json.RawMessage  `json:"padding"`
}

type addedTokenJSON struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized *bool  `json:"normalized"`
	Special    bool   `json:"special"`
}

type modelJSON struct {
	Type                    *string          `json:"type"`
	Dropout                 *float64         `json:"dropout"`
	UnkToken                *string          `json:"unk_token"`
	ContinuingSubwordPrefix *string          `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string          `json:"end_of_word_suffix"`
	FuseUnk                 bool             `json:"fuse_unk"`
	ByteFallback            bool             `json:"byte_fallback"`
	IgnoreMerges            bool             `json:"ignore_merges"`
	Vocab                   map[string]int64 `json:"-"`
}

// component is any typed normalizer, pre-tokenizer or decoder object.
type component struct {
	Type          string            `json:"type"`
	Normalizers   []json.RawMessage `json:"normalizers"`
	Pretokenizers []json.RawMessage `json:"pretokenizers"`
	Pattern       *struct {
		Regex  *string `json:"Regex"`
		String *string `json:"String"`
	} `json:"pattern"`
	Behavior       string `json:"behavior"`
	Invert         bool   `json:"invert"`
	AddPrefixSpace bool   `json:"add_prefix_space"`
	UseRegex       *bool  `json:"use_regex"`
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// parseNormalizer flattens the normalizer into Unicode normal forms applied
// in order.
func parseNormalizer(raw json.RawMessage, depth int) ([]norm.Form, error) {
	if isNull(raw) {
		return nil, nil
	}
	if depth > 8 {
		return nil, unsupported("normalizer Sequence nested deeper than 8")
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, malformed("normalizer: %v", err)
	}
	switch c.Type {
	case "NFC":
		return []norm.Form{norm.NFC}, nil
	case "NFD":
		return []norm.Form{norm.NFD}, nil
	case "NFKC":
		return []norm.Form{norm.NFKC}, nil
	case "NFKD":
		return []norm.Form{norm.NFKD}, nil
	case "Sequence":
		var forms []norm.Form
		for _, sub := range c.Normalizers {
			f, err := parseNormalizer(sub, depth+1)
			if err != nil {
				return nil, err
			}
			forms = append(forms, f...)
		}
		return forms, nil
	case "":
		return nil, malformed("normalizer without a type")
	}
	return nil, unsupported("normalizer %q", c.Type)
}

// stage is one pre-tokenization step applied to every piece of the last:
// an optional leading space, then an optional split.
type stage struct {
	prefixSpace bool
	split       splitter
}

// parsePreTokenizer accepts ByteLevel, alone or last in a Sequence after
// Split(Regex, Isolated) steps with a recognised regex.
func parsePreTokenizer(raw json.RawMessage) ([]stage, error) {
	if isNull(raw) {
		return nil, unsupported("pre_tokenizer null (a byte-level BPE needs the ByteLevel pre-tokenizer)")
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, malformed("pre_tokenizer: %v", err)
	}
	steps := []json.RawMessage{raw}
	if c.Type == "Sequence" {
		steps = c.Pretokenizers
	}
	var stages []stage
	byteLevel := false
	for i, sub := range steps {
		var s component
		if err := json.Unmarshal(sub, &s); err != nil {
			return nil, malformed("pre_tokenizer step %d: %v", i, err)
		}
		if byteLevel {
			return nil, unsupported("pre_tokenizer %q after ByteLevel", s.Type)
		}
		switch s.Type {
		case "ByteLevel":
			byteLevel = true
			st := stage{prefixSpace: s.AddPrefixSpace}
			if s.UseRegex == nil || *s.UseRegex { // HF's default is use_regex=true
				st.split = splitterFor(patternGPT2)
			}
			stages = append(stages, st)
		case "Split":
			if s.Pattern == nil || s.Pattern.Regex == nil {
				return nil, unsupported("pre_tokenizer Split without a Regex pattern")
			}
			if s.Behavior != "Isolated" {
				return nil, unsupported("pre_tokenizer Split behavior %q", s.Behavior)
			}
			if s.Invert {
				return nil, unsupported("pre_tokenizer Split with invert")
			}
			sp := splitterFor(*s.Pattern.Regex)
			if sp == nil {
				return nil, unsupported("pre_tokenizer Split regex %q", *s.Pattern.Regex)
			}
			stages = append(stages, stage{split: sp})
		case "":
			return nil, malformed("pre_tokenizer step %d without a type", i)
		default:
			return nil, unsupported("pre_tokenizer %q", s.Type)
		}
	}
	if !byteLevel {
		return nil, unsupported("pre_tokenizer without ByteLevel")
	}
	return stages, nil
}

func parseDecoder(raw json.RawMessage) error {
	if isNull(raw) {
		return unsupported("decoder null (a byte-level BPE needs the ByteLevel decoder)")
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return malformed("decoder: %v", err)
	}
	if c.Type != "ByteLevel" {
		return unsupported("decoder %q", c.Type)
	}
	return nil
}

// parseMerges reads merges written as "a b" strings (a string starting with
// "#version" is skipped and not ranked, as HF does) or as ["a", "b"] pairs,
// calling add with each merge's rank.
func parseMerges(raw json.RawMessage, add func(rank int, a, b []byte) error) error {
	if raw == nil {
		return nil
	}
	s := &jscan{data: raw}
	rank := 0
	err := s.array(func() error {
		switch s.peek() {
		case '"':
			l, err := s.str()
			if err != nil {
				return err
			}
			if bytes.HasPrefix(l, []byte("#version")) {
				return nil
			}
			i := bytes.IndexByte(l, ' ')
			if i < 0 || bytes.IndexByte(l[i+1:], ' ') >= 0 {
				return malformed("merge %d %q is not two tokens separated by one space", rank+1, l)
			}
			rank++
			return add(rank-1, l[:i], l[i+1:])
		case '[':
			var pair [2][]byte
			n := 0
			err := s.array(func() error {
				p, err := s.str()
				if err != nil {
					return err
				}
				if n < 2 {
					pair[n] = p
				}
				n++
				return nil
			})
			if err != nil {
				return err
			}
			if n != 2 {
				return malformed("merge %d has %d tokens, want 2", rank+1, n)
			}
			rank++
			return add(rank-1, pair[0], pair[1])
		}
		return s.fail("a merge must be a string or a pair")
	})
	if err == nil {
		err = s.end()
	}
	if err != nil && !errors.Is(err, ErrMalformed) {
		return malformed("merges: %v", err)
	}
	return err
}

func checkModel(m *modelJSON, hasMerges bool) error {
	if m.Type != nil && *m.Type != "BPE" {
		return unsupported("model type %q (only BPE)", *m.Type)
	}
	if m.Type == nil && !hasMerges {
		return unsupported("model without type or merges (only BPE)")
	}
	if m.Dropout != nil && *m.Dropout != 0 {
		return unsupported("BPE dropout %v", *m.Dropout)
	}
	if m.ByteFallback {
		return unsupported("BPE byte_fallback")
	}
	if m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "" {
		return unsupported("BPE continuing_subword_prefix %q", *m.ContinuingSubwordPrefix)
	}
	if m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "" {
		return unsupported("BPE end_of_word_suffix %q", *m.EndOfWordSuffix)
	}
	if m.Vocab == nil {
		return malformed("model has no vocab")
	}
	return nil
}
