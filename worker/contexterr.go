package worker

import (
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// ContextKind says which side of the context window a vLLM rejection is about.
type ContextKind int

const (
	// ContextInput: the prompt itself does not fit (distil harder).
	ContextInput ContextKind = iota + 1
	// ContextOutput: the prompt fits but max_tokens does not (lower max_tokens).
	ContextOutput
)

func (k ContextKind) String() string {
	switch k {
	case ContextInput:
		return "input"
	case ContextOutput:
		return "output"
	}
	return "unknown"
}

// ContextLengthError is a vLLM rejection of a request for the context window,
// parsed from any of the message forms vLLM has used. Zero fields were not in
// the message.
type ContextLengthError struct {
	Kind         ContextKind
	MaxModelLen  int    // L: the model's context length
	PromptTokens int    // P: the prompt tokens the server counted (at least)
	MaxTokens    int    // M: the completion tokens requested
	Message      string // the server's message
	Err          error  // the client error it was parsed from
}

func (e *ContextLengthError) Error() string {
	return "model server rejected the request for the context length (" + e.Kind.String() + "): " + e.Message
}

func (e *ContextLengthError) Unwrap() error { return e.Err }

var (
	reMaxLen      = regexp.MustCompile(`maximum context length is (\d+) tokens`)
	reOnly        = regexp.MustCompile(`context length is only (\d+) tokens`)
	reRequested   = regexp.MustCompile(`you requested (\d+) tokens \((\d+) in the messages, (\d+) in the completion\)`)
	reAtLeast     = regexp.MustCompile(`you requested (\d+) output tokens and your prompt contains at least (\d+) input tokens`)
	rePassed      = regexp.MustCompile(`You passed (\d+) input tokens and requested (\d+) output tokens`)
	reTooLarge    = regexp.MustCompile(`'max_tokens' or 'max_completion_tokens' is too large: (\d+)`)
	reRequestHas  = regexp.MustCompile(`your request has (\d+) input tokens`)
	reGreater     = regexp.MustCompile(`max_(?:completion_)?tokens=(\d+) ?cannot be greater than max_model_len=(?:max_total_tokens=)?(\d+)`)
	reContextWord = regexp.MustCompile(`(?i)context length|maximum context|max_model_len`)
)

// parseContextLength recognises a vLLM context-length rejection in err: the
// flat body {"object":"error","message":…} that go-openai surfaces as a
// *openai.RequestError holding the body, the nested {"error":{…}} that it
// surfaces as an *openai.APIError, or a message in any other error. It
// returns nil when err is not such a rejection.
func parseContextLength(err error) *ContextLengthError {
	if err == nil {
		return nil
	}
	msg := errorMessage(err)
	if !reContextWord.MatchString(msg) && !reTooLarge.MatchString(msg) {
		return nil
	}
	e := &ContextLengthError{Message: msg, Err: err}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	if m := reMaxLen.FindStringSubmatch(msg); m != nil {
		e.MaxModelLen = atoi(m[1])
	}
	if m := reOnly.FindStringSubmatch(msg); m != nil {
		e.MaxModelLen = atoi(m[1])
	}
	switch {
	case reGreater.MatchString(msg):
		m := reGreater.FindStringSubmatch(msg)
		e.MaxTokens, e.MaxModelLen = atoi(m[1]), atoi(m[2])
	case reTooLarge.MatchString(msg):
		m := reTooLarge.FindStringSubmatch(msg)
		e.MaxTokens = atoi(m[1])
		if m := reRequestHas.FindStringSubmatch(msg); m != nil {
			e.PromptTokens = atoi(m[1])
		}
	case reRequested.MatchString(msg):
		m := reRequested.FindStringSubmatch(msg)
		e.PromptTokens, e.MaxTokens = atoi(m[2]), atoi(m[3])
	case reAtLeast.MatchString(msg):
		m := reAtLeast.FindStringSubmatch(msg)
		e.MaxTokens, e.PromptTokens = atoi(m[1]), atoi(m[2])
	case rePassed.MatchString(msg):
		m := rePassed.FindStringSubmatch(msg)
		e.PromptTokens, e.MaxTokens = atoi(m[1]), atoi(m[2])
	default:
		if e.MaxModelLen == 0 {
			return nil
		}
	}
	// "'max_tokens' … is too large" is about the completion budget: a
	// smaller max_tokens fixes it, unless the prompt alone fills the window.
	// Every other form rejects the prompt: only a smaller prompt helps (and
	// it means our count and the server's disagree).
	e.Kind = ContextInput
	if (reTooLarge.MatchString(msg) || reGreater.MatchString(msg)) && e.MaxModelLen > 0 && e.PromptTokens < e.MaxModelLen {
		e.Kind = ContextOutput
	}
	return e
}

// errorMessage extracts the server's message from a go-openai error.
func errorMessage(err error) string {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Message
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		if m := bodyMessage(reqErr.Body); m != "" {
			return m
		}
		if reqErr.Err != nil {
			return reqErr.Err.Error()
		}
	}
	return err.Error()
}

// bodyMessage reads "message" from a flat or nested error body.
func bodyMessage(body []byte) string {
	var flat struct {
		Message string          `json:"message"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &flat) != nil {
		return strings.TrimSpace(string(body))
	}
	if flat.Message != "" {
		return flat.Message
	}
	var nested struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(flat.Error, &nested) == nil && nested.Message != "" {
		return nested.Message
	}
	var s string
	if json.Unmarshal(flat.Error, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(body))
}
