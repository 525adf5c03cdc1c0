package batch_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	openai "github.com/sashabaranov/go-openai"
	"golang.org/x/crypto/ssh"

	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/internal/simhost"
	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/orchestrate"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/sshexec"
	"github.com/nightshift-dev/nightshift/vllmsim"
	"github.com/nightshift-dev/nightshift/worker"
)

// Two rules on two simulated hosts, with the vLLM simulator proposing the
// fix; the journal then holds every step and the report is built from it.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "batch-example-")
	defer os.RemoveAll(dir)

	// Disposable targets: in-process SSH servers that execute nothing here.
	client := simhost.KeyFromSeed("example client")
	var hosts []inventory.Host
	var known strings.Builder
	for _, name := range []string{"web1", "db1"} {
		h, _ := simhost.Start(ctx, simhost.Config{Name: name, AuthorizedKey: client.PublicKey()})
		defer h.Close()
		hosts = append(hosts, inventory.Host{Name: name, Address: "127.0.0.1", Port: h.Port, User: "root"})
		known.WriteString(h.KnownHostsLine() + "\n")
	}
	os.WriteFile(filepath.Join(dir, "known_hosts"), []byte(known.String()), 0o600)

	set, _ := rules.Parse("rules.yaml", []byte(`rules:
  - {id: sshd_root_login, title: Disable root login, check: "test root_login = no"}
  - {id: aide_db, title: Build the AIDE database, check: "test aide = built"}
`))
	model, _ := served.Offline(served.Config{Tokenizer: "qwen3"})
	simCounter := vllmsim.NewModelCounter(model)
	srv, _ := vllmsim.New(vllmsim.Config{Counter: simCounter, Policy: vllmsim.Eventual(vllmsim.EventualConfig{
		FixAt: 2, WrongFixes: []string{"echo looking"},
		Fixes: map[string]string{"sshd_root_login": "set root_login no", "aide_db": "set aide built"},
	})})
	url, stop, _ := srv.Start(ctx)
	defer stop()
	oc := openai.DefaultConfig("")
	oc.BaseURL = url + "/v1"
	oc.HTTPClient = &http.Client{}
	b, _ := budget.New(budget.Config{ContextWindow: srv.MaxModelLen(), Reserve: budget.DefaultReserve})

	j, err := journal.Open(ctx, filepath.Join(dir, "night.db"), journal.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer j.Close()
	r, err := batch.New(batch.Config{
		Journal: j,
		Connector: orchestrate.SSHConnector{Base: sshexec.Config{Signers: []ssh.Signer{client}, NoAgent: true,
			KnownHostsFiles: []string{filepath.Join(dir, "known_hosts")}}},
		Worker:        worker.Config{Chat: openai.NewClientWithConfig(oc), Model: model.With(srv.Model(), b)},
		ParallelHosts: 2, ModelConcurrency: 1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := r.Run(ctx, batch.Spec{Name: "example", Rules: set.Rules(), Hosts: hosts})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d of %d tasks finished\n", res.Finished, res.Total)
	rep, _ := batch.Report(ctx, j, res.Run, 0)
	for _, x := range rep.Results {
		fmt.Printf("%s on %s: %s after %d attempts\n", x.Rule, x.Host, x.Outcome, len(x.Attempts))
	}
	// Output:
	// 4 of 4 tasks finished
	// sshd_root_login on web1: fixed after 2 attempts
	// sshd_root_login on db1: fixed after 2 attempts
	// aide_db on web1: fixed after 2 attempts
	// aide_db on db1: fixed after 2 attempts
}
