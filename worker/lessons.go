package worker

import (
	"context"
	"strings"

	"github.com/nightshift-dev/nightshift/distill"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/internal/textcut"
)

// LessonSource supplies lessons for a rule on a host like the one the
// worker probed: one line each, most relevant first. Fix calls it once per
// rule, after the probe; an error is logged and the rule goes on without
// lessons.
type LessonSource interface {
	Lessons(ctx context.Context, rule string, facts nightshift.HostFacts) ([]string, error)
}

// lessonsHeading introduces the lessons in the instruction.
const lessonsHeading = "\nLessons from earlier attempts at this rule on other hosts and in earlier runs, most relevant first " +
	"(repeat what worked where it applies; do not repeat what failed):\n"

// maxLessonBytes bounds one lesson line in the instruction; longer lines are
// cut, with an ellipsis.
const maxLessonBytes = 600

// lessons asks the configured source for the rule's lessons.
func (w *Worker) lessons(ctx context.Context, rule string, f *nightshift.HostFacts) []string {
	if w.cfg.Lessons == nil || f == nil {
		return nil
	}
	ls, err := w.cfg.Lessons.Lessons(ctx, rule, *f)
	if err != nil {
		w.log().Warn("lessons unavailable; going on without them", "rule", rule, "err", err)
		return nil
	}
	return ls
}

// withLessons appends to the instruction s as many whole lessons, in order,
// as keep it within maxTokens (counted with the model's tokenizer). s itself
// already fits.
func (w *Worker) withLessons(s string, lessons []string, maxTokens int) string {
	var lines []string
	for _, l := range lessons {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" {
			continue
		}
		lines = append(lines, "- "+textcut.Head(l, maxLessonBytes)+"\n")
	}
	if len(lines) == 0 {
		return s
	}
	render := func(n int) string {
		return s + lessonsHeading + strings.Join(lines[:n], "")
	}
	fits := func(n int) bool { return w.cfg.Model.CountText(render(n)) <= maxTokens }
	// The largest n that fits, by binary search: the count grows with n.
	lo, hi := 0, len(lines)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if lo == 0 {
		return s
	}
	return render(lo)
}

// classes names the error classes in a command's output for the command
// event.
func classes(ex nightshift.Exec, err error) []string {
	code := ex.ExitCode
	if err != nil || ex.TimedOut {
		code = 0
	}
	out := ex.Stderr
	if ex.Stdout != "" {
		out = strings.TrimSuffix(out+"\n"+ex.Stdout, "\n")
	}
	cs := distill.ClassifyError(out, code)
	if len(cs) == 0 {
		return nil
	}
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return s
}
