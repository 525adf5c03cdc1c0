package sshexec

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func hostKeyErr(t *testing.T, err error) *HostKeyError {
	t.Helper()
	var op *OpError
	if !errors.As(err, &op) || op.Op != OpHostKey {
		t.Fatalf("error %v, want a host key OpError", err)
	}
	var herr *HostKeyError
	if !errors.As(err, &herr) {
		t.Fatalf("error %v does not wrap *HostKeyError", err)
	}
	return herr
}

func TestHostKeyVerification(t *testing.T) {
	f := newFixture(t)
	f.srv.handle("true", func(x *execCtx) exit { return exit{} })
	name := knownhosts.Normalize(f.srv.addr)
	otherEd := newKey(t).PublicKey()
	ecPriv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	otherEC, err := ssh.NewPublicKey(&ecPriv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	serverKey := f.srv.hostSigner.PublicKey()
	line := func(k ssh.PublicKey) string { return knownhosts.Line([]string{name}, k) + "\n" }

	tests := []struct {
		name      string
		known     string // known_hosts content; "-" for a missing file
		accept    bool
		want      HostKeyProblem // 0: success
		wantLine  int
		wantInMsg []string
		wantAdded bool // the key was appended
	}{
		{name: "known", known: "# comment\n" + line(serverKey)},
		{name: "unknown empty file", known: "", want: HostKeyUnknown, wantInMsg: []string{"no ssh-ed25519 host key is known", ssh.FingerprintSHA256(serverKey), "--accept-new-host-key"}},
		{name: "unknown missing file", known: "-", want: HostKeyUnknown},
		{name: "other host only", known: knownhosts.Line([]string{"example.org"}, serverKey) + "\n", want: HostKeyUnknown},
		{name: "changed", known: "# first\n\n" + line(otherEd), want: HostKeyChanged, wantLine: 3,
			wantInMsg: []string{"remote host identification has changed", ssh.FingerprintSHA256(otherEd), ssh.FingerprintSHA256(serverKey), ":3", "ssh-keygen -R"}},
		{name: "changed is never accepted", known: line(otherEd), accept: true, want: HostKeyChanged, wantLine: 1},
		{name: "other type known", known: line(otherEC), want: HostKeyUnknown, wantLine: 1, wantInMsg: []string{"keys of other types are", "ecdsa-sha2-nistp256"}},
		{name: "other type known is not accepted", known: line(otherEC), accept: true, want: HostKeyUnknown, wantLine: 1},
		{name: "revoked", known: "@revoked * " + strings.TrimPrefix(line(serverKey), name+" "), want: HostKeyRevoked, wantLine: 1, wantInMsg: []string{"@revoked"}},
		{name: "accept new", known: "", accept: true, wantAdded: true},
		{name: "accept new into missing file", known: "-", accept: true, wantAdded: true},
		{name: "accept new after unterminated line", known: strings.TrimSuffix(knownhosts.Line([]string{"example.org"}, otherEd), "\n"), accept: true, wantAdded: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "sub", "known_hosts")
			if tc.known != "-" {
				file = writeFile(t, "known_hosts", tc.known)
			}
			c := f.client(t, func(c *Config) {
				c.KnownHostsFiles = []string{file}
				c.AcceptNewHostKey = tc.accept
			})
			before := f.srv.execCount("true")
			_, err := c.Run(context.Background(), "true")
			if tc.want == 0 {
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
			} else {
				herr := hostKeyErr(t, err)
				if herr.Problem != tc.want {
					t.Fatalf("problem %v, want %v (%v)", herr.Problem, tc.want, err)
				}
				if herr.Host != name || herr.Fingerprint != ssh.FingerprintSHA256(serverKey) || herr.KeyType != "ssh-ed25519" {
					t.Errorf("error names %s %s %s", herr.Host, herr.KeyType, herr.Fingerprint)
				}
				if tc.wantLine != 0 && (len(herr.Known) == 0 || herr.Known[0].Line != tc.wantLine || herr.Known[0].File != file) {
					t.Errorf("Known = %+v, want %s:%d", herr.Known, file, tc.wantLine)
				}
				for _, s := range tc.wantInMsg {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
				if !strings.Contains(err.Error(), f.srv.addr) {
					t.Errorf("error %q does not name the host", err)
				}
				if !strings.Contains(herr.Warning(), "Host key verification failed.") {
					t.Errorf("Warning() = %q", herr.Warning())
				}
				if n := f.srv.execCount("true") - before; n != 0 {
					t.Errorf("command ran %d times despite the refused host key", n)
				}
			}
			after, err := os.ReadFile(file)
			if err != nil && !errors.Is(err, os.ErrNotExist) { // a file never written stays absent
				t.Fatal(err)
			}
			hasKey := strings.Contains(string(after), strings.TrimSpace(strings.TrimPrefix(line(serverKey), name)))
			if tc.wantAdded {
				if !hasKey || !strings.HasSuffix(string(after), "\n") {
					t.Fatalf("known_hosts after accept:\n%s", after)
				}
				// The file still parses and now verifies without accept.
				c2 := f.client(t, func(c *Config) { c.KnownHostsFiles = []string{file} })
				if _, err := c2.Run(context.Background(), "true"); err != nil {
					t.Fatalf("Run with the accepted key: %v", err)
				}
			} else if tc.known != "-" && string(after) != tc.known {
				t.Errorf("known_hosts changed:\n%s", after)
			}
		})
	}
}

func TestInsecureSkipHostKeyVerification(t *testing.T) {
	f := newFixture(t)
	f.srv.handle("true", func(x *execCtx) exit { return exit{} })
	c := f.client(t, func(c *Config) {
		c.KnownHostsFiles = []string{writeFile(t, "known_hosts", "")}
		c.InsecureSkipHostKeyVerification = true
	})
	if _, err := c.Run(context.Background(), "true"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.logBuf.String(), "host key verification disabled") {
		t.Error("skipping verification was not logged as a warning")
	}
}

func TestMalformedKnownHosts(t *testing.T) {
	f := newFixture(t)
	c := f.client(t, func(c *Config) {
		c.KnownHostsFiles = []string{writeFile(t, "known_hosts", "host ssh-ed25519 !!!notbase64\n")}
	})
	_, err := c.Run(context.Background(), "true")
	var op *OpError
	if !errors.As(err, &op) || op.Op != OpHostKey || !strings.Contains(err.Error(), "known_hosts") {
		t.Fatalf("error %v, want a host key error naming known_hosts", err)
	}
}

// TestHostKeyErrorGolden pins the wording of the refusals, built from fixed
// keys; regenerate with go test -run HostKeyErrorGolden -update.
func TestHostKeyErrorGolden(t *testing.T) {
	key := func(seed byte) ssh.PublicKey {
		priv := ed25519.NewKeyFromSeed(append(make([]byte, 31), seed))
		pub, err := ssh.NewPublicKey(priv.Public())
		if err != nil {
			t.Fatal(err)
		}
		return pub
	}
	offered, old := key(1), key(2)
	known := func(k ssh.PublicKey, line int) KnownKey {
		return KnownKey{File: "/home/ops/.ssh/known_hosts", Line: line, Type: k.Type(), Fingerprint: ssh.FingerprintSHA256(k)}
	}
	base := func(p HostKeyProblem, k ...KnownKey) *HostKeyError {
		return &HostKeyError{Problem: p, Host: "[db1.example.com]:2222", KeyType: offered.Type(), Fingerprint: ssh.FingerprintSHA256(offered),
			KnownHostsFiles: []string{"/home/ops/.ssh/known_hosts"}, Known: k}
	}
	cases := map[string]*HostKeyError{
		"unknown": base(HostKeyUnknown),
		"changed": base(HostKeyChanged, known(old, 7)),
		"revoked": base(HostKeyRevoked, known(offered, 3)),
	}
	for name, e := range cases {
		t.Run(name, func(t *testing.T) {
			got := "Error():\n" + (&OpError{Host: "db1.example.com:2222", Op: OpHostKey, Err: e}).Error() + "\n\nWarning():\n" + e.Warning()
			golden := filepath.Join("testdata", "hostkey_"+name+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if got != string(want) {
				t.Errorf("mismatch with %s (-update to accept):\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}
