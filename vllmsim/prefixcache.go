package vllmsim

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"sync"
)

// Defaults of the simulated automatic prefix cache.
const (
	// DefaultBlockSize is vLLM's KV cache block size (--block-size) for
	// CUDA: 16 tokens.
	DefaultBlockSize = 16
	// DefaultCacheBlocks is the KV cache's capacity in blocks: 16,384
	// blocks hold 262,144 tokens, about what Qwen3-8B in bf16 leaves for
	// the KV cache on a 48–80 GB GPU at --gpu-memory-utilization 0.9
	// (144 KiB per token).
	DefaultCacheBlocks = 16384
)

// blockHash identifies a full block by its tokens and every token before it:
// vLLM's hash(parent_hash, block_token_ids, extra_keys), chained from the
// first block.
type blockHash [32]byte

// prefixCache reproduces vLLM's automatic prefix caching (the V1 engine's
// KVCacheManager and BlockPool) for requests that run one at a time:
//
//   - the tokens of a request are cut into blocks of blockSize tokens; only
//     full blocks are hashed and cached, each hash chained over the hash of
//     the block before it;
//   - a new request is served from the cache for the longest run of leading
//     blocks whose hashes are cached, but never for its last token: at most
//     floor((prompt−1)/blockSize) blocks (get_computed_blocks sets
//     max_cache_hit_length to num_tokens−1, since at least one token must be
//     computed to obtain logits);
//   - the blocks a request computes — its prompt and the tokens it
//     generated, except the last one generated, whose KV is never computed —
//     are cached once full;
//   - the pool has a fixed number of blocks; a request takes the blocks it
//     needs from the free queue, whose head is the least recently used, and
//     evicts the cached content of those blocks; when the request finishes
//     its blocks are freed in reverse order, cached ones to the tail of the
//     queue (so a sequence's first blocks are evicted last) and uncached
//     ones to its head.
//
// Between requests every block is free, so the queue of cached blocks is an
// LRU list and the uncached free blocks are counted, not listed. It is safe
// for concurrent use; each request's lookup and insertion happen under one
// lock, as if requests ran one after the other.
type prefixCache struct {
	blockSize int
	capacity  int

	mu     sync.Mutex
	lru    *list.List                  // of blockHash; front: evicted first
	byHash map[blockHash]*list.Element // cached blocks
}

func newPrefixCache(blockSize, capacity int) *prefixCache {
	return &prefixCache{blockSize: blockSize, capacity: capacity, lru: list.New(), byHash: map[blockHash]*list.Element{}}
}

// hashes returns the chained hashes of the full blocks of tokens.
func (c *prefixCache) hashes(tokens []int) []blockHash {
	n := len(tokens) / c.blockSize
	out := make([]blockHash, n)
	var parent blockHash
	buf := make([]byte, 0, len(parent)+8*c.blockSize)
	for i := 0; i < n; i++ {
		buf = append(buf[:0], parent[:]...)
		for _, t := range tokens[i*c.blockSize : (i+1)*c.blockSize] {
			buf = binary.LittleEndian.AppendUint64(buf, uint64(t))
		}
		parent = sha256.Sum256(buf)
		out[i] = parent
	}
	return out
}

// serve runs one request through the cache: prompt are the prompt's token
// IDs, computed every token whose KV the request computes (the prompt and
// the generated tokens but the last). It returns the number of prompt
// tokens served from the cache, then caches the full blocks of computed.
func (c *prefixCache) serve(prompt, computed []int) int {
	if len(prompt) == 0 {
		return 0
	}
	hs := c.hashes(computed)
	c.mu.Lock()
	defer c.mu.Unlock()
	maxHit := min((len(prompt)-1)/c.blockSize, len(hs))
	hit := 0
	for hit < maxHit {
		if _, ok := c.byHash[hs[hit]]; !ok {
			break
		}
		hit++
	}
	// The hit blocks are in use: out of the free queue while the request
	// runs.
	for _, h := range hs[:hit] {
		c.lru.Remove(c.byHash[h])
		delete(c.byHash, h)
	}
	// New blocks for the rest, partial last block included: first the
	// uncached free blocks, then the least recently used cached ones.
	need := (len(computed)+c.blockSize-1)/c.blockSize - hit
	free := c.capacity - hit - c.lru.Len() // uncached free blocks
	for evict := need - free; evict > 0 && c.lru.Len() > 0; evict-- {
		e := c.lru.Front()
		delete(c.byHash, e.Value.(blockHash))
		c.lru.Remove(e)
	}
	// Free the request's blocks in reverse order: the cached ones go to the
	// tail, so its first blocks are the most recently used. A full block
	// whose hash another cached block already holds stays uncached.
	for i := len(hs) - 1; i >= 0; i-- {
		h := hs[i]
		if i >= hit {
			if _, dup := c.byHash[h]; dup {
				continue
			}
		}
		c.byHash[h] = c.lru.PushBack(h)
	}
	return hit * c.blockSize
}

// len returns the number of cached blocks.
func (c *prefixCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// reset empties the cache (vLLM's POST /reset_prefix_cache).
func (c *prefixCache) reset() {
	c.mu.Lock()
	c.lru.Init()
	c.byHash = map[blockHash]*list.Element{}
	c.mu.Unlock()
}
