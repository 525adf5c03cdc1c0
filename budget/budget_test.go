package budget

import (
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewDefaultsAndValidation(t *testing.T) {
	t.Parallel()
	b, err := New(Config{})
	require.NoError(t, err)
	assert.Equal(t, 16384, b.ContextWindow(), "window")
	assert.Equal(t, 1024, b.Reserve(), "reserve")
	assert.Equal(t, 12288, b.SoftLimit(), "soft limit")
	assert.Equal(t, 16384-32, b.Limit(), "limit")
	assert.Equal(t, 16384-1024-32, b.PromptLimit(), "prompt limit")
	b, err = New(Config{Margin: -1})
	require.NoError(t, err, "negative margin")
	assert.Equal(t, 16384, b.Limit(), "negative margin: no margin")
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
			require.ErrorIs(t, err, ErrConfig)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestAssessBreakdown(t *testing.T) {
	t.Parallel()
	m := loadBuiltinT(t, "qwen3")
	c, err := NewModelChatCounter(m)
	require.NoError(t, err)
	b, err := New(Config{ContextWindow: 2048, Reserve: 512, SoftLimit: 1000})
	require.NoError(t, err)
	msgs := []openai.ChatCompletionMessage{
		{Role: "system", Content: "Rule: sshd_disable_root_login"},
		{Role: "user", Content: "Fix it."},
		{Role: "user", Content: "[Turn 1: ran 'sshd -t' — failed (exit 255), sshd config error]"},
		{Role: "assistant", Content: "Editing.", ToolCalls: []openai.ToolCall{{ID: "a", Type: "function", Function: openai.FunctionCall{Name: "ssh_apply", Arguments: `{"command":"sed -i 's/^#PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config"}`}}}},
		{Role: "tool", ToolCallID: "a", Content: "exit status: 0"},
	}
	a, err := b.Assess(c, msgs, nil, Split{SystemEnd: 2, CurrentStart: 3})
	require.NoError(t, err)
	text, err := c.Render(msgs, nil)
	require.NoError(t, err)
	want := m.Tokenizer.Count(text)
	assert.Equal(t, want, a.Prompt, "the assessment's prompt and the full count")
	assert.Equal(t, want, a.System+a.History+a.Current, "system + history + current and the full count")
	assert.NotZero(t, a.System, "system")
	assert.NotZero(t, a.History, "history")
	assert.NotZero(t, a.Current, "current")
	assert.Equal(t, 512, a.Reserve, "reserve")
	assert.Equal(t, a.Prompt+512, a.Total, "total")
	assert.Equal(t, 2048-32, a.Limit, "limit")
	assert.False(t, a.Over(), "a small prompt reads as over the limit: %s", a)
	assert.False(t, a.OverSoft(), "a small prompt reads as over the soft limit: %s", a)
	_, err = b.Assess(c, msgs, nil, Split{SystemEnd: 3, CurrentStart: 2})
	assert.Error(t, err, "an impossible split was accepted")
}
