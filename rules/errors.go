package rules

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors. Every error a loading function returns because of a rule
// file's content matches ErrInvalid with errors.Is; the more specific
// sentinels below are matched too when they apply.
var (
	// ErrInvalid is matched by every *ValidationError.
	ErrInvalid = errors.New("invalid rule file")
	// ErrNoRules: a file, directory or document defines no rules.
	ErrNoRules = errors.New("no rules defined")
	// ErrDuplicateID: two rules share an id.
	ErrDuplicateID = errors.New("duplicate rule id")
	// ErrTooLarge: a rule file is larger than MaxFileSize.
	ErrTooLarge = errors.New("rule file too large")
	// ErrNoCheck: a rule has no check to evaluate.
	ErrNoCheck = errors.New("rule has no check")
)

// ValidationError is one problem found in a rule file. Line and Column are
// 1-based; zero when the problem concerns the whole file. Field names the
// offending field as a path such as "rules[2].banned[0]"; empty when the
// problem is not tied to a field (a YAML syntax error, an empty file).
type ValidationError struct {
	File   string
	Line   int
	Column int
	Field  string
	Msg    string
	// Err is a more specific sentinel (ErrNoRules, ErrDuplicateID,
	// ErrTooLarge, safety.ErrBadPattern) or nil.
	Err error
}

// Error formats the problem as "file:line: field: msg", leaving out the
// parts that are unknown.
func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Is reports whether target is ErrInvalid or the error's specific sentinel.
func (e *ValidationError) Is(target error) bool {
	return target == ErrInvalid || (e.Err != nil && target == e.Err)
}

// Unwrap returns the specific sentinel, if any.
func (e *ValidationError) Unwrap() error { return e.Err }

// ValidationErrors is every problem found in one Load or Parse, in file and
// line order. errors.As finds the individual *ValidationError values.
type ValidationErrors []*ValidationError

// Error lists the problems one per line.
func (es ValidationErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap exposes the individual errors to errors.Is and errors.As.
func (es ValidationErrors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}
