package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// startSim serves policy with the tokenizer and chat template at spec
// (a built-in name or a directory) and returns the simulator and its /v1
// URL.
func startSim(t *testing.T, spec string, policy vllmsim.Policy) (*vllmsim.Server, string) {
	t.Helper()
	m, err := served.Offline(served.Config{Tokenizer: spec})
	require.NoError(t, err)
	counter := vllmsim.NewModelCounter(m)
	srv, err := vllmsim.New(vllmsim.Config{Counter: counter, Policy: policy})
	require.NoError(t, err)
	url, stop, err := srv.Start(context.Background())
	require.NoError(t, err)
	t.Cleanup(stop)
	return srv, url + "/v1"
}

// qwen3PlusToken writes the built-in Qwen3 tokenizer with one added token
// more ("ssh_apply", which every prompt's tool definitions hold) into a
// directory and returns it: a served model that counts the worker's
// prompts one way while the worker's --tokenizer qwen3 counts another.
func qwen3PlusToken(t *testing.T) string {
	t.Helper()
	models := filepath.Join("..", "..", "served", "models", "qwen3")
	gz, err := os.ReadFile(filepath.Join(models, "tokenizer.json.gz"))
	require.NoError(t, err)
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	require.NoError(t, err)
	raw, err := io.ReadAll(zr)
	require.NoError(t, err)
	var tj map[string]any
	require.NoError(t, json.Unmarshal(raw, &tj))
	added := tj["added_tokens"].([]any)
	next := 0
	for _, a := range added {
		next = max(next, int(a.(map[string]any)["id"].(float64))+1)
	}
	tj["added_tokens"] = append(added, map[string]any{"id": next, "content": "ssh_apply", "single_word": false,
		"lstrip": false, "rstrip": false, "normalized": false, "special": false})
	out, err := json.Marshal(tj)
	require.NoError(t, err)
	cfg, err := os.ReadFile(filepath.Join(models, "tokenizer_config.json"))
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tokenizer.json"), out, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), cfg, 0o644))
	return dir
}

func endpoints(srv *vllmsim.Server) map[string]int {
	n := map[string]int{}
	for _, r := range srv.Stats().Records {
		n[r.Endpoint]++
	}
	return n
}

var mismatch = regexp.MustCompile(`(?m)^worker: --verify-count: vllm: prompt count mismatch for Qwen/Qwen3-8B: the server's /tokenize counts (\d+) tokens, the local tokenizer and chat template (\d+): they are not the served model's$`)

// TestVerifyCount: with --verify-count, a run against a simulator that
// counts as the worker does goes on after one /tokenize; against one whose
// tokenizer has an added token, the run stops before any chat completion
// with the mismatch named and exit 2, in the main mode and in 'worker run'
// (whose tasks stay unfinished, to be resumed with the right tokenizer).
func TestVerifyCount(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t, 1, 3)
	policy := func() vllmsim.Policy {
		return vllmsim.Eventual(vllmsim.EventualConfig{FixAt: 2, WrongFixes: []string{"echo attempt %d"},
			Fixes: map[string]string{"sshd_root_login": "set root_login no"}})
	}
	host := fmt.Sprintf("root@127.0.0.1:%d", f.hosts[0].Port)
	fixArgs := func(url, rule string) []string {
		return []string{"--rules", f.rules, "--rule", rule, "--host", host, "--sandbox", "off", "--identity", f.key,
			"--known-hosts", f.knownHosts, "--base-url", url, "--retry-deadline", "5s", "--verify-count"}
	}

	t.Run("main mode, counts agree", func(t *testing.T) {
		srv, url := startSim(t, "qwen3", policy())
		code, out, errOut := cli(t, "", fixArgs(url, "sshd_root_login")...)
		require.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
		assert.Regexp(t, `(?m)^sshd_root_login +fixed +2 `, out)
		n := endpoints(srv)
		assert.Equal(t, 1, n["/tokenize"], "one /tokenize, for the first prompt only: %v", n)
		assert.Equal(t, 2, n["/v1/chat/completions"], "%v", n)
	})
	t.Run("main mode, counts differ", func(t *testing.T) {
		srv, url := startSim(t, qwen3PlusToken(t), policy())
		code, out, errOut := cli(t, "", fixArgs(url, "aide_db")...)
		require.Equal(t, exitUsage, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
		m := mismatch.FindStringSubmatch(errOut)
		require.NotNil(t, m, "stderr:\n%s", errOut)
		assert.NotEqual(t, m[1], m[2])
		n := endpoints(srv)
		assert.Equal(t, map[string]int{"/v1/models": 1, "/tokenize": 1}, n, "no chat completion after the mismatch")
	})
	t.Run("run, counts differ", func(t *testing.T) {
		srv, url := startSim(t, qwen3PlusToken(t), policy())
		j := filepath.Join(t.TempDir(), "night.db")
		args := f.runArgs(j, "--verify-count", "--no-progress")
		for i, a := range args {
			if a == "--base-url" {
				args[i+1] = url
			}
		}
		code, out, errOut := cli(t, "", args...)
		require.Equal(t, exitUsage, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
		require.Regexp(t, mismatch, errOut)
		assert.Equal(t, 0, endpoints(srv)["/v1/chat/completions"])
		jr, err := journal.Open(context.Background(), j, journal.Config{})
		require.NoError(t, err)
		defer jr.Close()
		runs, err := jr.Runs(context.Background())
		require.NoError(t, err)
		require.Len(t, runs, 1)
		tasks, err := jr.Tasks(context.Background(), runs[0].ID)
		require.NoError(t, err)
		status := map[string]nightshift.RuleStatus{}
		for _, task := range tasks {
			if task.Finished {
				status[task.Rule] = task.Status
			}
		}
		// Rules already compliant need no model; aide_db's task stays
		// unfinished.
		assert.Equal(t, map[string]nightshift.RuleStatus{"sshd_root_login": nightshift.RuleCompliant, "motd_banner": nightshift.RuleCompliant}, status)
	})
}

// TestDistillerModel: with --distiller model the summaries of old turns
// are the served model's own lines (the simulator's LinesReword), recorded
// in the journal's distillations; a model that claims success the re-check
// did not confirm (LinesClaim) gets the deterministic lines instead, and
// each fallback is a distill_fallback event and moves
// nightshift_distill_fallbacks_total{reason="claim"}, read from the run's
// own --metrics-addr while it runs.
func TestDistillerModel(t *testing.T) {
	t.Parallel()
	f := newBatchFixture(t, 1, 8)
	// Long outputs, so that old turns are distilled in a 6,144-token window.
	long := strings.Repeat("the audit database is not initialised yet ", 40)
	newPolicy := func(lines vllmsim.LineWriter, scrape *scraper) vllmsim.Policy {
		var p vllmsim.Policy = vllmsim.Eventual(vllmsim.EventualConfig{WrongFixes: []string{"echo " + long + "%d"}})
		if scrape != nil {
			p = scrape.wrap(p)
		}
		return vllmsim.WithLines(p, lines)
	}
	args := func(j, url string, extra ...string) []string {
		a := f.runArgs(j, append([]string{"--rule", "aide_db", "--distiller", "model", "--context-window", "6144",
			"--max-tokens", "1024", "--keep-turns", "1", "--no-progress", "--no-lessons"}, extra...)...)
		for i, x := range a {
			if x == "--base-url" {
				a[i+1] = url
			}
		}
		return a
	}

	t.Run("model lines", func(t *testing.T) {
		_, url := startSim(t, "qwen3", newPolicy(vllmsim.LinesReword, nil))
		j := filepath.Join(t.TempDir(), "night.db")
		code, out, errOut := cli(t, "", args(j, url)...)
		require.Equal(t, exitNotFixed, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
		lines := distilledLines(t, j)
		require.NotEmpty(t, lines, "no turn was distilled")
		t.Logf("%d lines, first %q", len(lines), lines[0])
		for _, l := range lines {
			assert.Regexp(t, `^\[Turn \d+: summary: `, l)
		}
	})
	t.Run("false claims fall back", func(t *testing.T) {
		addr := freeAddr(t)
		sc := &scraper{url: "http://" + addr + "/metrics"}
		_, url := startSim(t, "qwen3", newPolicy(vllmsim.LinesClaim, sc))
		j := filepath.Join(t.TempDir(), "night.db")
		code, out, errOut := cli(t, "", args(j, url, "--metrics-addr", addr)...)
		require.Equal(t, exitNotFixed, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
		lines := distilledLines(t, j)
		require.NotEmpty(t, lines, "no turn was distilled")
		t.Logf("%d lines, first %q", len(lines), lines[0])
		for _, l := range lines {
			assert.NotContains(t, l, "fixed it", "a false claim reached the prompt")
			assert.NotRegexp(t, `^\[Turn \d+: summary: `, l)
		}
		claims := regexp.MustCompile(`(?m)^nightshift_distill_fallbacks_total\{reason="claim"\} (\d+)$`)
		first, last := sc.bodies()
		m0, m1 := claims.FindStringSubmatch(first), claims.FindStringSubmatch(last)
		require.NotNil(t, m0, "first scrape:\n%s", first)
		require.NotNil(t, m1, "last scrape:\n%s", last)
		assert.Equal(t, "0", m0[1])
		assert.NotEqual(t, "0", m1[1], "the counter did not move")
	})
}

// distilledLines returns every summary line the journal at path recorded.
func distilledLines(t *testing.T, path string) []string {
	t.Helper()
	ctx := context.Background()
	j, err := journal.Open(ctx, path, journal.Config{})
	require.NoError(t, err)
	defer j.Close()
	runs, err := j.Runs(ctx)
	require.NoError(t, err)
	var lines []string
	for _, r := range runs {
		tasks, err := j.Tasks(ctx, r.ID)
		require.NoError(t, err)
		for _, task := range tasks {
			steps, err := j.Steps(ctx, task.ID)
			require.NoError(t, err)
			for _, s := range steps {
				if s.Distillation != nil {
					lines = append(lines, s.Distillation.Lines...)
				}
			}
		}
	}
	return lines
}

// scraper reads the run's /metrics each time the model is asked for a
// command (the run's metrics server lives only while the run does).
type scraper struct {
	url string
	mu  sync.Mutex
	got []string
}

func (s *scraper) wrap(p vllmsim.Policy) vllmsim.Policy { return scrapingPolicy{p, s} }

func (s *scraper) bodies() (first, last string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.got) == 0 {
		return "", ""
	}
	return s.got[0], s.got[len(s.got)-1]
}

type scrapingPolicy struct {
	vllmsim.Policy
	s *scraper
}

func (p scrapingPolicy) Next(c vllmsim.Conversation) vllmsim.Generation {
	if resp, err := http.Get(p.s.url); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		p.s.mu.Lock()
		p.s.got = append(p.s.got, string(b))
		p.s.mu.Unlock()
	}
	return p.Policy.Next(c)
}

// freeAddr returns a free 127.0.0.1:PORT.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}
