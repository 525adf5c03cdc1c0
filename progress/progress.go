package progress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/nightshift-dev/nightshift/internal/textcut"

	"github.com/nightshift-dev/nightshift"
)

// Mode selects how progress is written.
type Mode int

// The modes. The zero value is Auto.
const (
	// Auto is Live when Config.Out is a terminal, else Plain.
	Auto Mode = iota
	// Live redraws a status block in place with ANSI escape sequences.
	Live
	// Plain writes one line per event, for logs and pipes.
	Plain
)

// Defaults applied by New to zero Config fields.
const (
	DefaultInterval  = 250 * time.Millisecond
	DefaultWidth     = 100
	DefaultHostLines = 20
)

// ErrConfig is wrapped by New's errors.
var ErrConfig = errors.New("invalid progress configuration")

// Config configures a Progress. The zero value writes to os.Stderr.
type Config struct {
	// Out receives the progress; nil means os.Stderr.
	Out io.Writer
	// Mode is Auto (the zero value), Live or Plain. Auto asks
	// golang.org/x/term whether Out is a terminal.
	Mode Mode
	// Now is the clock for elapsed times and the ETA; nil means time.Now.
	Now func() time.Time
	// Interval is the least time between two live redraws caused by worker
	// events; a rule's start or end and Tick always redraw. Zero means
	// DefaultInterval (250 ms).
	Interval time.Duration
	// Width is the terminal width live lines are cut to. Zero means the
	// terminal's width, or DefaultWidth (100) when it cannot be read.
	Width int
	// HostLines caps the host lines of the live block; running hosts are
	// shown first. Zero means DefaultHostLines (20).
	HostLines int
}

// Progress shows the progress of a batch: rules done of total per host, the
// current rule and attempt, elapsed time and an ETA. It is safe for
// concurrent use; output is written under its lock, one whole update at a
// time.
type Progress struct {
	mu       sync.Mutex
	cfg      Config
	live     bool
	start    time.Time
	hosts    []*host
	byName   map[string]*host
	drawn    int       // lines of the live block on screen
	lastDraw time.Time // of the live block
	closed   bool
	err      error // the first write error
}

type host struct {
	name                string
	total, done         int
	fixed, failed       int // failed: ended neither fixed nor compliant
	rule                string
	attempt             int
	ruleStart           time.Time
	down                string
	prompt, promptLimit int
	// unknown describes the current attempt's command that was started
	// and whose outcome is unknown (its connection dropped, it was killed
	// by a stop): the attempt then ends without a check, which is not
	// "nothing ran".
	unknown string
}

// New returns a Progress; the clock starts now.
func New(cfg Config) (*Progress, error) {
	if cfg.Out == nil {
		cfg.Out = os.Stderr
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Interval < 0 || cfg.Width < 0 || cfg.HostLines < 0 {
		return nil, fmt.Errorf("%w: Interval, Width and HostLines must not be negative", ErrConfig)
	}
	if cfg.Interval == 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.HostLines == 0 {
		cfg.HostLines = DefaultHostLines
	}
	fd, isFile := terminalFd(cfg.Out)
	live := false
	switch cfg.Mode {
	case Auto:
		live = isFile && term.IsTerminal(fd)
	case Live:
		live = true
	case Plain:
	default:
		return nil, fmt.Errorf("%w: unknown mode %d", ErrConfig, cfg.Mode)
	}
	if cfg.Width == 0 {
		cfg.Width = DefaultWidth
		if isFile {
			if w, _, err := term.GetSize(fd); err == nil && w > 0 {
				cfg.Width = w
			}
		}
	}
	return &Progress{cfg: cfg, live: live, start: cfg.Now(), byName: map[string]*host{}}, nil
}

func terminalFd(w io.Writer) (int, bool) {
	f, ok := w.(*os.File)
	if !ok {
		return 0, false
	}
	return int(f.Fd()), true
}

// Live reports whether the status is redrawn in place.
func (p *Progress) Live() bool { return p.live }

// Err returns the first error writing to Out; later output is dropped.
func (p *Progress) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (p *Progress) host(name string) *host {
	h := p.byName[name]
	if h == nil {
		h = &host{name: name}
		p.byName[name] = h
		p.hosts = append(p.hosts, h)
	}
	return h
}

// Plan adds rules to a host's total (hosts are shown in the order first
// planned). Negative counts are ignored.
func (p *Progress) Plan(hostName string, rules int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.host(hostName)
	if rules > 0 {
		h.total += rules
	}
	p.update(fmt.Sprintf("%s: %d %s planned", hostName, h.total, plural(h.total, "rule", "rules")), true)
}

// RuleStarted records that a host began a rule.
func (p *Progress) RuleStarted(hostName, rule string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.host(hostName)
	h.rule, h.attempt, h.ruleStart, h.prompt, h.promptLimit = rule, 0, p.cfg.Now(), 0, 0
	p.update(fmt.Sprintf("%s %s: started (rule %d of %d)", hostName, rule, h.done+1, max(h.total, h.done+1)), true)
}

// RuleEnded records that a host finished a rule with the given outcome.
func (p *Progress) RuleEnded(hostName, rule string, status nightshift.RuleStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.host(hostName)
	h.done++
	if status.Passed() {
		h.fixed++
	} else {
		h.failed++
	}
	took := ""
	if h.rule == rule && !h.ruleStart.IsZero() {
		took = " in " + short(p.cfg.Now().Sub(h.ruleStart))
		if h.attempt > 0 {
			took = fmt.Sprintf(" after %d %s%s", h.attempt, plural(h.attempt, "attempt", "attempts"), took)
		}
	}
	if h.rule == rule {
		h.rule, h.attempt, h.ruleStart = "", 0, time.Time{}
	}
	done, total := p.totals()
	p.update(fmt.Sprintf("%s %s: %s%s (%d/%d rules, ETA %s)", hostName, rule, status, took, done, total, p.eta()), true)
}

// HostDown records that a host stopped answering; its remaining rules are
// skipped.
func (p *Progress) HostDown(hostName string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.host(hostName)
	h.down = "unreachable"
	if err != nil {
		h.down += ": " + err.Error()
	}
	h.rule, h.attempt = "", 0
	p.update(fmt.Sprintf("%s: %s", hostName, h.down), true)
}

// Observer returns a nightshift.Observer for one host's worker: it follows the
// current attempt and the prompt's size.
func (p *Progress) Observer(hostName string) nightshift.Observer {
	return observer{p, hostName}
}

type observer struct {
	p    *Progress
	host string
}

func (o observer) Observe(e nightshift.Event) {
	p := o.p
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.host(o.host)
	switch e.Kind {
	case nightshift.EventModelCall:
		if e.Attempt > 0 && (e.Rule == h.rule || h.rule == "") {
			h.attempt = e.Attempt
		}
		h.unknown = ""
		if a := e.Assessment; a != nil {
			h.prompt, h.promptLimit = a.Prompt, a.Limit-a.Reserve
		}
		p.update("", false)
	case nightshift.EventAttempt:
		if e.Rule == h.rule || h.rule == "" {
			h.attempt = max(h.attempt, e.Attempt)
		}
		check := e.Check.String()
		switch {
		case e.Action == nightshift.ActionGiveUp:
			check = nightshift.ActionGiveUp.String()
		case e.Check == nightshift.CheckNotRun && h.unknown != "":
			check = h.unknown + "; not re-checked"
		case e.Check == nightshift.CheckNotRun:
			check = "nothing ran"
		}
		h.unknown = ""
		p.update(fmt.Sprintf("%s %s: attempt %d: %s (prompt %d tokens)", o.host, e.Rule, e.Attempt, check, e.PromptTokens), false)
	case nightshift.EventCommand:
		if e.Action == nightshift.ActionUnknown {
			h.unknown = "a command ran, outcome unknown"
			if e.Error != "" {
				h.unknown += " (" + oneLine(e.Error, 120) + ")"
			}
		}
	case nightshift.EventRejected:
		p.update(fmt.Sprintf("%s %s: attempt %d: prompt rejected as too long (server %d tokens, ours %d)",
			o.host, e.Rule, e.Attempt, e.ServerTokens, e.LocalTokens), false)
	default:
		// other events do not change the status line
	}
}

// Tick redraws the live status (elapsed time and ETA move on); it does
// nothing in plain mode.
func (p *Progress) Tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live && !p.closed {
		p.draw()
	}
}

// Run calls Tick every interval until ctx is done, and returns ctx.Err().
func (p *Progress) Run(ctx context.Context, every time.Duration) error {
	if every <= 0 {
		every = time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			p.Tick()
		}
	}
}

// Close draws the final status (live) or writes a summary line (plain).
// Later updates are ignored. It returns the first write error.
func (p *Progress) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return p.err
	}
	if p.live {
		p.draw()
		p.write("\n")
	} else {
		p.write(p.stamp() + p.summary() + "\n")
	}
	p.closed = true
	return p.err
}

// update records a change: a plain line (if line is not empty) or a live
// redraw (always when force, else at most every Interval).
func (p *Progress) update(line string, force bool) {
	if p.closed {
		return
	}
	if !p.live {
		if line != "" {
			p.write(p.stamp() + line + "\n")
		}
		return
	}
	if force || p.cfg.Now().Sub(p.lastDraw) >= p.cfg.Interval {
		p.draw()
	}
}

func (p *Progress) write(s string) {
	if p.err != nil {
		return
	}
	if _, err := io.WriteString(p.cfg.Out, s); err != nil {
		p.err = fmt.Errorf("write progress: %w", err)
	}
}

func (p *Progress) totals() (done, total int) {
	for _, h := range p.hosts {
		done += h.done
		total += max(h.total, h.done)
	}
	return done, total
}

// eta extrapolates the elapsed time over the rules left: the hosts work in
// parallel, so the batch's own rate is the one that counts. Rules of hosts
// that are down are not waited for.
func (p *Progress) eta() string {
	done, left := 0, 0
	for _, h := range p.hosts {
		done += h.done
		if h.down == "" {
			left += max(h.total-h.done, 0)
		}
	}
	switch {
	case left == 0:
		return "0s"
	case done == 0:
		return "unknown"
	}
	el := p.cfg.Now().Sub(p.start)
	return short(time.Duration(float64(el) / float64(done) * float64(left)))
}

// oneLine is s on one line, at most n runes (textcut.Head's "…" past it).
func oneLine(s string, n int) string {
	return textcut.Head(strings.Join(strings.Fields(s), " "), n)
}
