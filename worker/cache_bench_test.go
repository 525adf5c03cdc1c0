package worker_test

import (
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/memory"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"
	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

var (
	benchAttempts = flag.Int("cache.attempts", 120, "attempts of BenchmarkCacheShareProduction")
	benchLowWater = flag.Int("cache.lowwater", 0, "the memory's LowWaterPercent (0: its default)")
	benchOutput   = flag.Int("cache.output", 0, "the memory's OutputTokens (0: its default)")
	benchLarge    = flag.Bool("cache.large", false, "whole realistic outputs (300–3,000 tokens) instead of 50–200 tokens")
)

// shortOutputs answers every command with 50–200 tokens of a realistic
// output (the first lines of one of testdata/outputs, chosen and sized by a
// hash of the command), exit status 1; the rule's check fails.
type shortOutputs struct {
	outs  []string
	tok   served.Tokenizer
	large bool
}

func (s shortOutputs) Run(_ context.Context, command string) (nightshift.Exec, error) {
	if strings.HasPrefix(command, "test ") {
		return nightshift.Exec{ExitCode: 1}, nil
	}
	h := fnv.New32a()
	h.Write([]byte(command))
	v := h.Sum32()
	want := 50 + int(v%151)
	if s.large {
		return nightshift.Exec{Stdout: s.outs[int(v/151)%len(s.outs)], ExitCode: 1}, nil
	}
	lines := strings.SplitAfter(s.outs[int(v/151)%len(s.outs)], "\n")
	var b strings.Builder
	for _, l := range lines {
		if s.tok.Count(b.String()+l) > want {
			break
		}
		b.WriteString(l)
	}
	return nightshift.Exec{Stdout: b.String(), ExitCode: 1}, nil
}

// variedPolicy proposes a different plausible command at every attempt.
type variedPolicy struct{}

func (variedPolicy) Name() string { return "varied" }

func (variedPolicy) Next(c vllmsim.Conversation) vllmsim.Generation {
	cmds := []string{"grep -n 'database' /etc/aide/aide.conf", "aide --config /etc/aide/aide.conf --init", "ls -la /var/lib/aide",
		"dpkg -s aide aide-common", "journalctl -u aidecheck --no-pager -n 20", "sed -n '1,40p' /etc/default/aide",
		"systemctl status aidecheck.timer --no-pager", "find /etc/aide -name '*.conf'"}
	return vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply(fmt.Sprintf("%s # try %d", cmds[c.Attempt%len(cmds)], c.Attempt), "look again")}}
}

// compactionStart records the turn of the first distillation.
type compactionStart struct {
	mu   sync.Mutex
	turn int
}

func (c *compactionStart) Observe(e memory.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.Kind == memory.EventDistill && c.turn == 0 {
		c.turn = e.Turn
	}
}

// BenchmarkCacheShareProduction runs one rule shaped like production — a
// rule description long enough to bring the instruction near its share of
// the budget, tool outputs of 50–200 tokens, enough attempts that
// compression runs for more than 20 calls — against the vLLM simulator's
// prefix cache, and reports the share of prompt tokens served from it over
// all calls and over the calls after compression began, the prompt and
// prefilled tokens per attempt and the largest prompt:
//
//	go test ./worker -run '^$' -bench CacheShareProduction -benchtime 1x
func BenchmarkCacheShareProduction(b *testing.B) {
	m := qwen3(b)
	paths, _ := filepath.Glob("../testdata/outputs/*.txt")
	sort.Strings(paths)
	var outs []string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		outs = append(outs, string(data))
	}
	// A description of about 3,000 tokens: with the ban list and the rest
	// the instruction is near its 25% share (3,840 of 15,360).
	var desc strings.Builder
	for i := 0; m.CountText(desc.String()) < 3000; i++ {
		fmt.Fprintf(&desc, "AIDE must be configured to check file %d of the protected set (/etc/aide/aide.conf.d/%02d_rules), and its database must be rebuilt after any change to it. ", i, i%70)
	}
	yaml := fmt.Sprintf("rules:\n  - id: aide_build_database\n    title: Build and Test AIDE Database\n    description: %q\n    check: \"test -f /var/lib/aide/aide.db\"\n    max_attempts: %d\n",
		desc.String(), *benchAttempts)
	set, err := rules.Parse("bench.yaml", []byte(yaml))
	if err != nil {
		b.Fatal(err)
	}
	r, _ := set.Get("aide_build_database")
	sc := vllmsim.NewModelCounter(m)
	for b.Loop() {
		sim, err := vllmsim.New(vllmsim.Config{Counter: sc, Policy: variedPolicy{}, PromptTokensDetails: true})
		if err != nil {
			b.Fatal(err)
		}
		hs := httptest.NewServer(sim.Handler())
		oc := openai.DefaultConfig("")
		oc.BaseURL = hs.URL + "/v1"
		start := &compactionStart{}
		w, err := worker.New(worker.Config{Chat: openai.NewClientWithConfig(oc), Model: m.With(sim.Model(), nil),
			Target:         shortOutputs{outs: outs, tok: m.Tokenizer(), large: *benchLarge},
			MemoryObserver: start, RefuseRepeats: -1, LowWaterPercent: *benchLowWater, OutputTokens: *benchOutput})
		if err != nil {
			b.Fatal(err)
		}
		out, err := w.Fix(context.Background(), r)
		hs.Close()
		if err != nil || out.Attempts != *benchAttempts {
			b.Fatalf("outcome %+v, err %v", out, err)
		}
		recs := sim.Stats().Completions()
		var prompt, cached, afterP, afterC, largest, after int
		for i, rec := range recs {
			prompt += rec.PromptTokens
			cached += rec.CachedTokens
			largest = max(largest, rec.PromptTokens)
			if start.turn > 0 && i+1 >= start.turn {
				after++
				afterP += rec.PromptTokens
				afterC += rec.CachedTokens
			}
		}
		n := float64(len(recs))
		b.ReportMetric(100*float64(cached)/float64(prompt), "%cached")
		b.ReportMetric(100*float64(afterC)/float64(max(afterP, 1)), "%cached-after-compression")
		b.ReportMetric(float64(after), "calls-after-compression")
		b.ReportMetric(float64(prompt)/n, "prompt-tokens/attempt")
		b.ReportMetric(float64(prompt-cached)/n, "prefilled/attempt")
		b.ReportMetric(float64(largest), "largest-prompt")
	}
}
