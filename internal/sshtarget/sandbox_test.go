package sshtarget

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/nightshift-dev/nightshift/internal/testenv"
)

// run runs one command on t with a plain x/crypto/ssh client.
func run(t *testing.T, tg *Target, command string) (string, error) {
	t.Helper()
	key, err := os.ReadFile(tg.IdentityFile)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	hk, err := knownhosts.New(tg.KnownHostsFile)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ssh.Dial("tcp", tg.Addr, &ssh.ClientConfig{User: tg.User, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: hk, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, err := s.CombinedOutput(command)
	return string(out), err
}

// TestSandboxKeepsTheHostSafe: inside the sandbox, writes outside the
// writable paths, firewall changes, mounts and reboots fail, and only the
// sandbox's processes are visible; the writable path is shared with the host.
func TestSandboxKeepsTheHostSafe(t *testing.T) {
	testenv.NeedRoot(t, "the sandbox")
	shared := t.TempDir()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tg, err := Start(ctx, Options{Dir: dir, Sandbox: true, Writable: []string{shared}})
	if err != nil {
		t.Fatalf("start sandboxed sshd (install bubblewrap and openssh-server): %v", err)
	}
	defer tg.Close()

	probe := filepath.Join(os.TempDir(), "nightshift-sandbox-probe")
	os.Remove(probe)
	tests := []struct {
		name, command string
		wantErr       bool
		wantOut       string
	}{
		{"root file system is read-only", "touch /etc/nightshift-probe", true, "Read-only file system"},
		{"recursive chmod of /etc fails", "chmod -R 000 /etc/ssh", true, "Read-only file system"},
		{"host /tmp is not visible", "touch " + probe + " && ls " + probe, false, ""},
		{"writable path is shared", "echo ok > " + filepath.Join(shared, "written"), false, ""},
		{"no CAP_SYS_ADMIN: mount fails", "mount -t tmpfs none /mnt", true, ""},
		{"no CAP_SYS_BOOT: reboot(2) fails", "reboot -f", true, ""},
		{"own PID namespace", "ps -e -o pid= | wc -l", false, ""},
		{"own hostname", "hostname", false, "nightshift-target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(t, tg, tt.command)
			if (err != nil) != tt.wantErr {
				t.Fatalf("%q: err %v, want error %v; output %q", tt.command, err, tt.wantErr, out)
			}
			if tt.wantOut != "" && !strings.Contains(out, tt.wantOut) {
				t.Fatalf("%q: output %q lacks %q", tt.command, out, tt.wantOut)
			}
		})
	}
	if _, err := os.Stat(probe); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file written to /tmp inside the sandbox appeared on the host: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(shared, "written")); err != nil || string(b) != "ok\n" {
		t.Errorf("the writable path was not shared: %q, %v", b, err)
	}
	if st, err := os.Stat("/etc/ssh"); err != nil || st.Mode().Perm() == 0 {
		t.Fatalf("/etc/ssh on the host changed: %v %v", st.Mode(), err)
	}
}

// TestSandboxNeedsRoot: without root a sandboxed target is refused, saying
// it needs root, and no sshd is started. As root the test runs as nobody.
func TestSandboxNeedsRoot(t *testing.T) {
	if !testenv.Unprivileged(t) {
		return // it ran as nobody
	}
	tg, err := Start(context.Background(), Options{Sandbox: true})
	if err == nil {
		tg.Close()
	}
	if !errors.Is(err, ErrSandbox) || !strings.Contains(err.Error(), "needs root") {
		t.Fatalf("a sandboxed Start without root: %v; want ErrSandbox saying it needs root", err)
	}
}
