package vllmsim_test

import (
	"encoding/json"
	"hash/fnv"
	"regexp"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/vllmsim"
)

// newCounter returns the Counter the tests run with.
//
// TODO(lead): return the budget package's Qwen3 counter here once budget
// builds (an adapter over budget.LoadModel("qwen3") + chattemplate.Render
// with AddGenerationPrompt as asked). The tests only assume the Counter
// contract; golden error bodies hold the counts, so regenerate them with
// `go test ./vllmsim -update` after the swap.
func newCounter(t testing.TB) vllmsim.Counter {
	t.Helper()
	return chatMLCounter{}
}

// chatMLCounter is a test fixture, not a model tokenizer: it renders a
// ChatML prompt shaped like Qwen3's (tools in the system block, tool calls
// and tool responses in Hermes tags, "<|im_start|>assistant\n" as the
// generation prompt) and counts one token per special token, word,
// punctuation mark or run of whitespace.
type chatMLCounter struct{}

var pieceRE = regexp.MustCompile(`<\|im_start\|>|<\|im_end\|>|[\p{L}\p{N}_]+|\s+|[^\p{L}\p{N}_\s]`)

func (chatMLCounter) Encode(text string) []int {
	pieces := pieceRE.FindAllString(text, -1)
	ids := make([]int, len(pieces))
	for i, p := range pieces {
		switch p {
		case "<|im_start|>":
			ids[i] = 151644
		case "<|im_end|>":
			ids[i] = 151645
		default:
			h := fnv.New32a()
			h.Write([]byte(p))
			ids[i] = int(h.Sum32() % 151643)
		}
	}
	return ids
}

func (c chatMLCounter) Count(text string) int { return len(pieceRE.FindAllStringIndex(text, -1)) }

func (c chatMLCounter) render(req openai.ChatCompletionRequest, agp bool) string {
	var b strings.Builder
	msgs := req.Messages
	if len(req.Tools) > 0 {
		b.WriteString("<|im_start|>system\n")
		if len(msgs) > 0 && msgs[0].Role == openai.ChatMessageRoleSystem {
			b.WriteString(msgs[0].Content + "\n\n")
			msgs = msgs[1:]
		}
		b.WriteString("# Tools\n\n<tools>")
		for _, t := range req.Tools {
			j, _ := json.Marshal(t)
			b.WriteString("\n" + string(j))
		}
		b.WriteString("\n</tools><|im_end|>\n")
	}
	for _, m := range msgs {
		switch m.Role {
		case openai.ChatMessageRoleTool:
			b.WriteString("<|im_start|>user\n<tool_response>\n" + m.Content + "\n</tool_response><|im_end|>\n")
		default:
			b.WriteString("<|im_start|>" + m.Role + "\n" + m.Content)
			for _, tc := range m.ToolCalls {
				b.WriteString("\n<tool_call>\n{\"name\": \"" + tc.Function.Name + "\", \"arguments\": " + tc.Function.Arguments + "}\n</tool_call>")
			}
			b.WriteString("<|im_end|>\n")
		}
	}
	if agp {
		b.WriteString("<|im_start|>assistant\n")
	}
	return b.String()
}

func (c chatMLCounter) CountChat(req openai.ChatCompletionRequest) (int, error) {
	return c.Count(c.render(req, true)), nil
}

func (c chatMLCounter) EncodeChat(req openai.ChatCompletionRequest, agp bool) ([]int, error) {
	return c.Encode(c.render(req, agp)), nil
}
