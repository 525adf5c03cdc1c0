package sandbox_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/sandbox"
)

// macHost stands for a host that is not Linux: it answers the probe's
// first command as macOS would.
type macHost struct{}

func (macHost) Run(_ context.Context, cmd string) (nightshift.Exec, error) {
	return nightshift.Exec{Stdout: "Darwin\n501\n"}, nil
}

// Probe says why the sandbox cannot run on a host, naming the missing
// piece; --sandbox required refuses such a host, auto falls back.
func ExampleSandbox_Probe() {
	sb := sandbox.New(macHost{}, sandbox.Config{})
	err := sb.Probe(context.Background())
	fmt.Println(errors.Is(err, sandbox.ErrUnavailable))
	fmt.Println(err)
	// Output:
	// true
	// sandbox unavailable on the host: not Linux: Darwin
}
