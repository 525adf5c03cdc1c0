package bpe

import (
	"errors"
	"fmt"
)

// ErrUnsupported is matched (errors.Is) by every *UnsupportedError: the file is
// a valid tokenizer.json that uses a feature this package does not implement
// exactly, so it is refused rather than allowed to miscount.
var ErrUnsupported = errors.New("unsupported tokenizer feature")

// ErrMalformed is matched (errors.Is) by errors for files that are not a
// usable tokenizer.json: bad JSON, a missing model, a merge naming a token
// that is not in the vocabulary, and the like.
var ErrMalformed = errors.New("malformed tokenizer file")

// UnsupportedError names a tokenizer.json feature that is refused.
type UnsupportedError struct {
	// Feature names what is unsupported, e.g. `model type "Unigram"` or
	// `normalizer "Lowercase"`.
	Feature string
}

func (e *UnsupportedError) Error() string {
	return "bpe: unsupported tokenizer feature: " + e.Feature
}

// Is reports whether target is ErrUnsupported.
func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }

func unsupported(format string, args ...any) error {
	return &UnsupportedError{Feature: fmt.Sprintf(format, args...)}
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("bpe: %s: %w", fmt.Sprintf(format, args...), ErrMalformed)
}
