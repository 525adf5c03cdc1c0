package budget

import (
	"errors"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

func TestNewDefaultsAndValidation(t *testing.T) {
	b, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if b.ContextWindow() != 16384 || b.Reserve() != 1024 || b.SoftLimit() != 12288 || b.Limit() != 16384-32 || b.PromptLimit() != 16384-1024-32 {
		t.Fatalf("defaults: window %d reserve %d soft %d limit %d prompt limit %d", b.ContextWindow(), b.Reserve(), b.SoftLimit(), b.Limit(), b.PromptLimit())
	}
	if b, err := New(Config{Margin: -1}); err != nil || b.Limit() != 16384 {
		t.Fatalf("negative margin: %v, limit %d", err, b.Limit())
	}
	bad := []struct {
		name string
		cfg  Config
		want string
	}{
		{"reserve fills the window", Config{ContextWindow: 4096, Reserve: 4096}, "leave no room for a prompt"},
		{"reserve plus margin fill the window", Config{ContextWindow: 4096, Reserve: 4064, Margin: 32}, "leave no room"},
		{"negative window", Config{ContextWindow: -1}, "context window -1 is negative"},
		{"negative reserve", Config{Reserve: -5}, "reserve -5 is negative"},
		{"soft above the hard limit", Config{SoftLimit: 20000}, "soft limit 20000"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want ErrConfig mentioning %q", err, tt.want)
			}
		})
	}
}

func TestAssessBreakdown(t *testing.T) {
	m := loadBuiltinT(t, "qwen3")
	c, err := NewModelChatCounter(m)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{ContextWindow: 2048, Reserve: 512, SoftLimit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []openai.ChatCompletionMessage{
		{Role: "system", Content: "Rule: sshd_disable_root_login"},
		{Role: "user", Content: "Fix it."},
		{Role: "user", Content: "[Turn 1: ran 'sshd -t' — failed (exit 255), sshd config error]"},
		{Role: "assistant", Content: "Editing.", ToolCalls: []openai.ToolCall{{ID: "a", Type: "function", Function: openai.FunctionCall{Name: "ssh_apply", Arguments: `{"command":"sed -i 's/^#PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config"}`}}}},
		{Role: "tool", ToolCallID: "a", Content: "exit status: 0"},
	}
	a, err := b.Assess(c, msgs, nil, Split{SystemEnd: 2, CurrentStart: 3})
	if err != nil {
		t.Fatal(err)
	}
	text, _ := c.Render(msgs, nil)
	if want := m.Tokenizer.Count(text); a.Prompt != want || a.System+a.History+a.Current != want {
		t.Fatalf("assessment %s does not add up to the full count %d", a, want)
	}
	if a.System == 0 || a.History == 0 || a.Current == 0 || a.Reserve != 512 || a.Total != a.Prompt+512 || a.Limit != 2048-32 {
		t.Fatalf("breakdown: %+v", a)
	}
	if a.Over() || a.OverSoft() {
		t.Fatalf("a small prompt reads as over a limit: %s", a)
	}
	if _, err := b.Assess(c, msgs, nil, Split{SystemEnd: 3, CurrentStart: 2}); err == nil {
		t.Fatal("an impossible split was accepted")
	}
}
