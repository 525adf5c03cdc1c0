package sshexec_test

import (
	"context"
	"fmt"
	"log"

	"github.com/nightshift-dev/nightshift/internal/sshtarget"
	"github.com/nightshift-dev/nightshift/sshexec"
)

// Example runs commands on a disposable real OpenSSH server on loopback.
func Example() {
	ctx := context.Background()
	target, err := sshtarget.Start(ctx, sshtarget.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer target.Close()

	client, err := sshexec.New(sshexec.Config{
		Host:            target.Host,
		Port:            target.Port,
		User:            target.User,
		IdentityFiles:   []string{target.IdentityFile},
		KnownHostsFiles: []string{target.KnownHostsFile},
		NoAgent:         true,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	res, err := client.Run(ctx, "echo compliant; echo 'rule failed' >&2; exit 2")
	if err != nil {
		log.Fatal(err) // dial, host key, auth or session failure
	}
	fmt.Printf("stdout %q\nstderr %q\nexit %d\n", res.Stdout, res.Stderr, res.ExitCode)
	// Output:
	// stdout "compliant\n"
	// stderr "rule failed\n"
	// exit 2
}
