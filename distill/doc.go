// Package distill turns one turn of a remediation conversation into one
// deterministic line, written in the past tense, for the memory's history
// of earlier attempts.
//
// A Turn records the model's tool calls (Step: the command, what happened to
// it — ran, blocked by the ban list, rejected as malformed, timed out, or
// lost with the connection — its exit code, signal and output) and the
// rule's re-check. Distiller.Summarize extracts the facts (Summary) and
// Summary.Line writes them:
//
//	[Turn 4: ran 'sed -i … /etc/aide/aide.conf' — failed (exit 1), sed expression error; re-check failed]
//
// A line holds the turn number; per step the past-tense verb, the command
// abbreviated to a token budget (keeping its head and its targets), the
// targets the command shows no longer, the outcome (exit code or signal) and
// the error classes found in stderr and stdout; the re-check outcome; and
// "gave up" when the model did. It never says a step succeeded: only the
// re-check's "passed" reports success. Lines are bounded by
// Config.MaxLineTokens, counted with Config.Counter (the model's tokenizer).
// Merge writes one group line for many turns, counting steps and error
// classes.
//
// Canonical and Targets read shell commands through package shell, the
// module's one bash parser (mvdan.cc/sh/v3/syntax): quoting, chains,
// compound commands, redirections (a group's and a subshell's too),
// here-documents, and every wrapper shell.Analyze peels (sudo, env,
// timeout, setsid, flock, su -c, chroot, xargs, find -exec, sh -c, …).
// They serve the memory's ledger: Canonical is the key under which a
// command is recorded, Targets the files, units, packages and keys it
// touches.
// ClassifyError reads a command's output against a documented table of the
// messages of the usual remediation tools (apt/dpkg, dnf/yum, sed,
// systemctl, sshd -t, aide, augtool, coreutils).
//
// Everything here is deterministic: the same input gives the same bytes. No
// function fails or panics on any input; a command bash would not parse
// (or that holds a control character) has no targets, is keyed by its
// whitespace-collapsed text and shown that way. The optional Model
// distiller asks an OpenAI-compatible model for the line instead, and
// falls back to the deterministic line on any failure, on an oversized
// line, and on a line claiming success the re-check did not confirm.
//
// Concurrency: a Distiller is immutable and safe for concurrent use if its
// Counter is; Summary values are immutable; Canonical, Targets,
// ClassifyError and Merge are pure functions. A Model is safe for
// concurrent use if its client and counter are.
package distill
