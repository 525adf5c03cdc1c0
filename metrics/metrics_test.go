package metrics

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/internal/goldenfile"

	"github.com/nightshift-dev/nightshift"
)

func code(n int) *int { return &n }

// fixedRule is the events of a rule fixed in attempt 2, with one context
// rejection and one retry in attempt 1.
func fixedRule(rule string, prompts ...int) []nightshift.Event {
	ev := []nightshift.Event{{Kind: nightshift.EventRuleStart, Rule: rule}, {Kind: nightshift.EventCheck, Rule: rule, Check: nightshift.CheckFail}}
	call := func(a, p int) nightshift.Event {
		return nightshift.Event{Kind: nightshift.EventModelCall, Rule: rule, Attempt: a, Assessment: &budget.Assessment{Prompt: p}}
	}
	ev = append(ev,
		call(1, prompts[0]),
		nightshift.Event{Kind: nightshift.EventRetry, Rule: rule, Attempt: 1, Error: "503"},
		nightshift.Event{Kind: nightshift.EventRejected, Rule: rule, Attempt: 1, ServerTokens: 16000, LocalTokens: prompts[0]},
		call(1, prompts[1]),
		nightshift.Event{Kind: nightshift.EventModelUsage, Rule: rule, Attempt: 1, UsagePrompt: prompts[1], CachedTokens: prompts[1] / 2},
		nightshift.Event{Kind: nightshift.EventCommand, Rule: rule, Attempt: 1, Command: "rm -rf /", Action: nightshift.ActionBlocked},
		nightshift.Event{Kind: nightshift.EventCommand, Rule: rule, Attempt: 1, Command: "true", Action: nightshift.ActionRan, ExitCode: code(0)},
		nightshift.Event{Kind: nightshift.EventCheck, Rule: rule, Attempt: 1, Check: nightshift.CheckFail},
		nightshift.Event{Kind: nightshift.EventAttempt, Rule: rule, Attempt: 1, Check: nightshift.CheckFail},
		call(2, prompts[2]),
		nightshift.Event{Kind: nightshift.EventModelUsage, Rule: rule, Attempt: 2, UsagePrompt: prompts[2], CachedTokens: prompts[1] / 16 * 16},
		nightshift.Event{Kind: nightshift.EventCommand, Rule: rule, Attempt: 2, Command: "fix", Action: nightshift.ActionRan, ExitCode: code(0)},
		nightshift.Event{Kind: nightshift.EventCheck, Rule: rule, Attempt: 2, Check: nightshift.CheckPass},
		nightshift.Event{Kind: nightshift.EventAttempt, Rule: rule, Attempt: 2, Check: nightshift.CheckPass},
		nightshift.Event{Kind: nightshift.EventRuleEnd, Rule: rule, Outcome: &nightshift.Outcome{Status: nightshift.RuleFixed, Attempts: 2}})
	return ev
}

func scrape(t *testing.T, h http.Handler) (map[string]*dto.MetricFamily, []byte) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("scrape: %d %v", resp.StatusCode, err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse the scrape: %v\n%s", err, body)
	}
	return fams, body
}

// value returns the counter, gauge or histogram count of the series of fam
// whose labels include want.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func TestObserverScrape(t *testing.T) {
	twoRules := append(fixedRule("a", 1000, 900, 3000), fixedRule("b", 20000, 15000, 15500)...)
	open := []nightshift.Event{{Kind: nightshift.EventRuleStart, Rule: "c"}, {Kind: nightshift.EventRuleStart, Rule: "d"},
		{Kind: nightshift.EventAttempt, Rule: "c", Attempt: 1},
		{Kind: nightshift.EventCommand, Rule: "c", Attempt: 2, Action: nightshift.ActionGiveUp},
		{Kind: nightshift.EventAttempt, Rule: "c", Attempt: 2, Action: nightshift.ActionGiveUp},
		{Kind: nightshift.EventRuleEnd, Rule: "c", Outcome: &nightshift.Outcome{Status: nightshift.RuleGaveUp}},
		{Kind: nightshift.EventDistillFallback, Rule: "c", Attempt: 1, Fallback: "claim"},
		{Kind: nightshift.EventDistillFallback, Rule: "d", Attempt: 1, Fallback: "claim"},
		{Kind: nightshift.EventDistillFallback, Rule: "d", Attempt: 2, Fallback: "request"},
		// bad input: counted where it can be, never a panic
		{Kind: nightshift.EventModelCall}, {Kind: "nonsense"}, {Kind: nightshift.EventCommand}}
	cases := []struct {
		name   string
		events []nightshift.Event
		want   []struct {
			metric string
			labels map[string]string
			v      float64
		}
	}{
		{"nothing yet", nil, []struct {
			metric string
			labels map[string]string
			v      float64
		}{
			{"nightshift_attempts_total", map[string]string{"result": "pass"}, 0},
			{"nightshift_fixes_total", nil, 0},
			{"nightshift_distill_fallbacks_total", map[string]string{"reason": "claim"}, 0},
			{"nightshift_prompt_tokens", nil, 0},
			{"nightshift_model_call_duration_seconds", map[string]string{"result": "ok"}, 0},
		}},
		{"two rules fixed", twoRules, []struct {
			metric string
			labels map[string]string
			v      float64
		}{
			{"nightshift_attempts_total", map[string]string{"result": "pass"}, 2},
			{"nightshift_attempts_total", map[string]string{"result": "fail"}, 2},
			{"nightshift_fixes_total", nil, 2},
			{"nightshift_rules_total", map[string]string{"status": "fixed"}, 2},
			{"nightshift_context_rejections_total", nil, 2},
			{"nightshift_model_retries_total", nil, 2},
			{"nightshift_commands_total", map[string]string{"action": "ran"}, 4},
			{"nightshift_commands_total", map[string]string{"action": "blocked"}, 2},
			{"nightshift_prompt_tokens", nil, 6},
			{"nightshift_rules_in_progress", nil, 0},
		}},
		{"rules in progress, give-up, bad events", open, []struct {
			metric string
			labels map[string]string
			v      float64
		}{
			{"nightshift_rules_in_progress", nil, 1}, // 2 started, 1 ended
			{"nightshift_rules_total", map[string]string{"status": "gave_up"}, 1},
			{"nightshift_attempts_total", map[string]string{"result": "none"}, 1},
			{"nightshift_attempts_total", map[string]string{"result": "give_up"}, 1},
			{"nightshift_commands_total", map[string]string{"action": "give_up"}, 1},
			{"nightshift_distill_fallbacks_total", map[string]string{"reason": "claim"}, 2},
			{"nightshift_distill_fallbacks_total", map[string]string{"reason": "request"}, 1},
			{"nightshift_distill_fallbacks_total", map[string]string{"reason": "oversize"}, 0},
			{"nightshift_prompt_tokens", nil, 0},
			{"nightshift_fixes_total", nil, 0},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := New(Config{NoRuntime: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range c.events {
				m.Observe(e)
			}
			fams, body := scrape(t, m.Handler())
			for _, w := range c.want {
				got, ok := value(fams, w.metric, w.labels)
				if !ok || got != w.v {
					t.Errorf("%s%v = %v (present: %v), want %v\n%s", w.metric, w.labels, got, ok, w.v, body)
				}
			}
		})
	}
}

// fakeClock advances by step at every reading.
type fakeClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

type fakeModel struct{ err error }

func (f fakeModel) CreateChatCompletion(context.Context, openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	return openai.ChatCompletionResponse{ID: "x"}, f.err
}

type fakeTarget struct{ err error }

func (f fakeTarget) Run(_ context.Context, cmd string) (nightshift.Exec, error) {
	return nightshift.Exec{Stdout: cmd}, f.err
}

// TestGolden: the whole exposition of a known run, with the wrappers timed
// by a clock that advances 1.5 s per reading (every call takes 1.5 s).
func TestGolden(t *testing.T) {
	clk := &fakeClock{t: time.Unix(0, 0), step: 1500 * time.Millisecond}
	m, err := New(Config{NoRuntime: true, Now: clk.now, ConstLabels: map[string]string{"run": "nightly"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range fixedRule("a", 1000, 900, 3000) {
		m.Observe(e)
	}
	ctx := context.Background()
	ok, bad := m.Model(fakeModel{}), m.Model(fakeModel{err: errors.New("503")})
	for i := 0; i < 3; i++ {
		if r, err := ok.CreateChatCompletion(ctx, openai.ChatCompletionRequest{}); err != nil || r.ID != "x" {
			t.Fatalf("the wrapper changed the reply: %+v %v", r, err)
		}
	}
	if _, err := bad.CreateChatCompletion(ctx, openai.ChatCompletionRequest{}); err == nil {
		t.Fatal("the wrapper lost the error")
	}
	tgt := m.Target(fakeTarget{})
	for _, cmd := range []string{"true", "sshd -t"} {
		if ex, err := tgt.Run(ctx, cmd); err != nil || ex.Stdout != cmd {
			t.Fatalf("the wrapper changed the result: %+v %v", ex, err)
		}
	}
	if _, err := m.Target(fakeTarget{err: errors.New("connection lost")}).Run(ctx, "x"); err == nil {
		t.Fatal("the wrapper lost the error")
	}
	fams, body := scrape(t, m.Handler())
	if v, _ := value(fams, "nightshift_model_call_duration_seconds", map[string]string{"result": "ok", "run": "nightly"}); v != 3 {
		t.Errorf("%v model calls observed, want 3", v)
	}
	if s := fams["nightshift_host_command_duration_seconds"].Metric[0].Histogram.GetSampleSum(); s != 1.5 {
		t.Errorf("error commands' latency sum %v, want 1.5", s)
	}
	// fixedRule("a", 1000, 900, 3000): 900 + 3000 prompt tokens answered,
	// 450 + 896 of them cached.
	if p, _ := value(fams, "nightshift_usage_prompt_tokens_total", nil); p != 3900 {
		t.Errorf("usage_prompt_tokens_total %v, want 3900", p)
	}
	if c, _ := value(fams, "nightshift_usage_cached_prompt_tokens_total", nil); c != 1346 {
		t.Errorf("usage_cached_prompt_tokens_total %v, want 1346", c)
	}
	golden(t, "scrape.golden.txt", body)
}

func TestNewRejectsBadBuckets(t *testing.T) {
	for _, c := range []Config{
		{PromptTokenBuckets: []float64{10, 5}},
		{LatencyBuckets: []float64{1, 1}},
	} {
		if _, err := New(c); !errors.Is(err, ErrConfig) {
			t.Errorf("New(%+v) = %v, want ErrConfig", c, err)
		}
	}
}

// TestRegistriesAreIndependent: two Metrics in one process, with the
// runtime collectors, neither sees the other's counts.
func TestRegistriesAreIndependent(t *testing.T) {
	a, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	a.Observe(nightshift.Event{Kind: nightshift.EventRejected})
	fa, _ := scrape(t, a.Handler())
	fb, _ := scrape(t, b.Handler())
	va, _ := value(fa, "nightshift_context_rejections_total", nil)
	vb, _ := value(fb, "nightshift_context_rejections_total", nil)
	if va != 1 || vb != 0 {
		t.Fatalf("rejections: a %v, b %v; want 1 and 0", va, vb)
	}
	if fa["go_goroutines"] == nil {
		t.Error("the Go runtime collector is missing")
	}
}

// TestConcurrentObserve: many hosts' workers reporting at once (run with
// -race) lose no count.
func TestConcurrentObserve(t *testing.T) {
	m, err := New(Config{NoRuntime: true})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				for _, e := range fixedRule("r", 100, 200, 300) {
					m.Observe(e)
				}
			}
		}()
	}
	wg.Wait()
	fams, _ := scrape(t, m.Handler())
	if v, _ := value(fams, "nightshift_fixes_total", nil); v != 400 {
		t.Fatalf("fixes %v, want 400", v)
	}
	if v, _ := value(fams, "nightshift_prompt_tokens", nil); v != 1200 {
		t.Fatalf("prompt observations %v, want 1200", v)
	}
}

func TestServe(t *testing.T) {
	m, err := New(Config{NoRuntime: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Serve(ctx, ln) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte("nightshift_fixes_total 0")) {
		t.Fatalf("GET /metrics: %d\n%s", resp.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve after cancel: %v", err)
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got)
}
