package sshexec

import (
	"errors"
	"fmt"
	"strings"
)

// Operations named by OpError.Op.
const (
	OpConfig    = "config"    // validating Config or loading keys in New
	OpDial      = "dial"      // the TCP connection (or the jump host's forwarded one)
	OpHandshake = "handshake" // SSH version exchange and key exchange
	OpHostKey   = "host key"  // host key verification against known_hosts
	OpAuth      = "auth"      // user authentication
	OpSession   = "session"   // opening, starting or waiting for a command
)

var (
	// ErrClosed is returned by Run after Close.
	ErrClosed = errors.New("client closed")

	// ErrPassphraseRequired means a private key is encrypted and neither the
	// passphrase environment variable nor a prompt supplied a passphrase.
	ErrPassphraseRequired = errors.New("private key is encrypted and no passphrase was supplied")

	// ErrAuthFailed means the server rejected every offered credential.
	ErrAuthFailed = errors.New("server rejected every offered credential")

	// ErrExitMissing means the server closed the command's channel without
	// reporting an exit status or signal while the connection stayed up.
	ErrExitMissing = errors.New("server sent no exit status or exit signal")
)

// OpError describes a failure of one operation against one host. Err is
// the cause; errors.Is and errors.As see through it.
type OpError struct {
	Host string // host:port as dialled
	Op   string // one of the Op* constants
	Err  error
}

func (e *OpError) Error() string {
	return fmt.Sprintf("sshexec: %s %s: %v", e.Op, e.Host, e.Err)
}

func (e *OpError) Unwrap() error { return e.Err }

// HostKeyProblem classifies a HostKeyError.
type HostKeyProblem int

const (
	// HostKeyUnknown: no key of the offered type is known for the host.
	HostKeyUnknown HostKeyProblem = iota + 1
	// HostKeyChanged: a different key of the same type is known for the
	// host — possible man-in-the-middle attack, never accepted
	// automatically.
	HostKeyChanged
	// HostKeyRevoked: the offered key is marked @revoked.
	HostKeyRevoked
)

func (p HostKeyProblem) String() string {
	switch p {
	case HostKeyUnknown:
		return "unknown"
	case HostKeyChanged:
		return "changed"
	case HostKeyRevoked:
		return "revoked"
	}
	return fmt.Sprintf("HostKeyProblem(%d)", int(p))
}

// KnownKey is a known_hosts entry relevant to a HostKeyError.
type KnownKey struct {
	File        string
	Line        int
	Type        string // e.g. "ssh-ed25519"
	Fingerprint string // SHA256:...
}

// HostKeyError is the refusal of a server's host key. It is returned
// wrapped in an *OpError with Op "host key".
type HostKeyError struct {
	Problem HostKeyProblem
	// Host is the known_hosts name looked up, e.g. "[127.0.0.1]:2222" or
	// "example.com".
	Host string
	// KeyType and Fingerprint (SHA256) describe the key the server offered.
	KeyType     string
	Fingerprint string
	// KnownHostsFiles were consulted; the first is where accepted keys are
	// written.
	KnownHostsFiles []string
	// Known lists the keys on file for Host: for HostKeyChanged the
	// offending entries of the same type, for HostKeyUnknown keys of other
	// types, for HostKeyRevoked the @revoked entry.
	Known []KnownKey
}

func (e *HostKeyError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "host key verification failed for %s: ", e.Host)
	switch e.Problem {
	case HostKeyChanged:
		fmt.Fprintf(&b, "remote host identification has changed: server offered %s key %s but", e.KeyType, e.Fingerprint)
		for i, k := range e.Known {
			if i > 0 {
				b.WriteString(" and")
			}
			fmt.Fprintf(&b, " %s:%d has %s", k.File, k.Line, k.Fingerprint)
		}
		b.WriteString("; someone could be eavesdropping on you (man-in-the-middle attack) or the host key was replaced; if the change is expected, remove the old key")
		if len(e.Known) > 0 {
			fmt.Fprintf(&b, " (ssh-keygen -R '%s' -f %s)", e.Host, e.Known[0].File)
		}
	case HostKeyRevoked:
		fmt.Fprintf(&b, "server offered %s key %s, which is marked @revoked", e.KeyType, e.Fingerprint)
		if len(e.Known) > 0 {
			fmt.Fprintf(&b, " in %s:%d", e.Known[0].File, e.Known[0].Line)
		}
	default:
		fmt.Fprintf(&b, "no %s host key is known (server offered %s)", e.KeyType, e.Fingerprint)
		if len(e.Known) > 0 {
			b.WriteString(" although keys of other types are:")
			for _, k := range e.Known {
				fmt.Fprintf(&b, " %s %s:%d", k.Type, k.File, k.Line)
			}
		}
		fmt.Fprintf(&b, "; known_hosts consulted: %s; verify the fingerprint out of band, then add it or connect once with AcceptNewHostKey (--accept-new-host-key)", strings.Join(e.KnownHostsFiles, ", "))
	}
	return b.String()
}

// Warning renders the refusal the way OpenSSH's ssh(1) does, over several
// lines, for a terminal.
func (e *HostKeyError) Warning() string {
	var b strings.Builder
	switch e.Problem {
	case HostKeyChanged:
		b.WriteString("@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n")
		b.WriteString("@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n")
		b.WriteString("@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n")
		b.WriteString("IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!\n")
		b.WriteString("Someone could be eavesdropping on you right now (man-in-the-middle attack)!\n")
		b.WriteString("It is also possible that a host key has just been changed.\n")
		fmt.Fprintf(&b, "The fingerprint for the %s key sent by the remote host is\n%s.\n", e.KeyType, e.Fingerprint)
		for _, k := range e.Known {
			fmt.Fprintf(&b, "Offending %s key in %s:%d\n", k.Type, k.File, k.Line)
		}
		if len(e.Known) > 0 {
			fmt.Fprintf(&b, "  remove with:\n  ssh-keygen -f '%s' -R '%s'\n", e.Known[0].File, e.Host)
		}
		fmt.Fprintf(&b, "Host key for %s has changed and you have requested strict checking.\n", e.Host)
	case HostKeyRevoked:
		fmt.Fprintf(&b, "Host key %s %s revoked by file %s.\n", e.KeyType, e.Fingerprint, firstFile(e.Known, e.KnownHostsFiles))
	default:
		fmt.Fprintf(&b, "No %s host key is known for %s and you have requested strict checking.\n", e.KeyType, e.Host)
		fmt.Fprintf(&b, "The server offered %s.\n", e.Fingerprint)
	}
	b.WriteString("Host key verification failed.\n")
	return b.String()
}

func firstFile(known []KnownKey, files []string) string {
	if len(known) > 0 {
		return known[0].File
	}
	if len(files) > 0 {
		return files[0]
	}
	return "(none)"
}
