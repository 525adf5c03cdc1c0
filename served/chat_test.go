package served

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/served/chattemplate"
)

var (
	modelsOnce sync.Once
	models     = map[string]*files{}
	modelsErr  error
)

func loadBuiltinT(t testing.TB, name string) *files {
	t.Helper()
	modelsOnce.Do(func() {
		for _, n := range Builtins() {
			m, err := loadFiles(n, BackendGo)
			if err != nil {
				modelsErr = err
				return
			}
			models[n] = m
		}
	})
	require.NoError(t, modelsErr)
	return models[name]
}

type chatCase struct {
	ID       int             `json:"id"`
	Messages json.RawMessage `json:"messages"`
	Tools    json.RawMessage `json:"tools"`
	Options  struct {
		AddGenerationPrompt bool  `json:"add_generation_prompt"`
		EnableThinking      *bool `json:"enable_thinking"`
	} `json:"options"`
}

type chatGolden struct {
	ID     int    `json:"id"`
	Text   string `json:"text"`
	Tokens int    `json:"tokens"`
}

const regenerateChat = "python3 scripts/render-chat.py && node scripts/count-chat.js"

func readLines(t *testing.T, path string, each func([]byte)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("golden file missing (regenerate with %q): %v", regenerateChat, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			each(sc.Bytes())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// decodeRequest decodes a golden conversation into go-openai values, keeping
// tool parameters as raw JSON so their key order survives.
func decodeRequest(t *testing.T, c chatCase) ([]openai.ChatCompletionMessage, []openai.Tool) {
	t.Helper()
	var msgs []openai.ChatCompletionMessage
	require.NoError(t, json.Unmarshal(c.Messages, &msgs), "conversation %d", c.ID)
	var tools []openai.Tool
	if len(c.Tools) > 0 && string(c.Tools) != "null" {
		var wire []struct {
			Type     openai.ToolType `json:"type"`
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Strict      bool            `json:"strict"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		require.NoError(t, json.Unmarshal(c.Tools, &wire), "conversation %d: tools", c.ID)
		for _, w := range wire {
			tools = append(tools, openai.Tool{Type: w.Type, Function: &openai.FunctionDefinition{
				Name: w.Function.Name, Description: w.Function.Description, Strict: w.Function.Strict, Parameters: w.Function.Parameters}})
		}
	}
	return msgs, tools
}

// TestChatCountsMatchHF: for every golden conversation and both Qwen
// templates, the prompt token count equals the one the real HF tokenizers
// library gave for Python Jinja2's render (scripts/count-chat.js). Default
// options go through ChatCounter (and its cache); the others through the
// renderer with the case's options.
func TestChatCountsMatchHF(t *testing.T) {
	t.Parallel()
	var cases []chatCase
	readLines(t, "../testdata/chat/conversations.jsonl", func(b []byte) {
		var c chatCase
		require.NoError(t, json.Unmarshal(b, &c))
		cases = append(cases, c)
	})
	require.GreaterOrEqual(t, len(cases), 400, "golden conversations; regenerate with %q", regenerateChat)
	for _, name := range []string{"qwen2.5", "qwen3"} {
		t.Run(name, func(t *testing.T) {
			m := loadBuiltinT(t, name)
			counter, err := NewChatCounter(m.Tokenizer, m.ChatTemplate)
			require.NoError(t, err)
			golden := map[int]chatGolden{}
			readLines(t, filepath.Join("../testdata/chat", name+".golden.jsonl"), func(b []byte) {
				var g chatGolden
				require.NoError(t, json.Unmarshal(b, &g))
				golden[g.ID] = g
			})
			viaCounter := 0
			for _, c := range cases {
				g, ok := golden[c.ID]
				require.True(t, ok && g.Tokens != 0, "conversation %d: no golden count for %s", c.ID, name)
				msgs, tools := decodeRequest(t, c)
				var got int
				if c.Options.AddGenerationPrompt && c.Options.EnableThinking == nil {
					pc, err := counter.Count(msgs, tools)
					require.NoError(t, err, "conversation %d", c.ID)
					sum := 0
					for _, n := range pc.PerMessage {
						sum += n
					}
					if len(msgs) > 0 {
						require.Equal(t, pc.Total, sum, "conversation %d: the per-message counts' sum and the total", c.ID)
					}
					got = pc.Total
					viaCounter++
				} else {
					r, err := chattemplate.Render(counter.Family(), msgs, tools, chattemplate.Options{
						AddGenerationPrompt: c.Options.AddGenerationPrompt, EnableThinking: c.Options.EnableThinking})
					require.NoError(t, err, "conversation %d", c.ID)
					got = m.Tokenizer.Count(r.Text)
				}
				assert.Equal(t, g.Tokens, got, "conversation %d: prompt tokens (want: HF tokenizers' count)", c.ID)
			}
			t.Logf("%s: %d conversations, %d through ChatCounter", name, len(cases), viaCounter)
		})
	}
}

// TestIncrementalCountEqualsFullCount grows a conversation message by message
// and checks that the cached count always equals tokenizing the whole render.
func TestIncrementalCountEqualsFullCount(t *testing.T) {
	t.Parallel()
	m := loadBuiltinT(t, "qwen3")
	c, err := NewChatCounter(m.Tokenizer, m.ChatTemplate)
	require.NoError(t, err)
	out, err := os.ReadFile("../testdata/outputs/apt-get-install-dpkg-lock.txt")
	require.NoError(t, err)
	msgs := []openai.ChatCompletionMessage{{Role: "system", Content: "Rule: aide_build_database"}, {Role: "user", Content: "Fix it."}}
	for i := 0; i < 30; i++ {
		id := "call_" + string(rune('a'+i%26)) + string(rune('0'+i/26))
		msgs = append(msgs,
			openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: id, Type: "function",
				Function: openai.FunctionCall{Name: "ssh_apply", Arguments: `{"command": "apt-get install -y aide", "attempt": ` + string(rune('0'+i%10)) + `}`}}}},
			openai.ChatCompletionMessage{Role: "tool", ToolCallID: id, Content: string(out)},
			openai.ChatCompletionMessage{Role: "user", Content: "Re-check: FAIL\nAttempt: 2"})
		pc, err := c.Count(msgs, nil)
		require.NoError(t, err)
		text, err := c.Render(msgs, nil)
		require.NoError(t, err)
		require.Equal(t, len(m.Tokenizer.Encode(text)), pc.Total, "after %d turns: the incremental count and the full count", i+1)
	}
}

func TestNewChatCounterRefusesUnknownTemplate(t *testing.T) {
	t.Parallel()
	m := loadBuiltinT(t, "qwen3")
	_, err := NewChatCounter(m.Tokenizer, "{{ messages }}")
	assert.Error(t, err, "an unknown chat template was accepted")
	_, err = NewChatCounter(m.Tokenizer, "")
	assert.ErrorIs(t, err, ErrNoChatTemplate, "empty template")
}

func TestMalformedRequestNamesTheField(t *testing.T) {
	t.Parallel()
	c, err := NewChatCounter(loadBuiltinT(t, "qwen3").Tokenizer, loadBuiltinT(t, "qwen3").ChatTemplate)
	require.NoError(t, err)
	_, err = c.CountRequest(openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{
		{Role: "user", Content: "hi"},
		{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "x", Type: "function", Function: openai.FunctionCall{Name: "f", Arguments: ""}}}},
	}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "messages[1].tool_calls[0].function.arguments")
}
