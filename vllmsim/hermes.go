package vllmsim

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nightshift-dev/nightshift/served/chattemplate"
)

// The Hermes tool-call format, as Qwen3 emits it and as vLLM's "hermes" tool
// parser (vllm/entrypoints/openai/tool_parsers/hermes_tool_parser.py,
// extract_tool_calls) reads it back from a non-streamed generation.

const (
	toolCallStart = "<tool_call>"
	toolCallEnd   = "</tool_call>"
)

// parsedCall is one tool call the parser found.
type parsedCall struct {
	Name      string
	Arguments string // json.dumps(arguments, ensure_ascii=False)
}

// parseHermes reproduces Hermes2ProToolParser.extract_tool_calls: when the
// output holds no "<tool_call>" it is all content; otherwise every
// <tool_call>…</tool_call> (or a final unclosed <tool_call>…) must hold a JSON
// object with "name" (a string) and "arguments" (any JSON value), else the
// whole output is returned as content with no tool calls. The content of a
// successful parse is the text before the first "<tool_call>", nil when empty.
func parseHermes(output string) (content *string, calls []parsedCall) {
	if !strings.Contains(output, toolCallStart) {
		return &output, nil
	}
	whole := func() (*string, []parsedCall) { return &output, nil }
	rest := output
	for {
		i := strings.Index(rest, toolCallStart)
		if i < 0 {
			break
		}
		rest = rest[i+len(toolCallStart):]
		var body string
		if j := strings.Index(rest, toolCallEnd); j >= 0 {
			body, rest = rest[:j], rest[j+len(toolCallEnd):]
		} else {
			body, rest = rest, ""
		}
		// json.loads, then call["name"] and call["arguments"]: any failure
		// (a syntax error, not an object, a key missing) makes the whole
		// output content.
		obj, err := chattemplate.ParsePythonJSON(body)
		if err != nil {
			return whole()
		}
		name, ok := obj.Member("name")
		if !ok {
			return whole()
		}
		ns, ok := name.AsString()
		if !ok {
			return whole()
		}
		args, ok := obj.Member("arguments")
		if !ok {
			return whole()
		}
		calls = append(calls, parsedCall{Name: ns, Arguments: args.Dumps()})
		if rest == "" {
			break
		}
	}
	if c := output[:strings.Index(output, toolCallStart)]; c != "" {
		return &c, calls
	}
	return nil, calls
}

// renderGeneration writes g as the text the model generates: free text,
// then each call as "<tool_call>\n{"name": …, "arguments": …}\n</tool_call>"
// on its own lines (Qwen3's format). A Raw generation is returned as is.
func renderGeneration(g Generation) string {
	if g.Raw != "" {
		return g.Raw
	}
	var b strings.Builder
	b.WriteString(g.Text)
	for i, c := range g.Calls {
		if i > 0 || g.Text != "" {
			b.WriteByte('\n')
		}
		b.WriteString(toolCallStart)
		b.WriteString("\n{\"name\": ")
		b.WriteString(pyDumps(c.Name))
		b.WriteString(", \"arguments\": ")
		b.WriteString(pyDumps(c.Args))
		b.WriteString("}\n")
		b.WriteString(toolCallEnd)
	}
	return b.String()
}

// pyDumps renders v as Python's json.dumps(v, ensure_ascii=False) does, with
// the exact serializer the chat templates use (chattemplate.PythonJSON): v is
// marshalled with encoding/json (Args keep their order), then read and
// written as Python would. A value encoding/json cannot marshal is written as
// null. Go numbers are read back from encoding/json's text, so a float64 1.0
// is written as 1, not Python's 1.0; the policies write strings only.
func pyDumps(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	out, err := chattemplate.PythonJSON(string(raw))
	if err != nil {
		return "null"
	}
	return out
}

// MarshalJSON writes the arguments as a JSON object with the keys in order.
func (a Args) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, arg := range a {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(arg.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(arg.Value)
		if err != nil {
			return nil, fmt.Errorf("argument %q: %w", arg.Key, err)
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}
