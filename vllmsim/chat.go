package vllmsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// maxBody bounds request bodies (a 16k-token prompt is well under 1 MiB).
const maxBody = 32 << 20

// requestLimits are the fields whose absence matters, read beside the
// go-openai request (which cannot tell an absent max_tokens from 0).
type requestLimits struct {
	MaxTokens           *int `json:"max_tokens"`
	MaxCompletionTokens *int `json:"max_completion_tokens"`
	Stream              bool `json:"stream"`
}

// readBody reads the whole body. (Only once the body is consumed does
// net/http notice a client that hangs up, which an injected delay relies on.)
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return nil, badRequest(fmt.Sprintf("could not read request body: %v", err))
	}
	return body, nil
}

// decodeBody decodes body into each target; the error is the 400 to answer.
func decodeBody(body []byte, targets ...any) *apiError {
	for _, t := range targets {
		if err := json.Unmarshal(body, t); err != nil {
			return badRequest(fmt.Sprintf("invalid request body: %v", err))
		}
		if req, ok := t.(*openai.ChatCompletionRequest); ok {
			keepParameterOrder(body, req)
		}
	}
	return nil
}

// keepParameterOrder replaces each tool's decoded parameters (a Go map, keys
// sorted when re-encoded) by the JSON as sent: vLLM renders the tools with
// the keys in the client's order, and so must the Counter.
func keepParameterOrder(body []byte, req *openai.ChatCompletionRequest) {
	var raw struct {
		Tools []struct {
			Function struct {
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if json.Unmarshal(body, &raw) != nil || len(raw.Tools) != len(req.Tools) {
		return
	}
	for i, t := range raw.Tools {
		if req.Tools[i].Function != nil && len(t.Function.Parameters) > 0 {
			req.Tools[i].Function.Parameters = t.Function.Parameters
		}
	}
}

func (s *Server) modelError(model string) *apiError {
	if model == s.cfg.Model {
		return nil
	}
	return &apiError{Status: http.StatusNotFound, Type: "NotFoundError", Message: fmt.Sprintf("The model `%s` does not exist.", model)}
}

// handleChat answers POST /v1/chat/completions (non-streaming).
func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	body, berr := readBody(w, r)
	if f, ok := s.nextFault(); ok && s.applyFault(w, r, f) {
		return
	}
	rec := Record{Endpoint: r.URL.Path, MaxTokens: -1}
	w, recorded := s.recordBeforeReply(w, &rec)
	defer recorded()
	fail := func(e *apiError) {
		rec.Status, rec.Error = e.Status, e.Message
		s.writeError(w, e)
	}

	var req openai.ChatCompletionRequest
	var lim requestLimits
	if berr != nil {
		fail(berr)
		return
	}
	if e := decodeBody(body, &req, &lim); e != nil {
		fail(e)
		return
	}
	if e := s.modelError(req.Model); e != nil {
		fail(e)
		return
	}
	if lim.Stream {
		fail(badRequest("vllmsim: stream=true is not supported by the simulator; send a non-streaming request"))
		return
	}
	if len(req.Messages) == 0 {
		fail(badRequest("messages: field required, at least one message"))
		return
	}

	// vLLM: max_tokens = request.max_completion_tokens or request.max_tokens.
	maxParam := "max_tokens"
	m := lim.MaxTokens
	if lim.MaxCompletionTokens != nil && *lim.MaxCompletionTokens != 0 {
		m, maxParam = lim.MaxCompletionTokens, "max_completion_tokens"
	}
	if m != nil {
		rec.MaxTokens = *m
	}

	var promptIDs []int
	var p int
	var err error
	switch {
	case s.cfg.Prompts != nil:
		promptIDs, err = s.cfg.Prompts.EncodeChatRequest(r.Context(), body, true)
		p = len(promptIDs)
	case s.cache != nil:
		promptIDs, err = s.cfg.Counter.EncodeChat(req, true)
		p = len(promptIDs)
	default:
		p, err = s.cfg.Counter.CountChat(req)
	}
	if err != nil {
		fail(s.promptError(err))
		return
	}
	rec.PromptTokens = p
	l := s.cfg.MaxModelLen
	if e := lengthError(s.cfg.ErrorStyle, l, p, m, maxParam); e != nil {
		rec.Rejected = true
		fail(e)
		return
	}
	budget := l - p // vLLM's default: max_model_len - prompt
	if m != nil {
		budget = *m
	}

	conv := conversationOf(req)
	rec.RuleID, rec.Attempt = conv.RuleID, conv.Attempt
	text := renderGeneration(s.cfg.Policy.Next(conv))

	finish := "stop"
	n := s.cfg.Counter.Count(text)
	completion := n + 1 // the <|im_end|> EOS token is part of the output
	if n+1 > budget {
		// The model runs out of budget before its EOS.
		text = s.truncate(text, budget)
		finish, completion = "length", budget
	}
	var cached int
	if s.cache != nil {
		// The KV of every token but the last generated one was computed.
		out := s.cfg.Counter.Encode(text)
		computed := append(promptIDs[:len(promptIDs):len(promptIDs)], out[:max(0, min(len(out), completion-1))]...)
		cached = s.cache.serve(promptIDs, computed)
	}
	rec.CachedTokens = cached
	// vLLM runs the tool parser only when the request offers tools and
	// tool_choice is absent or "auto" ("required" and named choices use
	// guided decoding, which the simulator treats like "auto"); otherwise a
	// <tool_call> block is plain content.
	var content *string
	var calls []parsedCall
	if len(req.Tools) > 0 && req.ToolChoice != "none" {
		content, calls = parseHermes(text)
	} else {
		content = &text
	}

	msg := responseMessage{Role: "assistant", Content: content, ToolCalls: []responseToolCall{}}
	for _, c := range calls {
		msg.ToolCalls = append(msg.ToolCalls, responseToolCall{
			ID: "chatcmpl-tool-" + s.randomHex(), Type: "function",
			Function: responseFunction(c),
		})
		rec.ToolCalls = append(rec.ToolCalls, c.Name)
	}
	if len(calls) > 0 {
		finish = "tool_calls" // vLLM reports tool_calls whenever the parser found calls
	}
	resp := chatResponse{
		ID: "chatcmpl-" + s.randomHex(), Object: "chat.completion", Created: s.created(), Model: s.cfg.Model,
		Choices: []responseChoice{{Index: 0, Message: msg, FinishReason: finish}},
		Usage:   responseUsage{PromptTokens: p, TotalTokens: p + completion, CompletionTokens: completion},
	}
	if s.cfg.PromptTokensDetails && cached > 0 {
		// vLLM: if self.enable_prompt_tokens_details and num_cached_tokens.
		resp.Usage.PromptTokensDetails = &promptTokensDetails{CachedTokens: cached}
	}
	b, err := marshalNoEscape(resp)
	if err != nil {
		fail(&apiError{Status: 500, Type: "InternalServerError", Message: err.Error()})
		return
	}
	rec.Status, rec.CompletionTokens, rec.FinishReason = http.StatusOK, completion, finish
	writeJSON(w, http.StatusOK, b)
}

// promptError is the answer to a failed prompt count: a chat template
// error is a 400 in vLLM; a PromptCounter's own failure is a 500.
func (s *Server) promptError(err error) *apiError {
	if s.cfg.Prompts != nil && !errors.Is(err, ErrTemplate) {
		return &apiError{Status: http.StatusInternalServerError, Type: "InternalServerError", Message: err.Error()}
	}
	return badRequest(fmt.Sprintf("could not render the chat template: %v", err))
}

// truncate returns the longest prefix of text (cut at a rune boundary) that
// counts at most budget tokens: what the model had generated when it hit
// max_tokens. Every token covers at least one byte, so a prefix of at most
// budget bytes always fits; the search gallops from there, counting only
// prefixes about the size of the answer, not the whole text.
func (s *Server) truncate(text string, budget int) string {
	if budget <= 0 {
		return ""
	}
	fits := func(n int) bool { return s.cfg.Counter.Count(text[:n]) <= budget }
	lo := runeFloor(text, min(budget, len(text))) // fits
	hi := len(text)
	for step := max(lo, 16); lo < hi; step *= 2 {
		probe := runeFloor(text, min(lo+step, len(text)))
		if probe <= lo {
			break
		}
		if !fits(probe) {
			hi = probe
			break
		}
		lo = probe
	}
	// Invariant: text[:lo] fits and text[:hi] does not (or lo == hi).
	for lo < hi {
		mid := runeFloor(text, lo+(hi-lo)/2)
		if mid <= lo {
			_, size := utf8.DecodeRuneInString(text[lo:])
			mid = lo + size
		}
		if mid >= hi {
			break
		}
		if fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return text[:lo]
}

// runeFloor moves n back to the start of the rune it falls in.
func runeFloor(s string, n int) int {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// The chat completion response, with vLLM's field names and order.
type chatResponse struct {
	ID      string           `json:"id"`
	Object  string           `json:"object"`
	Created int64            `json:"created"`
	Model   string           `json:"model"`
	Choices []responseChoice `json:"choices"`
	Usage   responseUsage    `json:"usage"`
	// PromptLogprobs is always null here.
	PromptLogprobs *struct{} `json:"prompt_logprobs"`
}

type responseChoice struct {
	Index        int             `json:"index"`
	Message      responseMessage `json:"message"`
	Logprobs     *struct{}       `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
	StopReason   *string         `json:"stop_reason"`
}

type responseMessage struct {
	Role             string             `json:"role"`
	ReasoningContent *string            `json:"reasoning_content"`
	Content          *string            `json:"content"`
	ToolCalls        []responseToolCall `json:"tool_calls"`
}

type responseToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function responseFunction `json:"function"`
}

type responseFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type responseUsage struct {
	PromptTokens        int                  `json:"prompt_tokens"`
	TotalTokens         int                  `json:"total_tokens"`
	CompletionTokens    int                  `json:"completion_tokens"`
	PromptTokensDetails *promptTokensDetails `json:"prompt_tokens_details"`
}

// promptTokensDetails is vLLM's PromptTokenUsageInfo.
type promptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// handleTokenize answers POST /tokenize in both of vLLM's forms: completion
// ({model, prompt, add_special_tokens}) and chat ({model, messages, tools,
// add_generation_prompt, …}). add_special_tokens changes nothing for the
// Qwen tokenizers (they add no BOS), so it is accepted and ignored.
func (s *Server) handleTokenize(w http.ResponseWriter, r *http.Request) {
	rec := Record{Endpoint: r.URL.Path, MaxTokens: -1}
	w, recorded := s.recordBeforeReply(w, &rec)
	defer recorded()
	fail := func(e *apiError) {
		rec.Status, rec.Error = e.Status, e.Message
		s.writeError(w, e)
	}
	var form struct {
		Model                string          `json:"model"`
		Prompt               *string         `json:"prompt"`
		Messages             json.RawMessage `json:"messages"`
		AddGenerationPrompt  *bool           `json:"add_generation_prompt"`
		ContinueFinalMessage bool            `json:"continue_final_message"`
		ReturnTokenStrs      bool            `json:"return_token_strs"`
	}
	var chat openai.ChatCompletionRequest
	body, e := readBody(w, r)
	if e == nil {
		e = decodeBody(body, &form, &chat)
	}
	if e != nil {
		fail(e)
		return
	}
	// vLLM's model field is optional for /tokenize; when given it must match.
	if form.Model != "" {
		if e := s.modelError(form.Model); e != nil {
			fail(e)
			return
		}
	}
	if form.ReturnTokenStrs {
		fail(badRequest("vllmsim: return_token_strs is not supported by the simulator"))
		return
	}
	var tokens []int
	switch {
	case form.Messages != nil:
		agp := true
		if form.AddGenerationPrompt != nil {
			agp = *form.AddGenerationPrompt
		}
		if agp && form.ContinueFinalMessage {
			fail(badRequest("Cannot set both `continue_final_message` and `add_generation_prompt` to True."))
			return
		}
		var err error
		if s.cfg.Prompts != nil {
			tokens, err = s.cfg.Prompts.EncodeChatRequest(r.Context(), body, agp)
		} else {
			tokens, err = s.cfg.Counter.EncodeChat(chat, agp)
		}
		if err != nil {
			fail(s.promptError(err))
			return
		}
	case form.Prompt != nil && s.cfg.Prompts != nil:
		var err error
		if tokens, err = s.cfg.Prompts.EncodeText(r.Context(), *form.Prompt); err != nil {
			fail(&apiError{Status: http.StatusInternalServerError, Type: "InternalServerError", Message: err.Error()})
			return
		}
	case form.Prompt != nil:
		tokens = s.cfg.Counter.Encode(*form.Prompt)
	default:
		fail(badRequest("invalid request body: either prompt or messages is required"))
		return
	}
	if tokens == nil {
		tokens = []int{}
	}
	out := struct {
		Count       int       `json:"count"`
		MaxModelLen int       `json:"max_model_len"`
		Tokens      []int     `json:"tokens"`
		TokenStrs   *[]string `json:"token_strs"`
	}{len(tokens), s.cfg.MaxModelLen, tokens, nil}
	b, err := marshalNoEscape(out)
	if err != nil {
		fail(&apiError{Status: 500, Type: "InternalServerError", Message: err.Error()})
		return
	}
	rec.Status, rec.PromptTokens = http.StatusOK, len(tokens)
	writeJSON(w, http.StatusOK, b)
}
