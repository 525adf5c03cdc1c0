package chattemplate_test

import (
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/served/chattemplate"
)

func ExampleRender() {
	messages := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "You harden Linux hosts."},
		{Role: openai.ChatMessageRoleUser, Content: "Disable root login over SSH."},
		{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{
			ID: "call_1", Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: "run_shell", Arguments: `{"cmd":"sshd -T","timeout":1e1}`},
		}}},
		{Role: openai.ChatMessageRoleTool, ToolCallID: "call_1", Content: "permitrootlogin yes"},
	}
	r, err := chattemplate.Render(chattemplate.Qwen3, messages, nil, chattemplate.DefaultOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(r.Text)
	fmt.Println(r.Starts)
	// Output:
	// <|im_start|>system
	// You harden Linux hosts.<|im_end|>
	// <|im_start|>user
	// Disable root login over SSH.<|im_end|>
	// <|im_start|>assistant
	// <tool_call>
	// {"name": "run_shell", "arguments": {"cmd": "sshd -T", "timeout": 10.0}}
	// </tool_call><|im_end|>
	// <|im_start|>user
	// <tool_response>
	// permitrootlogin yes
	// </tool_response><|im_end|>
	// <|im_start|>assistant
	// [0 53 109 238]
}

func ExamplePythonJSON() {
	s, err := chattemplate.PythonJSON(`{"b":1E-7,"a":[1.0,2.5e20,12345678901234567890],"é":"\u00e9"}`)
	fmt.Println(s, err)
	// Output:
	// {"b": 1e-07, "a": [1.0, 2.5e+20, 12345678901234567890], "é": "é"} <nil>
}

func ExampleDetect() {
	_, err := chattemplate.Detect("{{ messages }}")
	fmt.Println(err)
	// Output:
	// chat template sha256:f24189f08c85: unknown chat template
}
