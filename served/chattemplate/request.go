package chattemplate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// message is one entry of vLLM's conversation, the list the template
// iterates: what parse_chat_messages (vllm/entrypoints/chat_utils.py) builds
// from the request with the "string" content format, after
// _postprocess_messages has parsed each tool call's arguments.
type message struct {
	role    string
	content string
	// toolCalls is set for assistant messages only; empty means none.
	toolCalls []toolCall
}

// toolCall is a tool call with its arguments already printed as
// json.dumps prints them: args[start:end] of the conversation's arena.
type toolCall struct {
	name       string
	start, end int
	// isString reports that the arguments decoded to a JSON string, text.
	isString bool
	text     string
}

// conversation is the converted request.
type conversation struct {
	msgs []message
	// arena holds every tool call's printed arguments.
	arena []byte
}

// Roles the Qwen templates render; any other role is accepted by vLLM
// (CustomChatCompletionMessageParam) and renders nothing.
const (
	roleSystem    = "system"
	roleUser      = "user"
	roleAssistant = "assistant"
	roleTool      = "tool"
)

func field(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// convertMessages turns go-openai messages into vLLM's conversation, as the
// server sees them after go-openai's JSON encoding and vLLM's pydantic
// validation and preprocessing.
func convertMessages(msgs []openai.ChatCompletionMessage, strict bool) (conversation, error) {
	if len(msgs) == 0 {
		// Both templates read messages[0]: Jinja2 raises UndefinedError.
		return conversation{}, &FieldError{Field: "messages", Err: errors.New("at least one message is required")}
	}
	argBytes, nCalls := 0, 0
	for i := range msgs {
		if msgs[i].Role == roleAssistant {
			nCalls += len(msgs[i].ToolCalls)
		}
		for j := range msgs[i].ToolCalls {
			argBytes += len(msgs[i].ToolCalls[j].Function.Arguments)
		}
	}
	allCalls := make([]toolCall, 0, nCalls) // one allocation for every message's calls
	conv := conversation{msgs: make([]message, len(msgs)), arena: make([]byte, 0, argBytes+argBytes/4)}
	out := conv.msgs
	for i := range msgs {
		m := &msgs[i]
		role := wireString(m.Role)
		if strict {
			switch role {
			case roleSystem, roleUser, roleAssistant, roleTool:
			default:
				return conversation{}, &FieldError{Field: field("messages[%d].role", i),
					Err: fmt.Errorf("role %q is not rendered by the chat template", role)}
			}
		}
		content, err := messageContent(m, i)
		if err != nil {
			return conversation{}, err
		}
		out[i] = message{role: role, content: content}
		if role == roleAssistant && len(m.ToolCalls) > 0 {
			first := len(allCalls)
			for j := range m.ToolCalls {
				tc, err := conv.toolCall(&m.ToolCalls[j], i, j, strict)
				if err != nil {
					return conversation{}, err
				}
				allCalls = append(allCalls, tc)
			}
			out[i].toolCalls = allCalls[first:len(allCalls):len(allCalls)]
		}
	}
	return conv, nil
}

// messageContent is the message's content string: the text, or its text
// parts joined with "\n" (_parse_chat_message_content_parts); "" when absent.
func messageContent(m *openai.ChatCompletionMessage, i int) (string, error) {
	if m.Content != "" && m.MultiContent != nil {
		return "", &FieldError{Field: field("messages[%d].content", i),
			Err: errors.New("both Content and MultiContent are set (go-openai refuses to send it)")}
	}
	if len(m.MultiContent) == 0 {
		return wireString(m.Content), nil
	}
	var b strings.Builder
	for j, p := range m.MultiContent {
		if p.Type != openai.ChatMessagePartTypeText {
			return "", &FieldError{Field: field("messages[%d].content[%d].type", i, j),
				Err: fmt.Errorf("content part type %q is not supported by a text-only model", p.Type)}
		}
		if p.Text == "" {
			return "", &FieldError{Field: field("messages[%d].content[%d].text", i, j),
				Err: errors.New("missing (go-openai omits an empty text)")}
		}
		if j > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(wireString(p.Text))
	}
	return b.String(), nil
}

// toolCall validates a tool call as pydantic does
// (ChatCompletionMessageToolCallParam: id, type "function", function.name and
// function.arguments are all required strings, and go-openai omits empty
// ones) and parses its arguments as _postprocess_messages does: json.loads,
// with {} for a string that is not valid JSON.
func (c *conversation) toolCall(tc *openai.ToolCall, i, j int, strict bool) (toolCall, error) {
	fieldErr := func(suffix string, err error) error {
		return &FieldError{Field: field("messages[%d].tool_calls[%d]", i, j) + suffix, Err: err}
	}
	switch {
	case tc.ID == "":
		return toolCall{}, fieldErr(".id", errors.New("missing"))
	case tc.Type != openai.ToolTypeFunction:
		return toolCall{}, fieldErr(".type", fmt.Errorf("must be \"function\", not %q", tc.Type))
	case tc.Function.Name == "":
		return toolCall{}, fieldErr(".function.name", errors.New("missing"))
	case tc.Function.Arguments == "":
		return toolCall{}, fieldErr(".function.arguments", errors.New("missing (go-openai omits an empty string; send \"{}\")"))
	}
	text := wireString(tc.Function.Arguments)
	call := toolCall{name: wireString(tc.Function.Name), start: len(c.arena)}
	if out, ok := appendPythonFast(c.arena, text); ok {
		c.arena = out
		call.end = len(out)
		return call, nil
	}
	args, err := parsePython(text)
	if err != nil {
		if !errors.Is(err, ErrInvalidJSON) || strict {
			return toolCall{}, fieldErr(".function.arguments", err)
		}
		args = jsonValue{kind: jsonObject} // vLLM: invalid JSON becomes {}
	}
	if args.kind == jsonString {
		call.isString, call.text = true, args.text
	}
	c.arena = args.appendPython(c.arena)
	call.end = len(c.arena)
	return call, nil
}

// convertTools returns each tool as the template's `tool | tojson` prints it:
// json.dumps of ChatCompletionToolsParam.model_dump(), i.e.
// {"type": "function", "function": {"name": …, "description": … or null,
// "parameters": … or null[, "strict": true]}}. Unknown top-level tool fields
// (go-openai's Tool.Parameters) are dropped by vLLM, except defer_loading.
func convertTools(tools []openai.Tool) ([]string, error) {
	out := make([]string, len(tools))
	for i := range tools {
		s, err := convertTool(&tools[i], i)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func convertTool(t *openai.Tool, i int) (string, error) {
	prefix := field("tools[%d]", i)
	if t.Type != openai.ToolTypeFunction {
		return "", &FieldError{Field: prefix + ".type", Err: fmt.Errorf("must be \"function\", not %q", t.Type)}
	}
	if t.Function == nil {
		return "", &FieldError{Field: prefix + ".function", Err: errors.New("missing")}
	}
	for _, k := range []string{"type", "function"} {
		if _, ok := t.Parameters[k]; ok {
			return "", &FieldError{Field: prefix + "." + k, Err: errors.New("set twice (go-openai refuses to send it)")}
		}
	}
	var deferLoading *bool
	if v := t.Parameters["defer_loading"]; v != nil {
		b, ok := v.(bool)
		if !ok {
			return "", &FieldError{Field: prefix + ".defer_loading", Err: fmt.Errorf("must be a boolean, not %T", v)}
		}
		deferLoading = &b
	}
	fn := t.Function
	params := jsonValue{kind: jsonNull}
	raw, err := json.Marshal(fn.Parameters)
	if err != nil {
		return "", &FieldError{Field: prefix + ".function.parameters", Err: err}
	}
	if params, err = parsePython(string(raw)); err != nil {
		return "", &FieldError{Field: prefix + ".function.parameters", Err: err}
	}
	if params.kind != jsonObject && params.kind != jsonNull {
		return "", &FieldError{Field: prefix + ".function.parameters", Err: errors.New("must be a JSON object")}
	}
	b := make([]byte, 0, 64+len(fn.Name)+len(fn.Description)+len(raw)+len(raw)/4)
	b = append(b, `{"type": "function", "function": {"name": `...)
	b = appendPyString(b, wireString(fn.Name))
	b = append(b, `, "description": `...)
	if fn.Description == "" {
		b = append(b, "null"...)
	} else {
		b = appendPyString(b, wireString(fn.Description))
	}
	b = append(b, `, "parameters": `...)
	b = params.appendPython(b)
	if fn.Strict {
		b = append(b, `, "strict": true`...)
	}
	if deferLoading != nil {
		b = append(b, `, "defer_loading": `...)
		b = strconv.AppendBool(b, *deferLoading)
	}
	b = append(b, '}')
	if deferLoading != nil {
		b = append(b, `, "defer_loading": `...)
		b = strconv.AppendBool(b, *deferLoading)
	}
	return string(append(b, '}')), nil
}
