package batch_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// cutPolicy makes the model's first two attempts print more than the
// output cap, once on stdout (echo) and once on stderr (a command the
// simulated host does not know: "sh: 1: NAME: not found"), then fix the
// rule.
type cutPolicy struct{ word string }

func (cutPolicy) Name() string { return "cut" }

func (p cutPolicy) Next(c vllmsim.Conversation) vllmsim.Generation {
	switch c.Attempt {
	case 1:
		return vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply("echo "+p.word, "long stdout")}}
	case 2:
		return vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply(p.word, "long stderr")}}
	}
	return vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply("set "+c.RuleID+" ok", "the fix")}}
}

// TestJournalKeepsEachStreamsCut: what sshexec's output cap cut from each
// stream reaches the journal as that stream's figure. (batch used to record
// the sum of both under StdoutCut, losing which stream was cut.)
func TestJournalKeepsEachStreamsCut(t *testing.T) {
	const outputCap = 64
	word := "x" + strings.Repeat("y", 200)
	ctx := context.Background()
	n := startNight(t, nightOptions{rules: 2, hosts: 1, policy: cutPolicy{word}, outputCap: outputCap})
	n.Rules = n.Rules[1:] // r001: fails until "set r001 ok"
	j := openJournal(t, filepath.Join(t.TempDir(), "j.db"))
	res, err := n.runner(t, j, 1, 1, nil).Run(ctx, n.spec())
	require.NoError(t, err)
	tasks, err := j.Tasks(ctx, res.Run)
	require.NoError(t, err)
	require.Len(t, tasks, 1)
	require.Equal(t, nightshift.RuleFixed, tasks[0].Status)
	steps, err := j.Steps(ctx, tasks[0].ID)
	require.NoError(t, err)
	var cmds []journal.Command
	for _, s := range steps {
		if s.Command != nil {
			cmds = append(cmds, *s.Command)
		}
	}
	require.Len(t, cmds, 3)

	stdout := int64(len(word) + 1) // echo's line
	stderr := int64(len("sh: 1: " + word + ": not found\n"))
	want := []struct {
		command              string
		exit                 int
		stdoutCut, stderrCut int64
	}{
		{"echo " + word, 0, stdout - outputCap, 0},
		{word, 127, 0, stderr - outputCap},
		{"set r001 ok", 0, 0, 0},
	}
	for i, w := range want {
		c := cmds[i]
		assert.Equal(t, w.command, c.Command)
		assert.Equal(t, journal.CommandFinished, c.State, c.Command)
		assert.Equal(t, nightshift.ActionRan, c.Result.Action, c.Command)
		assert.Equal(t, w.exit, c.Result.ExitCode, c.Command)
		assert.Equal(t, w.stdoutCut, c.Result.StdoutCut, "command %d: stdout cut", i)
		assert.Equal(t, w.stderrCut, c.Result.StderrCut, "command %d: stderr cut", i)
		assert.False(t, c.Result.Canceled || c.Result.TimedOut, c.Command)
	}
	assert.Contains(t, cmds[1].Result.Stderr, "bytes cut …]", "the cut is marked in the recorded stderr")
}
