package served

import (
	"errors"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/served/chattemplate"
)

// ErrNoChatTemplate is returned when a chat prompt must be counted with a
// tokenizer that came without a chat template.
var ErrNoChatTemplate = errors.New("tokenizer has no chat template")

// ChatCounter counts the prompt tokens of a chat request exactly as vLLM does:
// it renders messages and tools with the model's chat template
// (add_generation_prompt=true) and tokenizes the render without adding special
// tokens.
//
// Counting is incremental: the render is cut at every "<|im_start|>" (a special
// token, so the cut never changes the count) and each piece's count is cached
// by content, so re-counting a conversation after one new message only
// tokenizes the new piece. A ChatCounter is safe for concurrent use.
type ChatCounter struct {
	tok    Tokenizer
	family chattemplate.Family
	opts   chattemplate.Options
	cache  *countCache
}

// chunkDelimiter is the special token every message of the supported
// template families starts with.
const chunkDelimiter = "<|im_start|>"

// NewChatCounter returns a counter for the given tokenizer and chat template
// (the chat_template of tokenizer_config.json). An unknown template is
// refused with an error wrapping chattemplate.ErrUnknownTemplate.
func NewChatCounter(tok Tokenizer, chatTemplate string) (*ChatCounter, error) {
	if chatTemplate == "" {
		return nil, ErrNoChatTemplate
	}
	fam, err := chattemplate.Detect(chatTemplate)
	if err != nil {
		return nil, err
	}
	return &ChatCounter{
		tok:    tok,
		family: fam,
		opts:   chattemplate.Options{AddGenerationPrompt: true},
		cache:  newCountCache(defaultCacheBytes),
	}, nil
}

// Family reports the chat template family the counter renders.
func (c *ChatCounter) Family() chattemplate.Family { return c.family }

// Count renders and counts messages and tools.
func (c *ChatCounter) Count(messages []openai.ChatCompletionMessage, tools []openai.Tool) (budget.PromptCount, error) {
	r, err := chattemplate.Render(c.family, messages, tools, c.opts)
	if err != nil {
		return budget.PromptCount{}, err
	}
	pc := budget.PromptCount{PerMessage: make([]int, len(messages))}
	text := r.Text
	msg := 0
	for start := 0; start < len(text); {
		end := len(text)
		if i := strings.Index(text[start+1:], chunkDelimiter); i >= 0 {
			end = start + 1 + i
		}
		n := c.countChunk(text[start:end])
		for msg+1 < len(r.Starts) && r.Starts[msg+1] <= start {
			msg++
		}
		if len(pc.PerMessage) > 0 {
			pc.PerMessage[msg] += n
		}
		pc.Total += n
		start = end
	}
	return pc, nil
}

// CountRequest returns the prompt token count vLLM computes for req
// (messages and tools; other fields do not change the prompt).
func (c *ChatCounter) CountRequest(req openai.ChatCompletionRequest) (int, error) {
	pc, err := c.Count(req.Messages, req.Tools)
	return pc.Total, err
}

// Render returns the prompt text vLLM would tokenize for messages and tools.
func (c *ChatCounter) Render(messages []openai.ChatCompletionMessage, tools []openai.Tool) (string, error) {
	r, err := chattemplate.Render(c.family, messages, tools, c.opts)
	return r.Text, err
}

func (c *ChatCounter) countChunk(s string) int {
	if n, ok := c.cache.get(s); ok {
		return n
	}
	n := c.tok.Count(s)
	c.cache.put(s, n)
	return n
}

// defaultCacheBytes bounds the text held by a counter's cache.
const defaultCacheBytes = 8 << 20

// countCache maps chunk text to its token count. It holds at most maxBytes of
// keys; when full it is emptied (a generation reset keeps it simple and the
// working set — one conversation — is far smaller than the bound).
type countCache struct {
	mu       sync.RWMutex
	m        map[string]int
	bytes    int
	maxBytes int
}

func newCountCache(maxBytes int) *countCache {
	return &countCache{m: make(map[string]int), maxBytes: maxBytes}
}

func (c *countCache) get(s string) (int, bool) {
	c.mu.RLock()
	n, ok := c.m[s]
	c.mu.RUnlock()
	return n, ok
}

func (c *countCache) put(s string, n int) {
	if len(s) > c.maxBytes/4 {
		return // not worth pinning
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bytes+len(s) > c.maxBytes {
		c.m = make(map[string]int)
		c.bytes = 0
	}
	if _, ok := c.m[s]; !ok {
		c.m[strings.Clone(s)] = n
		c.bytes += len(s)
	}
}

// EncodeChat renders req's messages and tools — with the generation prompt
// when addGenerationPrompt is set — and returns the token IDs of the render.
// It does not use the count cache.
func (c *ChatCounter) EncodeChat(req openai.ChatCompletionRequest, addGenerationPrompt bool) ([]int, error) {
	opts := c.opts
	opts.AddGenerationPrompt = addGenerationPrompt
	r, err := chattemplate.Render(c.family, req.Messages, req.Tools, opts)
	if err != nil {
		return nil, err
	}
	return c.tok.Encode(r.Text), nil
}

// Tokenizer returns the tokenizer the counter uses.
func (c *ChatCounter) Tokenizer() Tokenizer { return c.tok }
