package safety

import (
	"errors"
	"fmt"
)

// ErrBanned matches every error that reports a refused command.
var ErrBanned = errors.New("command is banned")

// ErrBadPattern matches a *PatternError.
var ErrBadPattern = errors.New("invalid ban pattern")

// BannedError reports a command refused by a ban list. It matches ErrBanned.
type BannedError struct {
	Command string
	Ban     Ban
}

func (e *BannedError) Error() string {
	return fmt.Sprintf("command is banned (%s): %s", e.Ban.Reason, e.Ban.Construct)
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
