package chattemplate

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// appendPythonFast appends json.dumps(json.loads(s), ensure_ascii=False) to
// dst in one pass, without building a tree. It handles the common case only:
// it reports false — leaving dst's contents beyond len(dst) unspecified — for
// anything else (any error, a repeated or the 33rd key of an object, a
// top-level string, an unpaired surrogate, deep nesting), and the caller then
// uses parsePython, the reference implementation. When it reports true the
// result is identical to parsePython's (FuzzPythonJSON checks this).
func appendPythonFast(dst []byte, s string) ([]byte, bool) {
	var keys [16]span
	e := fastEmitter{s: s, out: dst, keys: keys[:0]}
	e.skipSpace()
	if e.i < len(e.s) && e.s[e.i] == '"' {
		return dst, false
	}
	if !e.value(0) {
		return dst, false
	}
	e.skipSpace()
	if e.i != len(e.s) {
		return dst, false
	}
	return e.out, true
}

type span struct{ start, end int }

type fastEmitter struct {
	s    string
	i    int
	out  []byte
	keys []span // emitted keys of the objects being read, innermost last
}

// maxFastKeys is the key count beyond which an object takes the slow path
// (repeated keys are found by a linear scan here).
const maxFastKeys = 32

func (e *fastEmitter) skipSpace() {
	for e.i < len(e.s) {
		switch e.s[e.i] {
		case ' ', '\t', '\n', '\r':
			e.i++
		default:
			return
		}
	}
}

func (e *fastEmitter) lit(l string) bool {
	if len(e.s)-e.i >= len(l) && e.s[e.i:e.i+len(l)] == l {
		e.i += len(l)
		e.out = append(e.out, l...)
		return true
	}
	return false
}

func (e *fastEmitter) value(depth int) bool {
	if e.i >= len(e.s) {
		return false
	}
	switch c := e.s[e.i]; c {
	case '"':
		e.i++
		return e.str()
	case '{':
		return depth < MaxJSONDepth && e.object(depth+1)
	case '[':
		return depth < MaxJSONDepth && e.array(depth+1)
	case 'n':
		return e.lit("null")
	case 't':
		return e.lit("true")
	case 'f':
		return e.lit("false")
	case 'N':
		return e.lit("NaN")
	case 'I':
		return e.lit("Infinity")
	default:
		if c == '-' && e.lit("-Infinity") {
			return true
		}
		if c == '-' || isDigit(c) {
			return e.number()
		}
		return false
	}
}

func (e *fastEmitter) number() bool {
	start := e.i
	i := e.i
	if e.s[i] == '-' {
		i++
		if i >= len(e.s) {
			return false
		}
	}
	switch {
	case e.s[i] >= '1' && e.s[i] <= '9':
		for i++; i < len(e.s) && isDigit(e.s[i]); i++ {
		}
	case e.s[i] == '0':
		i++
	default:
		return false
	}
	isFloat := false
	if i+1 < len(e.s) && e.s[i] == '.' && isDigit(e.s[i+1]) {
		isFloat = true
		for i += 2; i < len(e.s) && isDigit(e.s[i]); i++ {
		}
	}
	if i < len(e.s) && (e.s[i] == 'e' || e.s[i] == 'E') {
		x := i
		i++
		if i < len(e.s) && (e.s[i] == '-' || e.s[i] == '+') {
			i++
		}
		j := i
		for ; i < len(e.s) && isDigit(e.s[i]); i++ {
		}
		if i > j {
			isFloat = true
		} else {
			i = x
		}
	}
	lit := e.s[start:i]
	e.i = i
	if !isFloat {
		if len(lit) > pyMaxIntDigits {
			return false // the slow path decides
		}
		if lit == "-0" {
			lit = "0"
		}
		e.out = append(e.out, lit...)
		return true
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return false
	}
	e.out = appendPyFloat(e.out, f)
	return true
}

// str emits a string whose opening quote has been read.
func (e *fastEmitter) str() bool {
	e.out = append(e.out, '"')
	start := e.i
	for e.i < len(e.s) {
		c := e.s[e.i]
		switch {
		case c == '"':
			e.out = append(e.out, e.s[start:e.i]...)
			e.out = append(e.out, '"')
			e.i++
			return true
		case c < 0x20:
			return false
		case c != '\\':
			e.i++
			continue
		}
		e.out = append(e.out, e.s[start:e.i]...)
		e.i++
		if e.i >= len(e.s) {
			return false
		}
		esc := e.s[e.i]
		e.i++
		switch esc {
		case '"', '\\':
			e.out = append(e.out, '\\', esc)
		case '/':
			e.out = append(e.out, '/')
		case 'b', 'f', 'n', 'r', 't':
			e.out = append(e.out, '\\', esc)
		case 'u':
			r, ok := e.hex4()
			if !ok {
				return false
			}
			if r >= 0xd800 && r <= 0xdbff {
				if len(e.s)-e.i < 2 || e.s[e.i] != '\\' || e.s[e.i+1] != 'u' {
					return false
				}
				e.i += 2
				r2, ok := e.hex4()
				if !ok || r2 < 0xdc00 || r2 > 0xdfff {
					return false
				}
				r = 0x10000 + (r-0xd800)<<10 + (r2 - 0xdc00)
			} else if r >= 0xdc00 && r <= 0xdfff {
				return false
			}
			if r < 0x80 {
				e.out = appendPyByte(e.out, byte(r))
			} else {
				e.out = utf8.AppendRune(e.out, r)
			}
		default:
			return false
		}
		start = e.i
	}
	return false
}

func (e *fastEmitter) hex4() (rune, bool) {
	if len(e.s)-e.i < 4 {
		return 0, false
	}
	var r rune
	for k := 0; k < 4; k++ {
		c := e.s[e.i+k]
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
	e.i += 4
	return r, true
}

func (e *fastEmitter) object(depth int) bool {
	e.i++
	e.out = append(e.out, '{')
	base := len(e.keys)
	defer func() { e.keys = e.keys[:base] }()
	e.skipSpace()
	if e.i < len(e.s) && e.s[e.i] == '}' {
		e.i++
		e.out = append(e.out, '}')
		return true
	}
	for n := 0; ; n++ {
		if n >= maxFastKeys || e.i >= len(e.s) || e.s[e.i] != '"' {
			return false
		}
		if n > 0 {
			e.out = append(e.out, ", "...)
		}
		e.i++
		ks := len(e.out)
		if !e.str() {
			return false
		}
		key := e.out[ks:]
		for _, k := range e.keys[base:] {
			if string(e.out[k.start:k.end]) == string(key) {
				return false // repeated key
			}
		}
		e.keys = append(e.keys, span{ks, len(e.out)})
		e.skipSpace()
		if e.i >= len(e.s) || e.s[e.i] != ':' {
			return false
		}
		e.i++
		e.out = append(e.out, ": "...)
		e.skipSpace()
		if !e.value(depth) {
			return false
		}
		e.skipSpace()
		if e.i < len(e.s) && e.s[e.i] == '}' {
			e.i++
			e.out = append(e.out, '}')
			return true
		}
		if e.i >= len(e.s) || e.s[e.i] != ',' {
			return false
		}
		e.i++
		e.skipSpace()
	}
}

func (e *fastEmitter) array(depth int) bool {
	e.i++
	e.out = append(e.out, '[')
	e.skipSpace()
	if e.i < len(e.s) && e.s[e.i] == ']' {
		e.i++
		e.out = append(e.out, ']')
		return true
	}
	for n := 0; ; n++ {
		if n > 0 {
			e.out = append(e.out, ", "...)
		}
		if !e.value(depth) {
			return false
		}
		e.skipSpace()
		if e.i < len(e.s) && e.s[e.i] == ']' {
			e.i++
			e.out = append(e.out, ']')
			return true
		}
		if e.i >= len(e.s) || e.s[e.i] != ',' {
			return false
		}
		e.i++
		e.skipSpace()
	}
}
