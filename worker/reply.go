package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"unicode"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/internal/textcut"
	"github.com/nightshift-dev/nightshift/served"
)

// ReplyFault is what is wrong with a model server's answer that arrived but
// cannot be used.
type ReplyFault int

const (
	// ReplyTooLarge: the body is longer than the client's cap
	// (ClientConfig.MaxReplyBytes); the rest is not read.
	ReplyTooLarge ReplyFault = iota + 1
	// ReplyTruncated: the body ended before its JSON did.
	ReplyTruncated
	// ReplyNotJSON: the body is not JSON (a proxy's HTML page, say).
	ReplyNotJSON
	// ReplyShape: the body is JSON but not a chat completion.
	ReplyShape
	// ReplyNoChoices: a chat completion with no choices.
	ReplyNoChoices
)

func (f ReplyFault) String() string {
	switch f {
	case ReplyTooLarge:
		return "too large"
	case ReplyTruncated:
		return "truncated"
	case ReplyNotJSON:
		return "not JSON"
	case ReplyShape:
		return "wrong shape"
	case ReplyNoChoices:
		return "no choices"
	}
	return fmt.Sprintf("ReplyFault(%d)", int(f))
}

// ReplyError is a model server's answer that arrived but cannot be used: a
// server fault (a restarting server, a proxy in front of it), retried like
// a 5xx until the retry deadline, never an attempt and never stored as the
// model's reply.
type ReplyError struct {
	Fault  ReplyFault
	Detail string // what was seen, for people
	Err    error  // the decoding error, if any
}

func (e *ReplyError) Error() string {
	var s string
	switch e.Fault {
	case ReplyTooLarge:
		s = "reply too large"
	case ReplyTruncated:
		s = "truncated reply"
	case ReplyNotJSON:
		s = "reply is not JSON"
	case ReplyShape:
		s = "reply is not a chat completion"
	case ReplyNoChoices:
		s = "reply has no choices"
	default:
		s = "unusable reply (" + e.Fault.String() + ")"
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func (e *ReplyError) Unwrap() error { return e.Err }

// CheckReply returns a *ReplyError when a chat completion that decoded
// cannot be used: no choices (ReplyNoChoices), or nothing of a chat
// completion at all (ReplyShape: JSON such as {"detail": …} decodes into an
// empty response). Callers that record replies (package batch) or make model
// calls outside Fix (package fleet) check with it, as Fix does.
func CheckReply(resp openai.ChatCompletionResponse) error {
	if len(resp.Choices) > 0 {
		return nil
	}
	if resp.ID == "" && resp.Object == "" && resp.Model == "" {
		return &ReplyError{Fault: ReplyShape, Detail: "no id, object, model or choices"}
	}
	return &ReplyError{Fault: ReplyNoChoices, Detail: `"choices" is empty`}
}

// replyInfo is what the client's transport saw of one answer's body, for
// the error a failed decoding becomes.
type replyInfo struct {
	mu          sync.Mutex
	contentType string
	head        []byte // the body's first bytes
	read        int64  // bytes read
}

// headBytes is how much of a body replyInfo keeps.
const headBytes = 256

// classify turns an error of a model call into what it is: a *ReplyError
// for an answer that arrived but cannot be used (a cap error of the
// client's transport, a truncated body, a body that is not JSON or not a
// chat completion), a *StatusError in place of go-openai's RequestError
// (whose text reads "message: %!s(<nil>)" when the body was JSON without
// an OpenAI error), and anything else as it is. Errors of the HTTP
// exchange itself (*url.Error: refused, reset, timed out before the
// headers) stay as they are. info may be nil.
func classify(err error, info *replyInfo) error {
	if err == nil {
		return nil
	}
	var re *ReplyError
	if errors.As(err, &re) {
		return re // also under go-openai's "error, reading response body"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return err
	}
	// An error status first: go-openai keeps its body's decoding error
	// in the RequestError.
	var st *StatusError
	if errors.As(err, &st) {
		return err
	}
	if sv, ok := served.ServerError(err); ok && sv.HTTPStatusCode != 0 {
		return &StatusError{Status: sv.HTTPStatusCode, StatusText: sv.HTTPStatus, Message: sv.Message, Err: err}
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		return &StatusError{Status: reqErr.HTTPStatusCode, StatusText: reqErr.HTTPStatus, Message: string(reqErr.Body), Err: err}
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		d := "the body ended inside its JSON"
		if info != nil {
			d = fmt.Sprintf("the body ended inside its JSON, after %d bytes", info.read)
			if info.read == 0 {
				d = "the body is empty"
			}
		}
		return &ReplyError{Fault: ReplyTruncated, Detail: d, Err: err}
	case errors.As(err, &se):
		d := err.Error()
		if info != nil {
			d = describeBody(info)
		}
		return &ReplyError{Fault: ReplyNotJSON, Detail: d, Err: err}
	case errors.As(err, &te):
		return &ReplyError{Fault: ReplyShape, Detail: err.Error(), Err: err}
	}
	return err
}

// describeBody says what a body that is not JSON began with.
func describeBody(info *replyInfo) string {
	head := strings.Join(strings.FieldsFunc(string(info.head), unicode.IsSpace), " ")
	ct := info.contentType
	if ct == "" {
		ct = "no Content-Type"
	}
	return fmt.Sprintf("%s, starting %q", ct, textcut.Head(head, 80))
}

// StatusError is an answer with an HTTP error status, as go-openai reports
// it (an *openai.APIError or *openai.RequestError, which it wraps: see
// served.ServerError), with a text that names the status and the server's message,
// cut to a few hundred bytes. go-openai's own text reads "message:
// %!s(<nil>)" for vLLM's flat error body and keeps a body of any length.
type StatusError struct {
	Status     int    // the HTTP status code
	StatusText string // "503 Service Unavailable"
	Message    string // the server's message, or the body ("": none)
	Err        error
}

func (e *StatusError) Error() string {
	status := e.StatusText
	if status == "" {
		status = fmt.Sprint(e.Status)
	}
	msg := strings.Join(strings.Fields(e.Message), " ")
	if msg == "" {
		msg = "no message"
	}
	return fmt.Sprintf("HTTP %s: %s", status, textcut.Head(msg, 300))
}

func (e *StatusError) Unwrap() error { return e.Err }
