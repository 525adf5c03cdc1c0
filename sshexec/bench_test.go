package sshexec

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/nightshift-dev/nightshift/internal/sshtarget"
)

// BenchmarkCommandOverhead measures one short command over an established
// connection, with Client.Run and with OpenSSH's ssh(1) multiplexed through
// a ControlMaster, against the same real sshd in the same run. The
// difference to a bare exec is per-command overhead: session open, exec,
// the remote shell, exit status and channel close.
func BenchmarkCommandOverhead(b *testing.B) {
	tg := startTarget(b, sshtarget.Options{})
	const command = "true"

	b.Run("sshexec", func(b *testing.B) {
		c, err := New(targetConfig(tg))
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		if err := c.Connect(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for b.Loop() {
			res, err := c.Run(context.Background(), command)
			if err != nil || res.ExitCode != 0 {
				b.Fatalf("Run = %+v, %v", res, err)
			}
		}
	})

	b.Run("openssh-controlmaster", func(b *testing.B) {
		sock := filepath.Join(b.TempDir(), "cm.sock")
		master := exec.Command("ssh", append([]string{"-M", "-S", sock, "-fN", "-o", "ControlPersist=no"}, tg.SSHArgs()...)...)
		if out, err := master.CombinedOutput(); err != nil {
			b.Fatalf("start ControlMaster: %v: %s", err, out)
		}
		defer exec.Command("ssh", "-S", sock, "-O", "exit", tg.Host).Run()
		args := append([]string{"-S", sock, "-o", "ControlMaster=no"}, tg.SSHArgs()...)
		args = append(args, command)
		b.ResetTimer()
		for b.Loop() {
			if out, err := exec.Command("ssh", args...).CombinedOutput(); err != nil {
				b.Fatalf("ssh -S: %v: %s", err, out)
			}
		}
	})
}
