package budget_test

import (
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/served"
)

// Break a chat request's prompt down against a 16,384-token window with a
// 1,024-token completion reserve, counted by the served model's tokenizer
// and chat template exactly as vLLM counts it.
func Example() {
	b, err := budget.New(budget.Config{ContextWindow: 16384, Reserve: 1024})
	if err != nil {
		panic(err)
	}
	m, err := served.Offline(served.Config{Tokenizer: "qwen3"})
	if err != nil {
		panic(err)
	}
	msgs := []openai.ChatCompletionMessage{
		{Role: "system", Content: "Rule: sshd_disable_root_login"},
		{Role: "user", Content: "Make the host compliant."},
	}
	a, err := b.Assess(m, msgs, nil, budget.Split{SystemEnd: 2, CurrentStart: 2})
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Prompt, a.Total, a.Limit, a.OverSoft())
	fmt.Println(a)
	// Output:
	// 25 1049 16352 false
	// system 25 + history 0 + current 0 + reserve 1024 = 1049 tokens (limit 16352, soft 12288, window 16384, 2 messages)
}
