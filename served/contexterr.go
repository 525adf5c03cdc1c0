package served

import (
	"encoding/json"
	"errors"
	"net/http"
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
// read from the server's typed error answer (see ServerError) in any of the
// message forms vLLM has used. Zero fields were not in the message.
type ContextLengthError struct {
	Kind         ContextKind
	MaxModelLen  int    // L: the model's context length
	PromptTokens int    // P: the prompt tokens the server counted (at least)
	MaxTokens    int    // M: the completion tokens requested
	Message      string // the server's message
	Err          error  // the go-openai error it was read from
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

// ParseContextLength recognises a vLLM context-length rejection in err. Only
// the server's own answer counts, as go-openai types it (see ServerError): a
// 400 (or, from a replayed history, an unknown status) whose message is one
// of vLLM's length forms. The kind comes from the body's param when vLLM
// names one ("input_tokens", "max_tokens", "max_completion_tokens"), else
// from the form of the message. Any other error — a transport failure, a
// body that is not vLLM's JSON, an error of another type whatever its text —
// is not a rejection: it returns nil.
func ParseContextLength(err error) *ContextLengthError {
	se, ok := ServerError(err)
	if !ok || (se.HTTPStatusCode != 0 && se.HTTPStatusCode != http.StatusBadRequest) {
		return nil
	}
	msg := se.Message
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
	// vLLM ≥ 0.14 names the parameter at fault: the input tokens (only a
	// smaller prompt helps, and it means our count and the server's
	// disagree) or the completion budget (a smaller max_tokens fixes it).
	// Older releases send param null: then "'max_tokens' … is too large"
	// is about the completion budget unless the prompt alone fills the
	// window, and every other form rejects the prompt.
	param := ""
	if se.Param != nil {
		param = *se.Param
	}
	switch param {
	case "input_tokens":
		e.Kind = ContextInput
	case "max_tokens", "max_completion_tokens":
		e.Kind = ContextOutput
	default:
		e.Kind = ContextInput
		if (reTooLarge.MatchString(msg) || reGreater.MatchString(msg)) && e.MaxModelLen > 0 && e.PromptTokens < e.MaxModelLen {
			e.Kind = ContextOutput
		}
	}
	return e
}

// ServerError returns the model server's error answer in err, as go-openai
// reports it, with its HTTP status: an *openai.APIError (vLLM's nested body,
// {"error":{"message":…,"type":…,"param":…,"code":…}}) as is, or an
// *openai.RequestError whose body is vLLM's flat JSON
// ({"object":"error","message":…,"type":…,"param":…,"code":…}), a nested
// body go-openai could not decode, or {"error":"text"}, read into an
// *openai.APIError. ok is false for any other error, including a
// RequestError without a JSON body that carries a message.
func ServerError(err error) (e *openai.APIError, ok bool) {
	// A RequestError first: when go-openai fails to decode a body's "error"
	// it keeps the half-decoded *APIError as the RequestError's Err.
	var reqErr *openai.RequestError
	if !errors.As(err, &reqErr) {
		var apiErr *openai.APIError
		if errors.As(err, &apiErr) {
			return apiErr, true
		}
		return nil, false
	}
	e = &openai.APIError{HTTPStatus: reqErr.HTTPStatus, HTTPStatusCode: reqErr.HTTPStatusCode}
	type fields struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    any     `json:"code"`
	}
	var flat struct {
		fields
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(reqErr.Body, &flat) != nil {
		return nil, false
	}
	f := flat.fields
	if f.Message == "" && len(flat.Error) > 0 {
		var s string
		if json.Unmarshal(flat.Error, &f) != nil && json.Unmarshal(flat.Error, &s) == nil {
			f.Message = s
		}
	}
	if f.Message == "" {
		return nil, false
	}
	e.Message, e.Type, e.Param, e.Code = f.Message, f.Type, f.Param, f.Code
	return e, true
}

// ServerMessage returns the model server's own message in a go-openai error
// (the flat or nested vLLM error body; see ServerError), else a
// RequestError's body or err.Error(). It is for people to read: errors are
// classified by their type (ServerError, ParseContextLength), never by
// this text.
func ServerMessage(err error) string {
	if se, ok := ServerError(err); ok {
		return se.Message
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		if b := strings.TrimSpace(string(reqErr.Body)); b != "" {
			return b
		}
		if reqErr.Err != nil {
			return reqErr.Err.Error()
		}
	}
	return err.Error()
}
