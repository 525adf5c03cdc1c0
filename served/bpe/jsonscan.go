package bpe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// jscan is a minimal JSON reader for the two large parts of a
// tokenizer.json, the vocabulary and the merges, which encoding/json reads
// several times slower. Everything else goes through encoding/json.
type jscan struct {
	data []byte
	pos  int
}

var errJSON = errors.New("invalid JSON")

func (s *jscan) fail(what string) error {
	return fmt.Errorf("%w: %s at byte %d", errJSON, what, s.pos)
}

func (s *jscan) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek skips white space and returns the next byte, 0 at the end.
func (s *jscan) peek() byte {
	s.ws()
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

func (s *jscan) expect(c byte) error {
	if s.peek() != c {
		return s.fail(fmt.Sprintf("want %q", c))
	}
	s.pos++
	return nil
}

// str reads a string and returns its bytes: a slice of the input when it
// has no escapes (the common case), else a fresh decoding. The closing quote
// and a backslash are found with bytes.IndexByte and the bytes before them
// are read once (control characters and UTF-8 together): under the race
// detector every byte a Go loop reads is a call, and a tokenizer file is
// megabytes of strings.
func (s *jscan) str() ([]byte, error) {
	if err := s.expect('"'); err != nil {
		return nil, err
	}
	start := s.pos
	q := bytes.IndexByte(s.data[start:], '"')
	if q < 0 {
		q = len(s.data) - start // no quote: check to the end, then fail
	}
	b := s.data[start : start+q]
	if bs := bytes.IndexByte(b, '\\'); bs >= 0 {
		b = b[:bs]
	}
	valid := true // UTF-8
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case c < 0x20:
			s.pos = start + i
			return nil, s.fail("control character in string")
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			valid = valid && !(r == utf8.RuneError && n == 1)
			i += n
		}
	}
	switch {
	case start+len(b) == len(s.data):
		s.pos = len(s.data)
		return nil, s.fail("unterminated string")
	case s.data[start+len(b)] == '\\', !valid:
		return s.slowStr(start - 1)
	}
	s.pos = start + len(b) + 1
	return b, nil
}

// slowStr decodes the string starting at the quote at q with encoding/json.
func (s *jscan) slowStr(q int) ([]byte, error) {
	end := q + 1
	for end < len(s.data) && s.data[end] != '"' {
		if s.data[end] == '\\' {
			end++
		}
		end++
	}
	if end >= len(s.data) {
		s.pos = len(s.data)
		return nil, s.fail("unterminated string")
	}
	var out string
	if err := json.Unmarshal(s.data[q:end+1], &out); err != nil {
		s.pos = q
		return nil, s.fail("bad string")
	}
	s.pos = end + 1
	return []byte(out), nil
}

// skip passes over one value of any kind and returns its raw bytes,
// checked with json.Valid.
func (s *jscan) skip() (json.RawMessage, error) {
	s.ws()
	start := s.pos
	depth := 0
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch c {
		case '"':
			if _, err := s.str(); err != nil {
				return nil, err
			}
			if depth == 0 {
				return s.valid(start)
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 { // the end of a scalar inside a container
				return s.valid(start)
			}
			depth--
			if depth == 0 {
				s.pos++
				return s.valid(start)
			}
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return s.valid(start)
			}
		}
		s.pos++
	}
	if depth == 0 && s.pos > start {
		return s.valid(start)
	}
	return nil, s.fail("unterminated value")
}

// skipNested passes over one value as skip does, checking only where it
// ends (its strings and brackets), not json.Valid: for a value that is read
// again strictly (the merges, by parseMerges), so that its megabytes are
// not scanned byte by byte twice more. Strings are passed with
// bytes.IndexByte.
func (s *jscan) skipNested() (json.RawMessage, error) {
	s.ws()
	start := s.pos
	depth := 0
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case '"':
			end := s.pos + 1
			for {
				q := bytes.IndexByte(s.data[end:], '"')
				if q < 0 {
					s.pos = len(s.data)
					return nil, s.fail("unterminated string")
				}
				end += q
				bs := 0 // backslashes before the quote
				for end-1-bs > s.pos && s.data[end-1-bs] == '\\' {
					bs++
				}
				if bs%2 == 0 {
					break
				}
				end++
			}
			s.pos = end + 1
			if depth == 0 {
				return s.data[start:s.pos], nil
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return s.data[start:s.pos], nil
			}
			depth--
			if depth == 0 {
				s.pos++
				return s.data[start:s.pos], nil
			}
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return s.data[start:s.pos], nil
			}
		}
		s.pos++
	}
	if depth == 0 && s.pos > start {
		return s.data[start:s.pos], nil
	}
	return nil, s.fail("unterminated value")
}

func (s *jscan) valid(start int) (json.RawMessage, error) {
	raw := s.data[start:s.pos]
	if !json.Valid(raw) {
		s.pos = start
		return nil, s.fail("invalid value")
	}
	return raw, nil
}

// object calls field for each key of an object; field must consume the value.
func (s *jscan) object(field func(key []byte) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	if s.peek() == '}' {
		s.pos++
		return nil
	}
	for {
		key, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := field(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return s.fail("want ',' or '}'")
		}
	}
}

// array calls elem for each element of an array; elem must consume it.
func (s *jscan) array(elem func() error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	if s.peek() == ']' {
		s.pos++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return s.fail("want ',' or ']'")
		}
	}
}

// integer reads a non-negative integer without fraction or exponent.
func (s *jscan) integer() (int64, error) {
	s.ws()
	start := s.pos
	var v int64
	for s.pos < len(s.data) && '0' <= s.data[s.pos] && s.data[s.pos] <= '9' {
		if v > 1<<40 {
			return 0, s.fail("integer too large")
		}
		v = v*10 + int64(s.data[s.pos]-'0')
		s.pos++
	}
	if s.pos == start {
		return 0, s.fail("want a non-negative integer")
	}
	if s.data[start] == '0' && s.pos-start > 1 {
		return 0, s.fail("leading zero")
	}
	if s.pos < len(s.data) && (s.data[s.pos] == '.' || s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		return 0, s.fail("want an integer")
	}
	return v, nil
}

func (s *jscan) end() error {
	if s.peek() != 0 || s.pos != len(s.data) {
		return s.fail("trailing data")
	}
	return nil
}
