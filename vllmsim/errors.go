package vllmsim

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// ErrorStyle selects which vLLM release's context-length validation the
// simulator reproduces: the condition that rejects a request, the wording of
// the message and the JSON shape of the body differ between releases. The
// version ranges are approximate (they are read from vLLM's source at the
// cited places and from bodies quoted in vLLM's issue tracker); each style is
// exact for the code it cites.
type ErrorStyle int

const (
	// StyleAtLeast is vLLM ≥ 0.20 (vllm/renderers/params.py,
	// TokenizeParams._token_len_check; quoted in vllm-project/vllm#42474):
	//
	//	This model's maximum context length is L tokens. However, you
	//	requested M output tokens and your prompt contains at least P input
	//	tokens, for a total of at least P+M tokens. Please reduce the length
	//	of the input prompt or the number of requested output tokens.
	//	(parameter=input_tokens, value=P)
	//
	// M is max_completion_tokens or max_tokens, 0 when absent. The prompt is
	// tokenized with truncation at L−M+1 tokens, so P is min(prompt, L−M+1):
	// hence "at least". Nested shape, param "input_tokens". The zero value
	// and the default.
	StyleAtLeast ErrorStyle = iota
	// StylePassed is the first renderer release (vllm/renderers/params.py at
	// commit 017638d, about vLLM 0.14–0.19):
	//
	//	You passed P input tokens and requested M output tokens. However, the
	//	model's context length is only L tokens, resulting in a maximum input
	//	length of L−M tokens. Please reduce the length of the input prompt.
	//	(parameter=input_tokens, value=P)
	//
	// with the same truncated P as StyleAtLeast. Nested shape.
	StylePassed
	// StyleTooLarge is vLLM 0.10.1–0.13 (vllm/entrypoints/utils.py
	// get_max_tokens; bodies quoted in vllm-project/vllm#34340 and many
	// downstream reports). A prompt of at least L tokens is refused by
	// serving_engine.py _validate_input:
	//
	//	This model's maximum context length is L tokens. However, you
	//	requested P tokens in the messages, Please reduce the length of the
	//	messages. None
	//
	// and a prompt that fits with too large an output budget by get_max_tokens:
	//
	//	'max_tokens' or 'max_completion_tokens' is too large: M. This model's
	//	maximum context length is L tokens and your request has P input tokens
	//	(M > L - P). None
	//
	// The trailing " None" is real: serving_chat.py formatted the error as
	// f"{e} {e.__cause__}". Nested shape (vLLM PR #22099, released in
	// 0.10.1), param null.
	StyleTooLarge
	// StyleMessages is vLLM 0.5–0.10.0 (vllm/entrypoints/openai/
	// serving_engine.py _validate_input, e.g. at commit 7ded96b):
	//
	//	This model's maximum context length is L tokens. However, you
	//	requested P+M tokens (P in the messages, M in the completion). Please
	//	reduce the length of the messages or completion.
	//
	// or, when max_tokens is absent and P ≥ L,
	//
	//	This model's maximum context length is L tokens. However, you
	//	requested P tokens in the messages, Please reduce the length of the
	//	messages.
	//
	// Flat shape ({"object":"error",...}), as in vllm-project/vllm#12886.
	StyleMessages
)

var styleNames = map[ErrorStyle]string{
	StyleAtLeast:  "at-least",
	StylePassed:   "passed",
	StyleTooLarge: "too-large",
	StyleMessages: "messages",
}

// String returns the style's short name ("at-least", "passed", "too-large",
// "messages").
func (s ErrorStyle) String() string {
	if n, ok := styleNames[s]; ok {
		return n
	}
	return fmt.Sprintf("ErrorStyle(%d)", int(s))
}

// ParseErrorStyle returns the style named by s (see ErrorStyle.String).
func ParseErrorStyle(s string) (ErrorStyle, error) {
	for st, n := range styleNames {
		if n == s {
			return st, nil
		}
	}
	return 0, fmt.Errorf("%w: error style %q (want at-least, passed, too-large or messages)", ErrConfig, s)
}

// Styles returns every error style, newest first.
func Styles() []ErrorStyle {
	return []ErrorStyle{StyleAtLeast, StylePassed, StyleTooLarge, StyleMessages}
}

// version is a representative vLLM release for the style, answered by
// GET /version.
func (s ErrorStyle) version() string {
	switch s {
	case StylePassed:
		return "0.15.1"
	case StyleTooLarge:
		return "0.11.0"
	case StyleMessages:
		return "0.9.2"
	default:
		return "0.20.0"
	}
}

// ErrorShape selects the JSON shape of error bodies.
type ErrorShape int

const (
	// ShapeAuto uses the shape of the configured ErrorStyle's release:
	// flat for StyleMessages, nested for the others.
	ShapeAuto ErrorShape = iota
	// ShapeFlat is vLLM < 0.10.1:
	// {"object":"error","message":…,"type":…,"param":null,"code":400}.
	// go-openai reports it as a *openai.RequestError whose Body is the JSON.
	ShapeFlat
	// ShapeNested is vLLM ≥ 0.10.1:
	// {"error":{"message":…,"type":…,"param":…,"code":400}}.
	// go-openai reports it as a *openai.APIError.
	ShapeNested
)

func (sh ErrorShape) resolve(st ErrorStyle) ErrorShape {
	if sh != ShapeAuto {
		return sh
	}
	if st == StyleMessages {
		return ShapeFlat
	}
	return ShapeNested
}

// apiError is one error answer: status, vLLM error type, message and param.
type apiError struct {
	Status  int
	Type    string
	Message string
	Param   *string
}

func strPtr(s string) *string { return &s }

func badRequest(msg string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "BadRequestError", Message: msg}
}

// body renders the error in the given shape, with the field order vLLM's
// pydantic models produce.
func (e *apiError) body(shape ErrorShape) []byte {
	type info struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    int     `json:"code"`
	}
	var v any
	if shape == ShapeFlat {
		v = struct {
			Object  string  `json:"object"`
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    int     `json:"code"`
		}{"error", e.Message, e.Type, e.Param, e.Status}
	} else {
		v = struct {
			Error info `json:"error"`
		}{info{e.Message, e.Type, e.Param, e.Status}}
	}
	b, err := marshalNoEscape(v)
	if err != nil { // cannot happen: only strings and ints
		return []byte(`{"error":{"message":"internal error","type":"InternalServerError","param":null,"code":500}}`)
	}
	return b
}

// lengthError returns the error vLLM answers for a prompt of p tokens with
// max_tokens m (nil when absent) against a window of l tokens, or nil when
// the request fits. It is the single place where the styles differ.
//
// maxParam names the field M came from ("max_tokens" or
// "max_completion_tokens").
func lengthError(style ErrorStyle, l, p int, m *int, maxParam string) *apiError {
	switch style {
	case StyleMessages:
		if m == nil {
			if p >= l {
				return badRequest(fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens in the messages, Please reduce the length of the messages.", l, p))
			}
			return nil
		}
		if p+*m > l {
			return badRequest(fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.", l, *m+p, p, *m))
		}
		return minTokensError(style, m)
	case StyleTooLarge:
		if p >= l {
			return badRequest(fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens in the messages, Please reduce the length of the messages. None", l, p))
		}
		if m != nil && *m > l-p {
			return badRequest(fmt.Sprintf("'max_tokens' or 'max_completion_tokens' is too large: %d. This model's maximum context length is %d tokens and your request has %d input tokens (%d > %d - %d). None", *m, l, p, *m, l, p))
		}
		return minTokensError(style, m)
	default: // StylePassed, StyleAtLeast
		out := 0
		if m != nil {
			out = *m
		}
		if out > l {
			// TokenizeParams.__post_init__. In the first renderer releases
			// the message lacks a space and repeats the parameter name
			// through an f"{max_total_tokens=}" specifier; later releases
			// fixed both (vLLM's test "names the limit ... only once").
			msg := fmt.Sprintf("%s=%d cannot be greater than max_model_len=%d. Please request fewer output tokens. (parameter=%s, value=%d)", maxParam, out, l, maxParam, out)
			if style == StylePassed {
				msg = fmt.Sprintf("%s=%dcannot be greater than max_model_len=max_total_tokens=%d. Please request fewer output tokens. (parameter=%s, value=%d)", maxParam, out, l, maxParam, out)
			}
			e := badRequest(msg)
			e.Param = strPtr(maxParam)
			return e
		}
		maxIn := l - out
		if p > maxIn {
			shown := min(p, maxIn+1) // tokenized with max_length = max_input_tokens + 1
			var msg string
			if style == StylePassed {
				msg = fmt.Sprintf("You passed %d input tokens and requested %d output tokens. However, the model's context length is only %d tokens, resulting in a maximum input length of %d tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=%d)", shown, out, l, maxIn, shown)
			} else {
				msg = fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d output tokens and your prompt contains at least %d input tokens, for a total of at least %d tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=%d)", l, out, shown, shown+out, shown)
			}
			e := badRequest(msg)
			e.Param = strPtr("input_tokens")
			return e
		}
		if m == nil && p == l {
			// get_max_tokens leaves no room: max_tokens becomes 0 and
			// SamplingParams refuses it.
			zero := 0
			return minTokensError(style, &zero)
		}
		return minTokensError(style, m)
	}
}

// minTokensError is SamplingParams' refusal of max_tokens < 1.
func minTokensError(style ErrorStyle, m *int) *apiError {
	if m == nil || *m >= 1 {
		return nil
	}
	if style == StylePassed || style == StyleAtLeast {
		e := badRequest(fmt.Sprintf("max_tokens must be at least 1, got %d. (parameter=max_tokens, value=%d)", *m, *m))
		e.Param = strPtr("max_tokens")
		return e
	}
	return badRequest(fmt.Sprintf("max_tokens must be at least 1, got %d.", *m))
}

// marshalNoEscape is json.Marshal without HTML escaping (FastAPI's JSON
// encoder does not escape <, > or &).
func marshalNoEscape(v any) ([]byte, error) {
	var buf jsonBuffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := buf.b
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	return b, nil
}

type jsonBuffer struct{ b []byte }

func (w *jsonBuffer) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }
