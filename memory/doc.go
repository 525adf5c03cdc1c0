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
// conversation is sent as is — and between compactions it only grows at its
// end: the history block and every turn already shown render to the same
// bytes as in the previous prompt (every feedback message of a verbatim turn
// stays shown), so a server's prefix cache (vLLM's automatic prefix caching)
// serves everything but the new turn. A prompt that would pass the soft
// limit is compacted once, with hysteresis, down to a low-water mark
// (Config.LowWaterPercent of the soft limit): older turns are replaced, for
// good and oldest first, by one deterministic past-tense line from package
// distill — the command, its exit status and most informative output line,
// the files it changed, the re-check's decisive line — in one history block
// after the task message, keeping at least the last K (3) turns verbatim.
// Turns whose lines say the same (the same canonical command with the same
// result) share one line ("Turns 4, 9, 14: …"). When the block passes its
// share of the budget (Config.HistoryTokens), lines give way, each counted
// on one line so every turn stays accounted for: first plain successes
// (exit 0, no error, rule not fixed; the files they changed stay named
// within a sixth of the share), then the oldest distinct failures, whose
// commands the ledger's line names (within a third of the share, the rest
// counted by program), so the prompt stays bounded at any length. A new
// turn's outputs are shown whole while the prompt with them stays under
// the low-water mark, cut (head, tail, error lines) to
// Config.CurrentTokens past it. If the last K turns alone are too large, their
// older outputs are cut — once, for good, deterministically — to head, tail
// and every error line (Config.OutputTokens); past the hard limit (window −
// reserve − margin) the current turn's outputs are cut to no less than twice
// that, then fewer than K turns are kept, then the current turn is cut
// further; if even that fails Prompt returns an *OverflowError with the
// breakdown, before any model is called.
//
// Embedding: New takes the served model (Config.Model, a *served.Model:
// the budget of its window and counts exactly as the server makes them),
// the instruction and the task. Each turn is AddAssistant with the model's
// message, then one AddToolResult per tool call with a Step — the call's
// facts and, once, its output, which the model is shown and the summary
// line is written from — then any AddFeedback. The history block's header
// (Config.HistoryHeader) and the classifier of error lines kept when an
// output is cut (Config.ErrorLine) are the caller's to choose;
// _examples/agent is an agent loop built this way.
//
// Rendered prompts never contain a tool result without its tool call or a
// tool call without its result. Every command tried is kept in a Ledger that
// distillation never evicts, and each prompt and each distillation is
// reported to the caller's Observer.
//
// A Memory belongs to one conversation and is not safe for concurrent use;
// the Model it is given must be safe for use from the calling goroutine (a
// *served.Model is safe for concurrent use).
package memory
