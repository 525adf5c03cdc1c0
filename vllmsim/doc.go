// Package vllmsim is a simulated vLLM OpenAI-compatible server whose
// answers come from scripted, deterministic policies. It lets the worker be
// tested, and demonstrated, without a GPU against a server that accepts and
// refuses exactly what vLLM would.
//
// # What is reproduced
//
//   - GET /v1/models: vLLM's ModelList (object "list"; each card with id,
//     object "model", created, owned_by "vllm", root, parent, max_model_len
//     and a model_permission entry). GET /health (200, empty body) and
//     GET /version ({"version": …}, a representative release for the
//     configured ErrorStyle).
//   - POST /tokenize at the server root, in both forms: {model, prompt,
//     add_special_tokens} and {model, messages, tools,
//     add_generation_prompt (default true), …}, answering {count,
//     max_model_len, tokens, token_strs: null}. Tokenizing never validates
//     the length, as in vLLM.
//   - POST /v1/chat/completions, non-streaming (stream=true gets a clear
//     400). The prompt is counted with the injected Counter exactly as vLLM
//     counts it (or with Config.Prompts, a PromptCounter such as a test's
//     independent reference, which /tokenize then uses too); max_completion_tokens or max_tokens (the first that is
//     non-zero, as vLLM reads them) is checked against max_model_len with the
//     rules and message wording of the configured ErrorStyle, in the
//     configured ErrorShape (flat before vLLM 0.10.1, nested after). With
//     neither field, the completion budget is max_model_len − prompt.
//   - The answer is the Policy's Generation, rendered as Qwen3 writes tool
//     calls (<tool_call>{"name": …, "arguments": …}</tool_call>), cut at the
//     completion budget (finish_reason "length") and parsed back the way
//     vLLM's hermes tool parser does: content is null when the output holds
//     only tool calls, arguments are re-serialised like Python's
//     json.dumps(ensure_ascii=False), broken JSON comes back as plain content.
//     As in vLLM, the parser runs only when the request offers tools and
//     tool_choice is absent or "auto" ("required" and named choices, which
//     vLLM serves with guided decoding, are treated like "auto"); otherwise
//     a <tool_call> block is returned as content.
//     usage.prompt_tokens is the exact count; completion_tokens counts the
//     generated text plus the end-of-turn token (or equals the budget when
//     cut).
//   - Automatic prefix caching, as vLLM's V1 engine does it (on by
//     default): the rendered prompt's token IDs are cut into blocks of
//     Config.BlockSize (16) tokens; each full block is identified by a hash
//     chained over every token before it; a request is served from the
//     cache for its longest run of cached leading blocks, never for its
//     last token (at most floor((prompt−1)/16) blocks); the full blocks of
//     its prompt and of its generation (but the last generated token) are
//     cached afterwards, in a pool of Config.CacheBlocks blocks shared by
//     all requests, evicted least recently used first (a sequence's last
//     blocks before its first). With Config.PromptTokensDetails (vLLM's
//     --enable-prompt-tokens-details) the answer carries
//     usage.prompt_tokens_details.cached_tokens, only when it is not zero
//     (null otherwise, as in vLLM); Record.CachedTokens always has it.
//   - With Config.APIKey, /v1 paths require "Authorization: Bearer KEY" and
//     answer 401 {"error":"Unauthorized"} otherwise, like vLLM's --api-key;
//     /tokenize, /health and /version stay open, as in vLLM.
//
// go-openai surfaces the flat error shape as a *openai.RequestError whose
// Body is the JSON (its Err is nil), and the nested shape as a
// *openai.APIError with Message, Type, Param and Code (an int).
//
// # Policies
//
// A Policy reads a Conversation — the rule id from the first line of the
// first system message ("Rule: <id>") or else from the first "Rule: <id>"
// line of the first user message, the attempt number (the last
// "Attempt: N" line of a system or user message, else 1 + the number of
// assistant messages), the last ssh_apply command and the last tool result —
// and returns a Generation. Built-ins: Stubborn (large-output commands and
// long heredocs, never a fix, never a banned command), Eventual (wrong fixes,
// then the fix configured for the rule at attempt N), Repeater (the same
// failed command again and again), BannedProposer (banned commands, each
// written "touch MARKER; <command>", mixed with harmless ones), Malformed
// (broken tool calls of every kind), GiveUp and Script. Tool names are
// ssh_apply {command, reason?} and give_up {reason}.
//
// Reading is a policy that reads its whole prompt: a Scenario
// (RejectedOptionScenario, PreconditionsScenario, TrapScenario) has the
// model run commands whose output names a fact (the option sshd -t
// rejected; a masked unit and a bad rules line; a sed that cannot edit a
// symlink), explore with large read-only outputs, and from a seed-chosen
// attempt on propose the fix only while every fact is still in its prompt
// — else a wrong guess, half the fix, or the trap again. The Scenario is
// also the host (Respond), so a memory's fix rate can be measured.
//
// # Faults and records
//
// Config.Faults and InjectFaults make the next chat completion requests fail
// with 503, 429 (optionally with Retry-After), a dropped connection, or a
// delay. Stats returns a Record of every request: prompt and completion
// counts, max_tokens, rejections, faults, the rule id and attempt read.
//
// # Not reproduced
//
// Streaming, n > 1, logprobs, reasoning parsers (Qwen3's <think> blocks are
// never generated), token_strs, /detokenize, and the pre-tokenization
// character-count check of recent vLLM releases (it only triggers for
// prompts far above the window).
//
// # Concurrency
//
// A Server is safe for concurrent use: requests are served in parallel; the
// fault queue, the ID generator and the records are guarded by one mutex.
// Policies are stateless and deterministic.
package vllmsim
