package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift/internal/sshtarget"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// cli runs the program as main would and returns its exit code and output.
func cli(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	code = exitCode(err, &errb)
	return code, out.String(), errb.String()
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no arguments", nil, "no subcommand or flags given"},
		{"unknown subcommand", []string{"frobnicate"}, `unknown subcommand "frobnicate"`},
		{"missing --rules", []string{"--rule", "x", "--host", "h"}, "--rules is required"},
		{"missing --rule", []string{"--rules", "r.yaml", "--host", "h"}, "at least one --rule is required"},
		{"missing --host", []string{"--rules", "r.yaml", "--rule", "x"}, "--host is required"},
		{"bad --keep-turns", []string{"--rules", "r.yaml", "--rule", "x", "--host", "h", "--keep-turns", "0"}, "--keep-turns must be positive"},
		{"rules file missing", []string{"--rules", "/nonexistent/rules.yaml", "--rule", "x", "--host", "h"}, "/nonexistent/rules.yaml"},
		{"unknown tokenizer", []string{"tokens", "--tokenizer", "gpt-7"}, `unknown tokenizer "gpt-7"`},
		{"tokens with an argument", []string{"tokens", "file.txt"}, "input is read from standard input"},
		{"--ids with --chat", []string{"tokens", "--ids", "--chat"}, "cannot be combined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := cli(t, "", tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 mentioning %q", code, stderr, tt.want)
			}
		})
	}
}

func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"tokens", "--help"}, {"simulate-server", "--help"}, {"demo", "--help"}} {
		code, out, errOut := cli(t, "", args...)
		if code != exitOK || !strings.Contains(out+errOut, "Usage:") {
			t.Errorf("%v: exit %d, output %q", args, code, out+errOut)
		}
	}
	_, out, _ := cli(t, "", "--rules", "x", "--help")
	if !strings.Contains(out, "Examples:") || !strings.Contains(out, "--accept-new-host-key") {
		t.Errorf("run help lacks examples or flags:\n%s", out)
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	m, err := served.Offline(served.Config{Tokenizer: "qwen3"})
	if err != nil {
		t.Fatal(err)
	}
	text := "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)\n"
	code, out, _ := cli(t, text, "tokens")
	if code != 0 || strings.TrimSpace(out) != fmt.Sprint(m.CountText(text)) {
		t.Fatalf("tokens: exit %d, %q; want %d", code, out, m.CountText(text))
	}
	code, out, _ = cli(t, text, "tokens", "--ids", "--tokenizer", "qwen2.5")
	var ids []int
	if code != 0 || json.Unmarshal([]byte(out), &ids) != nil || len(ids) != m.CountText(text) {
		t.Fatalf("tokens --ids: exit %d, %q", code, out)
	}
	code, out, _ = cli(t, "", "tokens", "--ids")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("tokens --ids of nothing: exit %d, %q", code, out)
	}
}

// TestTokensChat: `worker tokens --chat` prints the count the real HF
// tokenizers gave for Python Jinja2's render of the same request.
func TestTokensChat(t *testing.T) {
	f, err := os.Open("../../testdata/chat/conversations.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := os.Open("../../testdata/chat/qwen3.golden.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	golden := map[int]int{}
	gs := bufio.NewScanner(g)
	gs.Buffer(nil, 64<<20)
	for gs.Scan() {
		var row struct{ ID, Tokens int }
		if err := json.Unmarshal(gs.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		golden[row.ID] = row.Tokens
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	checked := 0
	for sc.Scan() && checked < 25 {
		var c struct {
			ID       int             `json:"id"`
			Messages json.RawMessage `json:"messages"`
			Tools    json.RawMessage `json:"tools"`
			Options  struct {
				AddGenerationPrompt bool  `json:"add_generation_prompt"`
				EnableThinking      *bool `json:"enable_thinking"`
			} `json:"options"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if !c.Options.AddGenerationPrompt || c.Options.EnableThinking != nil {
			continue
		}
		req := map[string]json.RawMessage{"model": json.RawMessage(`"Qwen/Qwen3-8B"`), "messages": c.Messages}
		if len(c.Tools) > 0 {
			req["tools"] = c.Tools
		}
		body, _ := json.Marshal(req)
		code, out, errOut := cli(t, string(body), "tokens", "--chat")
		if code != 0 || strings.TrimSpace(out) != fmt.Sprint(golden[c.ID]) {
			t.Fatalf("conversation %d: exit %d, got %q (stderr %q), HF counted %d", c.ID, code, out, errOut, golden[c.ID])
		}
		checked++
	}
	if checked < 25 {
		t.Fatalf("checked only %d conversations", checked)
	}
}

func TestTokensChatMalformed(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"messages": "hello"}`, `field "messages"`},
		{`{"model": "x"}`, `"messages" is missing`},
		{`not json`, "not a JSON chat request"},
		{`{"messages":[{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f"}}]}]}`, "messages[0].tool_calls[0].function.arguments"},
	}
	for _, tt := range tests {
		code, _, errOut := cli(t, tt.in, "tokens", "--chat")
		if code != exitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 naming %q", tt.in, code, errOut, tt.want)
		}
	}
}

// TestFixEndToEnd runs `worker --rules … --rule … --host …` against the vLLM
// simulator (eventual policy) and a sandboxed real sshd: the rule is fixed
// and the exit code is 0. With --json every line is one JSON event.
func TestFixEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target, err := sshtarget.Start(context.Background(), sshtarget.Options{Sandbox: true, Writable: []string{dir}})
	if err != nil {
		t.Fatalf("start the sandboxed SSH target: %v", err)
	}
	defer target.Close()
	conf := filepath.Join(dir, "sshd_config")
	if err := os.WriteFile(conf, []byte("#PermitRootLogin prohibit-password\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rulesFile := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(rulesFile, []byte(fmt.Sprintf(`rules:
  - id: sshd_disable_root_login
    title: Disable SSH root login
    check: "grep -Eq '^PermitRootLogin[[:space:]]+no' %s"
    max_attempts: 6
`, conf)), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := served.Offline(served.Config{Tokenizer: "qwen3"})
	if err != nil {
		t.Fatal(err)
	}
	counter := vllmsim.NewModelCounter(m)
	srv, err := vllmsim.New(vllmsim.Config{Counter: counter, Policy: vllmsim.Eventual(vllmsim.EventualConfig{FixAt: 3,
		Fixes: map[string]string{"sshd_disable_root_login": "sed -i 's/^#PermitRootLogin.*/PermitRootLogin no/' " + conf}})})
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := srv.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	host := fmt.Sprintf("%s@%s", target.User, target.Addr)
	code, out, errOut := cli(t, "", "--rules", rulesFile, "--rule", "sshd_disable_root_login", "--host", host, "--sandbox", "off",
		"--identity", target.IdentityFile, "--known-hosts", target.KnownHostsFile, "--base-url", url+"/v1", "--json")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var last map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if err := json.Unmarshal([]byte(line), &last); err != nil {
			t.Fatalf("--json line is not JSON: %q", line)
		}
	}
	if last["event"] != "summary" || !strings.Contains(out, `"status":"fixed"`) {
		t.Fatalf("no fixed summary in:\n%s", out)
	}

	// Already compliant now: exit 0 with no model call.
	before := len(srv.Stats().Completions())
	code, out, _ = cli(t, "", "--rules", rulesFile, "--rule", "sshd_disable_root_login", "--host", host, "--sandbox", "off",
		"--identity", target.IdentityFile, "--known-hosts", target.KnownHostsFile, "--base-url", url+"/v1")
	if code != exitOK || len(srv.Stats().Completions()) != before || !strings.Contains(out, "compliant") {
		t.Fatalf("second run: exit %d, %d model calls, output:\n%s", code, len(srv.Stats().Completions())-before, out)
	}

	// An unknown host key is refused (exit 2) and named.
	if err := os.WriteFile(filepath.Join(dir, "empty_known_hosts"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = cli(t, "", "--rules", rulesFile, "--rule", "sshd_disable_root_login", "--host", host, "--sandbox", "off",
		"--identity", target.IdentityFile, "--known-hosts", filepath.Join(dir, "empty_known_hosts"), "--base-url", url+"/v1")
	if code != exitUsage || !strings.Contains(strings.ToLower(errOut), "host key") {
		t.Fatalf("unknown host key: exit %d, stderr %q", code, errOut)
	}

	// A model server that is not there: exit 3.
	code, _, errOut = cli(t, "", "--rules", rulesFile, "--rule", "sshd_disable_root_login", "--host", host, "--sandbox", "off",
		"--identity", target.IdentityFile, "--known-hosts", target.KnownHostsFile, "--base-url", "http://127.0.0.1:1/v1",
		"--retry-deadline", "1s")
	if code != exitUnreachable {
		t.Fatalf("unreachable server: exit %d, stderr %q", code, errOut)
	}
}

func TestExitCodes(t *testing.T) {
	var sink bytes.Buffer
	tests := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errHelp, 0},
		{usagef("bad flag"), 2},
		{&notFixed{1, 2}, 1},
		{&unreachable{errors.New("down")}, 3},
		{errors.New("something else"), 1},
	}
	for _, tt := range tests {
		if got := exitCode(tt.err, &sink); got != tt.want {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}
