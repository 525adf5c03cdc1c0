package lessons

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// MemoryStoreConfig configures a MemoryStore. The zero value is usable.
type MemoryStoreConfig struct {
	// Now stamps lessons added without a time; nil means time.Now.
	Now func() time.Time
}

// MemoryStore is a Store in memory: no file, no goroutine, no I/O, so package
// fleet's host workflow can keep a host's lessons in it deterministically
// (tests use it too). It ranks with the same code as SQLite. It is safe for
// concurrent use.
type MemoryStore struct {
	now  func() time.Time
	mu   sync.Mutex
	recs []record
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore(cfg MemoryStoreConfig) *MemoryStore {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &MemoryStore{now: cfg.Now}
}

// Add stores the lessons, all or none.
func (m *MemoryStore) Add(ctx context.Context, ls ...Lesson) error {
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
func (m *MemoryStore) Lessons(ctx context.Context, q Query) ([]Lesson, error) {
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
