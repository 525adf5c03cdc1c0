package lessons

import (
	"context"

	"github.com/nightshift-dev/nightshift"
)

// SourceConfig configures a Source. The zero value is usable.
type SourceConfig struct {
	// Limit is the number of lessons asked of the store per rule; the
	// worker adds as many of them as fit in the instruction's share. Zero
	// means DefaultLimit.
	Limit int
}

// Source feeds a store's lessons to the worker: it implements
// worker.LessonSource. It is safe for concurrent use if the store is.
type Source struct {
	store Store
	limit int
}

// NewSource returns a Source reading store.
func NewSource(store Store, cfg SourceConfig) *Source {
	return &Source{store: store, limit: cfg.Limit}
}

// Lessons returns the rule's lessons for a host like facts describes, ranked
// as Store describes, each rendered by Lesson.Line.
func (s *Source) Lessons(ctx context.Context, rule string, facts nightshift.HostFacts) ([]string, error) {
	ls, err := s.store.Lessons(ctx, Query{Rule: rule, OS: facts.OS, PackageManager: facts.PackageManager, Limit: s.limit})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Line()
	}
	return out, nil
}
