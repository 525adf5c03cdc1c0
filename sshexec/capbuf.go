package sshexec

import (
	"fmt"
	"sync"

	"github.com/nightshift-dev/nightshift/internal/textcut"
)

// capBuffer is an io.Writer that keeps the first head bytes and the last
// tail bytes written to it and counts the rest. Memory stays bounded by
// head+tail whatever the volume. It is safe for concurrent use.
type capBuffer struct {
	mu      sync.Mutex
	head    []byte
	headCap int
	tail    []byte // ring buffer of length tailCap once full
	tailCap int
	start   int   // index of the oldest byte in tail when full
	total   int64 // bytes written
}

func newCapBuffer(limit int) *capBuffer {
	h := limit / 2
	return &capBuffer{headCap: h, tailCap: limit - h}
}

func (b *capBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	b.total += int64(n)
	if len(b.head) < b.headCap {
		take := min(len(p), b.headCap-len(b.head))
		b.head = append(b.head, p[:take]...)
		p = p[take:]
	}
	if len(p) == 0 || b.tailCap == 0 {
		return n, nil
	}
	if len(p) >= b.tailCap {
		// Only the last tailCap bytes of p can survive.
		b.tail = append(b.tail[:0], p[len(p)-b.tailCap:]...)
		b.start = 0
		return n, nil
	}
	if len(b.tail) < b.tailCap {
		fit := min(len(p), b.tailCap-len(b.tail))
		b.tail = append(b.tail, p[:fit]...)
		p = p[fit:]
	}
	for len(p) > 0 {
		c := copy(b.tail[b.start:], p)
		p = p[c:]
		b.start = (b.start + c) % b.tailCap
	}
	return n, nil
}

// result returns the kept bytes, with a marker line where bytes were cut,
// and the number of bytes cut.
func (b *capBuffer) result() (string, int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	kept := int64(len(b.head) + len(b.tail))
	cut := b.total - kept
	out := make([]byte, 0, kept+64)
	out = append(out, b.head...)
	if cut > 0 {
		out = fmt.Appendf(out, CutMarker, cut)
	}
	out = append(out, b.tail[b.start:]...)
	out = append(out, b.tail[:b.start]...)
	return string(out), cut
}

// CutMarker is the line Run puts in Exec.Stdout or Exec.Stderr where
// bytes were cut, formatted with the count: the module's one cut marker,
// textcut.Marker, "\n[… N bytes cut …]\n".
const CutMarker = textcut.Marker
