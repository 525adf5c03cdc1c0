package simhost_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/crypto/ssh"

	"github.com/nightshift-dev/nightshift/internal/simhost"
	"github.com/nightshift-dev/nightshift/sshexec"
)

func Example() {
	ctx := context.Background()
	client := simhost.KeyFromSeed("client")
	h, err := simhost.Start(ctx, simhost.Config{Name: "web1", AuthorizedKey: client.PublicKey()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close()
	dir, _ := os.MkdirTemp("", "simhost-")
	defer os.RemoveAll(dir)
	kh := filepath.Join(dir, "known_hosts")
	os.WriteFile(kh, []byte(h.KnownHostsLine()+"\n"), 0o600)

	c, err := sshexec.New(sshexec.Config{Host: "127.0.0.1", Port: h.Port, User: "root",
		Signers: []ssh.Signer{client}, NoAgent: true, KnownHostsFiles: []string{kh}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	for _, cmd := range []string{"test sshd = hardened", "set sshd hardened", "test sshd = hardened", "rm -rf /"} {
		r, err := c.Run(ctx, cmd)
		fmt.Printf("%-22s exit %d %q %v\n", cmd, r.ExitCode, r.Stdout+r.Stderr, err)
	}
	fmt.Println(h.Count("set sshd hardened"), "time(s) set")
	// Output:
	// test sshd = hardened   exit 1 "sshd is \"\", want \"hardened\"\n" <nil>
	// set sshd hardened      exit 0 "sshd=hardened\n" <nil>
	// test sshd = hardened   exit 0 "" <nil>
	// rm -rf /               exit 127 "sh: 1: rm: not found\n" <nil>
	// 1 time(s) set
}
