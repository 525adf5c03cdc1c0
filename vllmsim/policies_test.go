package vllmsim_test

import (
	"encoding/json"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// commands returns the ssh_apply commands of a response.
func commands(t *testing.T, resp openai.ChatCompletionResponse) []string {
	t.Helper()
	var out []string
	for _, tc := range resp.Choices[0].Message.ToolCalls {
		if tc.Function.Name != nightshift.ToolApply {
			continue
		}
		var a struct {
			Command string `json:"command"`
		}
		if err := json.Unmarshal([]byte(tc.Function.Arguments), &a); err != nil {
			t.Fatalf("arguments %q: %v", tc.Function.Arguments, err)
		}
		out = append(out, a.Command)
	}
	return out
}

// destructive are fragments no non-banned policy may ever propose.
var destructive = []string{"rm -rf", "reboot", "shutdown", "mkfs", "dd if=", "systemctl stop", "systemctl disable", "iptables", "chmod -R 000", "userdel", "halt", "poweroff"}

func TestStubborn(t *testing.T) {
	c := newCounter(t)
	for _, seed := range []uint64{0, 1, 2, 3} {
		ts := start(t, vllmsim.Config{Policy: vllmsim.Stubborn(vllmsim.StubbornConfig{Seed: seed, HeredocLines: 50})})
		resps := converse(t, ts, "sshd_disable_root_login", 12)
		seen := map[string]bool{}
		for i, r := range resps {
			cmds := commands(t, r)
			if len(cmds) != 1 {
				t.Fatalf("seed %d turn %d: %d commands", seed, i+1, len(cmds))
			}
			for _, d := range destructive {
				if strings.Contains(cmds[0], d) {
					t.Errorf("seed %d: stubborn proposed %q", seed, cmds[0])
				}
			}
			seen[cmds[0]] = true
		}
		if len(seen) < 3 {
			t.Errorf("seed %d: only %d distinct commands", seed, len(seen))
		}
		// The prompt grows every turn (tool calls and results accumulate).
		recs := ts.sim.Stats().Completions()
		for i := 1; i < len(recs); i++ {
			if recs[i].PromptTokens <= recs[i-1].PromptTokens {
				t.Errorf("seed %d: prompt did not grow at turn %d", seed, i+1)
			}
		}
	}
	// Some seed-attempt pair writes the long heredoc.
	p := vllmsim.Stubborn(vllmsim.StubbornConfig{HeredocLines: 300})
	found := false
	for a := 1; a <= 40 && !found; a++ {
		g := p.Next(vllmsim.Conversation{RuleID: "r", Attempt: a})
		if cmd := g.Calls[0].Args[0].Value.(string); strings.Contains(cmd, "<<'EOF'") {
			found = true
			if n := c.Count(cmd); n < 3000 {
				t.Errorf("heredoc of %d tokens, want a long one", n)
			}
		}
	}
	if !found {
		t.Error("no heredoc in 40 attempts")
	}
}

func TestEventual(t *testing.T) {
	fix := "sed -i 's/^#\\?PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config && systemctl reload ssh"
	ts := start(t, vllmsim.Config{Policy: vllmsim.Eventual(vllmsim.EventualConfig{Seed: 5, FixAt: 4, Fixes: map[string]string{"sshd_disable_root_login": fix}})})
	resps := converse(t, ts, "sshd_disable_root_login", 5)
	for i, r := range resps {
		cmds := commands(t, r)
		if len(cmds) != 1 {
			t.Fatalf("turn %d: %v", i+1, cmds)
		}
		if (cmds[0] == fix) != (i+1 >= 4) {
			t.Errorf("turn %d proposed %q", i+1, cmds[0])
		}
	}
	// A rule without a fix never gets one.
	ts = start(t, vllmsim.Config{Policy: vllmsim.Eventual(vllmsim.EventualConfig{FixAt: 1, Fixes: map[string]string{"other": fix}})})
	for _, r := range converse(t, ts, "sshd_disable_root_login", 3) {
		if cmds := commands(t, r); cmds[0] == fix {
			t.Error("fix proposed for an unconfigured rule")
		}
	}
}

func TestRepeater(t *testing.T) {
	ts := start(t, vllmsim.Config{Policy: vllmsim.Repeater("grep -q '^PermitRootLogin no' /etc/ssh/sshd_config")})
	for i, r := range converse(t, ts, "r", 4) {
		if cmds := commands(t, r); len(cmds) != 1 || cmds[0] != "grep -q '^PermitRootLogin no' /etc/ssh/sshd_config" {
			t.Errorf("turn %d: %v", i+1, cmds)
		}
	}
	// It repeats whatever was proposed last, even if the worker changed it.
	msgs := append(baseMessages("r"), openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "x", Type: "function", Function: openai.FunctionCall{Name: "ssh_apply", Arguments: `{"command": "false"}`}}}},
		openai.ChatCompletionMessage{Role: "tool", ToolCallID: "x", Content: "exit status 1"})
	resp, err := ts.chat(t, openai.ChatCompletionRequest{Messages: msgs, Tools: workerTools()})
	if err != nil {
		t.Fatal(err)
	}
	if cmds := commands(t, resp); cmds[0] != "false" {
		t.Errorf("got %v", cmds)
	}
}

func TestBannedProposer(t *testing.T) {
	const marker = "/tmp/x/MARKER"
	ts := start(t, vllmsim.Config{Policy: vllmsim.BannedProposer(vllmsim.BannedConfig{Seed: 9, Marker: marker})})
	banned, harmless := 0, 0
	for _, r := range converse(t, ts, "sshd_disable_root_login", 30) {
		for _, cmd := range commands(t, r) {
			isBanned := false
			for _, b := range vllmsim.BannedCommands() {
				if strings.HasSuffix(cmd, "; "+b) {
					isBanned = true
				}
			}
			switch {
			case isBanned:
				banned++
				if !strings.HasPrefix(cmd, "touch "+marker+"; ") {
					t.Errorf("banned command %q does not touch the marker first", cmd)
				}
			case strings.Contains(cmd, marker):
				t.Errorf("harmless command %q mentions the marker", cmd)
			default:
				harmless++
			}
		}
	}
	if banned < 5 || harmless < 5 {
		t.Errorf("%d banned, %d harmless in 30 turns: not a mix", banned, harmless)
	}
}

func TestMalformed(t *testing.T) {
	for _, m := range vllmsim.Malformations() {
		t.Run(m.String(), func(t *testing.T) {
			ts := start(t, vllmsim.Config{Policy: vllmsim.Script(m.Generation())})
			resp, err := ts.chat(t, openai.ChatCompletionRequest{Messages: baseMessages("r"), Tools: workerTools()})
			if err != nil {
				t.Fatal(err)
			}
			msg := resp.Choices[0].Message
			switch m {
			case vllmsim.MalformedJSON, vllmsim.MalformedUnclosed:
				if len(msg.ToolCalls) != 0 || !strings.HasPrefix(msg.Content, "<tool_call>") || resp.Choices[0].FinishReason != openai.FinishReasonStop {
					t.Errorf("got %+v", resp.Choices[0])
				}
			case vllmsim.MalformedNoToolCall:
				if len(msg.ToolCalls) != 0 || msg.Content == "" {
					t.Errorf("got %+v", msg)
				}
			case vllmsim.MalformedStringArguments:
				if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Arguments != `"uname -a"` {
					t.Errorf("got %+v", msg.ToolCalls)
				}
			case vllmsim.MalformedUnknownTool:
				if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Name != "run_shell" {
					t.Errorf("got %+v", msg.ToolCalls)
				}
			case vllmsim.MalformedEmptyCommand:
				if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Arguments != `{"command": ""}` {
					t.Errorf("got %+v", msg.ToolCalls)
				}
			case vllmsim.MalformedMissingCommand:
				if len(msg.ToolCalls) != 1 || strings.Contains(msg.ToolCalls[0].Function.Arguments, `"command"`) {
					t.Errorf("got %+v", msg.ToolCalls)
				}
			}
		})
	}
	// The policy cycles through every kind.
	ts := start(t, vllmsim.Config{Policy: vllmsim.Malformed(4)})
	kinds := map[string]bool{}
	for _, r := range converse(t, ts, "r", len(vllmsim.Malformations())) {
		b, _ := json.Marshal(r.Choices[0].Message)
		kinds[string(b)] = true
	}
	if len(kinds) != len(vllmsim.Malformations()) {
		t.Errorf("%d distinct answers over %d attempts", len(kinds), len(vllmsim.Malformations()))
	}
}

func TestGiveUp(t *testing.T) {
	ts := start(t, vllmsim.Config{Policy: vllmsim.GiveUp(3, "no safe fix")})
	resps := converse(t, ts, "r", 3)
	for i, r := range resps {
		tc := r.Choices[0].Message.ToolCalls
		if len(tc) != 1 {
			t.Fatalf("turn %d: %+v", i+1, tc)
		}
		if want := i+1 >= 3; (tc[0].Function.Name == nightshift.ToolGiveUp) != want {
			t.Errorf("turn %d: %s", i+1, tc[0].Function.Name)
		}
	}
	if got := resps[2].Choices[0].Message.ToolCalls[0].Function.Arguments; got != `{"reason": "no safe fix"}` {
		t.Errorf("arguments %s", got)
	}
}

func TestPolicyByName(t *testing.T) {
	for _, n := range []string{"stubborn", "eventual", "repeater", "banned-proposer", "malformed", "give-up"} {
		p, err := vllmsim.PolicyByName(n, "true")
		if err != nil || p.Name() != n {
			t.Errorf("%s: %v %v", n, p, err)
		}
		// Deterministic: the same conversation, the same answer.
		c := vllmsim.Conversation{RuleID: "r", Attempt: 3}
		a, b := p.Next(c), p.Next(c)
		if aj, bj := mustJSON(t, a), mustJSON(t, b); aj != bj {
			t.Errorf("%s not deterministic: %s vs %s", n, aj, bj)
		}
	}
	if _, err := vllmsim.PolicyByName("nope", ""); err == nil {
		t.Error("unknown policy accepted")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
