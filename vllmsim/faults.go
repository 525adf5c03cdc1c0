package vllmsim

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// FaultKind is a kind of injected failure.
type FaultKind int

const (
	// FaultUnavailable answers 503 with an error body (an overloaded or
	// restarting server behind a proxy).
	FaultUnavailable FaultKind = iota + 1
	// FaultRateLimited answers 429 with an error body.
	FaultRateLimited
	// FaultClose closes the connection without answering.
	FaultClose
	// FaultDelay waits Delay (or until the client gives up) and then serves
	// the request normally.
	FaultDelay
)

func (k FaultKind) String() string {
	switch k {
	case FaultUnavailable:
		return "unavailable"
	case FaultRateLimited:
		return "rate-limited"
	case FaultClose:
		return "close"
	case FaultDelay:
		return "delay"
	}
	return fmt.Sprintf("FaultKind(%d)", int(k))
}

// Fault is a failure injected into chat completion requests. Faults are
// consumed in order, one per request: a Fault with Times 3 affects the next
// three chat completion requests.
type Fault struct {
	Kind FaultKind
	// Times is how many consecutive requests the fault affects; 0 means 1.
	Times int
	// Delay is FaultDelay's wait.
	Delay time.Duration
	// RetryAfter, when positive, is sent as a Retry-After header (seconds)
	// with 503 and 429 answers.
	RetryAfter time.Duration
}

var errBadFault = errors.New("bad fault")

func (f Fault) validate() error {
	switch f.Kind {
	case FaultUnavailable, FaultRateLimited, FaultClose:
	case FaultDelay:
		if f.Delay <= 0 {
			return fmt.Errorf("%w: delay fault needs a positive Delay", errBadFault)
		}
	default:
		return fmt.Errorf("%w: unknown kind %d", errBadFault, int(f.Kind))
	}
	if f.Times < 0 {
		return fmt.Errorf("%w: Times %d is negative", errBadFault, f.Times)
	}
	return nil
}

func expandFaults(fs []Fault) []Fault {
	var out []Fault
	for _, f := range fs {
		for range max(f.Times, 1) {
			out = append(out, f)
		}
	}
	return out
}

// InjectFaults queues faults after those already pending.
func (s *Server) InjectFaults(fs ...Fault) error {
	for i, f := range fs {
		if err := f.validate(); err != nil {
			return fmt.Errorf("vllmsim: fault %d: %w", i, err)
		}
	}
	s.mu.Lock()
	s.faults = append(s.faults, expandFaults(fs)...)
	s.mu.Unlock()
	return nil
}

func (s *Server) nextFault() (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.faults) == 0 {
		return Fault{}, false
	}
	f := s.faults[0]
	s.faults = s.faults[1:]
	return f, true
}

// applyFault injects f; it reports whether the request was answered (or
// dropped) and must not be served.
func (s *Server) applyFault(w http.ResponseWriter, r *http.Request, f Fault) bool {
	rec := Record{Endpoint: r.URL.Path, Fault: f.Kind.String()}
	switch f.Kind {
	case FaultDelay:
		t := time.NewTimer(f.Delay)
		defer t.Stop()
		select {
		case <-t.C:
			return false
		case <-r.Context().Done():
			rec.Error = "client gave up during injected delay"
			s.record(rec)
			return true
		}
	case FaultClose:
		rec.Error = "connection closed (injected)"
		s.record(rec)
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return true
			}
		}
		// Not hijackable (HTTP/2, a recorder): abort the handler, which
		// makes net/http drop the connection.
		panic(http.ErrAbortHandler)
	default:
		e := &apiError{Status: http.StatusServiceUnavailable, Type: "ServiceUnavailableError", Message: "The server is overloaded, please retry later."}
		if f.Kind == FaultRateLimited {
			e = &apiError{Status: http.StatusTooManyRequests, Type: "RateLimitError", Message: "Too many requests, please retry later."}
		}
		if f.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int((f.RetryAfter+time.Second-1)/time.Second)))
		}
		rec.Status, rec.Error = e.Status, e.Message
		s.record(rec) // before the reply: a client that has it finds the record
		s.writeError(w, e)
		return true
	}
}
