package sshexec

import (
	"context"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/nightshift-dev/nightshift"
)

// SSHFacts returns what the live connection tells of the worker's login
// to the host (see nightshift.SSHFacts): the host key algorithm negotiated
// and the key types known_hosts holds for the host, the algorithms the
// client accepts from it on its next dial, the worker's key that
// authenticated and the algorithms the client may use it with, and the
// addresses of the TCP connection's two ends. It dials first when there is no live
// connection, with Run's errors. The facts are those of the connection
// now: a redial refreshes them.
func (c *Client) SSHFacts(ctx context.Context) (nightshift.SSHFacts, error) {
	cn, err := c.getConn(ctx)
	if err != nil {
		return nightshift.SSHFacts{}, err
	}
	return cn.facts.Clone(), nil
}

// handshakeFacts gathers the facts of one handshake as it runs: the host
// key the callback accepted and the key the publickey method signed with.
type handshakeFacts struct {
	known    []string // key types on file for the host (sorted)
	insecure bool
	hostKey  ssh.PublicKey // presented and accepted
	signer   ssh.Signer    // the caller's signer that signed last
	sigAlgo  string        // the signature format it signed with
}

// facts builds the nightshift.SSHFacts of the connection sconn, whose
// handshake h saw.
func (h *handshakeFacts) facts(sconn ssh.Conn) nightshift.SSHFacts {
	var f nightshift.SSHFacts
	if m, ok := sconn.(ssh.AlgorithmsConnMetadata); ok {
		f.HostKeyAlgorithm = m.Algorithms().HostKey
	}
	f.KnownHostKeyTypes = slices.Clone(h.known)
	if h.hostKey != nil {
		f.HostKeyType = h.hostKey.Type()
	}
	f.HostKeyAlgorithms = acceptedHostKeyAlgorithms(h.known, f.HostKeyType, f.HostKeyAlgorithm, h.insecure)
	if h.signer != nil {
		f.KeyType = h.signer.PublicKey().Type()
		f.KeyAlgorithm = protocolAlgorithm(f.KeyType, h.sigAlgo)
		f.KeyAlgorithms = signerAlgorithms(h.signer)
	}
	return f
}

// acceptedHostKeyAlgorithms are the host key algorithms the client
// accepts from the host on its next dial: x/crypto's supported ones whose
// key type is on file (known, or presented: a key accepted on first use
// was appended), and the one negotiated (a certificate a trusted authority
// signed); every supported one without verification.
func acceptedHostKeyAlgorithms(known []string, presented, negotiated string, insecure bool) []string {
	sup := ssh.SupportedAlgorithms().HostKeys
	if insecure {
		return sup
	}
	types := slices.Clone(known)
	if presented != "" && underlyingKeyType(presented) == presented {
		types = append(types, presented)
	}
	var out []string
	for _, a := range sup {
		if slices.Contains(types, keyFormat(a)) {
			out = append(out, a)
		}
	}
	if negotiated != "" && !slices.Contains(out, negotiated) {
		out = append(out, negotiated)
	}
	return out
}

// certAlgorithms maps a signature algorithm to its certificate form.
var certAlgorithms = map[string]string{
	ssh.KeyAlgoRSA:        ssh.CertAlgoRSAv01,
	ssh.KeyAlgoRSASHA256:  ssh.CertAlgoRSASHA256v01,
	ssh.KeyAlgoRSASHA512:  ssh.CertAlgoRSASHA512v01,
	ssh.KeyAlgoECDSA256:   ssh.CertAlgoECDSA256v01,
	ssh.KeyAlgoECDSA384:   ssh.CertAlgoECDSA384v01,
	ssh.KeyAlgoECDSA521:   ssh.CertAlgoECDSA521v01,
	ssh.KeyAlgoSKECDSA256: ssh.CertAlgoSKECDSA256v01,
	ssh.KeyAlgoED25519:    ssh.CertAlgoED25519v01,
	ssh.KeyAlgoSKED25519:  ssh.CertAlgoSKED25519v01,
}

// underlyingKeyType is the plain key type of a certificate type (the type
// itself for a plain key).
func underlyingKeyType(t string) string {
	for plain, cert := range certAlgorithms {
		if cert == t {
			return keyFormat(plain)
		}
	}
	return t
}

// keyFormat is the key type a signature algorithm signs with: ssh-rsa for
// the rsa-sha2-* forms, the algorithm itself otherwise.
func keyFormat(algo string) string {
	switch algo {
	case ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSASHA512:
		return ssh.KeyAlgoRSA
	}
	return algo
}

func isCert(keyType string) bool { return strings.Contains(keyType, "-cert-v01@openssh.com") }

// protocolAlgorithm is the public key algorithm the login named for a key
// of keyType signing with sigAlgo: the certificate form for a certificate.
func protocolAlgorithm(keyType, sigAlgo string) string {
	if isCert(keyType) {
		if c, ok := certAlgorithms[sigAlgo]; ok {
			return c
		}
	}
	return sigAlgo
}

// signerAlgorithms are the public key algorithms x/crypto may log in with
// using s, as it picks them (pickSignatureAlgorithm): a
// MultiAlgorithmSigner's own list, every RSA form for an AlgorithmSigner
// of an RSA key, the key's format otherwise; certificate forms for a
// certificate.
func signerAlgorithms(s ssh.Signer) []string {
	t := s.PublicKey().Type()
	plain := underlyingKeyType(t)
	var sigs []string
	switch m := s.(type) {
	case ssh.MultiAlgorithmSigner:
		sigs = m.Algorithms()
	case ssh.AlgorithmSigner:
		sigs = []string{plain}
		if plain == ssh.KeyAlgoRSA {
			sigs = []string{ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSA}
		}
	default:
		sigs = []string{plain}
	}
	out := make([]string, 0, len(sigs))
	for _, a := range sigs {
		out = append(out, protocolAlgorithm(t, a))
	}
	return out
}

// wrap returns s recording into h each signature it makes, keeping the
// interfaces x/crypto looks for (AlgorithmSigner, MultiAlgorithmSigner).
func (h *handshakeFacts) wrap(s ssh.Signer) ssh.Signer {
	switch s := s.(type) {
	case ssh.MultiAlgorithmSigner:
		return recordingMultiSigner{s, h}
	case ssh.AlgorithmSigner:
		return recordingAlgorithmSigner{s, h}
	default:
		return recordingSigner{s, h}
	}
}

func (h *handshakeFacts) signed(s ssh.Signer, sig *ssh.Signature, err error) (*ssh.Signature, error) {
	if err == nil && sig != nil {
		h.signer, h.sigAlgo = s, sig.Format
	}
	return sig, err
}

type recordingSigner struct {
	ssh.Signer
	h *handshakeFacts
}

func (s recordingSigner) Sign(rand io.Reader, data []byte) (*ssh.Signature, error) {
	sig, err := s.Signer.Sign(rand, data)
	return s.h.signed(s.Signer, sig, err)
}

type recordingAlgorithmSigner struct {
	ssh.AlgorithmSigner
	h *handshakeFacts
}

func (s recordingAlgorithmSigner) Sign(rand io.Reader, data []byte) (*ssh.Signature, error) {
	sig, err := s.AlgorithmSigner.Sign(rand, data)
	return s.h.signed(s.AlgorithmSigner, sig, err)
}

func (s recordingAlgorithmSigner) SignWithAlgorithm(rand io.Reader, data []byte, algorithm string) (*ssh.Signature, error) {
	sig, err := s.AlgorithmSigner.SignWithAlgorithm(rand, data, algorithm)
	return s.h.signed(s.AlgorithmSigner, sig, err)
}

type recordingMultiSigner struct {
	ssh.MultiAlgorithmSigner
	h *handshakeFacts
}

func (s recordingMultiSigner) Sign(rand io.Reader, data []byte) (*ssh.Signature, error) {
	sig, err := s.MultiAlgorithmSigner.Sign(rand, data)
	return s.h.signed(s.MultiAlgorithmSigner, sig, err)
}

func (s recordingMultiSigner) SignWithAlgorithm(rand io.Reader, data []byte, algorithm string) (*ssh.Signature, error) {
	sig, err := s.MultiAlgorithmSigner.SignWithAlgorithm(rand, data, algorithm)
	return s.h.signed(s.MultiAlgorithmSigner, sig, err)
}

// connAddrs sets f.Server and f.Local from raw, a direct TCP connection.
func connAddrs(f *nightshift.SSHFacts, raw net.Conn) {
	unmapped := func(a net.Addr) netip.AddrPort {
		if t, ok := a.(*net.TCPAddr); ok {
			ap := t.AddrPort()
			return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		}
		return netip.AddrPort{}
	}
	f.Server, f.Local = unmapped(raw.RemoteAddr()), unmapped(raw.LocalAddr())
}
