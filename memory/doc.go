// Package memory is Nightshift's sliding-window conversation memory: it keeps
// every prompt sent to the model inside the context window, at any number of
// attempts, while keeping what the model needs not to repeat itself.
//
// A conversation is a pinned instruction (the system message: the rule, the
// ban list, host facts) and task message, which are never trimmed, followed by
// turns. A turn is one assistant message (text and tool calls), the tool
// results paired to it by tool_call_id, and the feedback the worker adds
// (re-check result, blocked-command notice, repetition warning, malformed-call
// error). The newest turn is the current turn.
//
// Before each model call, Prompt assesses system + history + current turn +
// the completion reserve with package budget. Under the soft limit the
// conversation is sent as is. Over it, the last K turns stay verbatim and
// every older turn is replaced, for good, by one deterministic past-tense line
// from package distill, gathered into one history block after the task
// message; when the block passes its share of the budget its oldest lines are
// merged into group lines, so the prompt stays bounded at any length. If the
// prompt is still over the hard limit (window − reserve − margin), Prompt
// degrades step by step — K shrinks towards 1, long tool outputs are cut to
// head and tail keeping every error line, and the current turn's own outputs
// are cut last — and if even that fails it returns an *OverflowError with the
// breakdown, before any model is called.
//
// Rendered prompts never contain a tool result without its tool call or a
// tool call without its result. Every command tried is kept in a Ledger that
// distillation never evicts; the exact messages of every turn stay
// retrievable through Transcript, and each prompt and each distillation is
// reported to the caller's Observer.
//
// A Memory belongs to one conversation and is not safe for concurrent use;
// the counters it is given must be safe for use from the calling goroutine.
package memory
