package temporaltest_test

import (
	"fmt"
	"testing"

	"github.com/nightshift-dev/nightshift/internal/temporaltest"
)

// A test starts its own dev server and dials it; here, only what Quiet
// does is shown, as the example must run without the CLI.
func Example() {
	var l temporaltest.Quiet
	l.Info("discarded")
	fmt.Println("a test calls temporaltest.Start(t) for the server's address")
	// Output: a test calls temporaltest.Start(t) for the server's address
}

func TestStart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	addr := temporaltest.Start(t)
	if addr == "" {
		t.Fatal("no address")
	}
}
