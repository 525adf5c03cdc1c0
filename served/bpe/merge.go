package bpe

import "sync"

// mergeTable maps a pair of token IDs to the merge's rank and result.
// Keys are left<<32|right; values rank<<32|result.
type mergeTable map[uint64]uint64

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// lookup returns the rank and result of merging a and b, ok false if none.
func (m mergeTable) lookup(a, b int32) (rank uint32, id int32, ok bool) {
	v, ok := m[pairKey(a, b)]
	return uint32(v >> 32), int32(uint32(v)), ok
}

// naiveLimit is the symbol count up to which the quadratic scan beats the
// heap. Both produce the same result (tests check this).
const naiveLimit = 48

const noRank = ^uint32(0)

// workspace holds the scratch buffers of one merge; pooled.
type workspace struct {
	ids    []int32
	ranks  []uint32
	next   []int32
	prev   []int32
	heap   []uint64
	pairID []int32
}

var workspaces = sync.Pool{New: func() any { return new(workspace) }}

// merge applies HF's BPE merge to the symbols in ids (rewritten in place)
// and returns the result, a prefix of ids: repeatedly merge the adjacent
// pair with the lowest rank, the leftmost one on ties, until no pair merges.
func (m mergeTable) merge(ids []int32, w *workspace) []int32 {
	if len(ids) < 2 {
		return ids
	}
	if len(ids) <= naiveLimit {
		return m.mergeNaive(ids, w)
	}
	return m.mergeHeap(ids, w)
}

// mergeNaive keeps the rank of every adjacent pair and rescans for the
// minimum after each merge: O(n²) comparisons but only O(n) lookups.
func (m mergeTable) mergeNaive(ids []int32, w *workspace) []int32 {
	n := len(ids)
	ranks := grow(w.ranks, n-1)
	w.ranks = ranks
	newIDs := grow(w.next, n-1)
	w.next = newIDs
	for k := 0; k < n-1; k++ {
		ranks[k], newIDs[k] = m.rankOf(ids[k], ids[k+1])
	}
	for n > 1 {
		best, at := noRank, -1
		for k, r := range ranks[:n-1] {
			if r < best {
				best, at = r, k
			}
		}
		if at < 0 {
			break
		}
		ids[at] = newIDs[at]
		copy(ids[at+1:n-1], ids[at+2:n])
		copy(ranks[at:n-2], ranks[at+1:n-1])
		copy(newIDs[at:n-2], newIDs[at+1:n-1])
		n--
		if at > 0 {
			ranks[at-1], newIDs[at-1] = m.rankOf(ids[at-1], ids[at])
		}
		if at < n-1 {
			ranks[at], newIDs[at] = m.rankOf(ids[at], ids[at+1])
		}
	}
	return ids[:n]
}

func (m mergeTable) rankOf(a, b int32) (uint32, int32) {
	r, id, ok := m.lookup(a, b)
	if !ok {
		return noRank, -1
	}
	return r, id
}

// mergeHeap is HF's algorithm: a priority queue of candidate merges ordered
// by (rank, position) over a linked list of symbols, with stale entries
// skipped when popped. O(n log n).
//
// A queue entry is rank<<32|pos. pairRank[pos] and pairID[pos] hold the
// rank and result of the current pair starting at pos, so an entry is live
// iff pos is alive and pairRank[pos] still equals its rank: ranks identify
// pairs, and a position's pair only changes when its own symbol changes,
// which always makes a different pair.
func (m mergeTable) mergeHeap(ids []int32, w *workspace) []int32 {
	n := len(ids)
	next := grow(w.next, n)
	prev := grow(w.prev, n)
	pairRank := grow(w.ranks, n)
	pairID := grow(w.pairID, n)
	w.next, w.prev, w.ranks, w.pairID = next, prev, pairRank, pairID
	h := w.heap[:0]
	for k := range n {
		next[k], prev[k] = int32(k+1), int32(k-1)
	}
	next[n-1] = -1
	candidate := func(pos int32) {
		pairRank[pos] = noRank
		nx := next[pos]
		if nx < 0 {
			return
		}
		r, id, ok := m.lookup(ids[pos], ids[nx])
		if !ok {
			return
		}
		pairRank[pos], pairID[pos] = r, id
		// Push, sifting up.
		h = append(h, uint64(r)<<32|uint64(pos))
		c := len(h) - 1
		for c > 0 {
			p := (c - 1) / 2
			if h[c] >= h[p] {
				break
			}
			h[c], h[p] = h[p], h[c]
			c = p
		}
	}
	for k := range n {
		candidate(int32(k))
	}
	const dead = -2
	for len(h) > 0 {
		top := h[0]
		last := len(h) - 1
		h[0] = h[last]
		h = h[:last]
		for p := 0; ; {
			c := 2*p + 1
			if c >= len(h) {
				break
			}
			if c+1 < len(h) && h[c+1] < h[c] {
				c++
			}
			if h[c] >= h[p] {
				break
			}
			h[c], h[p] = h[p], h[c]
			p = c
		}
		pos, rank := int32(uint32(top)), uint32(top>>32)
		if prev[pos] == dead || pairRank[pos] != rank {
			continue
		}
		nx := next[pos]
		ids[pos] = pairID[pos]
		// Unlink nx.
		nn := next[nx]
		next[pos] = nn
		if nn >= 0 {
			prev[nn] = pos
		}
		prev[nx] = dead
		pairRank[nx] = noRank
		if p := prev[pos]; p >= 0 {
			candidate(p)
		}
		candidate(pos)
	}
	w.heap = h[:0]
	out := 0
	for k := int32(0); k >= 0; k = next[k] {
		ids[out] = ids[k]
		out++
	}
	return ids[:out]
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/4)
	}
	return s[:n]
}
