package served_test

import (
	"context"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// Connect to a model server (here the vLLM simulator, serving Qwen3 with a
// 16,384-token window), count a prompt exactly as the server does, and
// check the count against the server's own /tokenize.
func Example() {
	qwen3, err := served.Offline(served.Config{Tokenizer: "qwen3"})
	if err != nil {
		panic(err)
	}
	sim, err := vllmsim.New(vllmsim.Config{Model: "Qwen/Qwen3-8B", MaxModelLen: 16384, Counter: vllmsim.NewModelCounter(qwen3), Policy: vllmsim.GiveUp(1, "")})
	if err != nil {
		panic(err)
	}
	url, stop, err := sim.Start(context.Background())
	if err != nil {
		panic(err)
	}
	defer stop()

	m, err := served.Connect(context.Background(), served.Config{BaseURL: url + "/v1", Tokenizer: "qwen3", Budget: budget.Config{Reserve: 1024}})
	if err != nil {
		panic(err)
	}
	req := openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{
		{Role: "system", Content: "Rule: sshd_disable_root_login"},
		{Role: "user", Content: "Make the host compliant."},
	}}
	local, err := m.Chat().CountRequest(req)
	if err != nil {
		panic(err)
	}
	server, err := m.Verify(context.Background(), req)
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Name(), m.Budget().ContextWindow(), m.Budget().PromptLimit())
	fmt.Println(local, server)
	// Output:
	// Qwen/Qwen3-8B 16384 15328
	// 25 25
}
