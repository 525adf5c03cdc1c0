package shell

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// MaxLen is the longest command Parse accepts, in bytes.
const MaxLen = 256 << 10

// ErrUnsafeText matches errors for input bash and the parser could read
// differently (control characters, invalid UTF-8) or that is too long.
var ErrUnsafeText = errors.New("command text cannot be analysed")

// TextError reports a character or size that Parse refuses. It matches
// ErrUnsafeText.
type TextError struct {
	Offset int    // byte offset of the offending character
	What   string // "carriage return (\r)", "invalid UTF-8", …
}

func (e *TextError) Error() string {
	return fmt.Sprintf("%s at byte %d", e.What, e.Offset)
}

// Is matches ErrUnsafeText.
func (e *TextError) Is(target error) bool { return target == ErrUnsafeText }

var controlNames = map[byte]string{
	'\r': `carriage return (\r)`, '\v': `vertical tab (\v)`, '\f': `form feed (\f)`,
	0: "NUL byte", 0x1b: "escape character (0x1b)", 0x7f: "delete character (0x7f)",
}

// CheckText refuses text that bash and the parser could read differently.
func CheckText(src string) error {
	if len(src) > MaxLen {
		return &TextError{Offset: MaxLen, What: fmt.Sprintf("too long to analyse (over %d KiB)", MaxLen>>10)}
	}
	if i := strings.Index(src, "$\\\n"); i >= 0 {
		// bash removes the line continuation and reads $( or ${ (inside
		// double quotes too); the parser reads a literal $.
		return &TextError{Offset: i, What: "a line continuation right after $ (bash joins it into an expansion)"}
	}
	for i := 0; i < len(src); {
		c := src[i]
		if c < 0x20 && c != '\t' && c != '\n' || c == 0x7f {
			name, ok := controlNames[c]
			if !ok {
				name = fmt.Sprintf("control character 0x%02x", c)
			}
			return &TextError{Offset: i, What: name}
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(src[i:])
		if r == utf8.RuneError && n <= 1 {
			return &TextError{Offset: i, What: "invalid UTF-8"}
		}
		i += n
	}
	return nil
}

// Parse parses src as bash after CheckText. Errors are a *TextError or
// the parser's syntax error.
func Parse(src string) (*syntax.File, error) {
	if err := CheckText(src); err != nil {
		return nil, err
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(strings.NewReader(src), "")
	if err != nil {
		return nil, fmt.Errorf("bash would not parse it: %w", err)
	}
	// The parser continues a comment ending in a backslash onto the next
	// line; bash ends every comment at the newline and runs that line.
	var bad *TextError
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.Comment); ok && bad == nil && strings.Contains(c.Text, "\n") {
			bad = &TextError{Offset: int(c.Hash.Offset()), What: "a comment ending in a backslash (bash ends the comment at the newline and runs the next line)"}
		}
		return bad == nil
	})
	if bad != nil {
		return nil, bad
	}
	if strings.Contains(src, "#") {
		// The tree without comments, as callers print it.
		return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	}
	return f, nil
}
