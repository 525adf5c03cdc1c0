package vllmsim_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

func Example() {
	model, err := served.Offline(served.Config{Tokenizer: "qwen3"}) // embedded, sha256-pinned
	if err != nil {
		fmt.Println(err)
		return
	}
	counter := vllmsim.NewModelCounter(model)
	sim, err := vllmsim.New(vllmsim.Config{
		Counter:     counter,
		MaxModelLen: 1024,
		Policy: vllmsim.Eventual(vllmsim.EventualConfig{
			FixAt: 2,
			Fixes: map[string]string{"sshd_disable_root_login": "echo 'PermitRootLogin no' > /etc/ssh/sshd_config.d/50-root.conf"},
		}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	hs := httptest.NewServer(sim.Handler())
	defer hs.Close()
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = hs.URL + "/v1"
	client := openai.NewClientWithConfig(cfg)

	msgs := []openai.ChatCompletionMessage{
		{Role: "system", Content: "Rule: sshd_disable_root_login\nFix the rule with ssh_apply."},
		{Role: "user", Content: "Attempt: 2"},
	}
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: "ssh_apply", Parameters: map[string]any{"type": "object"},
	}}}
	resp, err := client.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: sim.Model(), Messages: msgs, Tools: tools, MaxCompletionTokens: 100,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	call := resp.Choices[0].Message.ToolCalls[0]
	fmt.Println(resp.Choices[0].FinishReason, call.Function.Name, call.Function.Arguments)

	// Asking for more than the window holds is refused as vLLM refuses it.
	_, err = client.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: sim.Model(), Messages: msgs, MaxCompletionTokens: 1000,
	})
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.HTTPStatusCode, apiErr.Message)
	}
	// Output:
	// tool_calls ssh_apply {"command": "echo 'PermitRootLogin no' > /etc/ssh/sshd_config.d/50-root.conf", "reason": "apply the fix for sshd_disable_root_login"}
	// 400 This model's maximum context length is 1024 tokens. However, you requested 1000 output tokens and your prompt contains at least 25 input tokens, for a total of at least 1025 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=25)
}
