package sshexec

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/nightshift-dev/nightshift/internal/sshtarget"
)

// accepted is sshd's own log line of the login ("Accepted publickey for
// USER from ADDR port N ssh2: TYPE SHA256:…"): the oracle for which of the
// worker's keys authenticated and for the client's end of the connection.
var accepted = regexp.MustCompile(`Accepted publickey for \S+ from (\S+) port (\d+) ssh2: (\S+) SHA256:`)

// TestOpenSSHFacts checks the facts a Client exposes against a real
// OpenSSH sshd on loopback: the host key it presented (the target's own
// key file), the key types known_hosts holds (the file the test wrote),
// the worker's key that authenticated (sshd's log) and the algorithm it
// signed with (sshd's PubkeyAcceptedAlgorithms decides it), and the
// address dialled.
func TestOpenSSHFacts(t *testing.T) {
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecSigner, err := ssh.NewSignerFromKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	// known adds a second host key line (an ECDSA key the server does not
	// have) to the target's known_hosts.
	known := func(tg *sshtarget.Target, c *Config) {
		line := knownhosts.Line([]string{knownhosts.Normalize(tg.Addr)}, ecSigner.PublicKey()) + "\n"
		b, err := os.ReadFile(tg.KnownHostsFile)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(t.TempDir(), "known_hosts")
		if err := os.WriteFile(f, append(b, line...), 0o600); err != nil {
			t.Fatal(err)
		}
		c.KnownHostsFiles = []string{f}
	}
	tests := []struct {
		name   string
		opts   sshtarget.Options
		mod    func(*sshtarget.Target, *Config)
		logged string // the key type sshd logs
		// want: HostKeyAlgorithm, KeyType (HostKeyType is always the
		// target's own key's type).
		hostAlgo, keyType string
		keyAlgos          []string // KeyAlgorithm is one of them
		known, hostAlgos  []string
		refused           string // the login fails, and sshd logs this
	}{
		{name: "ed25519 key, ed25519 host key pinned", logged: "ED25519",
			hostAlgo: "ssh-ed25519", keyType: "ssh-ed25519", keyAlgos: []string{"ssh-ed25519"},
			known: []string{"ssh-ed25519"}, hostAlgos: []string{"ssh-ed25519"}},
		{name: "rsa key", opts: sshtarget.Options{ClientKeyType: "rsa"}, logged: "RSA",
			keyType: "ssh-rsa", keyAlgos: []string{"rsa-sha2-256", "rsa-sha2-512", "ssh-rsa"}},
		{name: "rsa key, sshd accepts rsa-sha2-256 only", opts: sshtarget.Options{ClientKeyType: "rsa", ExtraConfig: []string{"PubkeyAcceptedAlgorithms rsa-sha2-256"}}, logged: "RSA",
			keyType: "ssh-rsa", keyAlgos: []string{"rsa-sha2-256"}},
		// OpenSSH's server-sig-algs does not follow
		// PubkeyAcceptedAlgorithms (a Match block may change it after the
		// extension is sent), and x/crypto signs with the first of its RSA
		// forms the extension lists, rsa-sha2-256, without trying another
		// when sshd refuses it: an RSA key the server accepts the type of is
		// still locked out. KeyAlgorithm, not KeyAlgorithms, is what the
		// next login uses.
		{name: "rsa key, sshd accepts rsa-sha2-512 only: locked out", opts: sshtarget.Options{ClientKeyType: "rsa", ExtraConfig: []string{"PubkeyAcceptedAlgorithms rsa-sha2-512"}},
			refused: "signature algorithm rsa-sha2-256 not in PubkeyAcceptedAlgorithms"},
		{name: "ecdsa key", opts: sshtarget.Options{ClientKeyType: "ecdsa"}, logged: "ECDSA",
			keyType: "ecdsa-sha2-nistp256", keyAlgos: []string{"ecdsa-sha2-nistp256"}},
		{name: "certificate", opts: sshtarget.Options{UserCA: true}, logged: "ED25519-CERT",
			keyType: "ssh-ed25519-cert-v01@openssh.com", keyAlgos: []string{"ssh-ed25519-cert-v01@openssh.com"}},
		{name: "an unauthorized key tried first", logged: "ED25519",
			mod:     func(_ *sshtarget.Target, c *Config) { c.Signers = []ssh.Signer{ecSigner} },
			keyType: "ssh-ed25519", keyAlgos: []string{"ssh-ed25519"}},
		{name: "known_hosts holds two types", mod: known,
			hostAlgo: "ssh-ed25519", known: []string{"ecdsa-sha2-nistp256", "ssh-ed25519"},
			hostAlgos: []string{"ecdsa-sha2-nistp256", "ssh-ed25519"}},
		{name: "accepted on first use", mod: func(_ *sshtarget.Target, c *Config) {
			c.KnownHostsFiles = []string{filepath.Join(t.TempDir(), "known_hosts")}
			c.AcceptNewHostKey = true
		}, hostAlgo: "ssh-ed25519", known: []string{}, hostAlgos: []string{"ssh-ed25519"}},
		{name: "host keys not verified", mod: func(_ *sshtarget.Target, c *Config) { c.InsecureSkipHostKeyVerification = true },
			hostAlgo: "ssh-ed25519", known: []string{}, hostAlgos: ssh.SupportedAlgorithms().HostKeys},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg := startTarget(t, tc.opts)
			cfg := targetConfig(tg)
			if tg.CertificateFile != "" {
				cfg.CertificateFiles = []string{tg.CertificateFile}
			}
			if tc.mod != nil {
				tc.mod(tg, &cfg)
			}
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			f, err := c.SSHFacts(ctx)
			if tc.refused != "" {
				if !errors.Is(err, ErrAuthFailed) || !strings.Contains(tg.Log(), tc.refused) {
					t.Fatalf("SSHFacts: %v (want ErrAuthFailed), sshd log:\n%s", err, tg.Log())
				}
				return
			}
			if err != nil {
				t.Fatalf("SSHFacts: %v", err)
			}
			t.Logf("%+v", f)
			if f.HostKeyType != tg.HostKey.Type() {
				t.Errorf("HostKeyType %q, the target's host key is %q", f.HostKeyType, tg.HostKey.Type())
			}
			if tc.hostAlgo != "" && f.HostKeyAlgorithm != tc.hostAlgo {
				t.Errorf("HostKeyAlgorithm %q, want %q", f.HostKeyAlgorithm, tc.hostAlgo)
			}
			if tc.known != nil && !sameSet(f.KnownHostKeyTypes, tc.known) {
				t.Errorf("KnownHostKeyTypes %q, want %q", f.KnownHostKeyTypes, tc.known)
			}
			if tc.hostAlgos != nil && !sameSet(f.HostKeyAlgorithms, tc.hostAlgos) {
				t.Errorf("HostKeyAlgorithms %q, want %q", f.HostKeyAlgorithms, tc.hostAlgos)
			}
			if tc.keyType != "" && f.KeyType != tc.keyType {
				t.Errorf("KeyType %q, want %q", f.KeyType, tc.keyType)
			}
			if tc.keyAlgos != nil && !slices.Contains(tc.keyAlgos, f.KeyAlgorithm) {
				t.Errorf("KeyAlgorithm %q, want one of %q", f.KeyAlgorithm, tc.keyAlgos)
			}
			if !slices.Contains(f.KeyAlgorithms, f.KeyAlgorithm) {
				t.Errorf("KeyAlgorithms %q lacks the algorithm used, %q", f.KeyAlgorithms, f.KeyAlgorithm)
			}
			if len(tc.keyAlgos) > 1 && !sameSet(f.KeyAlgorithms, tc.keyAlgos) {
				t.Errorf("KeyAlgorithms %q, want %q", f.KeyAlgorithms, tc.keyAlgos)
			}
			if want := netip.AddrPortFrom(netip.MustParseAddr(tg.Host), uint16(tg.Port)); f.Server != want {
				t.Errorf("Server %v, want %v", f.Server, want)
			}
			if f.Local.Addr() != netip.MustParseAddr("127.0.0.1") || f.Local.Port() == 0 || f.Local == f.Server {
				t.Errorf("Local %v, want this end of the loopback connection", f.Local)
			}
			m := accepted.FindStringSubmatch(tg.Log())
			if m == nil {
				t.Fatalf("sshd logged no accepted login:\n%s", tg.Log())
			}
			if tc.logged != "" && m[3] != tc.logged {
				t.Errorf("sshd logged the login's key as %q, want %q", m[3], tc.logged)
			}
			if m[1] != f.Local.Addr().String() || m[2] != strconv.Itoa(int(f.Local.Port())) {
				t.Errorf("sshd saw the login come from %s port %s, Local is %v", m[1], m[2], f.Local)
			}
		})
	}
}

// TestOpenSSHFactsThroughJump: a connection through a jump host has no
// server address of its own (the jump host dials the target), and still
// the target's host key and the worker's key.
func TestOpenSSHFactsThroughJump(t *testing.T) {
	tg := startTarget(t, sshtarget.Options{AllowTCPForwarding: true})
	c := targetClient(t, tg, func(c *Config) { c.ProxyJump = tg.Addr })
	f, err := c.SSHFacts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if f.Server.IsValid() || f.Local.IsValid() {
		t.Errorf("Server %v, Local %v through a jump host, want none", f.Server, f.Local)
	}
	if f.HostKeyType != tg.HostKey.Type() || f.KeyType != "ssh-ed25519" {
		t.Errorf("facts %+v", f)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
