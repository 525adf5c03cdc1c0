package simhost

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/nightshift-dev/nightshift/sshexec"
)

func TestInterpret(t *testing.T) {
	h := &Host{state: map[string]string{"a": "1"}, cfg: Config{Name: "t", Locked: []string{"l"}}}
	tests := []struct {
		cmd      string
		code     int
		out, err string
	}{
		{"test a = 1", 0, "", ""},
		{"test a = 2", 1, "a is \"1\", want \"2\"\n", ""},
		{"set a 2", 0, "a=2\n", ""},
		{"test a = 2", 0, "", ""},
		{"set a", 2, "", "set: usage: set [--force] KEY VALUE\n"},
		{"set l 1", 1, "", "set: l: read-only (use set --force)\n"},
		{"test l = 1", 1, "l is \"\", want \"1\"\n", ""},
		{"set --force l 1", 0, "l=1\n", ""},
		{"test l = 1", 0, "", ""},
		{"test a 2", 2, "", "test: usage: test KEY = VALUE\n"},
		{"echo hi  there", 0, "hi there\n", ""},
		{"false", 1, "", ""},
		{"kill -TERM -- -4242", 0, "", ""},
		{"", 0, "", ""},
		{"rm -rf /", 127, "", "sh: 1: rm: not found\n"},
		{`. /etc/os-release 2>/dev/null; echo "os=${PRETTY_NAME:-unknown}"`, 0, "os=Simulated Linux (t)\nid=simlinux\nversion=1\npkg=apt-get\ninit=systemd\n", ""},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := h.interpret(tt.cmd, &out, &errb)
		if code != tt.code || out.String() != tt.out || errb.String() != tt.err {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, %q, %q", tt.cmd, code, out.String(), errb.String(), tt.code, tt.out, tt.err)
		}
	}
}

func TestStateAndLogSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	cfg := Config{Name: "web1", Dir: dir, AuthorizedKey: KeyFromSeed("c").PublicKey(), State: map[string]string{"x": "initial"}}
	h, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var sink bytes.Buffer
	for _, c := range []string{"set x changed", "echo hi"} {
		if _, ok := h.exec(c, &sink, &sink); !ok {
			t.Fatal("host died")
		}
	}
	h.Close()
	h2, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	if got := h2.Get("x"); got != "changed" {
		t.Errorf("x = %q after restart, want changed", got)
	}
	if got := h2.Log(); len(got) != 2 || got[0] != "set x changed" {
		t.Errorf("log after restart %q", got)
	}
	if h2.KnownHostsLine() == "" || h2.hostKey.PublicKey().Type() != "ssh-ed25519" {
		t.Error("no derived host key")
	}
}

func TestDieAfter(t *testing.T) {
	h, err := Start(context.Background(), Config{AuthorizedKey: KeyFromSeed("c").PublicKey(), DieAfter: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var sink bytes.Buffer
	if _, ok := h.exec("echo 1", &sink, &sink); !ok {
		t.Fatal("first command refused")
	}
	if _, ok := h.exec("echo 2", &sink, &sink); ok {
		t.Fatal("second command ran after DieAfter")
	}
	if n := h.Count("echo 2"); n != 0 {
		t.Errorf("the refused command was logged %d times", n)
	}
	if _, err := Start(context.Background(), Config{}); err == nil {
		t.Error("Start without AuthorizedKey succeeded")
	}
}

// TestExec: Config.Exec runs the commands (the preamble answered and
// stripped, the command logged), and sshexec's kill of the announced
// process group, sent when a command times out, cancels the running one.
func TestExec(t *testing.T) {
	ctx := context.Background()
	client := KeyFromSeed("client")
	started := make(chan struct{}, 1)
	exec := func(ctx context.Context, command string, stdout, stderr io.Writer) int {
		switch command {
		case "hang":
			started <- struct{}{}
			<-ctx.Done()
			return 143
		case "hello":
			fmt.Fprintln(stdout, "hello from exec")
			return 0
		}
		fmt.Fprintln(stderr, "refused")
		return 126
	}
	h, err := Start(ctx, Config{AuthorizedKey: client.PublicKey(), Exec: exec})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh, []byte(h.KnownHostsLine()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := sshexec.New(sshexec.Config{Host: "127.0.0.1", Port: h.Port, User: "root", Signers: []ssh.Signer{client},
		NoAgent: true, KnownHostsFiles: []string{kh}, CommandTimeout: 300 * time.Millisecond, KillGrace: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := c.Run(ctx, "hello")
	if err != nil || r.ExitCode != 0 || r.Stdout != "hello from exec\n" || r.Stderr != "" {
		t.Fatalf("hello: %+v, %v", r, err)
	}
	r, err = c.Run(ctx, "set x 1")
	if err != nil || r.ExitCode != 126 || r.Stderr != "refused\n" || h.Get("x") != "" {
		t.Fatalf("set under Exec: %+v, %v (state x=%q)", r, err, h.Get("x"))
	}
	r, err = c.Run(ctx, "hang")
	if err != nil || !r.TimedOut {
		t.Fatalf("hang: %+v, %v; want a timeout", r, err)
	}
	<-started
	log := h.Log()
	if len(log) != 4 || log[0] != "hello" || log[2] != "hang" || !strings.HasPrefix(log[3], "kill -") {
		t.Fatalf("log %q: want hello, set x 1, hang and the kill", log)
	}
}
