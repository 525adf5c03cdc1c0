package retry_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nightshift-dev/nightshift/retry"
)

func Example() {
	busy := errors.New("busy")
	tries := 0
	p := retry.Policy{
		BaseDelay: time.Millisecond,
		MaxTries:  5,
		OnRetry:   func(r retry.Retry) { fmt.Printf("try %d: %v; retrying in %s\n", r.Try, r.Err, r.Wait) },
	}
	err := p.Do(context.Background(), func(ctx context.Context) error {
		if tries++; tries < 3 {
			return busy
		}
		return nil
	})
	fmt.Println(err, tries)
	// Output:
	// try 1: busy; retrying in 1ms
	// try 2: busy; retrying in 2ms
	// <nil> 3
}
