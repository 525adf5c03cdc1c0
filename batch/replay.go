package batch

import (
	"encoding/json"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/journal"
)

// script is what a resumed task replays: the steps recorded by earlier
// processes, in order. The worker is deterministic given the same model
// replies, command results and check results, so a fresh Fix fed the
// recorded ones takes the same steps, in the same order, up to the point
// where the journal ends; from there it goes on live. Steps replayed are not
// recorded again. Every method is safe on a nil script (a fresh task).
type script struct {
	replies  []openai.ChatCompletionMessage
	commands []journal.Command // commands that ran or started, in order
	checks   []journal.CheckRecord
	skipped  int // commands recorded as not run (blocked, refused…)
	attempts int // attempt ends
	distills int
	ran      map[string]int  // recorded commands not yet replayed
	unknown  map[string]bool // commands started without a recorded result: never run again
}

func newScript(steps []journal.Step) (*script, error) {
	s := &script{ran: map[string]int{}, unknown: map[string]bool{}}
	for _, st := range steps {
		switch {
		case st.Event != nil && st.Event.Name == eventReply:
			var m openai.ChatCompletionMessage
			if err := json.Unmarshal(st.Event.Payload, &m); err != nil {
				return nil, fmt.Errorf("recorded model reply (step %d): %w", st.ID, err)
			}
			s.replies = append(s.replies, m)
		case st.Command != nil && st.Command.State == journal.CommandSkipped:
			s.skipped++
		case st.Command != nil:
			s.commands = append(s.commands, *st.Command)
			s.ran[st.Command.Command]++
			if st.Command.State != journal.CommandFinished {
				s.unknown[st.Command.Command] = true
			}
		case st.Check != nil:
			s.checks = append(s.checks, *st.Check)
		case st.AttemptEnd != nil:
			s.attempts++
		case st.Distillation != nil:
			s.distills++
		}
	}
	return s, nil
}

func (s *script) reply() (openai.ChatCompletionMessage, bool) {
	if s == nil || len(s.replies) == 0 {
		return openai.ChatCompletionMessage{}, false
	}
	m := s.replies[0]
	s.replies = s.replies[1:]
	return m, true
}

// command returns the next recorded command if it is command. Any other
// command means the replay diverged (it cannot with a deterministic worker
// and the same rule): replaying stops and the rest goes on live, still
// never re-running a recorded command (see recorded). The journal keeps
// commands masked (nightshift.RedactText): so is command before it is
// compared.
func (s *script) command(command string) (journal.Command, bool) {
	if s == nil || len(s.commands) == 0 {
		return journal.Command{}, false
	}
	command = nightshift.RedactText(command)
	c := s.commands[0]
	if c.Command != command {
		s.replies, s.commands, s.checks = nil, nil, nil
		s.skipped, s.attempts, s.distills = 0, 0, 0
		return journal.Command{}, false
	}
	s.commands = s.commands[1:]
	s.ran[command]--
	return c, true
}

// recorded reports whether command was started by an earlier process
// without a recorded result, or recorded as run and not yet replayed.
func (s *script) recorded(command string) bool {
	command = nightshift.RedactText(command)
	return s != nil && (s.ran[command] > 0 || s.unknown[command])
}

func (s *script) check() (journal.CheckRecord, bool) {
	if s == nil || len(s.checks) == 0 {
		return journal.CheckRecord{}, false
	}
	c := s.checks[0]
	s.checks = s.checks[1:]
	return c, true
}

func (s *script) skip() bool       { return s != nil && take(&s.skipped) }
func (s *script) attemptEnd() bool { return s != nil && take(&s.attempts) }
func (s *script) distill() bool    { return s != nil && take(&s.distills) }

func take(n *int) bool {
	if *n == 0 {
		return false
	}
	*n--
	return true
}
