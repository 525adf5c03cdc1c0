package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// demoFigures are what the demo's output says, as docs/benchmarks.md and
// the README quote them.
type demoFigures struct {
	QuickFixedAt, StubbornAttempts, ModelCalls int
	// From the stubborn rule's attempt 2 on.
	MinPrompt, MaxPrompt, Limit int
	MinDistilled, MaxDistilled  int // once distillation began
	MinVerbatim, MaxVerbatim    int // from attempt 2 on
	CachedShare                 string
	CachedTokens, PromptTokens  int
}

var (
	demoRow    = regexp.MustCompile(`(?m)^(\S+) +(\d+) .* (pass|fail|-) +(\d+)/(\d+) +(\d+) verbatim(?:, (\d+) distilled)?$`)
	demoCached = regexp.MustCompile(`(?m)^(\d+) of (\d+) prompt tokens \(([\d.]+)%\) came from the model server's prefix cache\.$`)
)

// figuresOfDemo reads the figures from the demo's output.
func figuresOfDemo(out string) (demoFigures, error) {
	f := demoFigures{MinPrompt: 1 << 30, MinDistilled: 1 << 30, MinVerbatim: 1 << 30}
	for _, m := range demoRow.FindAllStringSubmatch(out, -1) {
		f.ModelCalls++
		try, _ := strconv.Atoi(m[2])
		switch m[1] {
		case demoQuickRule:
			if m[3] == "pass" && f.QuickFixedAt == 0 {
				f.QuickFixedAt = try
			}
			continue
		case demoStubbornRule:
			f.StubbornAttempts = try
		default:
			return f, fmt.Errorf("a row of unknown rule %q", m[1])
		}
		if try < 2 {
			continue
		}
		prompt, _ := strconv.Atoi(m[4])
		f.Limit, _ = strconv.Atoi(m[5])
		verbatim, _ := strconv.Atoi(m[6])
		f.MinPrompt, f.MaxPrompt = min(f.MinPrompt, prompt), max(f.MaxPrompt, prompt)
		if m[7] != "" {
			f.MinVerbatim, f.MaxVerbatim = min(f.MinVerbatim, verbatim), max(f.MaxVerbatim, verbatim)
			d, _ := strconv.Atoi(m[7])
			f.MinDistilled, f.MaxDistilled = min(f.MinDistilled, d), max(f.MaxDistilled, d)
		}
	}
	m := demoCached.FindStringSubmatch(out)
	if m == nil || f.ModelCalls == 0 || f.MaxDistilled == 0 {
		return f, fmt.Errorf("the demo's output lacks its attempt rows, distillation or cache line")
	}
	f.CachedTokens, _ = strconv.Atoi(m[1])
	f.PromptTokens, _ = strconv.Atoi(m[2])
	f.CachedShare = m[3]
	return f, nil
}

// number reads "12,479" as 12479.
func number(s string) int {
	n, _ := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	return n
}

var (
	docDemoRun = regexp.MustCompile(`sshd_disable_root_login fixed at attempt (\d+), and the stubborn auditd_data_retention_max_log_file through all (\d+) attempts \([^)]*\), (\d+) model calls`)
	docDemoFig = regexp.MustCompile(`from the stubborn rule's attempt 2 on the prompt stays between ([\d,]+) and ([\d,]+) tokens of the ([\d,]+)-token limit, the distilled turns grow from (\d+) to (\d+) while (\d+) to (\d+) stay verbatim, and ([\d.]+) % of the prompt tokens \(([\d,]+) of ([\d,]+)\) came from the prefix cache`)
	readmeDemo = regexp.MustCompile("It fixes `sshd_disable_root_login` at the (\\w+) attempt, then works (\\d+) attempts on a stubborn rule")
)

// figuresOfDocs reads the demo's figures from docs/benchmarks.md and the
// README.
func figuresOfDocs() (demoFigures, error) {
	var f demoFigures
	read := func(name string) (string, error) {
		b, err := os.ReadFile(filepath.Join("..", "..", name))
		return strings.Join(strings.Fields(string(b)), " "), err
	}
	bench, err := read("docs/benchmarks.md")
	if err != nil {
		return f, err
	}
	m := docDemoRun.FindStringSubmatch(bench)
	n := docDemoFig.FindStringSubmatch(bench)
	if m == nil || n == nil {
		return f, fmt.Errorf("docs/benchmarks.md's worker demo section lacks the sentences TestDemo reads (%q, %q)", docDemoRun, docDemoFig)
	}
	f.QuickFixedAt, f.StubbornAttempts, f.ModelCalls = number(m[1]), number(m[2]), number(m[3])
	f.MinPrompt, f.MaxPrompt, f.Limit = number(n[1]), number(n[2]), number(n[3])
	f.MinDistilled, f.MaxDistilled, f.MinVerbatim, f.MaxVerbatim = number(n[4]), number(n[5]), number(n[6]), number(n[7])
	f.CachedShare, f.CachedTokens, f.PromptTokens = n[8], number(n[9]), number(n[10])

	readme, err := read("README.md")
	if err != nil {
		return f, err
	}
	r := readmeDemo.FindStringSubmatch(readme)
	if r == nil {
		return f, fmt.Errorf("the README's demo paragraph lacks %q", readmeDemo)
	}
	ordinals := map[string]int{"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}
	if ordinals[r[1]] != f.QuickFixedAt || number(r[2]) != f.StubbornAttempts {
		return f, fmt.Errorf("the README says the demo fixes at the %s attempt and works %s attempts; docs/benchmarks.md says %d and %d", r[1], r[2], f.QuickFixedAt, f.StubbornAttempts)
	}
	return f, nil
}

// checkDemoFigures: what docs/benchmarks.md and the README say of the demo
// is what it printed (out).
func checkDemoFigures(t *testing.T, out string) {
	t.Helper()
	got, err := figuresOfDemo(out)
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	doc, err := figuresOfDocs()
	if err != nil {
		t.Fatal(err)
	}
	if got != doc {
		t.Errorf("the docs' demo figures are stale:\n docs: %+v\n demo: %+v", doc, got)
	}
}

func TestDemoFiguresParsing(t *testing.T) {
	out := "RULE  TRY\n" +
		"sshd_disable_root_login               1  echo x     0  fail   892/15328     0 verbatim\n" +
		"sshd_disable_root_login               2  sed y      0  pass   1206/15328    1 verbatim\n" +
		"auditd_data_retention_max_log_file    1  grep       0  fail   863/15328     0 verbatim\n" +
		"auditd_data_retention_max_log_file    2  grep       0  fail   5198/15328    1 verbatim\n" +
		"auditd_data_retention_max_log_file    3  grep       0  fail   5107/15328    3 verbatim, 3 distilled\n" +
		"140112 of 185245 prompt tokens (75.6%) came from the model server's prefix cache.\n"
	got, err := figuresOfDemo(out)
	if err != nil {
		t.Fatal(err)
	}
	want := demoFigures{QuickFixedAt: 2, StubbornAttempts: 3, ModelCalls: 5, MinPrompt: 5107, MaxPrompt: 5198, Limit: 15328,
		MinDistilled: 3, MaxDistilled: 3, MinVerbatim: 3, MaxVerbatim: 3, CachedShare: "75.6", CachedTokens: 140112, PromptTokens: 185245}
	if got != want {
		t.Errorf("figuresOfDemo = %+v, want %+v", got, want)
	}
}
