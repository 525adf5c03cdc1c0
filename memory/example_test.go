package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/distill"
	"github.com/nightshift-dev/nightshift/memory"

	"github.com/nightshift-dev/nightshift"
)

// A conversation that outgrows a small window: older turns become one-line
// summaries (turns that ran the same command with the same error share one
// line) and the prompt stays under the limit.
func Example() {
	m, _ := budget.LoadModel("qwen3")
	counter, _ := budget.NewModelChatCounter(m)
	b, _ := budget.New(budget.Config{ContextWindow: 4096, Reserve: 512})
	mem, err := memory.New(memory.Config{Budget: b, Prompt: counter, Text: m.Tokenizer, KeepTurns: 1},
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
		_ = mem.AddToolResult(id, "exit status: 17\n"+output,
			distill.Step{Tool: "ssh_apply", Command: "aide --init", Action: nightshift.ActionRan, ExitCode: 17, Stdout: output})
		_ = mem.SetCheck(nightshift.CheckFail)
	}
	p, err := mem.Prompt(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println("messages:", len(p.Messages), "fits:", !p.Assessment.Over())
	fmt.Println(strings.Split(p.Messages[2].Content, "\n")[1])
	// Output:
	// messages: 5 fits: true
	// [Turns 1–5: ran `aide --init` — exit 17: "/etc/aide/aide.conf:53: syntax error, unexpected TSTRING"; re-check failed]
}
