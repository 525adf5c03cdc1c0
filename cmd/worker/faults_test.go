package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift/journal"
)

// tasksOf reads the tasks of run 1 of the journal at path, by rule.
func tasksOf(t *testing.T, path string) map[string]journal.Task {
	t.Helper()
	j, err := journal.Open(context.Background(), path, journal.Config{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	tasks, err := j.Tasks(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]journal.Task{}
	for _, tk := range tasks {
		out[tk.Rule+"@"+tk.Host] = tk
	}
	return out
}

// fault: max-attempts-cap
// --max-attempts caps every rule, its own max_attempts included; a rule
// whose max_attempts is lower keeps it. aide_db (max_attempts 4) is never
// fixed, so its attempts are exactly the cap that applied.
func TestMaxAttemptsCapsTheNight(t *testing.T) {
	tests := []struct {
		name string
		flag string
		want int
	}{
		{"flag below the rule's", "2", 2},
		{"flag above the rule's", "6", 4},
		{"no flag", "", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newBatchFixture(t, 1, 4)
			j := filepath.Join(f.dir, "night.db")
			args := f.runArgs(j, "--no-progress")
			if tt.flag != "" {
				args = append(args, "--max-attempts", tt.flag)
			}
			code, out, errOut := cli(t, "", args...)
			if code != exitNotFixed || !strings.Contains(out, "3 of 3 rules × hosts finished") {
				t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
			}
			if got := tasksOf(t, j)["aide_db@web1"].Attempts; got != tt.want {
				t.Errorf("aide_db made %d attempts, want %d", got, tt.want)
			}
		})
	}
}
