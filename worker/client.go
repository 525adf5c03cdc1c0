package worker

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/retry"
)

// DefaultMaxReplyBytes is the default cap on a model reply's body: 4 MiB,
// some thousand times what a completion of a few thousand tokens takes.
const DefaultMaxReplyBytes = 4 << 20

// ClientConfig configures NewClient.
type ClientConfig struct {
	// BaseURL is the OpenAI base URL of the server, e.g.
	// http://gpu1:8000/v1 (required).
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none.
	APIKey string
	// MaxReplyBytes caps a reply's body: a longer one is not read past the
	// cap and fails with a *ReplyError (ReplyTooLarge). Zero means
	// DefaultMaxReplyBytes; negative is an error.
	MaxReplyBytes int64
	// Transport makes the requests. Nil: http.DefaultTransport. It is
	// wrapped in a retry.Transport, so that the retry policy honours the
	// server's Retry-After.
	Transport http.RoundTripper
}

// Client is the worker's model client: go-openai's chat completion over
// HTTP, with every reply's body read through a cap and every answer that
// cannot be used returned as a typed error that Fix retries: a
// *ReplyError (too large, truncated, not JSON, not a chat completion, no
// choices) or a *StatusError (an error status without an OpenAI error
// body). It satisfies ChatModel and distill.ChatClient, and is safe for
// concurrent use.
type Client struct {
	c   *openai.Client
	max int64
}

// NewClient returns a Client for cfg.
func NewClient(cfg ClientConfig) (*Client, error) {
	switch {
	case cfg.BaseURL == "":
		return nil, fmt.Errorf("%w: ClientConfig.BaseURL is required", ErrConfig)
	case cfg.MaxReplyBytes < 0:
		return nil, fmt.Errorf("%w: MaxReplyBytes %d is negative", ErrConfig, cfg.MaxReplyBytes)
	}
	if cfg.MaxReplyBytes == 0 {
		cfg.MaxReplyBytes = DefaultMaxReplyBytes
	}
	base := cfg.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	oc.HTTPClient = &http.Client{Transport: &retry.Transport{Base: capTransport{base: base, max: cfg.MaxReplyBytes}}}
	return &Client{c: openai.NewClientWithConfig(oc), max: cfg.MaxReplyBytes}, nil
}

// CreateChatCompletion makes one chat completion call (no retries: Fix
// retries).
func (c *Client) CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	info := &replyInfo{}
	resp, err := c.c.CreateChatCompletion(context.WithValue(ctx, replyKey{}, info), req)
	if err != nil {
		info.mu.Lock()
		defer info.mu.Unlock()
		return resp, classify(err, info)
	}
	return resp, CheckReply(resp)
}

// replyKey is the context key of a call's *replyInfo.
type replyKey struct{}

// capTransport reads every answer's body through a cap.
type capTransport struct {
	base http.RoundTripper
	max  int64
}

func (t capTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	info, _ := req.Context().Value(replyKey{}).(*replyInfo)
	if info == nil {
		info = &replyInfo{}
	}
	info.mu.Lock()
	info.contentType = resp.Header.Get("Content-Type")
	info.mu.Unlock()
	if resp.ContentLength > t.max {
		resp.Body.Close()
		return nil, &ReplyError{Fault: ReplyTooLarge, Detail: fmt.Sprintf("Content-Length %d is over the cap of %d bytes", resp.ContentLength, t.max)}
	}
	resp.Body = &capBody{rc: resp.Body, max: t.max, info: info}
	return resp, nil
}

// capBody reads at most max bytes of a body; reading past them fails with
// a *ReplyError (ReplyTooLarge), and so does every later read.
type capBody struct {
	rc   io.ReadCloser
	max  int64
	n    int64
	err  error
	info *replyInfo
}

func (b *capBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if room := b.max - b.n + 1; int64(len(p)) > room {
		p = p[:room] // one byte past the cap tells a body that is too long
	}
	n, err := b.rc.Read(p)
	b.info.mu.Lock()
	if len(b.info.head) < headBytes {
		b.info.head = append(b.info.head, p[:min(n, headBytes-len(b.info.head))]...)
	}
	b.n += int64(n)
	b.info.read = min(b.n, b.max)
	b.info.mu.Unlock()
	if b.n > b.max {
		b.err = &ReplyError{Fault: ReplyTooLarge, Detail: fmt.Sprintf("the body runs past the cap of %d bytes", b.max)}
		return n - int(b.n-b.max), b.err
	}
	return n, err
}

func (b *capBody) Close() error { return b.rc.Close() }
