package sshtarget

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// sshRun runs the real OpenSSH client against t.
func sshRun(t *testing.T, tg *Target, command string) (string, error) {
	t.Helper()
	cmd := exec.Command("ssh", append(tg.SSHArgs(), command)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.String(), err
}

func TestStartServesRealClient(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{"ed25519", Options{}},
		{"rsa", Options{ClientKeyType: "rsa"}},
		{"ecdsa", Options{ClientKeyType: "ecdsa"}},
		{"user certificate", Options{UserCA: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := Start(context.Background(), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			out, err := sshRun(t, tg, "echo hello; id -un")
			if err != nil {
				t.Fatalf("ssh: %v\n%s\nsshd log:\n%s", err, out, tg.Log())
			}
			want := "hello\n" + tg.User + "\n"
			if out != want {
				t.Fatalf("output %q, want %q", out, want)
			}
			if tc.opts.UserCA {
				if tg.CertificateFile == "" {
					t.Fatal("no CertificateFile with UserCA")
				}
				// The plain key, copied away from its certificate, is
				// refused: only the CA is trusted.
				pem, err := os.ReadFile(tg.IdentityFile)
				if err != nil {
					t.Fatal(err)
				}
				bare := filepath.Join(t.TempDir(), "id_bare")
				if err := os.WriteFile(bare, pem, 0o600); err != nil {
					t.Fatal(err)
				}
				tg2 := &Target{Host: tg.Host, Port: tg.Port, User: tg.User, KnownHostsFile: tg.KnownHostsFile, IdentityFile: bare}
				if out, err := exec.Command("ssh", append(tg2.SSHArgs(), "true")...).CombinedOutput(); err == nil {
					t.Fatalf("plain key accepted without certificate: %s", out)
				}
			}
		})
	}
}

func TestEncryptedClientKey(t *testing.T) {
	tg, err := Start(context.Background(), Options{ClientKeyPassphrase: "correct horse"})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	pem, err := os.ReadFile(tg.IdentityFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ssh.ParsePrivateKey(pem); err == nil {
		t.Fatal("client key parsed without a passphrase")
	}
	if _, err := ssh.ParsePrivateKeyWithPassphrase(pem, []byte("correct horse")); err != nil {
		t.Fatalf("decrypt client key: %v", err)
	}
}

func TestKnownHostsMatchesServer(t *testing.T) {
	tg, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	kh, err := os.ReadFile(tg.KnownHostsFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(kh), "[127.0.0.1]:") || !strings.Contains(string(kh), "ssh-ed25519 ") {
		t.Fatalf("known_hosts = %q", kh)
	}
	// StrictHostKeyChecking=yes in SSHArgs: a successful login proves the
	// real client accepted the file.
	if out, err := sshRun(t, tg, "true"); err != nil {
		t.Fatalf("ssh: %v: %s\nsshd log:\n%s", err, out, tg.Log())
	}
}

func TestCloseEndsConnectionsAndRemovesDir(t *testing.T) {
	tg, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ssh", append(tg.SSHArgs(), "echo started; exec sleep 600")...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, len("started\n"))
	if _, err := stdout.Read(line); err != nil {
		t.Fatalf("read: %v\n%s", err, tg.Log())
	}
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	// If Close left the connection's processes alive, this Wait would
	// block on the remote sleep.
	if err := cmd.Wait(); err == nil {
		t.Fatal("ssh session survived Close")
	}
	if _, err := os.Stat(tg.Dir); !os.IsNotExist(err) {
		t.Fatalf("directory %s still exists: %v", tg.Dir, err)
	}
	if err := tg.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestStartErrors(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantIs  error
		wantMsg string
	}{
		{"missing sshd", Options{SSHD: "/nonexistent/sbin/sshd"}, ErrNotInstalled, "openssh-server"},
		{"bad key type", Options{ClientKeyType: "dsa"}, nil, `client key type "dsa"`},
		{"unknown user", Options{User: "no-such-user-sshtarget"}, nil, "no-such-user-sshtarget"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := Start(context.Background(), tc.opts)
			if err == nil {
				tg.Close()
				t.Fatal("Start succeeded")
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error %v is not %v", err, tc.wantIs)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q does not mention %q", err, tc.wantMsg)
			}
		})
	}
}

func TestStartHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tg, err := Start(ctx, Options{})
	if err == nil {
		tg.Close()
		t.Fatal("Start succeeded with a cancelled context")
	}
	if !errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("error %v does not report cancellation", err)
	}
}
