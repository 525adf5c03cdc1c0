package fleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/inventory"
)

// Activities' connection keeping: DefaultMaxIdleConns is `worker fleet
// serve --host-conns`'s default (a zero MaxIdleConns keeps none),
// DefaultIdleConnTimeout IdleConnTimeout's default.
const (
	DefaultMaxIdleConns    = 128
	DefaultIdleConnTimeout = 30 * time.Second
)

var errActivitiesClosed = errors.New("fleet: activities closed")

// connPool keeps one connection per host between activities: at most
// maxIdle idle ones (least recently used closed first), each closed once
// unused for idle. A connection in use is never closed by the pool; one
// that saw a transport error is no longer handed out and is closed when
// its last user leaves. Safe for concurrent use.
type connPool struct {
	mu      sync.Mutex
	maxIdle int
	idle    time.Duration
	conns   map[string]*keptConn
	timer   *time.Timer // closes idle connections on time; nil while none is idle
	closed  bool
}

type keptConn struct {
	t     nightshift.Target
	users int
	last  time.Time // when its last user released it
	drop  bool      // a user saw a transport error
}

func connKey(h inventory.Host) string {
	return fmt.Sprintf("%s\x00%s\x00%d\x00%s\x00%s", h.Name, h.Address, h.Port, h.User, h.Identity)
}

// configure sets the limits (Activities' fields, defaulted).
func (p *connPool) configure(maxIdle int, idle time.Duration) {
	maxIdle = max(maxIdle, 0)
	if idle <= 0 {
		idle = DefaultIdleConnTimeout
	}
	p.mu.Lock()
	p.maxIdle, p.idle = maxIdle, idle
	p.mu.Unlock()
}

// acquire returns the kept connection to h, connecting first if there is
// none, and the function its user calls once when done (broken: the
// connection failed and must not be reused).
func (p *connPool) acquire(ctx context.Context, c nightshift.Connector, h inventory.Host) (nightshift.Target, func(broken bool), error) {
	k := connKey(h)
	if t, release, ok := p.reuse(k); ok {
		return t, release, nil
	}
	t, err := c.Connect(ctx, h)
	if err != nil {
		return nil, nil, err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		_ = t.Close()
		return nil, nil, errActivitiesClosed
	}
	if kc, ok := p.conns[k]; ok && !kc.drop { // another activity connected meanwhile
		kc.users++
		p.mu.Unlock()
		_ = t.Close()
		return kc.t, p.releaser(k, kc), nil
	}
	if p.conns == nil {
		p.conns = map[string]*keptConn{}
	}
	kc := &keptConn{t: t, users: 1}
	p.conns[k] = kc
	p.mu.Unlock()
	return t, p.releaser(k, kc), nil
}

func (p *connPool) reuse(k string) (nightshift.Target, func(bool), bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	kc, ok := p.conns[k]
	if !ok || kc.drop || p.closed {
		return nil, nil, false
	}
	kc.users++
	return kc.t, p.releaser(k, kc), true
}

func (p *connPool) releaser(k string, kc *keptConn) func(bool) {
	var once sync.Once
	return func(broken bool) { once.Do(func() { p.release(k, kc, broken) }) }
}

func (p *connPool) release(k string, kc *keptConn, broken bool) {
	now := time.Now()
	p.mu.Lock()
	kc.users--
	kc.last = now
	if broken {
		kc.drop = true
	}
	var out []nightshift.Target
	if kc.drop && kc.users == 0 {
		if p.conns[k] == kc {
			delete(p.conns, k)
		}
		out = append(out, kc.t)
	}
	if !p.closed {
		out = append(out, p.evictLocked(now)...)
		p.scheduleLocked(now)
	}
	p.mu.Unlock()
	closeAll(out)
}

// evictLocked removes the idle connections unused for the idle timeout
// and, beyond maxIdle, the least recently used idle ones, and returns
// them for closing.
func (p *connPool) evictLocked(now time.Time) []nightshift.Target {
	type entry struct {
		k  string
		kc *keptConn
	}
	var out []nightshift.Target
	var idle []entry
	for k, kc := range p.conns {
		switch {
		case kc.users > 0:
		case now.Sub(kc.last) >= p.idle:
			delete(p.conns, k)
			out = append(out, kc.t)
		default:
			idle = append(idle, entry{k, kc})
		}
	}
	if len(idle) > p.maxIdle {
		slices.SortFunc(idle, func(a, b entry) int { return a.kc.last.Compare(b.kc.last) })
		for _, e := range idle[:len(idle)-p.maxIdle] {
			delete(p.conns, e.k)
			out = append(out, e.kc.t)
		}
	}
	return out
}

// scheduleLocked arms the timer for the oldest idle connection's expiry.
func (p *connPool) scheduleLocked(now time.Time) {
	var oldest time.Time
	for _, kc := range p.conns {
		if kc.users == 0 && (oldest.IsZero() || kc.last.Before(oldest)) {
			oldest = kc.last
		}
	}
	switch {
	case oldest.IsZero():
		if p.timer != nil {
			p.timer.Stop()
			p.timer = nil
		}
	case p.timer == nil:
		p.timer = time.AfterFunc(oldest.Add(p.idle).Sub(now), p.expire)
	default:
		p.timer.Reset(oldest.Add(p.idle).Sub(now))
	}
}

func (p *connPool) expire() {
	now := time.Now()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	out := p.evictLocked(now)
	p.timer = nil
	p.scheduleLocked(now)
	p.mu.Unlock()
	closeAll(out)
}

// close closes every kept connection, in use or not; later acquires fail.
func (p *connPool) close() error {
	p.mu.Lock()
	p.closed = true
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	var errs []error
	for k, kc := range p.conns {
		errs = append(errs, kc.t.Close())
		delete(p.conns, k)
	}
	p.mu.Unlock()
	return errors.Join(errs...)
}

func closeAll(ts []nightshift.Target) {
	for _, t := range ts {
		_ = t.Close()
	}
}
