package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/nightshift-dev/nightshift/internal/faultserver"
	"github.com/nightshift-dev/nightshift/internal/simhost"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// cmdSimHosts starts a simulated SSH host (internal/simhost: it executes
// nothing on this machine) for each NAME, in the test process until the
// script ends, and writes $WORK/hosts.yaml and $WORK/hosts.ini (the
// inventory in both forms), $WORK/known_hosts and the client key
// $WORK/id_ed25519; it sets the variable NAME, upper-cased, to the host's
// 127.0.0.1:PORT. With -group the INI inventory lists the hosts under
// [GROUP]; with -zone each host's nightshift_zone is ZONE.
//
//	simhosts [-group GROUP] [-zone ZONE] NAME…
func cmdSimHosts(ts *testscript.TestScript, neg bool, args []string) {
	var group, zone string
	for len(args) > 1 && (args[0] == "-group" || args[0] == "-zone") {
		if args[0] == "-group" {
			group = args[1]
		} else {
			zone = args[1]
		}
		args = args[2:]
	}
	if neg || len(args) == 0 {
		ts.Fatalf("usage: simhosts [-group GROUP] [-zone ZONE] NAME…")
	}
	ts.Check(simhost.WriteKey(ts.MkAbs("id_ed25519"), "script client"))
	var inv, ini, known strings.Builder
	inv.WriteString("hosts:\n")
	if group != "" {
		fmt.Fprintf(&ini, "[%s]\n", group)
	}
	for _, name := range args {
		h, err := simhost.Start(context.Background(), simhost.Config{Name: name, AuthorizedKey: simhost.KeyFromSeed("script client").PublicKey()})
		ts.Check(err)
		ts.Defer(func() { h.Close() })
		fmt.Fprintf(&inv, "  - host: %s\n    address: 127.0.0.1\n    port: %d\n    user: root\n", name, h.Port)
		if zone != "" {
			fmt.Fprintf(&inv, "    vars: {nightshift_zone: %s}\n", zone)
		}
		fmt.Fprintf(&ini, "%s ansible_host=127.0.0.1 ansible_port=%d ansible_user=root", name, h.Port)
		if zone != "" {
			fmt.Fprintf(&ini, " nightshift_zone=%s", zone)
		}
		ini.WriteString("\n")
		known.WriteString(h.KnownHostsLine() + "\n")
		ts.Setenv(strings.ToUpper(name), fmt.Sprintf("127.0.0.1:%d", h.Port))
	}
	ts.Check(os.WriteFile(ts.MkAbs("hosts.yaml"), []byte(inv.String()), 0o600))
	ts.Check(os.WriteFile(ts.MkAbs("hosts.ini"), []byte(ini.String()), 0o600))
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
	ts.Value(faultServersKey{}).(*sync.Map).Store(args[0], s)
}

// faultServersKey holds a script's fault servers by variable
// (testscript.Env.Values), for waitfaults.
type faultServersKey struct{}

// cmdWaitFaults waits (up to five minutes: a race-instrumented worker on a
// loaded machine takes minutes to start) until the fault server of VAR has
// answered N chat completions with its fault (a hang counts once it
// began), so a script can signal a worker at a known point.
//
//	waitfaults VAR N
func cmdWaitFaults(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitfaults VAR N")
	}
	v, ok := ts.Value(faultServersKey{}).(*sync.Map).Load(args[0])
	if !ok {
		ts.Fatalf("waitfaults: no fault server %s", args[0])
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	deadline := time.Now().Add(5 * time.Minute)
	for v.(*faultserver.Server).Stats().Faults < n {
		if time.Now().After(deadline) {
			ts.Fatalf("waitfaults: %s answered %d faults in five minutes, want %d", args[0], v.(*faultserver.Server).Stats().Faults, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
