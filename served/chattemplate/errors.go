package chattemplate

import "errors"

var (
	// ErrUnknownTemplate is returned by Detect for a chat template this
	// package has no renderer for.
	ErrUnknownTemplate = errors.New("unknown chat template")
	// ErrUnknownFamily is returned by Render for a Family value that is not
	// one of the constants.
	ErrUnknownFamily = errors.New("unknown chat template family")
	// ErrInvalidRequest is matched by every *FieldError: the request is one
	// vLLM would refuse (HTTP 400), or go-openai would refuse to send, or
	// (with Options.Strict) one vLLM accepts but that is surely a mistake.
	ErrInvalidRequest = errors.New("invalid chat request")
)

// FieldError names the request field that makes a request invalid, in
// vLLM's dotted form: "messages[3].tool_calls[0].function.arguments".
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns the underlying cause.
func (e *FieldError) Unwrap() error { return e.Err }

// Is makes every FieldError match ErrInvalidRequest.
func (e *FieldError) Is(target error) bool { return target == ErrInvalidRequest }
