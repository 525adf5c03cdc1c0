package bpe

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// AddedToken is one of a tokenizer's added tokens (special or not), which are
// split out of the text before pre-tokenization and map to a single ID.
type AddedToken struct {
	ID      int
	Content string
	Special bool
}

// addedToken is an added token with its matching flags.
type addedToken struct {
	AddedToken
	singleWord, lstrip, rstrip, normalized bool
}

// matcher finds added tokens in text, leftmost-longest and non-overlapping,
// as the aho-corasick automaton (MatchKind::LeftmostLongest) of HF's
// AddedVocabulary does, then applies each token's single_word, lstrip and
// rstrip flags as HF's find_matches does.
type matcher struct {
	first  [256]bool
	nodes  []trieNode
	tokens []*addedToken
}

type trieNode struct {
	edges []trieEdge
	token int32 // index into tokens, or -1
}

type trieEdge struct {
	b    byte
	node int32
}

func newMatcher(tokens []*addedToken, patterns []string) *matcher {
	m := &matcher{nodes: []trieNode{{token: -1}}, tokens: tokens}
	for ti, p := range patterns {
		if p == "" {
			continue
		}
		m.first[p[0]] = true
		n := int32(0)
		for i := 0; i < len(p); i++ {
			child := int32(-1)
			for _, e := range m.nodes[n].edges {
				if e.b == p[i] {
					child = e.node
					break
				}
			}
			if child < 0 {
				child = int32(len(m.nodes))
				m.nodes = append(m.nodes, trieNode{token: -1})
				m.nodes[n].edges = append(m.nodes[n].edges, trieEdge{p[i], child})
			}
			n = child
		}
		if m.nodes[n].token < 0 { // the first of duplicate patterns wins
			m.nodes[n].token = int32(ti)
		}
	}
	return m
}

func (m *matcher) empty() bool { return len(m.nodes) == 1 }

// longestAt returns the longest pattern matching at s[i:]: its token index
// and end, or -1.
func (m *matcher) longestAt(s string, i int) (int32, int) {
	best, end := int32(-1), -1
	n := int32(0)
	for j := i; j < len(s); j++ {
		child := int32(-1)
		for _, e := range m.nodes[n].edges {
			if e.b == s[j] {
				child = e.node
				break
			}
		}
		if child < 0 {
			break
		}
		n = child
		if t := m.nodes[n].token; t >= 0 {
			best, end = t, j+1
		}
	}
	return best, end
}

// split calls gap for each stretch of s between added tokens and tok for
// each added token found, in order. Gaps are never empty.
func (m *matcher) split(s string, gap func(string), tok func(*addedToken)) {
	if m.empty() {
		if s != "" {
			gap(s)
		}
		return
	}
	startOffset := 0
	for i := 0; i < len(s); {
		if !m.first[s[i]] {
			i++
			continue
		}
		ti, stop := m.longestAt(s, i)
		if ti < 0 {
			i++
			continue
		}
		start, next := i, stop
		t := m.tokens[ti]
		if t.singleWord && !((start == 0 || !endsWithWord(s[:start])) && (stop == len(s) || !startsWithWord(s[stop:]))) {
			i = next
			continue
		}
		if t.lstrip {
			start = max(len(strings.TrimRightFunc(s[:start], isWhiteSpace)), startOffset)
		}
		if t.rstrip {
			stop += len(s[stop:]) - len(strings.TrimLeftFunc(s[stop:], isWhiteSpace))
		}
		if startOffset < start {
			gap(s[startOffset:start])
		}
		tok(t)
		startOffset = stop
		i = next
	}
	if startOffset < len(s) {
		gap(s[startOffset:])
	}
}

func isWhiteSpace(r rune) bool { return unicode.Is(unicode.White_Space, r) }

// isWord is the regex class \w of Rust's regex crate (Unicode): Alphabetic,
// marks, decimal numbers, connector punctuation and Join_Control.
func isWord(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.Is(unicode.Nd, r) ||
		unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Pc, r) ||
		unicode.Is(unicode.Other_Alphabetic, r) || unicode.Is(unicode.Join_Control, r)
}

func endsWithWord(s string) bool {
	r, n := utf8.DecodeLastRuneInString(s)
	return n > 0 && isWord(r)
}

func startsWithWord(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	return n > 0 && isWord(r)
}
