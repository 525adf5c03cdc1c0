package worker_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/crypto/ssh"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/internal/simhost"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/sshexec"
	"github.com/nightshift-dev/nightshift/vllmsim"
	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

// printCommands prints each command the worker ran on the host.
type printCommands struct{}

func (printCommands) Observe(e nightshift.Event) {
	if e.Kind == nightshift.EventCommand && e.ExitCode != nil {
		fmt.Printf("attempt %d: %s (exit %d)\n", e.Attempt, e.Command, *e.ExitCode)
	}
}

// A worker fixes one rule on a simulated host over SSH, with the vLLM
// simulator as the model server: its first proposal is wrong, its second
// fixes the rule, and the rule's check passes after it.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "worker-example-")
	defer os.RemoveAll(dir)

	// A disposable target: an in-process SSH server that executes nothing
	// on this machine.
	key := simhost.KeyFromSeed("example client")
	h, err := simhost.Start(ctx, simhost.Config{Name: "web1", AuthorizedKey: key.PublicKey()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close()
	knownHosts := filepath.Join(dir, "known_hosts")
	os.WriteFile(knownHosts, []byte(h.KnownHostsLine()+"\n"), 0o600)
	target, err := sshexec.New(sshexec.Config{Host: "127.0.0.1", Port: h.Port, User: "root",
		Signers: []ssh.Signer{key}, NoAgent: true, KnownHostsFiles: []string{knownHosts}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer target.Close()

	// The model server, counting prompts with Qwen3's tokenizer.
	qwen3, _ := served.Offline(served.Config{Tokenizer: "qwen3"})
	sim, _ := vllmsim.New(vllmsim.Config{Counter: vllmsim.NewModelCounter(qwen3), Policy: vllmsim.Eventual(vllmsim.EventualConfig{
		FixAt: 2, WrongFixes: []string{"echo looking"}, Fixes: map[string]string{"sshd_root_login": "set root_login no"},
	})})
	url, stop, err := sim.Start(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()

	// The served model: its name, window and tokenizer, checked against
	// the server's /tokenize.
	model, err := served.Connect(ctx, served.Config{BaseURL: url + "/v1", Tokenizer: "qwen3", Budget: budget.Config{Reserve: 1024}})
	if err != nil {
		fmt.Println(err)
		return
	}
	chat, _ := worker.NewClient(worker.ClientConfig{BaseURL: url + "/v1"})
	w, err := worker.New(worker.Config{Model: model, Chat: chat, Target: target,
		Observer: printCommands{}})
	if err != nil {
		fmt.Println(err)
		return
	}

	set, _ := rules.Parse("rules.yaml", []byte(`rules:
  - {id: sshd_root_login, title: Disable root login, check: "test root_login = no"}
`))
	out, err := w.Fix(ctx, set.Rules()[0])
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %s after %d attempts, %d model calls\n", out.Rule, out.Status, out.Attempts, out.ModelCalls)
	fmt.Println("root_login =", h.Get("root_login"))
	// Output:
	// attempt 1: echo looking (exit 0)
	// attempt 2: set root_login no (exit 0)
	// sshd_root_login: fixed after 2 attempts, 2 model calls
	// root_login = no
}
