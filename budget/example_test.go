package budget_test

import (
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
)

// Count a chat request's prompt exactly as vLLM would, and break it down
// against a 16,384-token window with a 1,024-token completion reserve.
func Example() {
	m, err := budget.LoadModel("qwen3")
	if err != nil {
		panic(err)
	}
	counter, err := budget.NewModelChatCounter(m)
	if err != nil {
		panic(err)
	}
	b, err := budget.New(budget.Config{ContextWindow: 16384, Reserve: 1024})
	if err != nil {
		panic(err)
	}
	msgs := []openai.ChatCompletionMessage{
		{Role: "system", Content: "Rule: sshd_disable_root_login"},
		{Role: "user", Content: "Make the host compliant."},
	}
	a, err := b.Assess(counter, msgs, nil, budget.Split{SystemEnd: 2, CurrentStart: 2})
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Tokenizer.Count("sshd -t && systemctl reload ssh"))
	fmt.Println(a.Prompt, a.Total, a.Limit, a.OverSoft())
	// Output:
	// 8
	// 25 1049 16352 false
}
