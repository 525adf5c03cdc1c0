package lessons

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

// MemoryConfig configures a Memory store. The zero value is usable.
type MemoryConfig struct {
	// Now stamps lessons added without a time; nil means time.Now.
	Now func() time.Time
}

// Memory is a Store in memory, for tests and single runs. It is safe for
// concurrent use.
type Memory struct {
	now  func() time.Time
	mu   sync.Mutex
	recs []record
}

type record struct {
	Lesson
	seq int64
}

// NewMemory returns an empty Memory store.
func NewMemory(cfg MemoryConfig) *Memory {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Memory{now: cfg.Now}
}

// Add stores the lessons, all or none.
func (m *Memory) Add(ctx context.Context, ls ...Lesson) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("add lessons: %w", err)
	}
	norm := make([]Lesson, 0, len(ls))
	for _, l := range ls {
		n, err := normalize(l, m.now)
		if err != nil {
			return fmt.Errorf("add lessons: %w", err)
		}
		norm = append(norm, n)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range norm {
		m.recs = append(m.recs, record{Lesson: l, seq: int64(len(m.recs) + 1)})
	}
	return nil
}

// Lessons returns the rule's lessons ranked as Store describes.
func (m *Memory) Lessons(ctx context.Context, q Query) ([]Lesson, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("query lessons: %w", err)
	}
	m.mu.Lock()
	var cands []record
	for _, r := range m.recs {
		if r.Rule == q.Rule {
			cands = append(cands, r)
		}
	}
	m.mu.Unlock()
	return rank(cands, q), nil
}

// rank orders the candidates (all of q's rule), keeps the best copy of each
// text with the number of copies, and applies the limit.
func rank(cands []record, q Query) []Lesson {
	sort.SliceStable(cands, func(i, j int) bool { return better(cands[i], cands[j], q) })
	seen := map[string]int{}
	for _, c := range cands {
		seen[c.Text]++
	}
	limit := limitOf(q)
	var out []Lesson
	for _, c := range cands {
		n, ok := seen[c.Text]
		if !ok {
			continue // a worse copy of a text already taken
		}
		delete(seen, c.Text)
		if limit >= 0 && len(out) == limit {
			break
		}
		l := c.Lesson
		l.Seen = n
		out = append(out, l)
	}
	return out
}

// better reports whether a ranks before b.
func better(a, b record, q Query) bool {
	if ma, mb := match(a.Lesson, q), match(b.Lesson, q); ma != mb {
		return ma > mb
	}
	if wa, wb := a.Kind == Worked, b.Kind == Worked; wa != wb {
		return wa
	}
	if ta, tb := a.At.UnixNano(), b.At.UnixNano(); ta != tb {
		return ta > tb
	}
	return a.seq > b.seq
}
