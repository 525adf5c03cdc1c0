package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/nightshift-dev/nightshift/internal/faultserver"
	"github.com/nightshift-dev/nightshift/internal/simhost"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// cmdSimHosts starts a simulated SSH host (internal/simhost: it executes
// nothing on this machine) for each NAME, in the test process until the
// script ends, and writes $WORK/hosts.yaml (the inventory),
// $WORK/known_hosts and the client key $WORK/id_ed25519.
//
//	simhosts NAME…
func cmdSimHosts(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: simhosts NAME…")
	}
	ts.Check(simhost.WriteKey(ts.MkAbs("id_ed25519"), "script client"))
	var inv, known strings.Builder
	inv.WriteString("hosts:\n")
	for _, name := range args {
		h, err := simhost.Start(context.Background(), simhost.Config{Name: name, AuthorizedKey: simhost.KeyFromSeed("script client").PublicKey()})
		ts.Check(err)
		ts.Defer(func() { h.Close() })
		fmt.Fprintf(&inv, "  - host: %s\n    address: 127.0.0.1\n    port: %d\n    user: root\n", name, h.Port)
		known.WriteString(h.KnownHostsLine() + "\n")
	}
	ts.Check(os.WriteFile(ts.MkAbs("hosts.yaml"), []byte(inv.String()), 0o600))
	ts.Check(os.WriteFile(ts.MkAbs("known_hosts"), []byte(known.String()), 0o600))
}

// The Qwen3 tokenizer, loaded once for every script's fault servers (a
// load takes seconds under -race).
var (
	modelOnce sync.Once
	qwen3     *served.Model
	qwen3Err  error
)

// cmdFaultServer starts the model fault server (internal/faultserver) in
// the test process until the script ends and sets VAR to its OpenAI base
// URL: its first TIMES chat completions are answered with FAULT, the rest
// by the vLLM simulator, whose policy proposes each RULE's COMMAND at the
// first attempt.
//
//	faultserver VAR FAULT TIMES [RULE=COMMAND…]
func cmdFaultServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: faultserver VAR FAULT TIMES [RULE=COMMAND…]")
	}
	kind, err := faultserver.ParseKind(args[1])
	ts.Check(err)
	times, err := strconv.Atoi(args[2])
	ts.Check(err)
	fixes := map[string]string{}
	for _, a := range args[3:] {
		rule, cmd, ok := strings.Cut(a, "=")
		if !ok {
			ts.Fatalf("faultserver: %q is not RULE=COMMAND", a)
		}
		fixes[rule] = cmd
	}
	modelOnce.Do(func() { qwen3, qwen3Err = served.Offline(served.Config{Tokenizer: "qwen3"}) })
	ts.Check(qwen3Err)
	counter := vllmsim.NewModelCounter(qwen3)
	sim, err := vllmsim.New(vllmsim.Config{Counter: counter, Policy: vllmsim.Eventual(vllmsim.EventualConfig{FixAt: 1, Fixes: fixes})})
	ts.Check(err)
	var faults []faultserver.Fault // TIMES 0: none
	if times > 0 {
		faults = []faultserver.Fault{{Kind: kind, Times: times}}
	}
	s, err := faultserver.New(faultserver.Config{Next: sim.Handler(), Faults: faults})
	ts.Check(err)
	url, err := s.Start(context.Background())
	ts.Check(err)
	ts.Defer(func() { s.Close() })
	ts.Setenv(args[0], url+"/v1")
}
