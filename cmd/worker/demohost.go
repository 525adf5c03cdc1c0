package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/nightshift-dev/nightshift/internal/simhost"
	"github.com/nightshift-dev/nightshift/sshexec"
	"github.com/nightshift-dev/nightshift/worker"
)

// exitRefused is the exit status of a command the demo host refuses, as a
// shell's for a command it cannot execute.
const exitRefused = 126

// demoProbeFacts is what the in-process host answers to the worker's host
// probe: a Debian 12 host with apt-get and systemd.
const demoProbeFacts = "os=Debian GNU/Linux 12 (bookworm)\npkg=apt-get\ninit=systemd\n"

// demoHost is the demo's target on a bare machine: an in-process SSH
// server (internal/simhost, on 127.0.0.1, a fresh host key checked against
// a known_hosts file like any host) whose sessions run only the commands
// of an allow-list — the demo policy's scripted commands and the rules'
// checks — with /bin/sh in the demo's directory, and answers the worker's
// host probe with demoProbeFacts (the host is that directory, not this
// machine, so the demo's prompts are the same on every machine). Every
// other command is refused (exit 126) without running.
type demoHost struct {
	dir     string
	allowed map[string]bool
	host    *simhost.Host
	client  *sshexec.Client

	mu      sync.Mutex
	refused []string
}

// startDemoHost starts the server and connects an SSH client to it.
func startDemoHost(ctx context.Context, dir string, allowed []string, commandTimeout time.Duration) (*demoHost, error) {
	d := &demoHost{dir: dir, allowed: map[string]bool{}}
	for _, c := range allowed {
		d.allowed[c] = true
	}
	clientKey, err := newSigner()
	if err != nil {
		return nil, err
	}
	hostKey, err := newSigner()
	if err != nil {
		return nil, err
	}
	d.host, err = simhost.Start(ctx, simhost.Config{Name: "demo", HostKey: hostKey, AuthorizedKey: clientKey.PublicKey(), Exec: d.exec})
	if err != nil {
		return nil, err
	}
	kh := filepath.Join(filepath.Dir(dir), "known_hosts")
	if err := os.WriteFile(kh, []byte(d.host.KnownHostsLine()+"\n"), 0o600); err != nil {
		d.host.Close()
		return nil, err
	}
	d.client, err = sshexec.New(sshexec.Config{Host: "127.0.0.1", Port: d.host.Port, User: "demo", Signers: []ssh.Signer{clientKey},
		NoAgent: true, KnownHostsFiles: []string{kh}, CommandTimeout: commandTimeout})
	if err != nil {
		d.host.Close()
		return nil, err
	}
	return d, nil
}

func newSigner() (ssh.Signer, error) {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	return ssh.NewSignerFromKey(k)
}

// Addr is the server's address.
func (d *demoHost) Addr() string { return d.host.Addr }

// Refused returns the commands refused so far.
func (d *demoHost) Refused() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.refused...)
}

// Close closes the client and stops the server.
func (d *demoHost) Close() error {
	return errors.Join(d.client.Close(), d.host.Close())
}

// exec runs an allowed command with /bin/sh in the demo directory, in its
// own process group (killed whole when ctx ends), with a minimal
// environment; it refuses any other command.
func (d *demoHost) exec(ctx context.Context, command string, stdout, stderr io.Writer) int {
	return d.execIn(ctx, d.dir, command, stdout, stderr)
}

// execIn is exec in another directory (the demo sandbox's copy of the
// host's).
func (d *demoHost) execIn(ctx context.Context, dir, command string, stdout, stderr io.Writer) int {
	if command == worker.ProbeCommand {
		_, _ = io.WriteString(stdout, demoProbeFacts)
		return 0
	}
	if !d.allowed[command] {
		d.mu.Lock()
		d.refused = append(d.refused, command)
		d.mu.Unlock()
		fmt.Fprintf(stderr, "demo host: refused: not one of the demo's own scripted commands: %s\n", oneLine(command, 120))
		return exitRefused
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LC_ALL=C", "TZ=UTC"}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	fmt.Fprintf(stderr, "demo host: %v\n", err)
	return exitRefused
}
