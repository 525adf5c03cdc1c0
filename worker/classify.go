package worker

// Retryable reports whether a model call's error is worth retrying under the
// worker's policy: a 5xx or 429 answer, a refused, reset or dropped
// connection, or a network timeout. Callers that retry model calls outside
// Fix (package fleet's model-call activity) use it to keep one policy.
func Retryable(err error) bool { return retryable(err) }
