package safety

import (
	"errors"
	"fmt"
	"regexp"
)

// ErrBanned matches every error that reports a refused command.
var ErrBanned = errors.New("command is banned")

// ErrBadPattern matches a *PatternError.
var ErrBadPattern = errors.New("invalid ban pattern")

// Ban describes why a command was refused.
type Ban struct {
	// Entry names the ban-table entry that matched ("delete-system",
	// "unanalysable", "pattern", ...); see Entries.
	Entry string
	// Pattern describes the entry (built-in bans) or is the regular
	// expression of an added pattern.
	Pattern string
	// Reason says what the command would have done, or why it cannot be
	// checked.
	Reason string
	// Construct is the part of the command that matched: a simple command
	// in normal form (quotes removed, braces expanded, wrappers peeled) or
	// the construct that could not be analysed.
	Construct string
	// Hint, when set, tells the model what to write instead.
	Hint string
}

// String formats the ban as one line: "REASON: CONSTRUCT (ENTRY)".
func (b Ban) String() string {
	s := b.Reason
	if b.Construct != "" {
		s += ": " + b.Construct
	}
	if b.Hint != "" {
		s += "; " + b.Hint
	}
	return s
}

// BannedError reports a command refused by a ban list. It matches ErrBanned.
type BannedError struct {
	Command string
	Ban     Ban
}

func (e *BannedError) Error() string {
	return fmt.Sprintf("command is banned (%s): %s", e.Ban.Reason, e.Ban.Pattern)
}

// Is matches ErrBanned.
func (e *BannedError) Is(target error) bool { return target == ErrBanned }

// PatternError reports an added ban pattern that is not valid. It matches
// ErrBadPattern.
type PatternError struct {
	Index   int
	Pattern string
	Err     error
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("ban pattern %d %q: %v", e.Index, e.Pattern, e.Err)
}

// Is matches ErrBadPattern.
func (e *PatternError) Is(target error) bool { return target == ErrBadPattern }

// Unwrap returns the underlying error.
func (e *PatternError) Unwrap() error { return e.Err }

type pattern struct {
	src string
	re  *regexp.Regexp
}

// BanList decides which commands are never run. The built-in bans are part
// of every BanList, including a nil *BanList; patterns can be added, never
// removed. A BanList is immutable and safe for concurrent use.
type BanList struct {
	extra []pattern
}

// DefaultBanList returns the built-in bans alone.
func DefaultBanList() *BanList { return &BanList{} }

// NewBanList returns the built-in bans plus the given regular expressions.
func NewBanList(patterns []string) (*BanList, error) { return DefaultBanList().With(patterns...) }

// Match reports whether command is banned and why.
func (b *BanList) Match(command string) (Ban, bool) { panic("todo") }

// MatchArgv reports whether running the program argv (argv[0] the program,
// as a path or a name) directly, with no shell in between, is banned.
func (b *BanList) MatchArgv(argv []string) (Ban, bool) { panic("todo") }

// WriteBanned reports whether opening path (absolute) for writing is banned.
func WriteBanned(path string) (Ban, bool) { panic("todo") }

// With returns a new BanList with b's bans and the given patterns.
func (b *BanList) With(patterns ...string) (*BanList, error) { panic("todo") }

// Patterns describes every ban, one line each, for prompts.
func (b *BanList) Patterns() []string { panic("todo") }
