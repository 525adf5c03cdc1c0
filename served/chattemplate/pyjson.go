package chattemplate

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// Errors from PythonJSON. Only a *SyntaxError matches ErrInvalidJSON: it is the
// json.JSONDecodeError case, which vLLM turns into {} for tool call arguments.
// The others are failures vLLM reports (json.loads raises a ValueError or
// RecursionError, or the render cannot be tokenized).
var (
	// ErrInvalidJSON is matched by every *SyntaxError.
	ErrInvalidJSON = errors.New("invalid JSON")
	// ErrIntTooLong reports an integer literal of more than 4300 digits,
	// which Python (3.11+) refuses to convert.
	ErrIntTooLong = errors.New("integer literal exceeds 4300 digits")
	// ErrTooDeep reports arrays/objects nested deeper than MaxJSONDepth.
	ErrTooDeep = errors.New("JSON nested too deeply")
	// ErrLoneSurrogate reports a \uD800–\uDFFF escape without its pair: Python
	// decodes it, but the resulting text cannot be encoded as UTF-8 and so
	// cannot be tokenized.
	ErrLoneSurrogate = errors.New("JSON string has an unpaired surrogate escape")
)

// MaxJSONDepth bounds the nesting of arrays and objects PythonJSON accepts.
// Python's json module has no fixed limit — it fails with RecursionError near
// the interpreter's recursion limit (1000 frames, less the caller's depth) —
// so the boundary is approximate.
const MaxJSONDepth = 900

// pyMaxIntDigits is sys.int_info.default_max_str_digits.
const pyMaxIntDigits = 4300

// SyntaxError is a JSON syntax error at byte Offset of the input.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

// Is makes every SyntaxError match ErrInvalidJSON.
func (e *SyntaxError) Is(target error) bool { return target == ErrInvalidJSON }

// PythonJSON re-serialises a JSON text the way vLLM's templates see it:
// json.dumps(json.loads(text), ensure_ascii=False) in Python, which is what a
// chat template's `x | tojson` prints for a tool call's arguments.
//
// It reads text as Python's json.loads does — the literals NaN, Infinity and
// -Infinity are accepted, integers are exact whatever their size (up to 4300
// digits), a repeated object key keeps its first position and its last value,
// only space, tab, CR and LF count as whitespace — and writes it as json.dumps
// does: ", " and ": " separators, key order kept, non-ASCII characters
// (U+2028 too) written as they are, control characters escaped (\n, \t, …,
// else \u00XX in lower-case hex), floats in Python's repr (1.0, 1e-07,
// 2.5e+20, 1e+16, Infinity, NaN). Invalid UTF-8 in text is read as U+FFFD per
// byte, as Go's encoding/json sends it.
//
// Errors: a *SyntaxError (matching ErrInvalidJSON), ErrIntTooLong, ErrTooDeep
// or ErrLoneSurrogate.
func PythonJSON(text string) (string, error) {
	text = wireString(text)
	buf := make([]byte, 0, len(text)+len(text)/4+2)
	if out, ok := appendPythonFast(buf, text); ok {
		return string(out), nil
	}
	v, err := parsePython(text)
	if err != nil {
		return "", err
	}
	return string(v.appendPython(buf)), nil
}

// jsonKind is the type of a decoded JSON value.
type jsonKind uint8

const (
	jsonNull jsonKind = iota
	jsonFalse
	jsonTrue
	jsonNumber // text holds Python's repr of the number
	jsonString // text holds the decoded string
	jsonArray
	jsonObject
)

// jsonValue is a decoded JSON value in the shape Python's json.loads builds:
// object keys in first-insertion order, numbers already in their Python repr.
type jsonValue struct {
	kind  jsonKind
	text  string
	keys  []string    // object keys
	items []jsonValue // array elements, or object values (parallel to keys)
}

// parsePython decodes s as Python's json.loads(s) does.
func parsePython(s string) (jsonValue, error) {
	p := pyParser{s: s}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return jsonValue{}, err
	}
	p.skipSpace()
	if p.i != len(p.s) {
		return jsonValue{}, p.syntax("extra data")
	}
	if p.loneSurrogate {
		return jsonValue{}, ErrLoneSurrogate
	}
	return v, nil
}

type pyParser struct {
	s string
	i int
	// loneSurrogate is set when a string held an unpaired surrogate escape.
	// Python decodes it fine (the failure comes later, when the render is
	// encoded), so it must not hide a syntax error further on.
	loneSurrogate bool
}

func (p *pyParser) syntax(msg string) error { return &SyntaxError{Offset: p.i, Msg: msg} }

func (p *pyParser) skipSpace() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *pyParser) hasPrefix(lit string) bool {
	return len(p.s)-p.i >= len(lit) && p.s[p.i:p.i+len(lit)] == lit
}

func (p *pyParser) value(depth int) (jsonValue, error) {
	if p.i >= len(p.s) {
		return jsonValue{}, p.syntax("expecting value")
	}
	switch c := p.s[p.i]; {
	case c == '"':
		p.i++
		s, err := p.str()
		return jsonValue{kind: jsonString, text: s}, err
	case c == '{':
		if depth >= MaxJSONDepth {
			return jsonValue{}, ErrTooDeep
		}
		return p.object(depth + 1)
	case c == '[':
		if depth >= MaxJSONDepth {
			return jsonValue{}, ErrTooDeep
		}
		return p.array(depth + 1)
	case c == 'n' && p.hasPrefix("null"):
		p.i += 4
		return jsonValue{kind: jsonNull}, nil
	case c == 't' && p.hasPrefix("true"):
		p.i += 4
		return jsonValue{kind: jsonTrue}, nil
	case c == 'f' && p.hasPrefix("false"):
		p.i += 5
		return jsonValue{kind: jsonFalse}, nil
	case c == 'N' && p.hasPrefix("NaN"):
		p.i += 3
		return jsonValue{kind: jsonNumber, text: "NaN"}, nil
	case c == 'I' && p.hasPrefix("Infinity"):
		p.i += 8
		return jsonValue{kind: jsonNumber, text: "Infinity"}, nil
	case c == '-' && p.hasPrefix("-Infinity"):
		p.i += 9
		return jsonValue{kind: jsonNumber, text: "-Infinity"}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return jsonValue{}, p.syntax("expecting value")
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number mirrors _match_number_unicode of CPython's Modules/_json.c.
func (p *pyParser) number() (jsonValue, error) {
	start := p.i
	i := p.i
	if p.s[i] == '-' {
		i++
		if i >= len(p.s) {
			return jsonValue{}, p.syntax("expecting value")
		}
	}
	switch {
	case p.s[i] >= '1' && p.s[i] <= '9':
		for i++; i < len(p.s) && isDigit(p.s[i]); i++ {
		}
	case p.s[i] == '0':
		i++
	default:
		return jsonValue{}, p.syntax("expecting value")
	}
	isFloat := false
	if i+1 < len(p.s) && p.s[i] == '.' && isDigit(p.s[i+1]) {
		isFloat = true
		for i += 2; i < len(p.s) && isDigit(p.s[i]); i++ {
		}
	}
	if i < len(p.s) && (p.s[i] == 'e' || p.s[i] == 'E') {
		e := i
		i++
		if i < len(p.s) && (p.s[i] == '-' || p.s[i] == '+') {
			i++
		}
		j := i
		for ; i < len(p.s) && isDigit(p.s[i]); i++ {
		}
		if i > j {
			isFloat = true
		} else {
			i = e
		}
	}
	lit := p.s[start:i]
	p.i = i
	if !isFloat {
		digits := lit
		if digits[0] == '-' {
			digits = digits[1:]
		}
		if len(digits) > pyMaxIntDigits {
			return jsonValue{}, ErrIntTooLong
		}
		if digits == "0" {
			lit = "0" // int("-0") == 0
		}
		return jsonValue{kind: jsonNumber, text: lit}, nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		// Unreachable: lit matched the JSON number grammar.
		return jsonValue{}, p.syntax("bad number " + strconv.Quote(lit))
	}
	return jsonValue{kind: jsonNumber, text: string(appendPyFloat(nil, f))}, nil
}

// str decodes a string body after its opening quote, as CPython's
// scanstring_unicode does with strict=True.
func (p *pyParser) str() (string, error) {
	start := p.i
	// Fast path: no escapes.
	for i := p.i; i < len(p.s); i++ {
		c := p.s[i]
		if c == '"' {
			p.i = i + 1
			return p.s[start:i], nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			p.i = i
			return "", p.syntax("invalid control character in string")
		}
	}
	var b []byte
	for {
		if p.i >= len(p.s) {
			return "", &SyntaxError{Offset: start - 1, Msg: "unterminated string"}
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return string(b), nil
		case c < 0x20:
			return "", p.syntax("invalid control character in string")
		case c != '\\':
			b = append(b, c)
			p.i++
			continue
		}
		p.i++ // the backslash
		if p.i >= len(p.s) {
			return "", &SyntaxError{Offset: start - 1, Msg: "unterminated string"}
		}
		e := p.s[p.i]
		p.i++
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.syntax(`invalid \uXXXX escape`)
			}
			if r >= 0xd800 && r <= 0xdbff && p.hasPrefix(`\u`) {
				save := p.i
				p.i += 2
				r2, ok := p.hex4()
				if ok && r2 >= 0xdc00 && r2 <= 0xdfff {
					r = 0x10000 + (r-0xd800)<<10 + (r2 - 0xdc00)
				} else {
					// Python keeps the lone high surrogate and reads the
					// next escape on its own (it is checked again then).
					p.i = save
				}
			}
			if r >= 0xd800 && r <= 0xdfff {
				p.loneSurrogate = true
				r = utf8.RuneError
			}
			b = utf8.AppendRune(b, r)
		default:
			p.i--
			return "", p.syntax("invalid \\escape")
		}
	}
}

func (p *pyParser) hex4() (rune, bool) {
	if len(p.s)-p.i < 4 {
		return 0, false
	}
	var r rune
	for k := 0; k < 4; k++ {
		c := p.s[p.i+k]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	p.i += 4
	return r, true
}

func (p *pyParser) object(depth int) (jsonValue, error) {
	p.i++ // {
	v := jsonValue{kind: jsonObject}
	var index map[string]int // key positions, once the object is not small
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return v, nil
	}
	for {
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return jsonValue{}, p.syntax("expecting property name enclosed in double quotes")
		}
		p.i++
		key, err := p.str()
		if err != nil {
			return jsonValue{}, err
		}
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return jsonValue{}, p.syntax("expecting ':' delimiter")
		}
		p.i++
		p.skipSpace()
		item, err := p.value(depth)
		if err != nil {
			return jsonValue{}, err
		}
		// A dict keeps a repeated key at its first position, with the last value.
		if k, ok := lookupKey(v.keys, index, key); ok {
			v.items[k] = item
		} else {
			v.keys = append(v.keys, key)
			v.items = append(v.items, item)
			if index != nil {
				index[key] = len(v.keys) - 1
			} else if len(v.keys) > smallObject {
				index = make(map[string]int, 2*len(v.keys))
				for k, key := range v.keys {
					index[key] = k
				}
			}
		}
		p.skipSpace()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return v, nil
		}
		if p.i >= len(p.s) || p.s[p.i] != ',' {
			return jsonValue{}, p.syntax("expecting ',' delimiter")
		}
		p.i++
		p.skipSpace()
	}
}

// smallObject is the key count up to which repeated keys are found by a scan.
const smallObject = 16

func lookupKey(keys []string, index map[string]int, key string) (int, bool) {
	if index != nil {
		k, ok := index[key]
		return k, ok
	}
	for k := range keys {
		if keys[k] == key {
			return k, true
		}
	}
	return 0, false
}

func (p *pyParser) array(depth int) (jsonValue, error) {
	p.i++ // [
	v := jsonValue{kind: jsonArray}
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return v, nil
	}
	for {
		item, err := p.value(depth)
		if err != nil {
			return jsonValue{}, err
		}
		v.items = append(v.items, item)
		p.skipSpace()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return v, nil
		}
		if p.i >= len(p.s) || p.s[p.i] != ',' {
			return jsonValue{}, p.syntax("expecting ',' delimiter")
		}
		p.i++
		p.skipSpace()
	}
}

// appendPython appends json.dumps(v, ensure_ascii=False).
func (v *jsonValue) appendPython(b []byte) []byte {
	switch v.kind {
	case jsonNull:
		return append(b, "null"...)
	case jsonFalse:
		return append(b, "false"...)
	case jsonTrue:
		return append(b, "true"...)
	case jsonNumber:
		return append(b, v.text...)
	case jsonString:
		return appendPyString(b, v.text)
	case jsonArray:
		b = append(b, '[')
		for k := range v.items {
			if k > 0 {
				b = append(b, ", "...)
			}
			b = v.items[k].appendPython(b)
		}
		return append(b, ']')
	default: // jsonObject
		b = append(b, '{')
		for k := range v.items {
			if k > 0 {
				b = append(b, ", "...)
			}
			b = appendPyString(b, v.keys[k])
			b = append(b, ": "...)
			b = v.items[k].appendPython(b)
		}
		return append(b, '}')
	}
}

const hexDigits = "0123456789abcdef"

// appendPyString appends s as json.dumps(s, ensure_ascii=False) writes it.
func appendPyString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			b = append(b, s[start:i]...)
			b = appendPyByte(b, c)
			start = i + 1
		}
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendPyByte appends the ASCII character c as json.dumps writes it inside
// a string: \" \\ \n \r \t \b \f, other control characters as \u00xx.
func appendPyByte(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	}
	if c < 0x20 {
		return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
	}
	return append(b, c)
}

// appendPyFloat appends Python's repr of f (as json.dumps writes a float):
// the shortest digits that round-trip, in positional notation when the
// decimal exponent is in [-4, 16), otherwise as d.ddde±XX.
func appendPyFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // -d.ddde±dd
	neg := e[0] == '-'
	if neg {
		e = e[1:]
	}
	// Split into digits and exponent.
	var digits [24]byte
	nd := 0
	k := 0
	for ; k < len(e) && e[k] != 'e'; k++ {
		if e[k] != '.' {
			digits[nd] = e[k]
			nd++
		}
	}
	exp, _ := strconv.Atoi(string(e[k+1:]))
	decpt := exp + 1 // position of the decimal point relative to digits
	if neg {
		b = append(b, '-')
	}
	if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			b = append(b, '0', '.')
			for z := 0; z < -decpt; z++ {
				b = append(b, '0')
			}
			b = append(b, digits[:nd]...)
		case decpt >= nd:
			b = append(b, digits[:nd]...)
			for z := nd; z < decpt; z++ {
				b = append(b, '0')
			}
			b = append(b, '.', '0')
		default:
			b = append(b, digits[:decpt]...)
			b = append(b, '.')
			b = append(b, digits[decpt:nd]...)
		}
		return b
	}
	b = append(b, digits[0])
	if nd > 1 {
		b = append(b, '.')
		b = append(b, digits[1:nd]...)
	}
	b = append(b, 'e')
	x := decpt - 1
	if x < 0 {
		b = append(b, '-')
		x = -x
	} else {
		b = append(b, '+')
	}
	if x < 10 {
		b = append(b, '0')
	}
	return strconv.AppendInt(b, int64(x), 10)
}

// wireString returns s as the server decodes it after Go's encoding/json
// sent it: each byte of invalid UTF-8 becomes U+FFFD.
func wireString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}
