package bpe

import (
	"hash/maphash"
	"strings"
	"sync/atomic"
)

// pieceCache remembers the BPE result of recent pre-tokens. It is a
// direct-mapped table of cacheSlots entries, each replaced whole by an
// atomic pointer store, so it is lock-free, safe for concurrent use, and
// bounded: at most cacheSlots pieces of at most cacheMaxPiece bytes.
type pieceCache struct {
	seed  maphash.Seed
	slots [cacheSlots]atomic.Pointer[cacheEntry]
}

const (
	cacheSlots    = 1 << 14
	cacheMaxPiece = 48
)

type cacheEntry struct {
	piece string
	ids   []int32
}

func newPieceCache() *pieceCache { return &pieceCache{seed: maphash.MakeSeed()} }

func (c *pieceCache) slot(piece string) *atomic.Pointer[cacheEntry] {
	return &c.slots[maphash.String(c.seed, piece)&(cacheSlots-1)]
}

// get returns the cached IDs of piece; the slice must not be modified.
func (c *pieceCache) get(piece string) ([]int32, bool) {
	if e := c.slot(piece).Load(); e != nil && e.piece == piece {
		return e.ids, true
	}
	return nil, false
}

func (c *pieceCache) put(piece string, ids []int32) {
	c.slot(piece).Store(&cacheEntry{piece: strings.Clone(piece), ids: append([]int32(nil), ids...)})
}
