package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/internal/readfile"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/served/chattemplate"
)

const tokensUsage = `Usage:
  worker tokens [--tokenizer qwen3|qwen2.5|FILE] [--ids] < text
  worker tokens --chat [--tokenizer qwen3|qwen2.5|FILE] < request.json

Counts the tokens of standard input with the model's own tokenizer (no special
tokens added; special-token strings in the text count as those tokens). With
--chat, standard input is an OpenAI chat request with "messages" and optional
"tools", and the count is the prompt token count vLLM computes for it: the
chat template rendered with the generation prompt, then tokenized.
`

const tokensExamples = `
Examples:
  echo 'sshd -t && systemctl reload ssh' | worker tokens
  worker tokens --ids --tokenizer qwen2.5 < /var/log/dpkg.log
  worker tokens --chat < request.json
  worker tokens --tokenizer ./Llama-3.1-8B/tokenizer.json < notes.txt
`

func runTokens(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	tokenizer, backendName := new(string), new(string)
	ids, chat := new(bool), new(bool)
	fs := newFlags(cmdTokens, stderr)
	for name, p := range map[string]any{"tokenizer": tokenizer, "ids": ids, "chat": chat, "tokenizer-backend": backendName} {
		fs.bind(name, p)
	}
	setUsage(fs.FlagSet, tokensUsage, tokensExamples)
	rest, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("tokens: unexpected argument %q (input is read from standard input)", rest[0])
	}
	if *chat && *ids {
		return usagef("tokens: --ids and --chat cannot be combined")
	}
	backend, err := checkModelOptions(*backendName, distillerDeterministic)
	if err != nil {
		return err
	}
	// --chat needs the chat template too; plain text the tokenizer alone
	// (a tokenizer.json without a template, or with one of a family not
	// rendered here, still counts text).
	var m *served.Model
	var tok served.Tokenizer
	if *chat {
		m, err = served.Offline(served.Config{Tokenizer: *tokenizer, Backend: backend})
		switch {
		case errors.Is(err, served.ErrNoChatTemplate), errors.Is(err, chattemplate.ErrUnknownTemplate):
			return &usageError{fmt.Errorf("tokens --chat: %w", err)}
		case err != nil:
			return &usageError{fmt.Errorf("tokens: %w", err)}
		}
		defer m.Close()
	} else {
		if tok, err = served.LoadTokenizer(*tokenizer, backend); err != nil {
			return &usageError{fmt.Errorf("tokens: %w", err)}
		}
		if c, ok := tok.(io.Closer); ok {
			defer c.Close()
		}
	}
	input, err := readfile.ReadAll(stdin, "standard input", maxStdin)
	if err != nil {
		if errors.Is(err, readfile.ErrTooLarge) {
			return &usageError{fmt.Errorf("tokens: %w", err)}
		}
		return fmt.Errorf("tokens: %w", err)
	}
	if *chat {
		return countChat(m, input, stdout)
	}
	if *ids {
		out := tok.Encode(string(input))
		if out == nil {
			out = []int{}
		}
		b, err := json.Marshal(out)
		if err != nil {
			return fmt.Errorf("tokens: %w", err)
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	_, err = fmt.Fprintln(stdout, tok.Count(string(input)))
	return err
}

func countChat(m *served.Model, input []byte, stdout io.Writer) error {
	req, err := decodeChatRequest(input)
	if err != nil {
		return &usageError{fmt.Errorf("tokens --chat: %w", err)}
	}
	n, err := m.Chat().CountRequest(req)
	if err != nil {
		return &usageError{fmt.Errorf("tokens --chat: %w", err)}
	}
	_, err = fmt.Fprintln(stdout, n)
	return err
}

// decodeChatRequest parses an OpenAI chat request, naming the offending field
// on error.
func decodeChatRequest(input []byte) (openai.ChatCompletionRequest, error) {
	var req openai.ChatCompletionRequest
	dec := json.NewDecoder(bytes.NewReader(input))
	if err := dec.Decode(&req); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			field := fieldPath(input, te.Field)
			hint := ""
			if strings.HasSuffix(field, "function.arguments") {
				hint = ` (OpenAI tool-call arguments are a JSON-encoded string: "{\"command\": …}")`
			}
			return req, fmt.Errorf("request: field %q: expected %s, got JSON %s%s", field, jsonKind(te.Type.String()), te.Value, hint)
		}
		return req, fmt.Errorf("request is not a JSON chat request: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return req, fmt.Errorf("request: unexpected data after the JSON document at byte %d", dec.InputOffset())
	}
	if req.Messages == nil {
		return req, fmt.Errorf("request: field \"messages\" is missing")
	}
	// Tool parameters decoded into map[string]any would lose their key
	// order, which the chat template prints: keep them as raw JSON.
	var raw struct {
		Tools []struct {
			Function *struct {
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(input, &raw); err == nil && len(raw.Tools) == len(req.Tools) {
		for i, t := range raw.Tools {
			if t.Function != nil && req.Tools[i].Function != nil && len(t.Function.Parameters) > 0 && string(t.Function.Parameters) != "null" {
				req.Tools[i].Function.Parameters = t.Function.Parameters
			}
		}
	}
	return req, nil
}

// maxStdin caps what tokens reads from standard input.
const maxStdin = 64 << 20

// jsonKind says what a Go type expects in JSON terms.
func jsonKind(goType string) string {
	switch goType {
	case "string":
		return "a string"
	case "[]openai.ChatMessagePart":
		return "a string or an array of content parts"
	}
	if strings.HasPrefix(goType, "[]") {
		return "an array"
	}
	if strings.HasPrefix(goType, "int") || strings.HasPrefix(goType, "float") {
		return "a number"
	}
	if goType == "bool" {
		return "true or false"
	}
	return "an object"
}

// fieldPath turns encoding/json's dotted path of a field inside the
// messages ("messages.tool_calls.function.arguments") into one with the
// indices that locate it ("messages[1].tool_calls[0].function.arguments"),
// found by decoding each message and tool call on its own.
func fieldPath(input []byte, field string) string {
	var doc struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if !strings.HasPrefix(field, "messages.") || json.Unmarshal(input, &doc) != nil {
		return field
	}
	rest := strings.TrimPrefix(field, "messages.")
	for i, raw := range doc.Messages {
		var m openai.ChatCompletionMessage
		if json.Unmarshal(raw, &m) == nil {
			continue
		}
		if tail, ok := strings.CutPrefix(rest, "tool_calls."); ok {
			var calls struct {
				ToolCalls []json.RawMessage `json:"tool_calls"`
			}
			if json.Unmarshal(raw, &calls) == nil {
				for j, c := range calls.ToolCalls {
					var tc openai.ToolCall
					if json.Unmarshal(c, &tc) != nil {
						return fmt.Sprintf("messages[%d].tool_calls[%d].%s", i, j, tail)
					}
				}
			}
		}
		return fmt.Sprintf("messages[%d].%s", i, rest)
	}
	return field
}
