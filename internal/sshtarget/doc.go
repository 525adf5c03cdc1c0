// Package sshtarget starts a disposable, real OpenSSH server for tests and
// demos.
//
// [Start] runs /usr/sbin/sshd (Debian package openssh-server) in the
// foreground (`sshd -D -e -f CONFIG`) listening only on 127.0.0.1 at a free
// port, with everything it needs generated in a fresh temporary directory: an
// ed25519 host key, a client key pair (optionally passphrase-protected and
// optionally certified by a user CA), an authorized_keys file and a
// known_hosts file for clients. PAM, passwords and keyboard-interactive
// authentication are off and StrictModes is off, so the temporary files may
// live anywhere. The machine's own sshd and /etc/ssh are never read or
// touched (sshd is given -f with its own config; the only shared path is the
// privilege-separation directory /run/sshd, which sshd requires when run as
// root and which Start creates if missing).
//
// Run as root (CI), the target accepts public-key logins for Options.User
// (default: the current user). Run as an unprivileged user, sshd starts
// without privilege separation and can only authenticate that same user;
// because PAM is off, sshd refuses accounts it considers locked (a shadow
// password starting with "!", or an unreadable shadow entry, as for an
// unprivileged sshd checking a "*" account). Root is the tested setup.
//
// Commands run through a Target execute on this machine as the login user:
// keep them harmless.
//
// If sshd or ssh-keygen is not installed, Start returns an error wrapping
// [ErrNotInstalled] that says to install openssh-server; callers' tests
// should fail, not skip, because the project's test command installs it.
//
// A Target is safe for concurrent use; Close is idempotent. Start honours its
// context while waiting for sshd to report that it is listening.
package sshtarget
