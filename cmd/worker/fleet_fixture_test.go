package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/simhost"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// The inputs of a simulated fleet night, shared by TestFleetIntegration and
// BenchmarkFleetNight: the client key, the rules, the hosts and the model.

// writeFleetKey writes the client key the simulated hosts accept.
func writeFleetKey(tb testing.TB, dir string) string {
	tb.Helper()
	key := filepath.Join(dir, "id_ed25519")
	if err := simhost.WriteKey(key, "fleet client"); err != nil {
		tb.Fatal(err)
	}
	return key
}

// writeFleetRules writes nRules rules rNN whose checks read the hosts'
// state (the five kinds of fleetPolicy by index).
func writeFleetRules(tb testing.TB, dir string, nRules int) string {
	tb.Helper()
	var b strings.Builder
	b.WriteString("rules:\n")
	for i := range nRules {
		fmt.Fprintf(&b, "  - {id: r%02d, title: Simulated rule %d, check: \"test r%02d = ok\", max_attempts: 5}\n", i, i, i)
	}
	f := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(f, []byte(b.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
	return f
}

// fleetHosts starts n simulated hosts (every fifth rule compliant) and
// writes their inventory into dir; host i's nightshift_zone is
// zones[i%len(zones)] (unset without zones). With keepState each host keeps
// its state and command log under dir/hosts.
func fleetHosts(tb testing.TB, dir string, n, nRules int, zones []string, keepState bool) (inv string, hosts []*simhost.Host) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	width := max(2, len(strconv.Itoa(n-1)))
	var b strings.Builder
	b.WriteString("hosts:\n")
	for i := range n {
		name := fmt.Sprintf("h%0*d", width, i)
		st := map[string]string{}
		for r := 0; r < nRules; r += 5 {
			st[fmt.Sprintf("r%02d", r)] = "ok"
		}
		cfg := simhost.Config{Name: name, AuthorizedKey: simhost.KeyFromSeed("fleet client").PublicKey(), State: st}
		if keepState {
			cfg.Dir = filepath.Join(dir, "hosts", name)
		}
		h, err := simhost.Start(context.Background(), cfg)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { h.Close() })
		hosts = append(hosts, h)
		fmt.Fprintf(&b, "  - host: %s\n    address: 127.0.0.1\n    port: %d\n    user: root\n", name, h.Port)
		if len(zones) > 0 {
			fmt.Fprintf(&b, "    vars: {nightshift_zone: %s}\n", zones[i%len(zones)])
		}
	}
	inv = filepath.Join(dir, "hosts.yaml")
	if err := os.WriteFile(inv, []byte(b.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
	return inv, hosts
}

// writeKnownHosts writes a known_hosts file listing the hosts' keys.
func writeKnownHosts(tb testing.TB, path string, hosts []*simhost.Host) string {
	tb.Helper()
	var b strings.Builder
	for _, h := range hosts {
		b.WriteString(h.KnownHostsLine() + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// startFleetModel serves the vLLM simulator (Qwen3, fleetPolicy) behind a
// gauge that holds each chat completion delay and records the most in
// flight; it returns the gauge and the OpenAI base URL.
func startFleetModel(tb testing.TB, delay time.Duration) (*gauge, string) {
	tb.Helper()
	m, err := served.Offline(served.Config{Tokenizer: "qwen3"})
	if err != nil {
		tb.Fatal(err)
	}
	counter := vllmsim.NewModelCounter(m)
	sim, err := vllmsim.New(vllmsim.Config{Counter: counter, Policy: fleetPolicy{}, Seed: 1, Created: time.Unix(1, 0), PromptTokensDetails: true})
	if err != nil {
		tb.Fatal(err)
	}
	g := &gauge{inner: sim.Handler(), delay: delay}
	hs := httptest.NewServer(g)
	tb.Cleanup(hs.Close)
	return g, hs.URL + "/v1"
}
