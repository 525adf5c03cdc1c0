package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/internal/textcut"
)

// Tools returns the tool definitions the worker offers: ssh_apply runs one
// command on the target, give_up ends the rule.
func Tools() []openai.Tool {
	return []openai.Tool{
		{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name:        nightshift.ToolApply,
			Description: "Run one shell command on the target host (as root, non-interactively, with a timeout). After it runs, the worker re-runs the rule's check and reports the result.",
			Parameters: json.RawMessage(`{"type": "object", "properties": {` +
				`"command": {"type": "string", "description": "The shell command to run."}, ` +
				`"reason": {"type": "string", "description": "Why this command should bring the host into compliance."}}, ` +
				`"required": ["command"]}`),
		}},
		{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name:        nightshift.ToolGiveUp,
			Description: "Stop working on this rule because it cannot be fixed on this host.",
			Parameters: json.RawMessage(`{"type": "object", "properties": {` +
				`"reason": {"type": "string", "description": "Why the rule cannot be fixed."}}, ` +
				`"required": ["reason"]}`),
		}},
	}
}

// Malformed-call problems, matched with errors.Is.
var (
	ErrNoToolCall   = errors.New("no tool call")
	ErrUnknownTool  = errors.New("unknown tool")
	ErrBadArguments = errors.New("arguments are not a JSON object")
	ErrEmptyCommand = errors.New("empty command")
)

// call is one parsed tool call.
type call struct {
	id      string
	name    string
	command string
	reason  string
	err     error // why the call is malformed; nil when it is usable
}

// parseCalls parses the model's tool calls. Malformed calls are returned with
// err set, never dropped, so every call gets a result.
func parseCalls(msg openai.ChatCompletionMessage) []call {
	out := make([]call, 0, len(msg.ToolCalls))
	for _, tc := range msg.ToolCalls {
		c := call{id: tc.ID, name: tc.Function.Name}
		var args struct {
			Command *string `json:"command"`
			Reason  string  `json:"reason"`
		}
		switch {
		case tc.Function.Name != nightshift.ToolApply && tc.Function.Name != nightshift.ToolGiveUp:
			c.err = fmt.Errorf("%w %q (the tools are %s and %s)", ErrUnknownTool, tc.Function.Name, nightshift.ToolApply, nightshift.ToolGiveUp)
		case json.Unmarshal([]byte(tc.Function.Arguments), &args) != nil:
			c.err = fmt.Errorf("%s: %w: %s", tc.Function.Name, ErrBadArguments, textcut.Head(tc.Function.Arguments, 200))
		case tc.Function.Name == nightshift.ToolApply && (args.Command == nil || strings.TrimSpace(*args.Command) == ""):
			c.err = fmt.Errorf("%s: %w: the \"command\" argument must be a non-empty string", nightshift.ToolApply, ErrEmptyCommand)
		default:
			if args.Command != nil {
				c.command = *args.Command
			}
			c.reason = args.Reason
		}
		out = append(out, c)
	}
	return out
}
