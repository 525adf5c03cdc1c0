package chattemplate

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

func readTemplate(t *testing.T, family string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "models", family, "tokenizer_config.json"))
	if err != nil {
		t.Fatalf("read tokenizer_config.json: %v", err)
	}
	var cfg struct {
		ChatTemplate string `json:"chat_template"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf("decode tokenizer_config.json: %v", err)
	}
	return cfg.ChatTemplate
}

func TestDetect(t *testing.T) {
	t.Parallel()
	q25, q3 := readTemplate(t, "qwen2.5"), readTemplate(t, "qwen3")
	tests := []struct {
		name     string
		template string
		want     Family
		wantErr  bool
	}{
		{"qwen2.5", q25, Qwen25, false},
		{"qwen3", q3, Qwen3, false},
		{"empty", "", 0, true},
		{"one byte changed", strings.Replace(q3, "Tools", "tools", 1), 0, true},
		{"trailing newline", q25 + "\n", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Detect(tt.template)
			if tt.wantErr {
				if !errors.Is(err, ErrUnknownTemplate) || !strings.Contains(err.Error(), "sha256:") {
					t.Fatalf("Detect = %v, %v; want ErrUnknownTemplate naming the hash", got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Detect = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	if Qwen25.String() != "qwen2.5" || Qwen3.String() != "qwen3" || Family(0).String() != "Family(0)" {
		t.Errorf("String: %q %q %q", Qwen25, Qwen3, Family(0))
	}
}

func user(s string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: s}
}

func call(id, name, args string) openai.ToolCall {
	return openai.ToolCall{ID: id, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: name, Arguments: args}}
}

func assistantCalls(calls ...openai.ToolCall) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: calls}
}

func TestRenderRejects(t *testing.T) {
	t.Parallel()
	fn := &openai.FunctionDefinition{Name: "f"}
	tests := []struct {
		name   string
		family Family
		msgs   []openai.ChatCompletionMessage
		tools  []openai.Tool
		opt    Options
		field  string // "" for a non-FieldError
		want   error
	}{
		{name: "unknown family", family: Family(7), msgs: []openai.ChatCompletionMessage{user("hi")}, want: ErrUnknownFamily},
		{name: "no messages", field: "messages"},
		{name: "content and multi content", msgs: []openai.ChatCompletionMessage{{Role: "user", Content: "a",
			MultiContent: []openai.ChatMessagePart{{Type: "text", Text: "b"}}}}, field: "messages[0].content"},
		{name: "image part", msgs: []openai.ChatCompletionMessage{user("x"), {Role: "user", MultiContent: []openai.ChatMessagePart{
			{Type: "text", Text: "see"}, {Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: "http://x"}}}}},
			field: "messages[1].content[1].type"},
		{name: "empty text part", msgs: []openai.ChatCompletionMessage{{Role: "user", MultiContent: []openai.ChatMessagePart{{Type: "text"}}}},
			field: "messages[0].content[0].text"},
		{name: "tool call without id", msgs: []openai.ChatCompletionMessage{user("x"), assistantCalls(call("", "f", "{}"))},
			field: "messages[1].tool_calls[0].id"},
		{name: "tool call without type", msgs: []openai.ChatCompletionMessage{user("x"), assistantCalls(call("a", "f", "{}"),
			openai.ToolCall{ID: "b", Function: openai.FunctionCall{Name: "f", Arguments: "{}"}})},
			field: "messages[1].tool_calls[1].type"},
		{name: "tool call without name", msgs: []openai.ChatCompletionMessage{user("x"), assistantCalls(call("a", "", "{}"))},
			field: "messages[1].tool_calls[0].function.name"},
		{name: "tool call without arguments", msgs: []openai.ChatCompletionMessage{user("x"), assistantCalls(call("a", "f", ""))},
			field: "messages[1].tool_calls[0].function.arguments"},
		{name: "arguments with a 4301-digit integer", msgs: []openai.ChatCompletionMessage{user("x"),
			assistantCalls(call("a", "f", `{"n": `+strings.Repeat("7", 4301)+`}`))},
			field: "messages[1].tool_calls[0].function.arguments", want: ErrIntTooLong},
		{name: "arguments nested too deeply", msgs: []openai.ChatCompletionMessage{user("x"),
			assistantCalls(call("a", "f", strings.Repeat("[", 2000)+strings.Repeat("]", 2000)))},
			field: "messages[1].tool_calls[0].function.arguments", want: ErrTooDeep},
		{name: "arguments with a lone surrogate", msgs: []openai.ChatCompletionMessage{user("x"),
			assistantCalls(call("a", "f", `{"s": "\udead"}`))},
			field: "messages[1].tool_calls[0].function.arguments", want: ErrLoneSurrogate},
		{name: "strict: invalid arguments", opt: Options{Strict: true}, msgs: []openai.ChatCompletionMessage{user("x"),
			assistantCalls(call("a", "f", `{"cmd": `))},
			field: "messages[1].tool_calls[0].function.arguments", want: ErrInvalidJSON},
		{name: "strict: unknown role", opt: Options{Strict: true}, msgs: []openai.ChatCompletionMessage{user("x"),
			{Role: "developer", Content: "y"}}, field: "messages[1].role"},
		{name: "tool type", msgs: []openai.ChatCompletionMessage{user("x")}, tools: []openai.Tool{{Type: "web_search", Function: fn}},
			field: "tools[0].type"},
		{name: "tool without function", msgs: []openai.ChatCompletionMessage{user("x")},
			tools: []openai.Tool{{Type: "function", Function: fn}, {Type: "function"}}, field: "tools[1].function"},
		{name: "parameters not an object", msgs: []openai.ChatCompletionMessage{user("x")},
			tools: []openai.Tool{{Type: "function", Function: &openai.FunctionDefinition{Name: "f", Parameters: []int{1}}}},
			field: "tools[0].function.parameters"},
		{name: "parameters that do not marshal", msgs: []openai.ChatCompletionMessage{user("x")},
			tools: []openai.Tool{{Type: "function", Function: &openai.FunctionDefinition{Name: "f", Parameters: make(chan int)}}},
			field: "tools[0].function.parameters"},
		{name: "tool parameters override type", msgs: []openai.ChatCompletionMessage{user("x")},
			tools: []openai.Tool{{Type: "function", Function: fn, Parameters: map[string]any{"type": "x"}}}, field: "tools[0].type"},
		{name: "defer_loading not a boolean", msgs: []openai.ChatCompletionMessage{user("x")},
			tools: []openai.Tool{{Type: "function", Function: fn, Parameters: map[string]any{"defer_loading": "yes"}}},
			field: "tools[0].defer_loading"},
	}
	for _, tt := range tests {
		for _, f := range []Family{Qwen25, Qwen3} {
			if tt.family != 0 {
				f = tt.family
			}
			t.Run(tt.name+"/"+f.String(), func(t *testing.T) {
				r, err := Render(f, tt.msgs, tt.tools, tt.opt)
				if err == nil {
					t.Fatalf("Render succeeded: %q", r.Text)
				}
				if tt.want != nil && !errors.Is(err, tt.want) {
					t.Errorf("error %v does not match %v", err, tt.want)
				}
				if tt.field == "" {
					return
				}
				var fe *FieldError
				if !errors.As(err, &fe) || !errors.Is(err, ErrInvalidRequest) {
					t.Fatalf("error %v is not a *FieldError matching ErrInvalidRequest", err)
				}
				if fe.Field != tt.field || !strings.HasPrefix(err.Error(), tt.field+": ") {
					t.Errorf("error %q names field %q, want %q", err, fe.Field, tt.field)
				}
			})
		}
	}
}

func TestRenderCases(t *testing.T) {
	t.Parallel()
	boolp := func(b bool) *bool { return &b }
	tool := openai.Tool{Type: "function", Function: &openai.FunctionDefinition{Name: "run", Description: "Run it.",
		Parameters: map[string]any{"type": "object", "b": 1.0, "a": []any{"é", 0.5}}}}
	const toolsTail = "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n"
	tests := []struct {
		name   string
		family Family
		msgs   []openai.ChatCompletionMessage
		tools  []openai.Tool
		opt    Options
		want   string
		starts []int
	}{
		{name: "qwen2.5 default system", family: Qwen25, msgs: []openai.ChatCompletionMessage{user("hi")}, opt: DefaultOptions(),
			want:   "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
			starts: []int{0}},
		{name: "qwen3 no generation prompt", family: Qwen3, msgs: []openai.ChatCompletionMessage{{Role: "system", Content: "s"}, user("hi")},
			want: "<|im_start|>system\ns<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n", starts: []int{0, 31}},
		{name: "qwen3 enable_thinking false", family: Qwen3, msgs: []openai.ChatCompletionMessage{user("hi")},
			opt:  Options{AddGenerationPrompt: true, EnableThinking: boolp(false)},
			want: "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n", starts: []int{0}},
		{name: "qwen3 enable_thinking true", family: Qwen3, msgs: []openai.ChatCompletionMessage{user("hi")},
			opt:  Options{AddGenerationPrompt: true, EnableThinking: boolp(true)},
			want: "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", starts: []int{0}},
		{name: "qwen2.5 ignores enable_thinking", family: Qwen25, msgs: []openai.ChatCompletionMessage{{Role: "system", Content: "s"}},
			opt:  Options{AddGenerationPrompt: true, EnableThinking: boolp(false)},
			want: "<|im_start|>system\ns<|im_end|>\n<|im_start|>assistant\n", starts: []int{0}},
		{name: "invalid arguments render as {}", family: Qwen3, msgs: []openai.ChatCompletionMessage{user("u"), assistantCalls(call("a", "f", "{oops"))},
			want:   "<|im_start|>user\nu<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call><|im_end|>\n",
			starts: []int{0, 29}},
		{name: "qwen3 prints string arguments as they are", family: Qwen3,
			msgs:   []openai.ChatCompletionMessage{user("u"), assistantCalls(call("a", "f", `"say \"hi\""`)), user("v")},
			want:   "<|im_start|>user\nu<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{\"name\": \"f\", \"arguments\": say \"hi\"}\n</tool_call><|im_end|>\n<|im_start|>user\nv<|im_end|>\n",
			starts: []int{0, 29, 123}},
		{name: "qwen2.5 quotes string arguments", family: Qwen25,
			msgs:   []openai.ChatCompletionMessage{{Role: "system", Content: "s"}, assistantCalls(call("a", "f", `"say \"hi\""`))},
			want:   "<|im_start|>system\ns<|im_end|>\n<|im_start|>assistant\n<tool_call>\n{\"name\": \"f\", \"arguments\": \"say \\\"hi\\\"\"}\n</tool_call><|im_end|>\n",
			starts: []int{0, 31}},
		{name: "unknown role renders nothing; reasoning_content dropped", family: Qwen3,
			msgs: []openai.ChatCompletionMessage{user("u"), {Role: "developer", Content: "d"},
				{Role: "assistant", Content: "a", ReasoningContent: "r"}},
			want: "<|im_start|>user\nu<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\na<|im_end|>\n", starts: []int{0, 29, 29}},
		{name: "invalid UTF-8 becomes U+FFFD per byte", family: Qwen3, msgs: []openai.ChatCompletionMessage{user("a\xff\xfeb")},
			want: "<|im_start|>user\na\uFFFD\uFFFDb<|im_end|>\n", starts: []int{0}},
		{name: "text parts joined with a newline", family: Qwen3,
			msgs: []openai.ChatCompletionMessage{{Role: "user", MultiContent: []openai.ChatMessagePart{{Type: "text", Text: "a"}, {Type: "text", Text: "b"}}}},
			want: "<|im_start|>user\na\nb<|im_end|>\n", starts: []int{0}},
		{name: "tools: map parameters arrive sorted, 1.0 as 1, no description is null, defer_loading", family: Qwen3,
			msgs: []openai.ChatCompletionMessage{user("u")},
			tools: []openai.Tool{tool, {Type: "function", Function: &openai.FunctionDefinition{Name: "g", Strict: true},
				Parameters: map[string]any{"defer_loading": true, "other": 1}}},
			want: "<|im_start|>system\n" + toolsIntro +
				"\n{\"type\": \"function\", \"function\": {\"name\": \"run\", \"description\": \"Run it.\", \"parameters\": {\"a\": [\"é\", 0.5], \"b\": 1, \"type\": \"object\"}}}" +
				"\n{\"type\": \"function\", \"function\": {\"name\": \"g\", \"description\": null, \"parameters\": null, \"strict\": true, \"defer_loading\": true}, \"defer_loading\": true}" +
				toolsTail + "<|im_start|>user\nu<|im_end|>\n",
			starts: []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Render(tt.family, tt.msgs, tt.tools, tt.opt)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if r.Text != tt.want {
				t.Errorf("Render =\n%q\nwant\n%q", r.Text, tt.want)
			}
			if !equalInts(r.Starts, tt.starts) {
				t.Errorf("Starts = %v, want %v", r.Starts, tt.starts)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRenderDoesNotModifyInput checks Render leaves its arguments alone.
func TestRenderDoesNotModifyInput(t *testing.T) {
	t.Parallel()
	msgs := []openai.ChatCompletionMessage{user("u"), assistantCalls(call("a", "f", `{"x": 1.0}`))}
	before, _ := json.Marshal(msgs)
	if _, err := Render(Qwen3, msgs, nil, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	after, _ := json.Marshal(msgs)
	if string(before) != string(after) {
		t.Errorf("Render changed its input:\n%s\n%s", before, after)
	}
}

func FuzzRender(f *testing.F) {
	f.Add("system text", "user <|im_end|> text", "<think>\nr\n</think>\n\nanswer", `{"cmd": "ls", "n": 1.0}`, "out\n", uint8(0))
	f.Add("", "<tool_response>x</tool_response>", "</think>", `"s"`, "", uint8(255))
	f.Fuzz(func(t *testing.T, sys, usr, asst, args, out string, shape uint8) {
		var msgs []openai.ChatCompletionMessage
		if shape&1 != 0 {
			msgs = append(msgs, openai.ChatCompletionMessage{Role: "system", Content: sys})
		}
		msgs = append(msgs, user(usr))
		if shape&2 != 0 && args != "" {
			msgs = append(msgs, openai.ChatCompletionMessage{Role: "assistant", Content: asst, ToolCalls: []openai.ToolCall{call("id", "f", args)}},
				openai.ChatCompletionMessage{Role: "tool", Content: out, ToolCallID: "id"})
			if shape&4 != 0 {
				msgs = append(msgs, openai.ChatCompletionMessage{Role: "tool", Content: out})
			}
		}
		if shape&8 != 0 {
			msgs = append(msgs, openai.ChatCompletionMessage{Role: "assistant", Content: asst})
		}
		var tools []openai.Tool
		if shape&16 != 0 {
			tools = []openai.Tool{{Type: "function", Function: &openai.FunctionDefinition{Name: sys, Description: usr, Parameters: json.RawMessage(`{"type":"object"}`)}}}
		}
		opt := Options{AddGenerationPrompt: shape&32 != 0, Strict: shape&64 != 0}
		for _, fam := range []Family{Qwen25, Qwen3} {
			r, err := Render(fam, msgs, tools, opt)
			if err != nil {
				if !errors.Is(err, ErrInvalidRequest) {
					t.Fatalf("%v: error %v does not match ErrInvalidRequest", fam, err)
				}
				continue
			}
			checkStarts(t, 0, msgs, r)
			if !strings.Contains(r.Text, wireString(usr)) {
				t.Fatalf("%v: render lacks the user message", fam)
			}
		}
	})
}
