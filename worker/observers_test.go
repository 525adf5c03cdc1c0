package worker

import "testing"

// recordObs appends the kind of each event it sees, tagged with its name.
type recordObs struct {
	name string
	seen *[]string
}

func (r recordObs) Observe(e Event) { *r.seen = append(*r.seen, r.name+":"+string(e.Kind)) }

func TestObserversOrderAndNil(t *testing.T) {
	var seen []string
	obs := Observers{recordObs{"a", &seen}, nil, recordObs{"b", &seen}}
	obs.Observe(Event{Kind: EventRetry})
	obs.Observe(Event{Kind: EventCheck})
	want := []string{"a:" + string(EventRetry), "b:" + string(EventRetry), "a:" + string(EventCheck), "b:" + string(EventCheck)}
	if len(seen) != len(want) {
		t.Fatalf("seen %q, want %q", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("seen %q, want %q", seen, want)
		}
	}
	Observers(nil).Observe(Event{Kind: EventRetry}) // an empty fan-out observes nothing and does not panic
}
