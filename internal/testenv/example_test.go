package testenv_test

import (
	"fmt"

	"github.com/nightshift-dev/nightshift/internal/testenv"
)

// A test that needs a tool asks for it with testenv.Unavailable(t, …),
// which fails under CI and skips elsewhere; a test that makes random
// choices starts from testenv.Seed(t, def), which the runner can set.
func Example() {
	fmt.Printf("go test -seed=N, or %s=N go test\n", testenv.SeedEnv)
	// Output: go test -seed=N, or NIGHTSHIFT_SEED=N go test
}
