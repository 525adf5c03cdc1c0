// Package worker is Nightshift's attempt loop: it fixes one compliance rule
// on one host with a model served by an OpenAI-compatible server (vLLM).
//
// Fix checks the rule first (a compliant rule costs no model call), probes the
// host once per Worker (os-release, package manager, init system; through
// Config.Probe, reported as EventProbe), assembles the
// instruction and then makes attempts. The instruction is two messages: a
// system message the same for every rule and host of a run — the worker's
// instructions and the global ban list, followed in the chat template by
// the tools — so that all of a night's requests share one prefix in the
// model server's prefix cache; and a task message with everything rule- or
// host-specific: the rule, its text and check, the host facts, hints, the
// rule's own bans (presented as bans) and lessons. Each attempt asks the model for tool calls: ssh_apply runs a
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
// window; each model call's budget event is logged. The server's usage of each
// answered call — prompt tokens and those its prefix cache served
// (usage.prompt_tokens_details.cached_tokens) — is reported in an
// EventModelUsage and summed in the Outcome. Server errors are retried
// with capped, jittered backoff and are not attempts; so are answers that
// arrive but cannot be used (a *ReplyError: a body over the client's cap, a
// truncated body, one that is not JSON such as a proxy's HTML page, JSON
// that is not a chat completion, an empty choices list) and tries that run
// out of their time (the request timeout, or what is left of the retry
// deadline when that is less). If the server stays down, or unusable, past
// the retry deadline Fix returns an *UnreachableError. Config.Model is the
// served model (package served: its name, tokenizer, chat template and the
// budget of its window); Client is the model client to give the worker as
// Config.Chat: go-openai over HTTP with every reply's body read through a
// cap (ClientConfig.MaxReplyBytes, 4 MiB by default) and the failures above
// typed. vLLM's context-length rejections (both JSON shapes, every message
// form) are recognised in the server's answer as go-openai types it
// (served.ParseContextLength, served.ServerError: the HTTP status and the
// body's message and param), never in the text of other errors: an input overflow makes the memory distil harder and the call is
// retried, an output-budget rejection lowers max_tokens. Malformed model
// output — arguments that are not JSON, an unknown tool, no tool call, an
// empty command — is fed back to the model and counts as an attempt.
//
// Secrets. A command's output and the check's are masked
// (nightshift.Exec.Redacted, nightshift.RedactText: crypt(3) and GRUB
// password hashes, PEM and OpenSSH private key blocks) as soon as they
// come back, before the model, the memory, the lessons or any observer
// sees them: tool output fed back to the model is masked, because a secret
// in a prompt is a secret sent to the model server (grep root /etc/shadow,
// cat of a host key print them). The command's text stays as the model
// wrote it in the model's own history (its assistant tool calls: it wrote
// them, the server has them already, and rewriting them would change the
// prompt's prefix); every other copy of it is masked: the events every
// observer gets (the journal, the reports, the fleet's results, lessons,
// progress), the distilled summary lines (a prompt of ours; a model
// distiller sends them to a server), the logs. A fix whose text holds a
// secret is not kept as a recipe (it would be the host's credential,
// replayed on others). A command that holds a mask (<password hash $6$>,
// [OPENSSH private key not shown]: copied from masked output, or a
// resumed journal's masked reply) is refused before it runs: it would
// write the mask where the secret belongs.
//
// A Worker may fix several rules one after another or concurrently; each
// Fix call has its own memory, and the host is probed once for all of them
// (concurrent calls wait for the one probe). If Fix is called concurrently,
// the Target must allow concurrent Run calls (the Probe runs once), and the
// Observer, the MemoryObserver and the Lessons source concurrent calls.
package worker
