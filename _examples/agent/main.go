// Command agent is a small agent loop that embeds Nightshift's memory: it
// connects to a model server (here the vLLM simulator, standing in for
// vLLM), keeps its conversation in a memory.Memory sized to a small
// window, and runs the model's commands on a toy host of its own until a
// check passes. Old turns become one-line summaries under the agent's own
// header; every prompt stays inside the window, counted with the served
// model's tokenizer and chat template.
//
// Nightshift-specific code: the 4 imports of Nightshift's packages and the
// 13 lines marked "// nightshift" (every line that uses one of its
// packages or values), 17 in all; without the simulator (its import and 4
// lines), which an agent with a model server of its own does not need, 12.
// TestAgentExample (package memory) builds and runs this program and
// checks the count.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/memory"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// host is the agent's own tool: a key-value store standing in for a
// machine. "set KEY VALUE" sets a key, "show" prints every key; anything
// else is unknown.
type host map[string]string

func (h host) run(command string) (output string, exitCode int) {
	f := strings.Fields(command)
	switch {
	case len(f) == 3 && f[0] == "set":
		h[f[1]] = f[2]
		return "", 0
	case len(f) >= 1 && f[0] == "show":
		var b strings.Builder
		for i := range 40 {
			fmt.Fprintf(&b, "option_%02d = default (%s)\n", i, h["root_login"])
		}
		return b.String(), 0
	}
	return "agent: unknown command: " + command + "\nerror: nothing was changed\n", 127
}

var tools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "ssh_apply",
	Description: "Run one command on the host.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)}}}

func main() {
	ctx := context.Background()
	// The model server: the vLLM simulator, whose model gets the fix right at its 9th attempt.
	local, err := served.Offline(served.Config{Tokenizer: "qwen3"}) // nightshift
	check(err)
	policy := vllmsim.Eventual(vllmsim.EventualConfig{FixAt: 9, WrongFixes: []string{"show # %d", "enable root_login"}, Fixes: map[string]string{"root_login": "set root_login no"}}) // nightshift
	sim, err := vllmsim.New(vllmsim.Config{Counter: vllmsim.NewModelCounter(local), Policy: policy})                                                                                  // nightshift
	check(err)
	url, stop, err := sim.Start(ctx) // nightshift
	check(err)
	defer stop()

	// The agent: the served model (a 2,048-token window, 256 for the answer) and a memory.
	model, err := served.Connect(ctx, served.Config{BaseURL: url + "/v1", Tokenizer: "qwen3", Budget: budget.Config{ContextWindow: 2048, Reserve: 256}}) // nightshift
	check(err)
	instruction, task := "Rule: root_login\nYou fix one setting of a host with the ssh_apply tool.", "Make `root_login` be `no` on the host."
	mem, err := memory.New(memory.Config{Model: model, Tools: tools, KeepTurns: 2, HistoryHeader: "What the agent tried before:\n"}, instruction, task) // nightshift
	check(err)
	oc := openai.DefaultConfig("")
	oc.BaseURL = url + "/v1"
	client, h := openai.NewClientWithConfig(oc), host{"root_login": "yes"}
	for attempt := 1; attempt <= 12; attempt++ {
		p, err := mem.Prompt(ctx) // nightshift
		check(err)
		resp, err := client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: model.Name(), Messages: p.Messages, Tools: p.Tools, MaxTokens: model.Budget().Reserve()}) // nightshift
		check(err)
		msg := resp.Choices[0].Message
		mem.AddAssistant(msg) // nightshift
		for _, call := range msg.ToolCalls {
			var args struct{ Command string }
			check(json.Unmarshal([]byte(call.Function.Arguments), &args))
			out, code := h.run(args.Command)
			fmt.Printf("attempt %d: %s (exit %d); prompt and reserve %d of %d tokens\n", attempt, args.Command, code, p.Assessment.Total, p.Assessment.Limit)  // nightshift
			check(mem.AddToolResult(call.ID, memory.Step{Command: args.Command, Stdout: out, ExitCode: code, Before: fmt.Sprintf("exit status: %d\n", code)})) // nightshift
		}
		if h["root_login"] == "no" {
			fmt.Printf("fixed in attempt %d; the model last saw:\n%s\n", attempt, p.Messages[2].Content) // nightshift
			return
		}
		check(mem.AddFeedback(memory.FeedbackCheck, fmt.Sprintf("Check: root_login is %s, not no.\nAttempt: %d", h["root_login"], attempt+1))) // nightshift
	}
	log.Fatal("not fixed")
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
