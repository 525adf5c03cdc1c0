// Package worker is Nightshift's attempt loop: it fixes one compliance rule
// on one host with a model served by an OpenAI-compatible server (vLLM).
//
// Fix checks the rule first (a compliant rule costs no model call), probes the
// host once (os-release, package manager, init system), assembles the
// instruction — the rule, the ban list, the host facts and hints — and then
// makes attempts. Each attempt asks the model for tool calls: ssh_apply runs a
// command on the target, give_up ends the rule. A command the ban list matches
// is never run; the model is told it was blocked. An exact repeat of a failed
// command gets a warning, and is refused after RefuseRepeats tries. After
// every command that ran the rule's check runs again and its result is fed
// back. The loop stops when the check passes, the model gives up, or the
// attempts run out.
//
// With Config.Lessons, the instruction also carries lessons from the same
// rule on other hosts and in earlier runs (package lessons): as many whole
// lessons, most relevant first, as fit in the instruction's share once the
// rule's own text fits.
//
// Every prompt goes through package memory, which keeps it inside the context
// window; each model call's budget event is logged. Server errors are retried
// with capped, jittered backoff and are not attempts; if the server stays
// down past the retry deadline Fix returns an *UnreachableError. vLLM's
// context-length rejections (both JSON shapes, every message form) are
// recognised: an input overflow makes the memory distil harder and the call is
// retried, an output-budget rejection lowers max_tokens. Malformed model
// output — arguments that are not JSON, an unknown tool, no tool call, an
// empty command — is fed back to the model and counts as an attempt.
//
// A Worker may fix several rules one after another or concurrently; each
// Fix call has its own memory. The Target must allow concurrent Run calls if
// Fix is called concurrently.
package worker
