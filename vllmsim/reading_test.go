package vllmsim_test

import (
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/vllmsim"
)

// TestReadingPolicies: each scenario's policy reveals its facts at its
// attempts, explores harmlessly until it acts, and then proposes the fix
// exactly when every fact is in a non-assistant message of its prompt —
// and the host fixes the rule only for that command.
func TestReadingPolicies(t *testing.T) {
	makers := map[string]func(uint64) *vllmsim.Scenario{
		"rejected-option": vllmsim.RejectedOptionScenario,
		"preconditions":   vllmsim.PreconditionsScenario,
		"trap":            vllmsim.TrapScenario,
	}
	for name, mk := range makers {
		for seed := uint64(0); seed < 6; seed++ {
			s := mk(seed)
			p := vllmsim.Reading(vllmsim.ReadingConfig{Seed: seed, Scenario: s, ActAt: 10, ActSpread: 2})
			require.Equal(t, "reading-"+name, p.Name())
			cmd := func(c vllmsim.Conversation) string {
				g := p.Next(c)
				require.Len(t, g.Calls, 1, "%s seed %d attempt %d", name, seed, c.Attempt)
				return g.Calls[0].Args[0].Value.(string)
			}
			// What the revealing commands print, as tool results.
			var facts []openai.ChatCompletionMessage
			traps := 0
			for attempt := 1; attempt < 10; attempt++ {
				c := cmd(vllmsim.Conversation{Attempt: attempt})
				for _, d := range destructive {
					assert.NotContains(t, c, d, "%s seed %d attempt %d", name, seed, attempt)
				}
				ex, fixed := s.Respond(c, traps, attempt, seed)
				require.False(t, fixed, "%s seed %d: fixed at attempt %d by %q", name, seed, attempt, c)
				if s.IsTrap(c) {
					traps++
				}
				_, found := vllmsim.FindFacts([]openai.ChatCompletionMessage{{Role: "tool", Content: ex.Stdout + ex.Stderr}}, s.Facts)
				if rev, ok := s.Reveal[attempt]; ok {
					require.Equal(t, rev, c, "%s seed %d attempt %d: the revealing command", name, seed, attempt)
					facts = append(facts, openai.ChatCompletionMessage{Role: "tool", Content: ex.Stdout + ex.Stderr})
				} else {
					assert.False(t, found, "%s seed %d attempt %d: exploring printed every fact", name, seed, attempt)
				}
			}
			act := 12 // at the latest
			with := cmd(vllmsim.Conversation{Attempt: act, Messages: facts})
			assert.Equal(t, s.FixCommand(), with, "%s seed %d: the fix with every fact in the prompt", name, seed)
			_, fixed := s.Respond(with, traps, act, seed)
			assert.True(t, fixed, "%s seed %d: the fix did not fix", name, seed)
			// Each fact alone is not enough, nor are facts in the model's
			// own messages.
			for i := range facts {
				part := append(append([]openai.ChatCompletionMessage(nil), facts[:i]...), facts[i+1:]...)
				c := cmd(vllmsim.Conversation{Attempt: act, Messages: part})
				assert.NotEqual(t, s.FixCommand(), c, "%s seed %d: the fix without fact %d", name, seed, i)
				_, fixed := s.Respond(c, traps, act, seed)
				assert.False(t, fixed, "%s seed %d: fixed without fact %d by %q", name, seed, i, c)
			}
			var asAssistant []openai.ChatCompletionMessage
			for _, f := range facts {
				asAssistant = append(asAssistant, openai.ChatCompletionMessage{Role: "assistant", Content: f.Content})
			}
			assert.NotEqual(t, s.FixCommand(), cmd(vllmsim.Conversation{Attempt: act, Messages: asAssistant}), "%s seed %d: facts read from the model's own message", name, seed)
		}
	}
}

// TestTrapBreaksTheFix: a second run of the trap makes the fix fail.
func TestTrapBreaksTheFix(t *testing.T) {
	s := vllmsim.TrapScenario(4)
	p := vllmsim.Reading(vllmsim.ReadingConfig{Seed: 4, Scenario: s})
	trap := p.Next(vllmsim.Conversation{Attempt: 40}).Calls[0].Args[0].Value.(string)
	require.True(t, s.IsTrap(trap), "without the fact the model runs the trap: %q", trap)
	_, fixed := s.Respond(s.FixCommand(), 1, 41, 4)
	assert.True(t, fixed, "after one run of the trap")
	ex, fixed := s.Respond(s.FixCommand(), 2, 41, 4)
	assert.False(t, fixed, "after two runs of the trap")
	assert.NotEmpty(t, strings.TrimSpace(ex.Stderr))
}
