package chattemplate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// benchConversation is a hardening conversation of about 16K Qwen tokens
// (~64 KB of text): a system prompt, a task, and turns of one tool call and
// one multi-line tool result each, with two tools declared.
func benchConversation() ([]openai.ChatCompletionMessage, []openai.Tool) {
	msgs := []openai.ChatCompletionMessage{
		{Role: "system", Content: strings.Repeat("You are a careful Linux hardening agent. Propose one shell command at a time. ", 20)},
		{Role: "user", Content: "Fix rule sshd_disable_root_login on host web-3 (Debian 12). The check runs `sshd -T | grep -i permitrootlogin`."},
	}
	output := strings.Repeat("Jun 10 09:12:01 web-3 sshd[812]: Server listening on 0.0.0.0 port 22.\n", 12) +
		"permitrootlogin yes\npasswordauthentication no\n"
	size := 0
	for turn := 0; size < 64<<10; turn++ {
		id := fmt.Sprintf("chatcmpl-tool-%04d", turn)
		args := fmt.Sprintf(`{"cmd": "sed -i 's/^#\\?PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config && systemctl reload ssh", "reason": "turn %d: set PermitRootLogin to no and reload", "timeout": 30.0}`, turn)
		msgs = append(msgs,
			openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: id, Type: "function",
				Function: openai.FunctionCall{Name: "run_shell", Arguments: args}}}},
			openai.ChatCompletionMessage{Role: "tool", ToolCallID: id, Content: output})
		size += len(args) + len(output) + 120
	}
	params := json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string","description":"The command."},"reason":{"type":"string"},"timeout":{"type":"number","default":30.0}},"required":["cmd","reason"]}`)
	tools := []openai.Tool{
		{Type: "function", Function: &openai.FunctionDefinition{Name: "run_shell", Description: "Run a shell command on the target host.", Parameters: params}},
		{Type: "function", Function: &openai.FunctionDefinition{Name: "give_up", Description: "Stop: the rule cannot be fixed.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}},
	}
	return msgs, tools
}

func BenchmarkRender16K(b *testing.B) {
	msgs, tools := benchConversation()
	for _, f := range []Family{Qwen25, Qwen3} {
		b.Run(f.String(), func(b *testing.B) {
			r, err := Render(f, msgs, tools, DefaultOptions())
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(r.Text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Render(f, msgs, tools, DefaultOptions()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPythonJSON(b *testing.B) {
	const args = `{"cmd": "sed -i 's/^#\\?PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config", "reason": "set it to no", "timeout": 30.0, "env": {"LANG": "C.UTF-8"}}`
	b.SetBytes(int64(len(args)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := PythonJSON(args); err != nil {
			b.Fatal(err)
		}
	}
}
