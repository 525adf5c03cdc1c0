package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/distill"
	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/internal/vllmref"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// plantedPool is the number of distinct failing commands of a planted run.
const plantedPool = 30

// planted is a stubborn model and host in one: at each attempt it runs
// (chosen by a hash of seed and attempt) one of plantedPool failing
// commands, each of which prints its own error line holding a unique
// value; a read-only command with a large output (different every
// attempt); or a command whose change record names a new file. Nothing
// fixes the rule; the re-check prints a value.
type planted struct{ seed uint64 }

func (p planted) hash(salt string, n int) int {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s", p.seed, salt)
	return int(h.Sum64() % uint64(n))
}

func (planted) Name() string { return "planted" }

// kind is what attempt a does: 0 a failing command, 1 noise, 2 a change.
func (p planted) kind(a int) int {
	switch r := p.hash(fmt.Sprint("kind", a), 20); {
	case r < 8:
		return 0
	case r < 17:
		return 1
	}
	return 2
}

// failing returns failing command i and its error line: the tools of
// hardening, each with a unique value.
func (p planted) failing(i int) (cmd, errLine string, exit int) {
	v := 1000 + p.hash(fmt.Sprint("value", i), 9000)
	switch i % 5 {
	case 0:
		return fmt.Sprintf("sysctl -w kernel.planted_%02d=%d", i, v), fmt.Sprintf("sysctl: cannot stat /proc/sys/kernel/planted_%02d: No such file or directory", i), 255
	case 1:
		return fmt.Sprintf("systemctl restart planted-%02d.service", i), fmt.Sprintf("Failed to restart planted-%02d.service: Unit planted-%02d.service is masked.", i, i), 1
	case 2:
		return fmt.Sprintf("sed -i 's/^Planted%02d .*/Planted%02d %d/' /etc/ssh/sshd_config && sshd -t", i, i, v),
			fmt.Sprintf("/etc/ssh/sshd_config: line %d: Bad configuration option: Planted%02d", v%200, i), 255
	case 3:
		return fmt.Sprintf("apt-get install -y planted-tool-%02d", i), fmt.Sprintf("E: Unable to locate package planted-tool-%02d", i), 100
	}
	return fmt.Sprintf("auditctl -w /etc/planted-%02d -p wa -k planted%d", i, v), fmt.Sprintf("Error sending add rule data request (No such file or directory %d)", v), 255
}

func (p planted) command(a int) string {
	switch p.kind(a) {
	case 0:
		c, _, _ := p.failing(p.hash(fmt.Sprint("which", a), plantedPool))
		return c
	case 1:
		return fmt.Sprintf("journalctl --no-pager -n %d", 200+a)
	}
	return fmt.Sprintf("install -m 0640 /dev/null /etc/planted/changed-%d.conf", a)
}

func (p planted) Next(c vllmsim.Conversation) vllmsim.Generation {
	return vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply(p.command(c.Attempt), "keep trying")}}
}

func (p planted) run(command string, attempt int) (nightshift.Exec, []nightshift.FileChange, nightshift.CheckStatus, string) {
	check := "max_log_file = 8"
	for i := 0; i < plantedPool; i++ {
		if c, e, exit := p.failing(i); c == command {
			return nightshift.Exec{Stdout: vllmsim.Noise(p.seed, attempt, 60), Stderr: e + "\n", ExitCode: exit}, nil, nightshift.CheckFail, check
		}
	}
	if path, ok := strings.CutPrefix(command, "install -m 0640 /dev/null "); ok {
		return nightshift.Exec{}, []nightshift.FileChange{{Path: path, Change: nightshift.ChangeCreated}}, nightshift.CheckFail, check
	}
	return nightshift.Exec{Stdout: vllmsim.Noise(p.seed, attempt, 300+p.hash(fmt.Sprint("size", attempt), 2500))}, nil, nightshift.CheckFail, check
}

// fact is one decisive fact an attempt's output planted.
type fact struct {
	attempt int
	kind    string // "error" (a command with its error line) or "changed" (a file)
	command string
	text    string // the error line or the changed file
}

// heldIn reports whether a prompt holds f: an error with its command on
// one line of a message (a history line) or the command's call with the
// error in a tool result; a changed file in a message's text or a call.
func (f fact) heldIn(msgs []openai.ChatCompletionMessage) bool {
	span := distill.CodeSpan(distill.Canonical(f.command))
	for i, m := range msgs {
		if f.kind == "changed" {
			if strings.Contains(m.Content, f.text) {
				return true
			}
			for _, c := range m.ToolCalls { // a verbatim turn: the call names the file
				if strings.Contains(c.Function.Arguments, f.text) {
					return true
				}
			}
			continue
		}
		for _, l := range strings.Split(m.Content, "\n") {
			if strings.Contains(l, span) && strings.Contains(l, f.text) {
				return true
			}
		}
		for _, c := range m.ToolCalls {
			var a struct {
				Command string `json:"command"`
			}
			if json.Unmarshal([]byte(c.Function.Arguments), &a) == nil && a.Command == f.command {
				for _, r := range msgs[i+1:] {
					if r.ToolCallID == c.ID && strings.Contains(r.Content, f.text) {
						return true
					}
				}
			}
		}
	}
	return false
}

// retention is what one planted run kept.
type retention struct {
	attempts, rejected         int
	distinctPairs, pairsInLast int
	changed, changedInLast     int
	minErrShare                float64 // the least share of earlier errors any prompt held
	prompt, cached             int
	missingInLast              []string
}

func runRetention(tb testing.TB, e *readingEnv, kind string, seed uint64, attempts int) retention {
	p := planted{seed: seed}
	r := e.runConversation(tb, e.newConv(tb, kind, nil), p, p, attempts, true)
	var facts []fact
	seen := map[string]bool{}
	ret := retention{attempts: r.attempts, rejected: r.rejected, minErrShare: 1, prompt: r.prompt, cached: r.cached}
	for k, prompt := range r.prompts {
		attempt := k + 1
		errs, held := 0, 0
		for _, f := range facts {
			if f.kind == "error" {
				errs++
				if f.heldIn(prompt) {
					held++
				}
			}
		}
		if errs > 0 {
			ret.minErrShare = min(ret.minErrShare, float64(held)/float64(errs))
		}
		// The facts attempt's output plants, known from the next prompt on.
		cmd := p.command(attempt)
		ex, changes, _, _ := p.run(cmd, attempt)
		if ex.ExitCode != 0 && !seen[cmd] {
			seen[cmd] = true
			facts = append(facts, fact{attempt: attempt, kind: "error", command: cmd, text: strings.TrimSpace(ex.Stderr)})
		}
		for _, c := range changes {
			facts = append(facts, fact{attempt: attempt, kind: "changed", command: cmd, text: c.Path})
		}
	}
	for _, f := range facts {
		if f.attempt >= len(r.prompts) {
			continue // planted by the last attempt: no prompt after it
		}
		in := f.heldIn(r.last)
		switch f.kind {
		case "error":
			ret.distinctPairs++
			if in {
				ret.pairsInLast++
			} else {
				ret.missingInLast = append(ret.missingInLast, f.command+" → "+f.text)
			}
		case "changed":
			ret.changed++
			if in {
				ret.changedInLast++
			}
		}
	}
	return ret
}

func (r retention) String() string {
	return fmt.Sprintf("%d attempts, %d rejected; distinct (command, error) pairs in the last prompt %d/%d; the least share of earlier pairs in any prompt %.0f%%; changed files in the last prompt %d/%d; cached %.1f%%",
		r.attempts, r.rejected, r.pairsInLast, r.distinctPairs, 100*r.minErrShare, r.changedInLast, r.changed, 100*float64(r.cached)/float64(max(r.prompt, 1)))
}

// referenceEnv is the reading environment with the simulator counting
// prompts by the independent reference (internal/vllmref).
func referenceEnv(t testing.TB) *readingEnv {
	e := *newReadingEnv(t)
	ref, err := vllmref.Start(context.Background(), vllmref.Config{Family: "qwen3"})
	if errors.Is(err, vllmref.ErrUnavailable) {
		testenv.Unavailable(t, "the reference counter: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Close() })
	e.prompts = ref
	return &e
}

// TestRetention plants decisive facts (error lines with unique values,
// created files) in stubborn runs of 20, 100 and 1,000 attempts, with
// every prompt counted by the independent reference: no prompt is
// rejected, and every distinct (command, error) pair of the run is still
// in the last prompt.
func TestRetention(t *testing.T) {
	t.Parallel()
	lengths := []int{20, 100, 1000}
	if testing.Short() {
		lengths = []int{20, 100}
	}
	e := referenceEnv(t)
	seed := testenv.Seed(t, 7)
	for _, n := range lengths {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			r := runRetention(t, e, "new", seed, n)
			t.Logf("%s", r)
			if r.attempts != n || r.rejected != 0 {
				t.Fatalf("%d of %d attempts, %d rejected", r.attempts, n, r.rejected)
			}
			if r.pairsInLast != r.distinctPairs {
				t.Errorf("%d of %d distinct (command, error) pairs are not in the last prompt: %v", r.distinctPairs-r.pairsInLast, r.distinctPairs, r.missingInLast)
			}
			if r.distinctPairs < min(plantedPool, n/5) {
				t.Errorf("only %d distinct pairs planted: the run proves little", r.distinctPairs)
			}
		})
	}
}

// BenchmarkRetention runs the planted stubborn runs of 20, 100 and 1,000
// attempts through the new memory and the memory before issue 22 and
// reports what the last prompt still holds:
//
//	go test ./memory -run '^$' -bench Retention -benchtime 1x
func BenchmarkRetention(b *testing.B) {
	e := referenceEnv(b)
	for b.Loop() {
		for _, n := range []int{20, 100, 1000} {
			for _, kind := range []string{"new", "old"} {
				r := runRetention(b, e, kind, 7, n)
				b.Logf("%s memory, %s", kind, r)
				b.ReportMetric(100*float64(r.pairsInLast)/float64(max(r.distinctPairs, 1)), fmt.Sprintf("%%pairs-kept-%s-%d", kind, n))
			}
		}
	}
}
