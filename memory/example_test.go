package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/memory"
	"github.com/nightshift-dev/nightshift/served"
)

// A conversation that outgrows a small window: older turns become one-line
// summaries (turns that ran the same command with the same error share one
// line) and the prompt stays under the limit. Each tool output is given
// once, in its Step.
func Example() {
	model, err := served.Offline(served.Config{Tokenizer: "qwen3", Budget: budget.Config{ContextWindow: 4096, Reserve: 512}})
	if err != nil {
		panic(err)
	}
	mem, err := memory.New(memory.Config{Model: model, KeepTurns: 1, HistoryHeader: "Earlier attempts:\n"},
		"Rule: aide_build_database\nBanned: rm -rf /, reboot", "Build the AIDE database.")
	if err != nil {
		panic(err)
	}
	output := strings.Repeat("/etc/aide/aide.conf:53: syntax error, unexpected TSTRING\n", 60)
	for turn := 1; turn <= 6; turn++ {
		id := fmt.Sprintf("call_%d", turn)
		args, _ := json.Marshal(map[string]string{"command": "aide --init"})
		mem.AddAssistant(openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{
			ID: id, Type: "function", Function: openai.FunctionCall{Name: "ssh_apply", Arguments: string(args)}}}})
		_ = mem.AddToolResult(id, memory.Step{Command: "aide --init", ExitCode: 17, Before: "exit status: 17\n", Stdout: output})
	}
	p, err := mem.Prompt(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println("messages:", len(p.Messages), "fits:", !p.Assessment.Over())
	fmt.Print(p.Messages[2].Content)
	// Output:
	// messages: 5 fits: true
	// Earlier attempts:
	// [Turns 1–5: ran `aide --init` — exit 17: "/etc/aide/aide.conf:53: syntax error, unexpected TSTRING"]
}
