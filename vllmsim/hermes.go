package vllmsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
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
		obj, err := decodeOrdered(body)
		if err != nil {
			return whole()
		}
		o, ok := obj.(*orderedObject)
		if !ok {
			return whole()
		}
		name, ok := o.get("name")
		if !ok {
			return whole()
		}
		ns, ok := name.(string)
		if !ok {
			return whole()
		}
		args, ok := o.get("arguments")
		if !ok {
			return whole()
		}
		calls = append(calls, parsedCall{Name: ns, Arguments: pyDumps(args)})
		if rest == "" {
			break
		}
	}
	if c := output[:strings.Index(output, toolCallStart)]; c != "" {
		return &c, calls
	}
	return nil, calls
}

// orderedObject is a JSON object that keeps its keys' order, as a Python dict
// does.
type orderedObject struct {
	keys []string
	vals []any
}

func (o *orderedObject) get(k string) (any, bool) {
	// json.loads keeps the last of duplicate keys.
	for i := len(o.keys) - 1; i >= 0; i-- {
		if o.keys[i] == k {
			return o.vals[i], true
		}
	}
	return nil, false
}

var errTrailingData = errors.New("extra data after the JSON value")

// decodeOrdered parses one JSON value (surrounded by optional whitespace) into
// *orderedObject, []any, string, json.Number, bool or nil.
func decodeOrdered(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errTrailingData
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &orderedObject{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key is %T", kt)
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.keys, o.vals = append(o.keys, k), append(o.vals, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			a := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return a, nil
		}
		return nil, fmt.Errorf("unexpected delimiter %q", t)
	default:
		return t, nil
	}
}

// pyDumps renders v as Python's json.dumps(v, ensure_ascii=False) does:
// ", " and ": " separators, keys in order, only '"', '\\' and control
// characters escaped. Numbers are written as they were read (Python would
// normalise 1E5 to 100000.0; Qwen does not emit such numbers in tool calls).
func pyDumps(v any) string {
	var b strings.Builder
	writePy(&b, v)
	return b.String()
}

func writePy(b *strings.Builder, v any) {
	switch t := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if t {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case json.Number:
		b.WriteString(t.String())
	case int:
		b.WriteString(strconv.Itoa(t))
	case string:
		writePyString(b, t)
	case []any:
		b.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				b.WriteString(", ")
			}
			writePy(b, e)
		}
		b.WriteByte(']')
	case *orderedObject:
		b.WriteByte('{')
		for i, k := range t.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writePyString(b, k)
			b.WriteString(": ")
			writePy(b, t.vals[i])
		}
		b.WriteByte('}')
	case Args:
		b.WriteByte('{')
		for i, a := range t {
			if i > 0 {
				b.WriteString(", ")
			}
			writePyString(b, a.Key)
			b.WriteString(": ")
			writePy(b, a.Value)
		}
		b.WriteByte('}')
	default:
		// Other Go values: encode with encoding/json, then re-read in order.
		raw, err := json.Marshal(t)
		if err != nil {
			b.WriteString("null")
			return
		}
		o, err := decodeOrdered(string(raw))
		if err != nil {
			b.WriteString("null")
			return
		}
		writePy(b, o)
	}
}

func writePyString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			// Invalid UTF-8 cannot come out of json.loads; write U+FFFD.
			b.WriteString("\uFFFD")
			i++
			continue
		}
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
		i += size
	}
	b.WriteByte('"')
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
		writePyString(&b, c.Name)
		b.WriteString(", \"arguments\": ")
		writePy(&b, c.Args)
		b.WriteString("}\n")
		b.WriteString(toolCallEnd)
	}
	return b.String()
}
