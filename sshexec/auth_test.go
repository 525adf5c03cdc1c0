package sshexec

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// keyFile writes priv as an OpenSSH private key file, encrypted when
// passphrase is non-empty, and returns the path and the signer.
func keyFile(t *testing.T, priv crypto.PrivateKey, passphrase string) (string, ssh.Signer) {
	t.Helper()
	var block *pem.Block
	var err error
	if passphrase == "" {
		block, err = ssh.MarshalPrivateKey(priv, "test key")
	} else {
		block, err = ssh.MarshalPrivateKeyWithPassphrase(priv, "test key", []byte(passphrase))
	}
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "id_test")
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return path, s
}

func genKeys(t *testing.T) map[string]crypto.PrivateKey {
	t.Helper()
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]crypto.PrivateKey{"ed25519": ed, "ecdsa": ec, "rsa": rs}
}

func TestWrongKeyIsAuthError(t *testing.T) {
	f := newFixture(t)
	c := f.client(t, func(c *Config) { c.Signers = []ssh.Signer{newKey(t)} })
	_, err := c.Run(context.Background(), "true")
	var op *OpError
	if !errors.As(err, &op) || op.Op != OpAuth || !errors.Is(err, ErrAuthFailed) {
		t.Fatalf("error %v, want auth OpError wrapping ErrAuthFailed", err)
	}
	if !strings.Contains(err.Error(), f.srv.addr) || !strings.Contains(err.Error(), `"tester"`) {
		t.Errorf("error %q should name the host and user", err)
	}
	if n := f.srv.dialCount(); n != 1 {
		t.Errorf("auth failure retried: %d dials, want 1", n)
	}
}

// fixtureKey returns a key file from testdata/keys (made by ssh-keygen)
// and its public key.
func fixtureKey(t *testing.T, name string) (string, ssh.PublicKey) {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", "keys", name))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(b)
	if err != nil {
		t.Fatal(err)
	}
	return path, pub
}

// fixturePass is the passphrase of testdata/keys/*_enc.
const fixturePass = "s3cret-Passphrase!"

func authorize(srv *testServer, pub ssh.PublicKey) {
	srv.setAuth(func(_ ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
		if string(k.Marshal()) == string(pub.Marshal()) {
			return &ssh.Permissions{}, nil
		}
		return nil, errors.New("no")
	})
}

func TestIdentityFiles(t *testing.T) {
	const pass = fixturePass
	tests := []struct {
		name    string
		file    string // suffix after id_TYPE
		env     *string
		prompt  func(string) ([]byte, error)
		wantErr error
		wantMsg string
	}{
		{name: "plain"},
		{name: "env", file: "_enc", env: ptr(pass)},
		{name: "prompt", file: "_enc", prompt: func(string) ([]byte, error) { return []byte(pass), nil }},
		{name: "env wins over prompt", file: "_enc", env: ptr(pass), prompt: func(string) ([]byte, error) { return nil, errors.New("prompt must not be called") }},
		{name: "no passphrase source", file: "_enc", wantErr: ErrPassphraseRequired, wantMsg: "NIGHTSHIFT_TEST_PASSPHRASE"},
		{name: "wrong passphrase", file: "_enc", env: ptr("wrong"), wantMsg: "incorrect passphrase"},
		{name: "prompt fails", file: "_enc", prompt: func(string) ([]byte, error) { return nil, ErrNoTerminal }, wantErr: ErrNoTerminal},
	}
	for _, typ := range []string{"ed25519", "rsa", "ecdsa"} {
		for _, tc := range tests {
			t.Run(typ+"/"+tc.name, func(t *testing.T) {
				path, pub := fixtureKey(t, "id_"+typ+tc.file)
				f := newFixture(t)
				authorize(f.srv, pub)
				f.srv.handle("true", func(x *execCtx) exit { return exit{} })
				if tc.env != nil {
					t.Setenv("NIGHTSHIFT_TEST_PASSPHRASE", *tc.env)
				}
				c, err := New(f.config(func(c *Config) {
					c.Signers = nil
					c.IdentityFiles = []string{path}
					c.PassphraseEnv = "NIGHTSHIFT_TEST_PASSPHRASE"
					c.Passphrase = tc.prompt
				}))
				if tc.wantErr != nil || tc.wantMsg != "" {
					if err == nil {
						c.Close()
						t.Fatal("New succeeded")
					}
					if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
						t.Errorf("error %v is not %v", err, tc.wantErr)
					}
					if !strings.Contains(err.Error(), tc.wantMsg) || !strings.Contains(err.Error(), path) {
						t.Errorf("error %q should contain %q and the key file", err, tc.wantMsg)
					}
					if strings.Contains(err.Error(), pass) {
						t.Errorf("error %q contains the passphrase", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if _, err := c.Run(context.Background(), "true"); err != nil {
					t.Fatalf("Run: %v", err)
				}
			})
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestCertificateAuth(t *testing.T) {
	ca := newKey(t)
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	path, signer := keyFile(t, priv, "")
	cert := &ssh.Certificate{
		Key: signer.PublicKey(), Serial: 7, CertType: ssh.UserCert, KeyId: "ops",
		ValidPrincipals: []string{"tester"}, ValidBefore: ssh.CertTimeInfinity,
	}
	if err := cert.SignCert(rand.Reader, ca); err != nil {
		t.Fatal(err)
	}
	certText := ssh.MarshalAuthorizedKey(cert)
	checker := &ssh.CertChecker{
		IsUserAuthority: func(k ssh.PublicKey) bool { return string(k.Marshal()) == string(ca.PublicKey().Marshal()) },
	}

	tests := []struct {
		name     string
		implicit bool // FILE-cert.pub next to the key
		explicit bool // Config.CertificateFiles
		wantOK   bool
	}{
		{"implicit -cert.pub", true, false, true},
		{"CertificateFiles", false, true, true},
		{"key alone is refused", false, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			key := filepath.Join(dir, "id_ed25519")
			pemBytes, _ := os.ReadFile(path)
			os.WriteFile(key, pemBytes, 0o600)
			var certFiles []string
			if tc.implicit {
				os.WriteFile(key+"-cert.pub", certText, 0o600)
			}
			if tc.explicit {
				certFiles = []string{writeFile(t, "ops-cert.pub", string(certText))}
			}
			f := newFixture(t)
			f.srv.setAuth(checker.Authenticate)
			f.srv.handle("true", func(x *execCtx) exit { return exit{} })
			c := f.client(t, func(c *Config) {
				c.Signers = nil
				c.IdentityFiles = []string{key}
				c.CertificateFiles = certFiles
			})
			_, err := c.Run(context.Background(), "true")
			if tc.wantOK && err != nil {
				t.Fatalf("Run: %v", err)
			}
			if !tc.wantOK && !errors.Is(err, ErrAuthFailed) {
				t.Fatalf("error %v, want ErrAuthFailed", err)
			}
		})
	}

	t.Run("certificate for another key", func(t *testing.T) {
		f := newFixture(t)
		other, _ := keyFile(t, genKeys(t)["ed25519"], "")
		_, err := New(f.config(func(c *Config) {
			c.Signers = nil
			c.IdentityFiles = []string{other}
			c.CertificateFiles = []string{writeFile(t, "c-cert.pub", string(certText))}
		}))
		if err == nil || !strings.Contains(err.Error(), `certificate "ops"`) {
			t.Fatalf("error %v, want one naming the unpaired certificate", err)
		}
	})
}

func TestAgentAuth(t *testing.T) {
	f := newFixture(t)
	f.srv.handle("true", func(x *execCtx) exit { return exit{} })
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	keyring := agent.NewKeyring()
	if err := keyring.Add(agent.AddedKey{PrivateKey: priv}); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				agent.ServeAgent(keyring, c)
				c.Close()
			}()
		}
	}()
	signer, _ := ssh.NewSignerFromKey(priv)
	f.srv.setAuth(func(_ ssh.ConnMetadata, k ssh.PublicKey) (*ssh.Permissions, error) {
		if string(k.Marshal()) == string(signer.PublicKey().Marshal()) {
			return &ssh.Permissions{}, nil
		}
		return nil, errors.New("no")
	})

	t.Run("SSH_AUTH_SOCK", func(t *testing.T) {
		t.Setenv("SSH_AUTH_SOCK", sock)
		c := f.client(t, func(c *Config) { c.Signers, c.NoAgent = nil, false })
		if _, err := c.Run(context.Background(), "true"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("NoAgent", func(t *testing.T) {
		t.Setenv("SSH_AUTH_SOCK", sock)
		c := f.client(t, func(c *Config) { c.Signers = []ssh.Signer{newKey(t)} })
		if _, err := c.Run(context.Background(), "true"); !errors.Is(err, ErrAuthFailed) {
			t.Fatalf("error %v, want ErrAuthFailed with the agent disabled", err)
		}
	})
	t.Run("explicit socket missing", func(t *testing.T) {
		_, err := New(f.config(func(c *Config) { c.NoAgent, c.AgentSocket = false, filepath.Join(t.TempDir(), "none") }))
		if err == nil || !strings.Contains(err.Error(), "ssh-agent") {
			t.Fatalf("error %v, want one naming ssh-agent", err)
		}
	})
	t.Run("no credentials at all", func(t *testing.T) {
		t.Setenv("SSH_AUTH_SOCK", "")
		_, err := New(f.config(func(c *Config) { c.Signers, c.NoAgent = nil, false }))
		var op *OpError
		if !errors.As(err, &op) || op.Op != OpAuth || !strings.Contains(err.Error(), "no credentials") {
			t.Fatalf("error %v, want auth OpError about missing credentials", err)
		}
	})
}

// TestSecretsNeverLeak drives successful and failing flows with an
// encrypted key and checks that logs, errors and every rendering of the
// Config hold neither the passphrase nor any encoding of the private key.
func TestSecretsNeverLeak(t *testing.T) {
	const pass = fixturePass
	path, pub := fixtureKey(t, "id_ed25519_enc")
	pemText, _ := os.ReadFile(path)
	raw, err := ssh.ParseRawPrivateKeyWithPassphrase(pemText, []byte(pass))
	if err != nil {
		t.Fatal(err)
	}
	priv := *raw.(*ed25519.PrivateKey)
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	seed := priv.Seed()
	secrets := map[string]string{
		"passphrase":      pass,
		"seed hex":        hex.EncodeToString(seed),
		"seed base64":     base64.StdEncoding.EncodeToString(seed),
		"seed bytes":      fmt.Sprint(seed),
		"priv bytes":      strings.Trim(fmt.Sprint([]byte(priv)), "[]"),
		"pem body line 2": strings.Split(string(pemText), "\n")[1],
	}

	f := newFixture(t)
	authorize(f.srv, pub)
	f.srv.handle("true", func(x *execCtx) exit { return exit{} })
	t.Setenv("NIGHTSHIFT_TEST_PASSPHRASE", pass)
	var outputs []string

	cfg := f.config(func(c *Config) {
		c.Signers = []ssh.Signer{signer, newKey(t)}
		c.IdentityFiles = []string{path}
		c.PassphraseEnv = "NIGHTSHIFT_TEST_PASSPHRASE"
		c.Passphrase = func(string) ([]byte, error) { return []byte(pass), nil }
		c.KeepAlive = 0
	})
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(context.Background(), "true"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	// Failing flows: wrong passphrase, refused host key.
	t.Setenv("NIGHTSHIFT_TEST_PASSPHRASE", pass+"x")
	if _, err := New(cfg); err == nil {
		t.Fatal("wrong passphrase accepted")
	} else {
		outputs = append(outputs, err.Error())
	}
	t.Setenv("NIGHTSHIFT_TEST_PASSPHRASE", pass)
	bad := cfg
	bad.KnownHostsFiles = []string{writeFile(t, "kh", "")}
	if c, err := New(bad); err == nil {
		_, err := c.Run(context.Background(), "true")
		outputs = append(outputs, fmt.Sprint(err))
		c.Close()
	}

	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d", "%x", "%X", "%q", "%T %v"} {
		outputs = append(outputs, fmt.Sprintf(verb, cfg))
		outputs = append(outputs, fmt.Sprintf(verb, &cfg))
	}
	j, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, string(j))
	var slogBuf syncBuffer
	slog.New(slog.NewTextHandler(&slogBuf, nil)).Info("config", "cfg", cfg)
	slog.New(slog.NewJSONHandler(&slogBuf, nil)).Info("config", "cfg", cfg)
	outputs = append(outputs, slogBuf.String(), f.logBuf.String())

	if !strings.Contains(f.logBuf.String(), "sshexec:") {
		t.Fatal("the client logged nothing; the test would prove nothing")
	}
	for _, out := range outputs {
		for name, secret := range secrets {
			if strings.Contains(out, secret) || strings.Contains(strings.ToUpper(out), strings.ToUpper(hex.EncodeToString(seed))) {
				t.Errorf("%s leaked into output:\n%s", name, out)
			}
		}
	}
	if s := cfg.String(); !strings.Contains(s, "Signers:2(redacted)") || !strings.Contains(s, path) {
		t.Errorf("String() = %s; want redacted signers and the identity path", s)
	}
}
