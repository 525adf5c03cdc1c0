// Package nightshift holds Nightshift's domain vocabulary: the values every
// other package of the module passes to the others, defined once.
//
//   - [Exec] is what running one shell command on a host produced (both
//     streams, what the output cap cut from each, exit code, signal, timeout,
//     cancellation, duration), and [Runner] is what runs one: sshexec's
//     client, the simulated hosts of the tests and the demo, and the worker's
//     target all satisfy it.
//   - [Action] says what became of one proposed command (ran, blocked,
//     refused, malformed, timed out, unknown, give-up); [ActionOf] classifies
//     what a Runner returned.
//   - [ToolApply] and [ToolGiveUp] name the two tools the worker offers the
//     model.
//   - [CheckStatus] is the result of evaluating a rule's check.
//   - [RuleStatus] is how a rule ended on a host.
//   - [RunStatus] is the state of a whole run.
//   - [Event] is one event of the attempt loop (package worker), seen by an
//     [Observer]: progress, metrics, lessons and the engines that record a
//     night take it from here, not from the worker; [Outcome] is how a rule
//     ended on a host, and [AttemptCheck] how a report shows an attempt's
//     end.
//   - [Target] is a connected host and [Connector] what connects to one;
//     [ErrOutcomeUnknown] (a command whose outcome is unknown, never run
//     again) and [ErrModelUnreachable] (the model server stayed down) are
//     the errors every way of running rules on hosts shares.
//   - [SSHFacts] is what the worker's SSH client knows of its own login to
//     a host (the host key known_hosts accepted, the worker's key type, the
//     address it reached): what the effect judge keeps working.
//   - [Effects] is what one command did in the recording sandbox and
//     [Evidence] what became of it. [Effects.Redacted] is the one form of
//     them that may leave the judge: the journal, reports, fleet results,
//     logs and the model's next turn get no password hash and no private
//     key (shadow-like password fields masked as blank, locked or hash
//     changed; key and credential files as their sha256 before and after),
//     while the judge reads the raw effects.
//
// Each enumeration is a small integer type whose zero value means "none"
// (written as the empty string), with String, MarshalText and UnmarshalText:
// text is the stable form used in events, the journal, JSON output, metrics
// labels and reports. UnmarshalText refuses a value it does not know with an
// error wrapping [ErrUnknownValue]; a value read back is never replaced by a
// silent default. CI runs the exhaustive linter, so a switch over one of them
// that forgets a value fails the build.
//
// The package imports only the standard library, package budget (the
// assessment a model call's event carries) and package inventory (the host
// a Connector connects to), and holds no state; its values are safe to copy and to share between goroutines.
package nightshift
