package chattemplate

import (
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Options are the template variables a request can set besides messages and
// tools.
//
// vLLM's defaults for a chat completion are AddGenerationPrompt true and
// EnableThinking unset; DefaultOptions returns them. The zero Options differs:
// it renders without the generation prompt.
type Options struct {
	// AddGenerationPrompt appends the "<|im_start|>assistant\n" that opens
	// the model's turn (the request's add_generation_prompt, true by default
	// in vLLM).
	AddGenerationPrompt bool
	// EnableThinking is chat_template_kwargs.enable_thinking. nil leaves it
	// undefined, as vLLM does by default; only a pointer to false changes the
	// render (Qwen3 then appends an empty think block to the generation
	// prompt). Qwen2.5 ignores it.
	EnableThinking *bool
	// Strict refuses two things vLLM accepts silently: a role other than
	// system, user, assistant or tool (vLLM keeps the message but the
	// template renders nothing for it) and tool call arguments that are not
	// valid JSON (vLLM renders them as {}). Both are then *FieldErrors.
	// False by default, which matches vLLM.
	Strict bool
}

// DefaultOptions returns vLLM's defaults: the generation prompt added,
// enable_thinking undefined, not strict.
func DefaultOptions() Options { return Options{AddGenerationPrompt: true} }

// Rendered is a rendered prompt.
type Rendered struct {
	// Text is the prompt vLLM tokenizes (with add_special_tokens=False).
	Text string
	// Starts[i] is the byte offset in Text where message i's part begins;
	// len(Starts) == number of messages and Starts is non-decreasing. The
	// system/tools preamble belongs to message 0 (Starts[0] == 0) and the
	// generation prompt to the last message. A message the template renders
	// nothing for has an empty part (Starts[i] == Starts[i+1]).
	Starts []int
}

// Render renders messages and tools with family f's chat template exactly as
// vLLM does for a chat completion request carrying them: Text is byte for
// byte the prompt vLLM tokenizes.
//
// The input is taken as go-openai sends it: empty strings are absent fields,
// invalid UTF-8 becomes U+FFFD, each assistant tool call's arguments string
// is parsed as Python's json.loads does and printed back by the template as
// json.dumps does (see PythonJSON). Fields the templates do not read (name,
// tool_call_id, reasoning_content, refusal, function_call) do not change the
// render; vLLM drops reasoning_content, which go-openai sends, so Qwen3
// history is rendered from Content alone.
//
// Requests vLLM refuses give a *FieldError (matching ErrInvalidRequest)
// naming the field: no messages, a content part that is not text, a tool
// call without id, type "function", name or arguments, tool call arguments
// with an integer of more than 4300 digits, nesting beyond MaxJSONDepth or an
// unpaired surrogate escape, a tool whose type is not "function", that has no
// function or whose parameters are not a JSON object.
func Render(f Family, messages []openai.ChatCompletionMessage, tools []openai.Tool, opt Options) (Rendered, error) {
	if f != Qwen25 && f != Qwen3 {
		return Rendered{}, fmt.Errorf("render %v: %w", f, ErrUnknownFamily)
	}
	conv, err := convertMessages(messages, opt.Strict)
	if err != nil {
		return Rendered{}, err
	}
	var toolJSON []string
	if len(tools) > 0 {
		if toolJSON, err = convertTools(tools); err != nil {
			return Rendered{}, err
		}
	}
	w := newWriter(&conv, toolJSON)
	if f == Qwen25 {
		renderQwen25(w, conv.msgs, toolJSON, opt)
	} else {
		renderQwen3(w, conv.msgs, toolJSON, opt)
	}
	return Rendered{Text: w.b.String(), Starts: w.starts}, nil
}

// writer accumulates a render and the start of each message's part.
type writer struct {
	b      strings.Builder
	arena  []byte
	starts []int
}

func newWriter(conv *conversation, tools []string) *writer {
	w := &writer{arena: conv.arena, starts: make([]int, len(conv.msgs))}
	n := len(toolsIntro) + len(toolsOutro) + len(qwen25DefaultSystem) + 64 + len(conv.arena)
	for i := range conv.msgs {
		m := &conv.msgs[i]
		n += len(m.role) + len(m.content) + 48
		for k := range m.toolCalls {
			n += len(m.toolCalls[k].name) + len(toolCallOpen) + len(toolCallArgs) + len(toolCallClose) + 1
		}
	}
	for _, t := range tools {
		n += len(t) + 1
	}
	w.b.Grow(n)
	return w
}

func (w *writer) str(s string) { w.b.WriteString(s) }

func (w *writer) byte(c byte) { w.b.WriteByte(c) }

// args writes a tool call's arguments as `arguments | tojson` prints them.
func (w *writer) args(tc *toolCall) { w.b.Write(w.arena[tc.start:tc.end]) }

// start records that message i's part begins here (message 0's part begins
// with the preamble, at 0).
func (w *writer) start(i int) {
	if i > 0 {
		w.starts[i] = w.b.Len()
	}
}

// Template text shared by both families.
const (
	imStart        = "<|im_start|>"
	imEnd          = "<|im_end|>\n"
	toolsIntro     = "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>"
	toolsOutro     = "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n"
	toolCallOpen   = "<tool_call>\n{\"name\": \""
	toolCallArgs   = "\", \"arguments\": "
	toolCallClose  = "}\n</tool_call>"
	generationOpen = "<|im_start|>assistant\n"
)

func (w *writer) tools(tools []string) {
	w.str(toolsIntro)
	for _, t := range tools {
		w.byte('\n')
		w.str(t)
	}
	w.str(toolsOutro)
}

// turn writes "<|im_start|>role\ncontent<|im_end|>\n".
func (w *writer) turn(role, content string) {
	w.str(imStart)
	w.str(role)
	w.byte('\n')
	w.str(content)
	w.str(imEnd)
}

// toolResponse writes a tool message: consecutive tool messages share one
// user turn.
func (w *writer) toolResponse(msgs []message, i int) {
	if i == 0 || msgs[i-1].role != roleTool {
		w.str("<|im_start|>user")
	}
	w.str("\n<tool_response>\n")
	w.str(msgs[i].content)
	w.str("\n</tool_response>")
	if i == len(msgs)-1 || msgs[i+1].role != roleTool {
		w.str(imEnd)
	}
}
