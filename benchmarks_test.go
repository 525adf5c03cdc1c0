package nightshift_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var (
	inlineGoTest = regexp.MustCompile("`(go test [^`]+)`")
	timeoutFlag  = regexp.MustCompile(` -timeout [0-9a-z]+`)
)

// benchmarkCommands reads docs/benchmarks.md: the commands of its "Running
// them" block (what make bench runs) and every other command it gives —
// indented lines starting with "go " (a line ending in a backslash goes on)
// and `go test …` code spans — with whitespace collapsed.
func benchmarkCommands(md string) (listed, elsewhere []string) {
	inList := false
	var cur string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "## ") {
			inList = strings.HasPrefix(l, "## Running them")
		}
		if cur == "" && !strings.HasPrefix(l, "    go ") {
			continue
		}
		if s, ok := strings.CutSuffix(l, `\`); ok {
			cur += s + " "
			continue
		}
		c := strings.Join(strings.Fields(cur+l), " ")
		cur = ""
		if inList {
			listed = append(listed, c)
		} else {
			elsewhere = append(elsewhere, c)
		}
	}
	for _, m := range inlineGoTest.FindAllStringSubmatch(md, -1) {
		elsewhere = append(elsewhere, strings.Join(strings.Fields(m[1]), " "))
	}
	return listed, elsewhere
}

// TestBenchmarkCommands: make bench runs exactly the commands
// docs/benchmarks.md lists, each with its timeout: every command the file
// gives is in its "Running them" block (up to -timeout), every go test
// there has a -timeout, and scripts/bench.sh (which the Makefile's bench
// target runs) reads that block and nothing else.
func TestBenchmarkCommands(t *testing.T) {
	md, err := os.ReadFile("docs/benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	listed, elsewhere := benchmarkCommands(string(md))
	if len(listed) < 10 {
		t.Fatalf("docs/benchmarks.md lists %d commands under \"## Running them\"", len(listed))
	}
	bare := make([]string, len(listed))
	for i, c := range listed {
		bare[i] = timeoutFlag.ReplaceAllString(c, "")
		if strings.HasPrefix(c, "go test ") && bare[i] == c {
			t.Errorf("listed without -timeout (go test's default is 10 minutes): %s", c)
		}
	}
	for _, c := range elsewhere {
		if !slices.Contains(bare, timeoutFlag.ReplaceAllString(c, "")) {
			t.Errorf("docs/benchmarks.md gives a command that make bench does not run (add it to \"## Running them\"): %s", c)
		}
	}
	out, err := exec.Command("scripts/bench.sh", "--list").Output()
	if err != nil {
		t.Fatalf("scripts/bench.sh --list: %v", err)
	}
	if got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"); !slices.Equal(got, listed) {
		t.Errorf("scripts/bench.sh would run\n%s\nnot the commands docs/benchmarks.md lists\n%s", strings.Join(got, "\n"), strings.Join(listed, "\n"))
	}
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^bench:.*\n\t.*\./scripts/bench\.sh\s*$`).Match(mk) {
		t.Error("the Makefile's bench target does not run scripts/bench.sh")
	}
}
