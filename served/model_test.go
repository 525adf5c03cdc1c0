package served_test

import (
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/served"
)

// TestAssessBreakdown: budget.Assess with a served model's count breaks the
// prompt down into parts that sum to the full count of the render.
func TestAssessBreakdown(t *testing.T) {
	t.Parallel()
	m, err := served.Offline(served.Config{Budget: budget.Config{ContextWindow: 2048, Reserve: 512, SoftLimit: 1000}})
	require.NoError(t, err)
	b := m.Budget()
	msgs := []openai.ChatCompletionMessage{
		{Role: "system", Content: "Rule: sshd_disable_root_login"},
		{Role: "user", Content: "Fix it."},
		{Role: "user", Content: "[Turn 1: ran 'sshd -t' — failed (exit 255), sshd config error]"},
		{Role: "assistant", Content: "Editing.", ToolCalls: []openai.ToolCall{{ID: "a", Type: "function", Function: openai.FunctionCall{Name: "ssh_apply", Arguments: `{"command":"sed -i 's/^#PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config"}`}}}},
		{Role: "tool", ToolCallID: "a", Content: "exit status: 0"},
	}
	a, err := b.Assess(m, msgs, nil, budget.Split{SystemEnd: 2, CurrentStart: 3})
	require.NoError(t, err)
	text, err := m.Chat().Render(msgs, nil)
	require.NoError(t, err)
	want := m.CountText(text)
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
	_, err = b.Assess(m, msgs, nil, budget.Split{SystemEnd: 3, CurrentStart: 2})
	assert.Error(t, err, "an impossible split was accepted")
}
