package nightshift

import (
	"net/netip"
	"slices"
)

// SSHFacts is what the worker's own SSH client knows of its login to a
// host, read from the live connection (sshexec's Client.SSHFacts): what a
// change to the host's sshd must keep working for the worker to log in
// again. The zero value knows nothing; each field's zero value means that
// fact is not known.
type SSHFacts struct {
	// HostKeyAlgorithm is the host key algorithm the handshake negotiated
	// and known_hosts accepted ("ssh-ed25519", "rsa-sha2-512", a
	// certificate algorithm); HostKeyType is the type of the key the
	// server presented ("ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256",
	// or a certificate type).
	HostKeyAlgorithm, HostKeyType string
	// KnownHostKeyTypes are the key types known_hosts holds for the host
	// (sorted): the client refuses a key of another type unless a
	// certificate authority it trusts signed it. Empty when host keys are
	// not verified, or when nothing was on file before this connection
	// accepted the host's key on first use.
	KnownHostKeyTypes []string
	// HostKeyAlgorithms are the host key algorithms the client accepts
	// from the host when it dials again: its supported algorithms whose
	// key type is in KnownHostKeyTypes or is HostKeyType (a key accepted
	// on first use is on file now), and HostKeyAlgorithm; every algorithm
	// it supports when host keys are not verified.
	HostKeyAlgorithms []string
	// KeyType is the type of the worker's key (or certificate) that
	// authenticated the login, KeyAlgorithm the signature algorithm it was
	// used with, and KeyAlgorithms every algorithm the client may use it
	// with ("rsa-sha2-256", "rsa-sha2-512" and "ssh-rsa" for an RSA key,
	// as the server's server-sig-algs decides; their certificate forms for
	// a certificate).
	KeyType, KeyAlgorithm string
	KeyAlgorithms         []string
	// Server is the address and port the worker's TCP connection reached
	// (the connection's remote address); invalid through a jump host,
	// which dials the host itself. Behind a destination NAT or a port
	// forwarder it is not an address of the host.
	Server netip.AddrPort
	// Local is the worker's own end of that connection (its local
	// address); invalid through a jump host. When sshd sees the
	// connection come from another address, something translates it on
	// the way, and Server may not be the host's.
	Local netip.AddrPort
}

// Clone returns a copy that shares no slice with f.
func (f SSHFacts) Clone() SSHFacts {
	f.KnownHostKeyTypes = slices.Clone(f.KnownHostKeyTypes)
	f.HostKeyAlgorithms = slices.Clone(f.HostKeyAlgorithms)
	f.KeyAlgorithms = slices.Clone(f.KeyAlgorithms)
	return f
}
