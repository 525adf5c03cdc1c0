package worker

// Retryable reports whether a model call's error is worth retrying under the
// worker's policy: a 5xx or 429 answer, a refused, reset or dropped
// connection, or a network timeout. Callers that retry model calls outside
// Fix (package fleet's model-call activity) use it to keep one policy.
func Retryable(err error) bool { return retryable(err) }

// ServerMessage returns the model server's own message in a go-openai error
// (the flat or nested vLLM error body; see ServerError), else the body or
// err.Error(). It is for people to read: the worker classifies errors by
// their type (ServerError), never by this text.
func ServerMessage(err error) string { return errorMessage(err) }
