// Package sshexec runs commands on one remote host over SSH, safely and
// cancellably, on golang.org/x/crypto/ssh.
//
// # Contract
//
// [New] validates a [Config], applies its documented defaults and loads
// credentials: ssh-agent ($SSH_AUTH_SOCK), private key files (ed25519, rsa,
// ecdsa, OpenSSH or PEM format) and OpenSSH user certificates (FILE-cert.pub
// beside a key, or Config.CertificateFiles). Encrypted keys take their
// passphrase from an environment variable (Config.PassphraseEnv) or a prompt
// ([TerminalPassphrase]) — never from a flag or a Config field.
//
// Host keys are verified against known_hosts files by default. An unknown
// key, a changed key and a revoked key are refused with a [*HostKeyError]
// that names the host, the offered key's fingerprint and the known_hosts
// file and line, as OpenSSH does ([HostKeyError.Warning] renders OpenSSH's
// full warning). Trust on first use happens only with
// Config.AcceptNewHostKey, and never replaces a changed key; verification is
// skipped only with Config.InsecureSkipHostKeyVerification.
//
// [Client.Run] runs one command and returns a [nightshift.Exec]
// (the client is a [nightshift.Runner]): stdout and stderr
// separately, each capped (default 1 MiB, keeping head and tail, with the
// number of bytes cut), the exit code or signal, and the duration. A
// non-zero exit is a result, not an error. Each command has a timeout
// (Config.CommandTimeout) and obeys its context: on either, the remote
// command's process group is sent SIGTERM, then SIGKILL after
// Config.KillGrace, its session is closed, and the Exec says it timed out
// (or was cancelled).
//
// Signalling works for every login user, root included: OpenSSH's sshd
// refuses "signal" channel requests for root logins ("session signalling
// requires privilege separation"), so Run prefixes each command with a
// one-line announcement of its process group on stderr (`printf ... $$ >&2;`,
// so the login shell must be POSIX-like), removes that line from the
// captured stderr, and on interruption runs `kill -SIG -- -PGID` in a second
// session. Without the announcement (e.g. the command line failed to
// parse) it falls back to a signal request. Processes that leave the group
// (setsid, daemons) are not reached.
//
// One connection per Client is reused across commands, with keepalives
// (Config.KeepAlive). A broken connection is redialled with backoff
// (Config.Redial, a retry.Policy) when the next command needs it; each failed
// dial, with the next wait and when the dials give up, goes to
// Config.OnDialFailure. A command whose outcome
// is unknown because the connection dropped after it was sent is reported
// with [nightshift.ErrOutcomeUnknown] and never re-run: it may or may not
// have run, wholly or partly; the caller decides (for example by
// re-checking state).
//
// [Client.SSHFacts] tells what the live connection knows of the login
// ([nightshift.SSHFacts]), read from the handshake itself: the host key
// algorithm negotiated and the key types known_hosts holds for the host,
// the key that authenticated (its signer is wrapped to see which one
// signs, keeping x/crypto's signer interfaces) and the algorithms x/crypto
// may use it with, and the addresses of the TCP connection's two ends
// (none through a jump host). The effect judge keeps them working.
//
// Every error is an [*OpError] naming the host and the operation that
// failed ("config", "dial", "handshake", "host key", "auth", "session"),
// wrapping the cause with %w so errors.Is and errors.As reach
// [*HostKeyError], [ErrAuthFailed], [nightshift.ErrOutcomeUnknown], [ErrClosed],
// [ErrPassphraseRequired], context errors and network errors.
//
// Keys, passphrases, commands and their output are never logged; Config's
// String, Format, MarshalJSON and LogValue redact in-memory signers.
//
// # Concurrency
//
// A Client is safe for concurrent use. Concurrent Runs share the connection,
// each in its own SSH session (OpenSSH allows 10 per connection by default,
// MaxSessions); a Run that finds the connection broken waits for a single
// shared redial. Close may be called concurrently with Runs, which then
// fail with ErrClosed or nightshift.ErrOutcomeUnknown.
package sshexec
