//go:build !linux

package sshexec

import (
	"fmt"
	"os"
)

// promptNoEcho is only implemented on Linux, Nightshift's platform.
func promptNoEcho(*os.File, string) ([]byte, error) {
	return nil, fmt.Errorf("%w: echo-free prompts are implemented on linux only", ErrNoTerminal)
}
