package memory

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift/internal/memv1/distill"
)

// group is one merged line covering turns[from:to].
type group struct {
	from, to int
	line     string
}

func itoa(n int) string { return strconv.Itoa(n) }

// grouped returns how many of the oldest turns are covered by group lines.
func (m *Memory) grouped() int {
	if len(m.groups) == 0 {
		return 0
	}
	return m.groups[len(m.groups)-1].to
}

// line returns the cached one-line summary of turn i (0-based).
func (m *Memory) line(ctx context.Context, i int) (string, error) {
	t := m.turns[i]
	if !t.hasLine {
		if _, ok := m.cfg.Distiller.(deterministic); ok {
			// The line is the summary's: summarise once (ClassifyError
			// reads the whole output) for both the line and group merges.
			t.line, t.hasLine = m.summary(i).Line(), true
			return t.line, nil
		}
		l, err := m.cfg.Distiller.Line(ctx, t.facts)
		if err != nil {
			return "", fmt.Errorf("distil turn %d: %w", t.number, err)
		}
		t.line, t.hasLine = l, true
	}
	return t.line, nil
}

func (m *Memory) summary(i int) distill.Summary {
	t := m.turns[i]
	if t.summary == nil {
		s := m.det().Summarize(t.facts)
		t.summary = &s
	}
	return *t.summary
}

func (m *Memory) det() *distill.Distiller {
	if d, ok := m.cfg.Distiller.(deterministic); ok {
		return d.d
	}
	return distill.New(distill.Config{Counter: m.cfg.Text})
}

func (m *Memory) groupLine(from, to int) string {
	ss := make([]distill.Summary, 0, to-from)
	for i := from; i < to; i++ {
		ss = append(ss, m.summary(i))
	}
	return distill.Merge(ss)
}

// historyBlock renders the history message for turns[:upTo] distilled: group
// lines, one line per remaining distilled turn, then the ledger's failed
// commands that were repeated. Lines are only ever added at the end, except
// when lines are merged into groups. It returns "" when there is nothing to
// say.
func (m *Memory) historyBlock(ctx context.Context, upTo int) (string, error) {
	var b strings.Builder
	for _, g := range m.groups {
		if g.to > upTo {
			break
		}
		b.WriteString(g.line)
		b.WriteByte('\n')
	}
	for i := m.grouped(); i < upTo; i++ {
		l, err := m.line(ctx, i)
		if err != nil {
			return "", err
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if upTo > 0 {
		if r := m.ledger.repeats(5, m.abbreviate); r != "" {
			b.WriteString(r)
			b.WriteByte('\n')
		}
	}
	if b.Len() == 0 {
		return "", nil
	}
	return HistoryHeader + strings.TrimRight(b.String(), "\n"), nil
}

// HistoryHeader begins the history block (the message holding the distilled
// turns' one-line summaries); the lines below it are facts
// from the worker's records, written in the past tense.
const HistoryHeader = "Summary of earlier attempts, from the worker's records (oldest first):\n"

// abbreviate shortens a command for the repeats line.
func (m *Memory) abbreviate(cmd string) string {
	cmd = strings.Join(strings.Fields(cmd), " ")
	const max = 60
	if r := []rune(cmd); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return cmd
}

// compact merges the oldest distilled lines into group lines until the
// history block fits its share, and reports the merges it made.
func (m *Memory) compact(ctx context.Context) error {
	for {
		block, err := m.historyBlock(ctx, m.distilled)
		if err != nil {
			return err
		}
		before := m.blockTokens(block)
		if before <= m.cfg.HistoryTokens {
			return nil
		}
		single := m.distilled - m.grouped()
		switch {
		case single > 0 && len(m.groups) > 0 && m.groups[len(m.groups)-1].to-m.groups[len(m.groups)-1].from < m.cfg.GroupSpan:
			g := m.groups[len(m.groups)-1]
			g.to++
			g.line = m.groupLine(g.from, g.to)
		case single >= 2 || (single == 1 && len(m.groups) > 0):
			from := m.grouped()
			m.groups = append(m.groups, &group{from: from, to: from + 1, line: m.groupLine(from, from+1)})
		case len(m.groups) >= 2:
			// Only groups are left: merge the two oldest.
		default:
			return nil // nothing left to merge; the hard limit decides
		}
		if len(m.groups) > m.cfg.MaxGroups || (single == 0 && len(m.groups) >= 2) {
			g0, g1 := m.groups[0], m.groups[1]
			merged := &group{from: g0.from, to: g1.to, line: m.groupLine(g0.from, g1.to)}
			m.groups = append([]*group{merged}, m.groups[2:]...)
		}
		after, err := m.historyBlock(ctx, m.distilled)
		if err != nil {
			return err
		}
		m.emit(Event{Kind: EventMerge, Turn: len(m.turns), TokensBefore: before, TokensAfter: m.blockTokens(after),
			Groups: len(m.groups), Distilled: m.distilled})
	}
}

// blockTokens counts a history block line by line with a per-line cache: the
// block changes by a line or two per prompt, so recounting it whole would
// waste the tokenizer's time. The sum can differ from the exact count by a
// token per line boundary; it only decides when to merge (the prompt itself
// is always counted exactly).
func (m *Memory) blockTokens(block string) int {
	if m.lineTokens == nil || len(m.lineTokens) > 4096 {
		m.lineTokens = make(map[string]int)
	}
	n := 0
	for _, l := range strings.SplitAfter(block, "\n") {
		c, ok := m.lineTokens[l]
		if !ok {
			c = m.cfg.Text.Count(l)
			m.lineTokens[l] = c
		}
		n += c
	}
	return n
}
