package distill

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/distill/golden")

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
	if err != nil {
		t.Fatalf("read output: %v", err)
	}
	return inline + string(b)
}

func loadTurns(t testing.TB, path string) []Turn {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
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
		if err := dec.Decode(&jt); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		check, ok := checkByName[jt.Check]
		if !ok {
			t.Fatalf("%s:%d: unknown check %q", path, n, jt.Check)
		}
		turn := Turn{Number: jt.Number, Check: check, GaveUp: jt.GaveUp, Text: jt.Text}
		for _, js := range jt.Steps {
			a, ok := actionByName[js.Action]
			if !ok {
				t.Fatalf("%s:%d: unknown action %q", path, n, js.Action)
			}
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
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenarios under testdata/distill/turns")
	}
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
				if n := d.count(line); n > d.maxLineTokens {
					t.Errorf("turn %d: line has %d tokens, budget %d", turn.Number, n, d.maxLineTokens)
				}
				if again := d.Summarize(turn).Line(); again != line {
					t.Errorf("turn %d: not deterministic:\n%s\n%s", turn.Number, line, again)
				}
				checkPastTense(t, turn, line)
				fmt.Fprintln(&b, line)
			}
			fmt.Fprintf(&b, "\n%s\n", Merge(ss))
			compareGolden(t, filepath.Join("..", "testdata", "distill", "golden", name+".txt"), b.String())
		})
	}
	if total < 30 {
		t.Errorf("golden scenarios hold %d turns, want at least 30", total)
	}
}

// checkPastTense checks the invariants every line keeps: it starts with its
// turn, never calls anything done unless the re-check passed, and uses no
// imperative openings.
func checkPastTense(t *testing.T, turn Turn, line string) {
	t.Helper()
	if want := fmt.Sprintf("[Turn %d: ", turn.Number); !strings.HasPrefix(line, want) || !strings.HasSuffix(line, "]") {
		t.Errorf("line %q: want prefix %q and suffix ]", line, want)
	}
	if turn.Check != nightshift.CheckPass && strings.Contains(line, "passed") {
		t.Errorf("line %q says passed, re-check %s", line, turn.Check)
	}
	for _, w := range []string{"succeeded", "fixed", " run ", "try ", "should ", "must "} {
		if strings.Contains(strings.ToLower(line), w) && !strings.Contains(line, "'") {
			t.Errorf("line %q contains %q outside a quoted command", line, w)
		}
	}
}

func compareGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./distill -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run go test ./distill -update after checking):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}
