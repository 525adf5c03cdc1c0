package recipes

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nightshift-dev/nightshift"
)

// Memory is a Store in process memory. The zero value is not usable: use
// NewMemory.
type Memory struct {
	now func() time.Time
	mu  sync.Mutex
	all []nightshift.Recipe // one per (ID, key)
}

// NewMemory returns an empty in-memory store; now stamps recipes (nil means
// time.Now).
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now}
}

func (m *Memory) find(id string, key nightshift.RecipeKey) int {
	return slices.IndexFunc(m.all, func(r nightshift.Recipe) bool { return r.ID == id && r.Key == key })
}

// Prove implements Store.
func (m *Memory) Prove(_ context.Context, fix nightshift.Recipe, proof nightshift.RecipeProof) (nightshift.Recipe, error) {
	fix, err := validate(fix)
	if err != nil {
		return nightshift.Recipe{}, fmt.Errorf("prove recipe: %w", err)
	}
	now := m.now().UTC()
	if proof.At.IsZero() {
		proof.At = now
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	i := m.find(fix.ID, fix.Key)
	if i < 0 {
		fix.Created = now
		m.all = append(m.all, fix)
		i = len(m.all) - 1
	}
	r := &m.all[i]
	r.Fixes++
	r.Updated = now
	if len(r.Proofs) < MaxProofs {
		r.Proofs = append(r.Proofs, proof)
	}
	return clone(*r), nil
}

// Best implements Store.
func (m *Memory) Best(_ context.Context, key nightshift.RecipeKey) (nightshift.Recipe, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var cands []nightshift.Recipe
	for _, r := range m.all {
		if r.Key == key {
			cands = append(cands, r)
		}
	}
	r, ok := best(cands)
	return clone(r), ok, nil
}

// Fail implements Store.
func (m *Memory) Fail(_ context.Context, id string, key nightshift.RecipeKey, reason string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := m.find(id, key)
	if i < 0 {
		return fmt.Errorf("fail recipe %s for %s: %w", id, key, ErrNotFound)
	}
	r := &m.all[i]
	r.Failures++
	r.LastError = cutError(reason)
	r.Updated = m.now().UTC()
	if r.State != nightshift.RecipeRetired {
		r.State = nightshift.RecipeDemoted
	}
	return nil
}

// SetState implements Store.
func (m *Memory) SetState(_ context.Context, id string, key *nightshift.RecipeKey, state nightshift.RecipeState) error {
	if err := checkState(state); err != nil {
		return fmt.Errorf("set recipe %s: %w", id, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for i := range m.all {
		if m.all[i].ID == id && (key == nil || m.all[i].Key == *key) {
			m.all[i].State, m.all[i].Updated = state, m.now().UTC()
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("set recipe %s: %w", id, ErrNotFound)
	}
	return nil
}

// List implements Store.
func (m *Memory) List(_ context.Context, f Filter) ([]nightshift.Recipe, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []nightshift.Recipe
	for _, r := range m.all {
		if f.match(r) {
			out = append(out, clone(r))
		}
	}
	slices.SortFunc(out, compareList)
	return out, nil
}

func clone(r nightshift.Recipe) nightshift.Recipe {
	r.Commands = slices.Clone(r.Commands)
	r.Proofs = slices.Clone(r.Proofs)
	return r
}

// Load stores recipes as they are (state, counts, proofs and times kept),
// replacing any of the same ID and key: a night's recipes handed from one
// process to another (fleet nights carry theirs through their workflows).
// A recipe whose ID is not RecipeID of its rule and commands, whose key or
// commands Prove would refuse, or whose state is unknown is refused with
// ErrInvalid and nothing is stored.
func (m *Memory) Load(rs ...nightshift.Recipe) error {
	for _, r := range rs {
		v, err := validate(r)
		if err != nil {
			return fmt.Errorf("load recipe %s: %w", r.ID, err)
		}
		if v.ID != r.ID {
			return fmt.Errorf("load recipe %s: %w: its ID is not that of its rule and commands (%s)", r.ID, ErrInvalid, v.ID)
		}
		if err := checkState(r.State); err != nil {
			return fmt.Errorf("load recipe %s: %w", r.ID, err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range rs {
		r = clone(r)
		if i := m.find(r.ID, r.Key); i >= 0 {
			m.all[i] = r
		} else {
			m.all = append(m.all, r)
		}
	}
	return nil
}
