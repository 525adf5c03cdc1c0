package nightshift

import (
	"context"
	"errors"

	"github.com/nightshift-dev/nightshift/inventory"
)

// Errors every way of running rules on hosts shares. Match them with
// errors.Is.
var (
	// ErrOutcomeUnknown: a command was sent to a host and whether it ran,
	// and what it did, is not known (the connection was lost after it was
	// sent, or the worker stopped while it ran). Such a command is never
	// run again; the rule's check tells what it did.
	ErrOutcomeUnknown = errors.New("command outcome unknown")
	// ErrModelUnreachable: the model server stayed unreachable past the
	// worker's retry deadline; the run stopped, its unfinished work is
	// left for a resume.
	ErrModelUnreachable = errors.New("model server unreachable; run stopped")
)

// Target is a connected host: a runner of its commands that must be
// closed (sshexec's *Client is one).
type Target interface {
	Runner
	Close() error
}

// Connector connects to a host of an inventory: sshexec through
// package orchestrate's SSHConnector, simulated hosts in tests and the demo.
type Connector interface {
	Connect(ctx context.Context, h inventory.Host) (Target, error)
}
