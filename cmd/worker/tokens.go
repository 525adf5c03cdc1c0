package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
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
	fs := flag.NewFlagSet("worker tokens", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tokenizer := fs.String("tokenizer", "qwen3", "built-in tokenizer (qwen3, qwen2.5) or a tokenizer.json FILE or directory")
	ids := fs.Bool("ids", false, "print the token IDs as a JSON array instead of the count")
	chat := fs.Bool("chat", false, "read an OpenAI chat request and print its prompt token count as vLLM computes it")
	setUsage(fs, tokensUsage, tokensExamples, nil)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return &usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("tokens: unexpected argument %q (input is read from standard input)", fs.Arg(0))
	}
	if *chat && *ids {
		return usagef("tokens: --ids and --chat cannot be combined")
	}
	m, err := budget.LoadModel(*tokenizer)
	if err != nil {
		return &usageError{fmt.Errorf("tokens: %w", err)}
	}
	input, err := io.ReadAll(stdin)
	if err != nil {
		return fmt.Errorf("tokens: read standard input: %w", err)
	}
	if *chat {
		return countChat(m, input, stdout)
	}
	if *ids {
		out := m.Tokenizer.Encode(string(input))
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
	_, err = fmt.Fprintln(stdout, m.Tokenizer.Count(string(input)))
	return err
}

func countChat(m *budget.Model, input []byte, stdout io.Writer) error {
	counter, err := budget.NewModelChatCounter(m)
	if err != nil {
		return &usageError{fmt.Errorf("tokens --chat: %w", err)}
	}
	req, err := decodeChatRequest(input)
	if err != nil {
		return &usageError{fmt.Errorf("tokens --chat: %w", err)}
	}
	n, err := counter.CountRequest(req)
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
			return req, fmt.Errorf("request: field %q: expected %s, got JSON %s", te.Field, te.Type, te.Value)
		}
		return req, fmt.Errorf("request is not a JSON chat request: %w", err)
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
