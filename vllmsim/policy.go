package vllmsim

import (
	"encoding/json"
	"strconv"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift"
)

// Policy decides what the simulated model generates for a request. Policies
// are deterministic: the same Conversation always yields the same
// Generation, so a retried request gets the same answer. Implementations
// must be safe for concurrent use and must not panic.
type Policy interface {
	// Name identifies the policy in stats and logs.
	Name() string
	// Next returns the generation for the conversation.
	Next(c Conversation) Generation
}

// Conversation is what a policy reads from a chat completion request.
//
// How the fields are taken from the messages (the worker's instruction must
// match this):
//   - RuleID is the text after "Rule:" on the first line of the first system
//     message ("Rule: sshd_disable_root_login"), else on the first line of
//     the first user message that starts with "Rule:" (a system message
//     shared by every rule leaves the rule to the task message); empty when
//     absent.
//   - Attempt is the number in the last line of the form "Attempt: N" found
//     in any system or user message, so a worker whose memory distils old
//     turns can state it; without such a line it is 1 + the number of
//     assistant messages in the request.
//   - LastCommand is the "command" argument of the last ssh_apply call made
//     by an assistant message; LastResult is the content of the last tool
//     message.
type Conversation struct {
	RuleID      string
	Attempt     int
	LastCommand string
	LastResult  string
	// Tools are the names of the tools the request offers.
	Tools []string
	// Messages are the request's messages, for policies that need more.
	Messages []openai.ChatCompletionMessage
}

// Offers reports whether the request offers the named tool.
func (c Conversation) Offers(tool string) bool {
	for _, t := range c.Tools {
		if t == tool {
			return true
		}
	}
	return false
}

// Generation is the text a policy makes the model generate. The server
// renders it in Qwen3's Hermes format, counts and (if max_tokens is smaller)
// truncates it, then parses it back with vLLM's hermes tool parser — so a
// generation reaches the client exactly as vLLM would deliver it.
type Generation struct {
	// Text is free text written before any tool call.
	Text string
	// Calls are rendered as <tool_call> blocks after Text.
	Calls []Call
	// Raw, when non-empty, is the exact model output and replaces Text and
	// Calls (for malformed output).
	Raw string
}

// Call is one tool call.
type Call struct {
	Name string
	Args Args
}

// Args are a call's arguments in order, rendered as a JSON object.
type Args []Arg

// Arg is one argument; Value is a string, int, bool, nil or any value
// encoding/json can marshal.
type Arg struct {
	Key   string
	Value any
}

// Apply returns an ssh_apply call; reason is omitted when empty.
func Apply(command, reason string) Call {
	a := Args{{"command", command}}
	if reason != "" {
		a = append(a, Arg{"reason", reason})
	}
	return Call{Name: nightshift.ToolApply, Args: a}
}

// GiveUpCall returns a give_up call.
func GiveUpCall(reason string) Call {
	return Call{Name: nightshift.ToolGiveUp, Args: Args{{"reason", reason}}}
}

// conversationOf extracts a Conversation from a request.
func conversationOf(req openai.ChatCompletionRequest) Conversation {
	c := Conversation{Messages: req.Messages}
	for _, t := range req.Tools {
		if t.Function != nil {
			c.Tools = append(c.Tools, t.Function.Name)
		}
	}
	assistants := 0
	attempt := 0
	sawSystem, sawUser := false, false
	for _, m := range req.Messages {
		text := messageText(m)
		switch m.Role {
		case openai.ChatMessageRoleSystem:
			if !sawSystem {
				sawSystem = true
				first, _, _ := strings.Cut(text, "\n")
				if id, ok := strings.CutPrefix(strings.TrimSpace(first), "Rule:"); ok {
					c.RuleID = strings.TrimSpace(id)
				}
			}
		case openai.ChatMessageRoleUser:
			if !sawUser {
				sawUser = true
				for _, line := range strings.Split(text, "\n") {
					if id, ok := strings.CutPrefix(strings.TrimSpace(line), "Rule:"); ok && c.RuleID == "" {
						c.RuleID = strings.TrimSpace(id)
						break
					}
				}
			}
		case openai.ChatMessageRoleAssistant:
			assistants++
			for _, tc := range m.ToolCalls {
				if tc.Function.Name != nightshift.ToolApply {
					continue
				}
				var a struct {
					Command string `json:"command"`
				}
				if json.Unmarshal([]byte(tc.Function.Arguments), &a) == nil && a.Command != "" {
					c.LastCommand = a.Command
				}
			}
		case openai.ChatMessageRoleTool:
			c.LastResult = text
		}
		if m.Role == openai.ChatMessageRoleSystem || m.Role == openai.ChatMessageRoleUser {
			for _, line := range strings.Split(text, "\n") {
				if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Attempt:"); ok {
					if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
						attempt = n
					}
				}
			}
		}
	}
	if attempt == 0 {
		attempt = assistants + 1
	}
	c.Attempt = attempt
	return c
}

func messageText(m openai.ChatCompletionMessage) string {
	if len(m.MultiContent) == 0 {
		return m.Content
	}
	var b strings.Builder
	for _, p := range m.MultiContent {
		if p.Type == openai.ChatMessagePartTypeText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
