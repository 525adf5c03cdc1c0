package vllmsim_test

import (
	"context"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/distill"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// TestWithLines: the model distiller of package distill, asking the
// simulator over HTTP, gets a line of the simulator's own from
// LinesReword, refuses LinesClaim's success for a failed turn, and refuses
// the stubborn policy's tool call written as text (several lines).
// Requests that offer tools still get the policy's answer.
func TestWithLines(t *testing.T) {
	turn := distill.Turn{Number: 3, Check: nightshift.CheckFail, Steps: []distill.Step{{Action: nightshift.ActionRan, Tool: nightshift.ToolApply,
		Command: "sed -i 's/^#*PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config", ExitCode: 2,
		Stderr: "sed: can't read /etc/ssh/sshd_config: No such file or directory\n"}}}
	det := distill.New(distill.Config{}).Summarize(turn).Line()
	tests := []struct {
		name   string
		policy vllmsim.Policy
		prefix string
		reason distill.FallbackReason
	}{
		{"reword", vllmsim.WithLines(vllmsim.Stubborn(vllmsim.StubbornConfig{}), vllmsim.LinesReword), "[Turn 3: summary: ", distill.FallbackNone},
		{"claim", vllmsim.WithLines(vllmsim.Stubborn(vllmsim.StubbornConfig{}), vllmsim.LinesClaim), det, distill.FallbackClaim},
		{"policy", vllmsim.Stubborn(vllmsim.StubbornConfig{}), det, distill.FallbackOversize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := start(t, vllmsim.Config{Policy: tt.policy})
			m, err := distill.NewModelDistiller(distill.ModelDistillerConfig{Client: ts.client, Model: ts.sim.Model()})
			if err != nil {
				t.Fatal(err)
			}
			r := m.Distill(context.Background(), turn)
			if !strings.HasPrefix(r.Line, tt.prefix) || r.Reason != tt.reason {
				t.Fatalf("line %q, reason %q (%v); want a line starting %q, reason %q", r.Line, r.Reason, r.Fallback, tt.prefix, tt.reason)
			}
			if tt.reason == distill.FallbackNone && (r.Line == det || !strings.Contains(r.Line, "sed")) {
				t.Errorf("the simulator's line %q is not its own, or lost the facts of %q", r.Line, det)
			}
			// A request with tools is the policy's.
			resp, err := ts.client.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Model: ts.sim.Model(),
				Messages: baseMessages("sshd_disable_root_login"), Tools: workerTools()})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Choices) != 1 || len(resp.Choices[0].Message.ToolCalls) != 1 {
				t.Errorf("a request with tools got %+v", resp.Choices)
			}
		})
	}
}
