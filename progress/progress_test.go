package progress

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/internal/goldenfile"

	"github.com/nightshift-dev/nightshift"
)

// clock is a manual clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// night drives a Progress through a small batch: three hosts, one of which
// goes down, with worker events for attempts.
func night(p *Progress, clk *clock) {
	p.Plan("web-1", 3)
	p.Plan("web-2", 2)
	p.Plan("db-1.example.com", 2)
	w1, w2 := p.Observer("web-1"), p.Observer("web-2")
	call := func(o nightshift.Observer, rule string, attempt, prompt int) {
		o.Observe(nightshift.Event{Kind: nightshift.EventModelCall, Rule: rule, Attempt: attempt,
			Assessment: &budget.Assessment{Prompt: prompt, Limit: 16352, Reserve: 1024}})
	}
	attempt := func(o nightshift.Observer, rule string, attempt int, check nightshift.CheckStatus, prompt int) {
		o.Observe(nightshift.Event{Kind: nightshift.EventAttempt, Rule: rule, Attempt: attempt, Check: check, PromptTokens: prompt})
	}
	p.RuleStarted("web-1", "sshd_disable_root_login")
	p.RuleStarted("web-2", "aide_build_database")
	p.RuleStarted("db-1.example.com", "sshd_disable_root_login")
	clk.advance(2 * time.Second)
	call(w1, "sshd_disable_root_login", 1, 1834)
	call(w2, "aide_build_database", 1, 2210)
	clk.advance(10 * time.Second)
	attempt(w1, "sshd_disable_root_login", 1, nightshift.CheckPass, 1834)
	p.RuleEnded("web-1", "sshd_disable_root_login", nightshift.RuleFixed)
	p.HostDown("db-1.example.com", errors.New("dial tcp 10.0.0.9:22: connect: connection refused"))
	p.RuleStarted("web-1", "accounts_tmout")
	attempt(w2, "aide_build_database", 1, nightshift.CheckFail, 2210)
	clk.advance(100 * time.Millisecond)
	call(w2, "aide_build_database", 2, 4410) // within the interval: no live redraw
	clk.advance(30 * time.Second)
	p.Tick()
	p.RuleEnded("web-1", "accounts_tmout", nightshift.RuleCompliant)
	p.RuleStarted("web-1", "grub2_password")
	call(w1, "grub2_password", 1, 1500)
	w1.Observe(nightshift.Event{Kind: nightshift.EventRejected, Rule: "grub2_password", Attempt: 1, ServerTokens: 16400, LocalTokens: 15200})
	attempt(w1, "grub2_password", 1, nightshift.CheckNotRun, 1500)
	clk.advance(75 * time.Second)
	attempt(w2, "aide_build_database", 2, nightshift.CheckPass, 4410)
	p.RuleEnded("web-2", "aide_build_database", nightshift.RuleFixed)
	p.RuleEnded("web-1", "grub2_password", nightshift.RuleGaveUp)
	p.RuleStarted("web-2", "audit_rules")
	clk.advance(4 * time.Minute)
	p.RuleEnded("web-2", "audit_rules", nightshift.RuleNotFixed)
}

func TestGolden(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
	}{
		{"plain", Config{Mode: Plain}},
		{"live", Config{Mode: Live, Width: 80}},
		{"live-narrow-2-hosts", Config{Mode: Live, Width: 40, HostLines: 2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			clk := &clock{t: time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC)}
			c.cfg.Out, c.cfg.Now = &out, clk.now
			p, err := New(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if p.Live() != (c.cfg.Mode == Live) {
				t.Fatalf("Live() = %v", p.Live())
			}
			night(p, clk)
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			p.RuleStarted("web-1", "after_close") // ignored
			golden(t, c.name+".golden", out.Bytes())
			if c.cfg.Mode != Live {
				return
			}
			// The screen a terminal shows at the end: the block redrawn in
			// place, nothing scrolled, every line within the width.
			screen := emulate(t, out.String())
			golden(t, c.name+".screen.golden", []byte(strings.Join(screen, "\n")+"\n"))
			for i, l := range screen {
				if n := len([]rune(l)); n >= c.cfg.Width {
					t.Errorf("screen line %d has %d columns, width %d", i, n, c.cfg.Width)
				}
			}
			if !strings.HasPrefix(screen[0], "5/7 rules · elapsed 5m57s · ETA 0s") {
				t.Errorf("final summary line: %q", screen[0])
			}
		})
	}
}

// TestLiveThrottle: worker events redraw at most once per Interval; rule
// starts and ends, Tick and Close always do.
func TestLiveThrottle(t *testing.T) {
	var out bytes.Buffer
	clk := &clock{t: time.Unix(0, 0)}
	p, err := New(Config{Out: &out, Mode: Live, Now: clk.now, Interval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	frames := func() int { return strings.Count(out.String(), "\r\x1b[2K") }
	p.Plan("h", 1)
	p.RuleStarted("h", "r")
	o := p.Observer("h")
	before := frames()
	for i := 0; i < 9; i++ { // 9 events in 900 ms
		clk.advance(100 * time.Millisecond)
		o.Observe(nightshift.Event{Kind: nightshift.EventModelCall, Rule: "r", Attempt: i + 1})
	}
	lines := 2 // summary and one host
	if got := (frames() - before) / lines; got != 0 {
		t.Fatalf("%d redraws within the interval, want 0", got)
	}
	clk.advance(200 * time.Millisecond)
	o.Observe(nightshift.Event{Kind: nightshift.EventModelCall, Rule: "r", Attempt: 10})
	if got := (frames() - before) / lines; got != 1 {
		t.Fatalf("%d redraws after the interval, want 1", got)
	}
	if !strings.Contains(emulate(t, out.String())[1], "attempt 10") {
		t.Fatalf("the redraw does not show attempt 10:\n%q", emulate(t, out.String()))
	}
}

func TestAutoIsPlainOffTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, out := range map[string]any{"buffer": &bytes.Buffer{}, "pipe": w} {
		cfg := Config{}
		switch o := out.(type) {
		case *bytes.Buffer:
			cfg.Out = o
		case *os.File:
			cfg.Out = o
		}
		p, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if p.Live() {
			t.Errorf("%s: Auto chose live output", name)
		}
	}
}

func TestNewRejects(t *testing.T) {
	for _, c := range []Config{{Mode: 7}, {Interval: -1}, {Width: -1}, {HostLines: -3}} {
		if _, err := New(c); !errors.Is(err, ErrConfig) {
			t.Errorf("New(%+v) = %v, want ErrConfig", c, err)
		}
	}
}

type brokenWriter struct{ n int }

func (b *brokenWriter) Write(p []byte) (int, error) {
	b.n++
	return 0, errors.New("broken pipe")
}

func TestWriteErrorStopsOutput(t *testing.T) {
	for _, mode := range []Mode{Plain, Live} {
		w := &brokenWriter{}
		clk := &clock{t: time.Unix(0, 0)}
		p, err := New(Config{Out: w, Mode: mode, Now: clk.now})
		if err != nil {
			t.Fatal(err)
		}
		night(p, clk)
		if err := p.Close(); err == nil || !strings.Contains(err.Error(), "broken pipe") {
			t.Errorf("mode %d: Close() = %v, want the write error", mode, err)
		}
		if w.n != 1 {
			t.Errorf("mode %d: %d writes after the first failed, want none", mode, w.n-1)
		}
	}
}

// TestConcurrent: many hosts' workers and the batch report at once (run
// with -race); the totals add up.
func TestConcurrent(t *testing.T) {
	var out bytes.Buffer
	clk := &clock{t: time.Unix(0, 0)}
	p, err := New(Config{Out: &out, Mode: Live, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for h := 0; h < 8; h++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := "host-" + strconv.Itoa(h)
			p.Plan(name, 25)
			o := p.Observer(name)
			for r := 0; r < 25; r++ {
				rule := fmt.Sprintf("rule-%d", r)
				p.RuleStarted(name, rule)
				o.Observe(nightshift.Event{Kind: nightshift.EventModelCall, Rule: rule, Attempt: 1})
				clk.advance(time.Second)
				p.RuleEnded(name, rule, nightshift.RuleFixed)
			}
		}()
	}
	go p.Tick()
	wg.Wait()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if s := emulate(t, out.String())[0]; !strings.HasPrefix(s, "200/200 rules ·") || !strings.Contains(s, "200 fixed or compliant, 0 not") {
		t.Fatalf("summary %q", s)
	}
}

func TestCut(t *testing.T) {
	cases := []struct {
		s    string
		w    int
		want string
	}{
		{"web-1", 10, "web-1"}, {"web-1", 5, "web-1"}, {"web-1", 4, "web…"}, {"▸ règle", 3, "▸ …"}, {"x", 1, "x"},
		{"xy", 1, "…"}, {"xy", 0, ""}, {"xy", -5, ""},
	}
	for _, c := range cases {
		if got := cut(c.s, c.w); got != c.want {
			t.Errorf("cut(%q, %d) = %q, want %q", c.s, c.w, got, c.want)
		}
	}
	// A one-column terminal still gets a block, of empty lines.
	var out bytes.Buffer
	clk := &clock{t: time.Unix(0, 0)}
	p, err := New(Config{Out: &out, Mode: Live, Width: 1, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	night(p, clk)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if s := emulate(t, out.String()); len(s) != 0 {
		t.Fatalf("width 1: %q", s)
	}
}

func TestShort(t *testing.T) {
	cases := map[time.Duration]string{0: "0s", -time.Second: "0s", 1499 * time.Millisecond: "1s", 61 * time.Second: "1m01s",
		3725 * time.Second: "1h02m"}
	for d, want := range cases {
		if got := short(d); got != want {
			t.Errorf("short(%v) = %q, want %q", d, got, want)
		}
	}
}

// emulate plays the output on a minimal terminal (CR, LF, erase line,
// cursor up) and returns its lines, trailing blank lines removed.
func emulate(t *testing.T, s string) []string {
	t.Helper()
	var screen [][]rune
	row, col := 0, 0
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		for len(screen) <= row {
			screen = append(screen, nil)
		}
		switch c := rs[i]; c {
		case '\r':
			col = 0
		case '\n':
			row++
		case '\x1b':
			j := i + 2
			for j < len(rs) && rs[j] >= '0' && rs[j] <= '9' {
				j++
			}
			if i+1 >= len(rs) || rs[i+1] != '[' || j >= len(rs) {
				t.Fatalf("bad escape at %d: %q", i, string(rs[i:min(i+8, len(rs))]))
			}
			n := 1
			if j > i+2 {
				n, _ = strconv.Atoi(string(rs[i+2 : j]))
			}
			switch rs[j] {
			case 'A':
				row -= n
				if row < 0 {
					t.Fatalf("cursor moved above the first line")
				}
			case 'K':
				screen[row] = nil
			default:
				t.Fatalf("unexpected escape %q", string(rs[i:j+1]))
			}
			i = j
		default:
			for len(screen[row]) < col {
				screen[row] = append(screen[row], ' ')
			}
			if col < len(screen[row]) {
				screen[row][col] = c
			} else {
				screen[row] = append(screen[row], c)
			}
			col++
		}
	}
	var out []string
	for _, l := range screen {
		out = append(out, string(l))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got)
}

// fault: progress-unknown-command
// An attempt that ends without a check says why: nothing ran (blocked,
// refused, malformed), or a command ran whose outcome is unknown (its
// connection dropped, a stop killed it) — not "nothing ran" for both.
func TestAttemptWithoutCheck(t *testing.T) {
	tests := []struct {
		name     string
		commands []nightshift.Event
		want     string
	}{
		{"blocked", []nightshift.Event{{Kind: nightshift.EventCommand, Action: nightshift.ActionBlocked, Command: "rm -rf /"}}, "attempt 1: nothing ran (prompt"},
		{"outcome unknown", []nightshift.Event{{Kind: nightshift.EventCommand, Action: nightshift.ActionUnknown, Command: "sleep 3",
			Error: "sshexec: 127.0.0.1:22: connection lost\nmid-command: outcome unknown"}},
			"attempt 1: a command ran, outcome unknown (sshexec: 127.0.0.1:22: connection lost mid-command: outcome unknown); not re-checked (prompt"},
		{"unknown then a new attempt blocked", nil, "attempt 2: nothing ran (prompt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			p, err := New(Config{Out: &out, Mode: Plain})
			if err != nil {
				t.Fatal(err)
			}
			p.Plan("web-1", 1)
			p.RuleStarted("web-1", "r")
			o := p.Observer("web-1")
			attempt := 1
			if tt.commands == nil { // an unknown command in attempt 1, nothing in attempt 2
				tt.commands = []nightshift.Event{{Kind: nightshift.EventCommand, Action: nightshift.ActionUnknown, Error: "connection lost"}}
				o.Observe(nightshift.Event{Kind: nightshift.EventModelCall, Rule: "r", Attempt: 1})
				for _, e := range tt.commands {
					e.Rule, e.Attempt = "r", 1
					o.Observe(e)
				}
				o.Observe(nightshift.Event{Kind: nightshift.EventAttempt, Rule: "r", Attempt: 1, Check: nightshift.CheckNotRun})
				tt.commands, attempt = []nightshift.Event{{Kind: nightshift.EventCommand, Action: nightshift.ActionRefused}}, 2
			}
			o.Observe(nightshift.Event{Kind: nightshift.EventModelCall, Rule: "r", Attempt: attempt})
			for _, e := range tt.commands {
				e.Rule, e.Attempt = "r", attempt
				o.Observe(e)
			}
			o.Observe(nightshift.Event{Kind: nightshift.EventAttempt, Rule: "r", Attempt: attempt, Check: nightshift.CheckNotRun})
			if !strings.Contains(out.String(), tt.want) {
				t.Errorf("progress:\n%s\nwant a line with %q", out.String(), tt.want)
			}
		})
	}
}
