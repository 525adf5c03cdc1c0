// Package distill turns one turn of a remediation conversation into one
// deterministic line, written in the past tense, for the memory's history
// of earlier attempts.
//
// A Turn records the model's tool calls (Step: the command, what happened to
// it — ran, blocked by the ban list, rejected as malformed, timed out, or
// lost with the connection — its exit code, signal, output and the files
// its change records name) and the rule's re-check with its output.
// Distiller.Summarize extracts the facts (Summary) and Summary.Line writes
// them:
//
//	[Turn 4: ran `sed -i 's/^#\?PermitRootLogin.*/PermitRootLogin no' /etc/ssh/sshd_config` — exit 1: "sed: -e expression #1, char 42: unterminated `s' command"; re-check failed: "PermitRootLogin yes"]
//
// A line holds the turn number; per step the past-tense verb, the command
// in canonical form as a Markdown code span (CodeSpan: it reads back
// exactly, whatever quotes it holds), abbreviated to a token budget by
// shell words (its head and targets kept, long arguments elided in their
// middle, a quotation never split), the files it changed ("changed …",
// from Step.Changes) or else the targets the command shows no longer, the
// exit status or signal, and the output's most informative line
// (ErrorLine: the messages of apt/dpkg, systemctl, sed, sshd -t, auditctl,
// sysctl, oscap, grub, PAM, aide and augtool, then general rules, then the
// last line before a non-zero exit) quoted verbatim when short and cut in
// its middle when not, or the error classes when no line qualifies; the
// re-check outcome with its decisive line (CheckLine; for oscap the rule
// and its result); and "gave up" when the model did. It never says a step
// succeeded: only the re-check's "passed" reports success. Lines are
// bounded by Config.MaxLineTokens, counted with Config.Counter (the
// model's tokenizer). Summary.Body is the line without its turn, the same
// for turns that ran the same command with the same result; TurnsLine
// writes one line for such turns ("[Turns 4, 9, 14: …]"). Merge writes one
// group line for many turns, counting steps and error classes.
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
// ClassifyError, ErrorLine, CheckLine, CodeSpan, TurnsLine and Merge are
// pure functions. A Model is safe for
// concurrent use if its client and counter are.
package distill
