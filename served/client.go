package served

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// vllmClient reads a vLLM server's model list and counts prompts with its
// /tokenize endpoint. It is safe for concurrent use.
type vllmClient struct {
	models   string
	tokenize string
	apiKey   string
	hc       *http.Client
}

// newVLLMClient checks base and returns a client.
func newVLLMClient(base, apiKey string, hc *http.Client) (*vllmClient, error) {
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("vllm: base URL %q is not an absolute URL", base)
	}
	root := *u
	root.Path = strings.TrimSuffix(u.Path, "/v1")
	return &vllmClient{
		models:   u.String() + "/models",
		tokenize: root.String() + "/tokenize",
		apiKey:   apiKey,
		hc:       hc,
	}, nil
}

// servedModel is one entry of GET /v1/models.
type servedModel struct {
	ID          string `json:"id"`
	Root        string `json:"root,omitempty"`
	MaxModelLen int    `json:"max_model_len,omitempty"`
}

// ErrNoModel is returned when the server lists no model, or several when one
// was expected.
var ErrNoModel = errors.New("vllm: cannot choose a model")

// list returns the models the server lists.
func (c *vllmClient) list(ctx context.Context) ([]servedModel, error) {
	var out struct {
		Data []servedModel `json:"data"`
	}
	if err := c.do(ctx, http.MethodGet, c.models, nil, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// model returns the named model, or the only model listed when name is empty.
func (c *vllmClient) model(ctx context.Context, name string) (servedModel, error) {
	ms, err := c.list(ctx)
	if err != nil {
		return servedModel{}, err
	}
	if name == "" {
		if len(ms) != 1 {
			ids := make([]string, len(ms))
			for i, m := range ms {
				ids[i] = m.ID
			}
			return servedModel{}, fmt.Errorf("%w: the server lists %d models (%s); name one", ErrNoModel, len(ms), strings.Join(ids, ", "))
		}
		return ms[0], nil
	}
	for _, m := range ms {
		if m.ID == name {
			return m, nil
		}
	}
	return servedModel{}, fmt.Errorf("%w: the server does not list %q", ErrNoModel, name)
}

// tokenizeResult is vLLM's /tokenize answer.
type tokenizeResult struct {
	Count       int   `json:"count"`
	MaxModelLen int   `json:"max_model_len"`
	Tokens      []int `json:"tokens"`
}

// tokenizeChat counts req's messages and tools through the server's
// /tokenize endpoint with add_generation_prompt=true, as vLLM counts a chat
// completion's prompt.
func (c *vllmClient) tokenizeChat(ctx context.Context, req openai.ChatCompletionRequest) (tokenizeResult, error) {
	body := struct {
		Model               string                         `json:"model"`
		Messages            []openai.ChatCompletionMessage `json:"messages"`
		Tools               []openai.Tool                  `json:"tools,omitempty"`
		AddGenerationPrompt bool                           `json:"add_generation_prompt"`
		AddSpecialTokens    bool                           `json:"add_special_tokens"`
	}{req.Model, req.Messages, req.Tools, true, false}
	var out tokenizeResult
	err := c.do(ctx, http.MethodPost, c.tokenize, body, &out)
	return out, err
}

// CountMismatchError is returned by Model.Verify when the server counts a
// prompt differently from the local counter: the tokenizer or chat template
// given to the worker is not the served model's.
type CountMismatchError struct {
	Model         string // the served model
	Local, Server int    // the prompt's tokens as counted here and by /tokenize
}

func (e *CountMismatchError) Error() string {
	return fmt.Sprintf("vllm: prompt count mismatch for %s: the server's /tokenize counts %d tokens, the local tokenizer and chat template %d: they are not the served model's",
		e.Model, e.Server, e.Local)
}

// verifyChat counts req's prompt with counter and through the server's
// /tokenize, and returns the count when both agree. It returns a
// *CountMismatchError when they differ, and the local counting error or the
// request's error (an *HTTPError for an answer other than 2xx) otherwise.
func (c *vllmClient) verifyChat(ctx context.Context, counter *ChatCounter, req openai.ChatCompletionRequest) (int, error) {
	local, err := counter.CountRequest(req)
	if err != nil {
		return 0, err
	}
	res, err := c.tokenizeChat(ctx, req)
	if err != nil {
		return 0, err
	}
	if res.Count != local {
		return 0, &CountMismatchError{Model: req.Model, Local: local, Server: res.Count}
	}
	return local, nil
}

// HTTPError is a non-2xx answer from the server.
type HTTPError struct {
	URL    string
	Status int
	Body   string // the first 4 KiB
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("vllm: %s: HTTP %d: %s", e.URL, e.Status, strings.TrimSpace(e.Body))
}

func (c *vllmClient) do(ctx context.Context, method, u string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("vllm: encode request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return fmt.Errorf("vllm: %w", err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("vllm: %s %s: %w", method, u, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("vllm: read %s: %w", u, err)
	}
	if resp.StatusCode/100 != 2 {
		if len(data) > 4096 {
			data = data[:4096]
		}
		return &HTTPError{URL: u, Status: resp.StatusCode, Body: string(data)}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("vllm: decode %s: %w", u, err)
	}
	return nil
}
