package distill

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/internal/goldenfile"
)

// jsonTurn is a turn as written in testdata/distill/turns/*.jsonl, one turn
// a line. Outputs may be inline or name a file of testdata/outputs.
type jsonTurn struct {
	Number int        `json:"number"`
	Check  string     `json:"check"`
	GaveUp bool       `json:"gave_up"`
	Text   string     `json:"text"`
	Steps  []jsonStep `json:"steps"`
}

type jsonStep struct {
	Tool       string `json:"tool"`
	Command    string `json:"command"`
	Reason     string `json:"reason"`
	Action     string `json:"action"`
	ExitCode   int    `json:"exit_code"`
	Signal     string `json:"signal"`
	Stdout     string `json:"stdout"`
	Stderr     string `json:"stderr"`
	StdoutFile string `json:"stdout_file"`
	StderrFile string `json:"stderr_file"`
	Note       string `json:"note"`
}

var (
	actionByName = map[string]nightshift.Action{"": nightshift.ActionRan, "ran": nightshift.ActionRan, "blocked": nightshift.ActionBlocked, "rejected": nightshift.ActionMalformed, "timed out": nightshift.ActionTimedOut, "unknown": nightshift.ActionUnknown}
	checkByName  = map[string]nightshift.CheckStatus{"": nightshift.CheckNotRun, "not run": nightshift.CheckNotRun, "passed": nightshift.CheckPass, "failed": nightshift.CheckFail, "errored": nightshift.CheckError}
)

func readOutput(t testing.TB, inline, file string) string {
	t.Helper()
	if file == "" {
		return inline
	}
	b, err := os.ReadFile(filepath.Join("..", "testdata", "outputs", file))
	require.NoError(t, err, "read output")
	return inline + string(b)
}

func loadTurns(t testing.TB, path string) []Turn {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var turns []Turn
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		var jt jsonTurn
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&jt), "%s:%d", path, n)
		check, ok := checkByName[jt.Check]
		require.True(t, ok, "%s:%d: unknown check %q", path, n, jt.Check)
		turn := Turn{Number: jt.Number, Check: check, GaveUp: jt.GaveUp, Text: jt.Text}
		for _, js := range jt.Steps {
			a, ok := actionByName[js.Action]
			require.True(t, ok, "%s:%d: unknown action %q", path, n, js.Action)
			turn.Steps = append(turn.Steps, Step{
				Tool: js.Tool, Command: js.Command, Reason: js.Reason, Action: a, ExitCode: js.ExitCode,
				Signal: js.Signal, Note: js.Note,
				Stdout: readOutput(t, js.Stdout, js.StdoutFile), Stderr: readOutput(t, js.Stderr, js.StderrFile),
			})
		}
		turns = append(turns, turn)
	}
	return turns
}

// TestGolden summarises every scenario of testdata/distill/turns with the
// default Distiller (its documented estimate counter) and compares each
// turn's line and the scenario's Merge line with testdata/distill/golden.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "distill", "turns", "*.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no scenarios under testdata/distill/turns")
	total := 0
	d := New(Config{})
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		t.Run(name, func(t *testing.T) {
			turns := loadTurns(t, f)
			total += len(turns)
			var b strings.Builder
			var ss []Summary
			for _, turn := range turns {
				s := d.Summarize(turn)
				ss = append(ss, s)
				line := s.Line()
				assert.LessOrEqual(t, d.count(line), d.maxLineTokens, "turn %d: the line's tokens and the budget", turn.Number)
				assert.Equal(t, line, d.Summarize(turn).Line(), "turn %d: not deterministic", turn.Number)
				checkPastTense(t, turn, line)
				fmt.Fprintln(&b, line)
			}
			fmt.Fprintf(&b, "\n%s\n", Merge(ss))
			goldenfile.Check(t, filepath.Join("..", "testdata", "distill", "golden", name+".txt"), []byte(b.String()))
		})
	}
	assert.GreaterOrEqual(t, total, 30, "turns in the golden scenarios")
}

// checkPastTense checks the invariants every line keeps: it starts with its
// turn, never calls anything done unless the re-check passed, and uses no
// imperative openings.
func checkPastTense(t *testing.T, turn Turn, line string) {
	t.Helper()
	assert.True(t, strings.HasPrefix(line, fmt.Sprintf("[Turn %d: ", turn.Number)), "line %q: the turn's prefix", line)
	assert.True(t, strings.HasSuffix(line, "]"), "line %q: suffix ]", line)
	if turn.Check != nightshift.CheckPass {
		assert.NotContains(t, line, "passed", "re-check %s", turn.Check)
	}
	for _, w := range []string{"succeeded", "fixed", " run ", "try ", "should ", "must "} {
		if strings.Contains(strings.ToLower(line), w) && !strings.Contains(line, "'") {
			t.Errorf("line %q contains %q outside a quoted command", line, w)
		}
	}
}
