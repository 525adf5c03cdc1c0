package nightshift_test

import (
	"testing"

	"github.com/nightshift-dev/nightshift"
)

// recordObs appends the kind of each event it sees, tagged with its name.
type recordObs struct {
	name string
	seen *[]string
}

func (r recordObs) Observe(e nightshift.Event) { *r.seen = append(*r.seen, r.name+":"+string(e.Kind)) }

func TestObserversOrderAndNil(t *testing.T) {
	var seen []string
	obs := nightshift.Observers{recordObs{"a", &seen}, nil, recordObs{"b", &seen}}
	obs.Observe(nightshift.Event{Kind: nightshift.EventRetry})
	obs.Observe(nightshift.Event{Kind: nightshift.EventCheck})
	want := []string{"a:" + string(nightshift.EventRetry), "b:" + string(nightshift.EventRetry), "a:" + string(nightshift.EventCheck), "b:" + string(nightshift.EventCheck)}
	if len(seen) != len(want) {
		t.Fatalf("seen %q, want %q", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("seen %q, want %q", seen, want)
		}
	}
	nightshift.Observers(nil).Observe(nightshift.Event{Kind: nightshift.EventRetry}) // an empty fan-out observes nothing and does not panic
}
