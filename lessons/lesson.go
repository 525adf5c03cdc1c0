package lessons

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nightshift-dev/nightshift/internal/textcut"
)

// Kind says whether a lesson is about what worked or what failed.
type Kind string

// The kinds of lesson.
const (
	Worked Kind = "worked" // the steps of the attempt whose re-check passed
	Failed Kind = "failed" // an attempt that did not fix the rule, or a give-up
)

// Defaults and bounds.
const (
	// DefaultLimit is the number of lessons a Query with Limit 0 returns.
	DefaultLimit = 20
	// MaxTextBytes bounds a lesson's text; Add cuts longer text.
	MaxTextBytes = 1000
)

// ErrInvalid is wrapped by Add's errors for a lesson without a rule or text,
// or with an unknown kind. Nothing of the batch is stored then.
var ErrInvalid = errors.New("invalid lesson")

// ErrSchema is wrapped when a SQLite file holds a lessons schema newer than
// this package knows.
var ErrSchema = errors.New("unsupported lessons schema")

// Lesson is one line learned when a rule ended on a host.
type Lesson struct {
	Rule string `json:"rule"`
	Kind Kind   `json:"kind"`
	// Text is the lesson, one line: a distilled turn such as
	// "ran `apt-get install -y aide` — exit 100: dpkg lock held;
	// re-check failed".
	Text string `json:"text"`
	// Host, OS and PackageManager say where it was learned (the worker's
	// HostFacts); empty or "unknown" when not known.
	Host           string `json:"host,omitempty"`
	OS             string `json:"os,omitempty"`
	PackageManager string `json:"package_manager,omitempty"`
	// At is when it was learned; Add uses the store's clock when zero.
	// Stores keep nanoseconds, in UTC.
	At time.Time `json:"at"`
	// Seen is set by Store.Lessons: how many stored lessons of the rule
	// have this text.
	Seen int `json:"seen,omitempty"`
}

// Line renders the lesson for an instruction, e.g.
// "worked on Debian GNU/Linux 12 (bookworm), apt-get (seen 3 times): ran 'x'; re-check passed".
func (l Lesson) Line() string {
	var b strings.Builder
	b.WriteString(string(l.Kind))
	var where []string
	if known(l.OS) {
		where = append(where, l.OS)
	}
	if known(l.PackageManager) {
		where = append(where, l.PackageManager)
	}
	if len(where) > 0 {
		b.WriteString(" on ")
		b.WriteString(strings.Join(where, ", "))
	}
	if l.Seen > 1 {
		fmt.Fprintf(&b, " (seen %d times)", l.Seen)
	}
	b.WriteString(": ")
	b.WriteString(l.Text)
	return b.String()
}

// Query asks for the lessons of one rule, ranked for a host.
type Query struct {
	Rule string
	// OS and PackageManager describe the host the lessons are for; lessons
	// learned on a host with the same OS, then the same package manager,
	// rank first. Empty or "unknown" matches nothing.
	OS, PackageManager string
	// Limit caps the lessons returned; 0 means DefaultLimit, negative means
	// no limit.
	Limit int
}

// Store keeps lessons. Lessons returns the rule's lessons ranked: those
// learned on a host with the same OS and package manager first, then the same
// OS, then the same package manager, then the rest; within each, what worked
// before what failed, then newest first, then the last added first. Lessons
// with identical text are returned once, at the rank of their best copy, with
// Seen counting the copies. The ranking is deterministic and the same for
// every implementation. Implementations are safe for concurrent use.
type Store interface {
	Add(ctx context.Context, ls ...Lesson) error
	Lessons(ctx context.Context, q Query) ([]Lesson, error)
}

func known(s string) bool { return s != "" && s != "unknown" }

// normalize validates l and brings it to its stored form.
func normalize(l Lesson, now func() time.Time) (Lesson, error) {
	l.Rule = strings.TrimSpace(l.Rule)
	l.Text = oneLine(l.Text)
	switch {
	case l.Rule == "":
		return l, fmt.Errorf("%w: empty rule", ErrInvalid)
	case l.Text == "":
		return l, fmt.Errorf("%w: rule %s: empty text", ErrInvalid, l.Rule)
	case l.Kind != Worked && l.Kind != Failed:
		return l, fmt.Errorf("%w: rule %s: kind %q is neither %q nor %q", ErrInvalid, l.Rule, l.Kind, Worked, Failed)
	}
	l.Text = textcut.Head(l.Text, MaxTextBytes)
	if l.At.IsZero() {
		l.At = now()
	}
	l.At = time.Unix(0, l.At.UnixNano()).UTC()
	l.Seen = 0
	return l, nil
}

// oneLine joins the fields of s with single spaces and drops invalid UTF-8.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ToValidUTF8(s, "")), " ")
}

// match scores how well a lesson's host matches the query's: 3 for the same
// OS and package manager, 2 for the same OS, 1 for the same package manager.
func match(l Lesson, q Query) int {
	m := 0
	if known(q.OS) && l.OS == q.OS {
		m += 2
	}
	if known(q.PackageManager) && l.PackageManager == q.PackageManager {
		m++
	}
	return m
}

func limitOf(q Query) int {
	switch {
	case q.Limit == 0:
		return DefaultLimit
	case q.Limit < 0:
		return -1
	}
	return q.Limit
}
