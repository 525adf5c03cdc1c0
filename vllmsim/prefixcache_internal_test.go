package vllmsim

import "testing"

func seq(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

func cat(parts ...[]int) []int {
	var out []int
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// TestPrefixCacheRules checks vLLM's rules one request at a time, with
// 4-token blocks: full blocks only, chained hashes, never the last token,
// generated tokens cached but the last one.
func TestPrefixCacheRules(t *testing.T) {
	a := seq(100, 10) // blocks [0,4) [4,8), 2 tokens partial
	tests := []struct {
		name     string
		prompt   []int
		computed []int // nil: the prompt
		want     int
	}{
		{"cold", a, nil, 0},
		{"same prompt again: the last token is computed, so the last full block at or before n-1", a, nil, 8},
		{"prompt of exactly 8 tokens: only one block, since token 8 must be computed", a[:8], nil, 4},
		{"a change in block 2 keeps block 1", cat(a[:5], []int{7}, a[6:]), nil, 4},
		{"a change in block 1 loses every block after it (chained)", cat([]int{1}, a[1:]), nil, 0},
		{"a prompt extending the earlier one and its generation", cat(a, seq(500, 6), []int{9, 9, 9}), cat(a, seq(500, 6), []int{9, 9, 9}), 8},
		{"the generated tokens of the last request were cached, but its last one was not",
			cat(a, seq(500, 6), []int{9, 9, 9}, seq(900, 20)), nil, 16},
		{"a 3-token prompt is never served from the cache", a[:3], nil, 0},
	}
	c := newPrefixCache(4, 100)
	for _, tt := range tests {
		computed := tt.computed
		if computed == nil {
			computed = tt.prompt
		}
		if got := c.serve(tt.prompt, computed); got != tt.want {
			t.Errorf("%s: cached %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestPrefixCacheLRU checks that the pool evicts the least recently used
// blocks, a sequence's last blocks before its first ones, and that a hit
// refreshes a sequence.
func TestPrefixCacheLRU(t *testing.T) {
	c := newPrefixCache(4, 6) // 6 blocks of 4 tokens
	a, b, d := seq(100, 13), seq(200, 13), seq(300, 9)
	if got := c.serve(a, a); got != 0 { // a: 3 full blocks + 1 partial; 3 cached
		t.Fatalf("a cold: %d", got)
	}
	// b needs 4 blocks: 3 are free, so one cached block is evicted — a's
	// last full block, freed first.
	if got := c.serve(b, b); got != 0 {
		t.Fatalf("b cold: %d", got)
	}
	if n := c.len(); n > 6 {
		t.Fatalf("%d blocks cached in a pool of 6", n)
	}
	// a kept its first two blocks (its last one was evicted first).
	if got := c.serve(a, a); got != 8 {
		t.Errorf("a after b: cached %d, want 8 (first blocks kept, the last one evicted)", got)
	}
	// a was just used: d (3 blocks) now evicts b's blocks before a's.
	c.serve(d, d)
	if got := c.serve(a[:9], a[:9]); got != 8 {
		t.Errorf("a after d: cached %d, want 8 (recently used, kept)", got)
	}
	if got := c.serve(b, b); got != 0 {
		t.Errorf("b after d: cached %d, want 0 (least recently used, evicted)", got)
	}
}
