// Package retry is the module's one retry policy: how often and how long a
// failed call is tried again, used for the model server's chat completions
// (worker), its model list (cmd/worker) and SSH redials (sshexec).
//
// A [Policy] is a value with documented zero values: exponential backoff from
// BaseDelay doubling up to MaxDelay, optional jitter, a MaxTries and a
// Deadline that bound the whole, and a CheckRetry classifier in the manner of
// go-retryablehttp's CheckRetry. [Policy.Do] runs the loop; [Policy.Delay] is
// the schedule for callers that keep their own loop.
//
// A server's Retry-After wins over the computed backoff. It reaches the
// policy in one of two ways: an error in the chain has a
// RetryAfter() time.Duration method (see [RetryAfter]), or the HTTP client's
// transport is wrapped in a [Transport], which records the header of each
// response into the try's context that [Policy.Do] gives the call. The
// second way exists because go-openai's *APIError and *RequestError do not
// keep the response's headers: the transport sees the response before the
// client turns it into an error, and the context ties it to the try. The
// Retry-After wait is not jittered and not capped by MaxDelay, but a wait
// that would end past the Deadline makes the policy give up at once.
//
// Policies are values, safe to copy and to use from several goroutines;
// [Policy.Do] keeps its state on its own stack. The package holds no state.
package retry
