package lessons

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/distill"
)

// DefaultMaxFailed is the number of failed lessons a rule's end yields at
// most when RecorderConfig.MaxFailed is zero.
const DefaultMaxFailed = 5

// commandTokens is the budget of a command in a lesson: more than a history
// line's, since the command is what the next host repeats or avoids.
const commandTokens = 96

// RecorderConfig configures a Recorder. Store is required.
type RecorderConfig struct {
	// Store receives the lessons on Flush (required).
	Store Store
	// Host names the host whose worker the Recorder observes; it is stored
	// with the lessons. Empty is allowed.
	Host string
	// Counter counts tokens for the distilled lines' budgets; pass the
	// model's tokenizer. Nil means distill's estimate.
	Counter distill.Counter
	// MaxFailed caps the failed lessons of one rule's end (the latest
	// distinct ones are kept). Zero means DefaultMaxFailed; negative means
	// none are kept.
	MaxFailed int
	// Now stamps the lessons; nil means time.Now.
	Now func() time.Time
}

// Recorder is a nightshift.Observer that turns a rule's attempts into lessons
// when the rule ends, and stores them on Flush. Observe does no I/O. A
// Recorder observes one host's worker (events carry no host); it is safe for
// concurrent use, and rules may run concurrently on that worker.
type Recorder struct {
	cfg     RecorderConfig
	d       *distill.Distiller
	mu      sync.Mutex
	rules   map[string]*ruleLog
	pending []Lesson
}

type ruleLog struct {
	turns []turnLog
	cur   turnLog
}

type turnLog struct {
	attempt int
	steps   []distill.Step
	classes [][]string
	check   nightshift.CheckStatus
}

// NewRecorder returns a Recorder.
func NewRecorder(cfg RecorderConfig) (*Recorder, error) {
	if cfg.Store == nil {
		return nil, errors.New("new lessons recorder: Store is required")
	}
	if cfg.MaxFailed == 0 {
		cfg.MaxFailed = DefaultMaxFailed
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Recorder{cfg: cfg, d: distill.New(distill.Config{Counter: cfg.Counter, CommandTokens: commandTokens}), rules: map[string]*ruleLog{}}, nil
}

// Observe records one worker event.
func (r *Recorder) Observe(e nightshift.Event) {
	if e.Recipe != "" {
		return // a recipe replay: the recipe store keeps what it proved
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.Kind == nightshift.EventRuleStart {
		r.rules[e.Rule] = &ruleLog{}
		return
	}
	lg := r.rules[e.Rule]
	if lg == nil {
		lg = &ruleLog{}
		r.rules[e.Rule] = lg
	}
	if e.Attempt > 0 && lg.cur.attempt != e.Attempt && e.Kind != nightshift.EventRuleEnd {
		lg.cur = turnLog{attempt: e.Attempt}
	}
	switch e.Kind {
	case nightshift.EventCommand:
		if st, ok := stepOf(e); ok {
			lg.cur.steps = append(lg.cur.steps, st)
			lg.cur.classes = append(lg.cur.classes, e.Classes)
		}
	case nightshift.EventCheck:
		if e.Attempt > 0 {
			lg.cur.check = e.Check
		}
	case nightshift.EventAttempt:
		if lg.cur.attempt == e.Attempt && len(lg.cur.steps) > 0 {
			lg.turns = append(lg.turns, lg.cur)
		}
		lg.cur = turnLog{}
	case nightshift.EventRuleEnd:
		delete(r.rules, e.Rule)
		r.pending = append(r.pending, r.build(e, lg)...)
	default:
		// other events teach nothing
	}
}

// Pending returns the lessons not yet flushed.
func (r *Recorder) Pending() []Lesson {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Lesson(nil), r.pending...)
}

// Flush stores the pending lessons. On error they stay pending, to be
// flushed again.
func (r *Recorder) Flush(ctx context.Context) error {
	r.mu.Lock()
	batch := r.pending
	r.pending = nil
	r.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	if err := r.cfg.Store.Add(ctx, batch...); err != nil {
		r.mu.Lock()
		r.pending = append(batch, r.pending...)
		r.mu.Unlock()
		return fmt.Errorf("flush lessons: %w", err)
	}
	return nil
}

// stepOf maps a command event to a distiller step. Malformed and refused
// calls and give-ups teach nothing about the host and are left out.
func stepOf(e nightshift.Event) (distill.Step, bool) {
	st := distill.Step{Tool: nightshift.ToolApply, Command: e.Command, Action: e.Action}
	switch e.Action {
	case nightshift.ActionRan:
		if e.ExitCode != nil {
			st.ExitCode = *e.ExitCode
		}
	case nightshift.ActionBlocked:
		st.Note = e.Detail
	case nightshift.ActionTimedOut, nightshift.ActionUnknown:
	case nightshift.ActionNone, nightshift.ActionRefused, nightshift.ActionMalformed, nightshift.ActionGiveUp:
		return st, false
	default:
		return st, false
	}
	return st, e.Command != ""
}

// build writes the lessons of a rule that ended: the passing attempt (what
// worked), the other attempts (what failed and why), and a give-up's reason.
func (r *Recorder) build(e nightshift.Event, lg *ruleLog) []Lesson {
	o := e.Outcome
	if o == nil {
		return nil
	}
	base := Lesson{Rule: e.Rule, Host: r.cfg.Host, At: r.cfg.Now()}
	if e.Facts != nil {
		base.OS, base.PackageManager = e.Facts.OS, e.Facts.PackageManager
	}
	var out []Lesson
	var failed []string
	for _, t := range lg.turns {
		line := r.line(t)
		if t.check == nightshift.CheckPass && o.Status == nightshift.RuleFixed {
			l := base
			l.Kind, l.Text = Worked, "fixed in attempt "+strconv.Itoa(t.attempt)+": "+line
			out = append(out, l)
			continue
		}
		failed = append(failed, line)
	}
	if o.Status == nightshift.RuleGaveUp && strings.TrimSpace(o.Reason) != "" {
		failed = append(failed, "the model gave up after "+strconv.Itoa(o.Attempts)+" attempts: "+oneLine(o.Reason))
	}
	failed = latestDistinct(failed, r.cfg.MaxFailed)
	for _, f := range failed {
		l := base
		l.Kind, l.Text = Failed, f
		out = append(out, l)
	}
	return out
}

// line is the distilled line of a turn without its "[Turn N: …]" frame,
// with the error classes the worker found in the commands' output.
func (r *Recorder) line(t turnLog) string {
	s := r.d.Summarize(distill.Turn{Number: t.attempt, Steps: t.steps, Check: t.check})
	full := distill.Summary{Turn: s.Turn, Check: s.Check, GaveUp: s.GaveUp, Steps: s.Steps}
	for i := range full.Steps {
		if i < len(t.classes) && len(t.classes[i]) > 0 {
			full.Steps[i].Classes = nil
			for _, c := range t.classes[i] {
				full.Steps[i].Classes = append(full.Steps[i].Classes, distill.Class(c))
			}
		}
	}
	text := full.Line()
	if _, rest, ok := strings.Cut(text, ": "); ok && strings.HasPrefix(text, "[Turn ") {
		text = rest
	}
	return strings.TrimSuffix(text, "]")
}

// latestDistinct keeps the last n distinct strings, in order.
func latestDistinct(ss []string, n int) []string {
	if n <= 0 {
		return nil
	}
	seen := map[string]bool{}
	var rev []string
	for i := len(ss) - 1; i >= 0 && len(rev) < n; i-- {
		if !seen[ss[i]] {
			seen[ss[i]] = true
			rev = append(rev, ss[i])
		}
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}
