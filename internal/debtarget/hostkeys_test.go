package debtarget

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// One set of host keys for the targets of this test binary that do not
// test ssh-keygen -A itself (start's targets do): an RSA key costs more
// than half a second of CPU per start.
var (
	hostKeysOnce sync.Once
	hostKeysSet  *HostKeys
	hostKeysErr  error
)

func testHostKeys(t testing.TB) *HostKeys {
	t.Helper()
	hostKeysOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		hostKeysSet, hostKeysErr = NewHostKeys(ctx)
	})
	if hostKeysErr != nil {
		t.Fatalf("NewHostKeys: %v", hostKeysErr)
	}
	return hostKeysSet
}

// TestNewHostKeys checks the set is what ssh-keygen -A gives a Debian
// install: the private and public key of RSA, ECDSA and ed25519, each
// public key parsing as its type.
func TestNewHostKeys(t *testing.T) {
	hk := testHostKeys(t)
	var names []string
	for n := range hk.files {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{"ssh_host_ecdsa_key", "ssh_host_ecdsa_key.pub", "ssh_host_ed25519_key", "ssh_host_ed25519_key.pub", "ssh_host_rsa_key", "ssh_host_rsa_key.pub"}
	if !slices.Equal(names, want) {
		t.Fatalf("host key files %v, want %v", names, want)
	}
	for typ, name := range map[string]string{ssh.KeyAlgoRSA: "ssh_host_rsa_key.pub", ssh.KeyAlgoECDSA256: "ssh_host_ecdsa_key.pub", ssh.KeyAlgoED25519: "ssh_host_ed25519_key.pub"} {
		k, _, _, _, err := ssh.ParseAuthorizedKey(hk.files[name])
		if err != nil || k.Type() != typ {
			t.Errorf("%s: %v, type %v, want %s", name, err, k, typ)
		}
		if _, err := ssh.ParseRawPrivateKey(hk.files[name[:len(name)-len(".pub")]]); err != nil {
			t.Errorf("%s's private key: %v", name, err)
		}
	}
}

// checkHostKeys fails t unless root's /etc/ssh holds exactly hk's files
// with sshd's modes (private keys 0600).
func checkHostKeys(t *testing.T, root string, hk *HostKeys) {
	t.Helper()
	for name, b := range hk.files {
		p := filepath.Join(root, "etc", "ssh", name)
		got, err := os.ReadFile(p)
		if err != nil || string(got) != string(b) {
			t.Errorf("%s is not the given host key (%v)", p, err)
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o644)
		if filepath.Ext(name) != ".pub" {
			want = 0o600
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
}
