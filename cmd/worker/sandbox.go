package main

import (
	"context"
	"errors"
	"fmt"
	osuser "os/user"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/lockout"
	"github.com/nightshift-dev/nightshift/safety"
	"github.com/nightshift-dev/nightshift/sandbox"
	"github.com/nightshift-dev/nightshift/sshexec"
)

// sandboxMode is --sandbox: where the recording sandbox must, may or does
// not run.
type sandboxMode string

const (
	sandboxRequired sandboxMode = "required"
	sandboxAuto     sandboxMode = "auto"
	sandboxOff      sandboxMode = "off"
)

const sandboxUsage = "judge each command by its effects in a throwaway sandbox on the host first: `MODE` required (a host where it cannot run is refused), auto (fall back to the static check there) or off (the static check alone)"

func (m *sandboxMode) String() string {
	if *m == "" {
		return string(sandboxRequired)
	}
	return string(*m)
}

func (m *sandboxMode) Set(s string) error {
	switch sandboxMode(s) {
	case sandboxRequired, sandboxAuto, sandboxOff:
		*m = sandboxMode(s)
		return nil
	default:
		return fmt.Errorf("%q is not a sandbox mode (required, auto or off)", s)
	}
}

func (m sandboxMode) orDefault() sandboxMode {
	if m == "" {
		return sandboxRequired
	}
	return m
}

// sandboxRequiredError: --sandbox required on a host where it cannot run.
type sandboxRequiredError struct {
	host string
	err  error
}

func (e *sandboxRequiredError) Error() string {
	return fmt.Sprintf("host %s: the sandbox is required (--sandbox required) but cannot run there: %v; "+
		"--sandbox auto falls back to the static check on such hosts", e.host, e.err)
}

func (e *sandboxRequiredError) Unwrap() error { return e.err }

// hostSandbox sets up what a host's remediation commands run through under
// mode: the sandbox over conn (probed first), or conn with the fallback
// stated; both under the lockout net, except with --sandbox off. fresh is
// how a fresh login to the host is made (the canary), login and port the
// worker's own SSH login there. The effect judge is given what conn's SSH
// connection knows of that login (the host key known_hosts accepted, the
// worker's key, the address dialled) when conn is an SSH client.
func hostSandbox(ctx context.Context, mode sandboxMode, host string, conn nightshift.Runner, fresh sshexec.Config, login string, port int, timeout time.Duration) (batch.SandboxSetup, error) {
	if mode.orDefault() == sandboxOff {
		return batch.SandboxSetup{Runner: conn, Fallback: "--sandbox off: the static check alone judged commands on " + host + ", with no lockout net"}, nil
	}
	guard, err := lockout.New(lockout.Config{User: login, FreshLogin: lockout.SSHLogin(fresh)})
	if err != nil {
		return batch.SandboxSetup{}, fmt.Errorf("host %s: the lockout net: %w", host, err)
	}
	cfg := sandbox.Config{}
	if timeout > 0 {
		cfg.Timeout = timeout
	}
	sb := sandbox.New(conn, cfg)
	if err := sb.Probe(ctx); err != nil {
		if !errors.Is(err, sandbox.ErrUnavailable) {
			return batch.SandboxSetup{}, err
		}
		if mode.orDefault() == sandboxRequired {
			return batch.SandboxSetup{}, &sandboxRequiredError{host: host, err: err}
		}
		return batch.SandboxSetup{Runner: lockout.NewRunner(guard, conn, 0),
			Fallback: fmt.Sprintf("no sandbox on %s (%v): the static check judged commands, the lockout net guarded them", host, err)}, nil
	}
	pol := safety.EffectsPolicy{Login: login, SSHPort: port}
	if f, ok := conn.(sshFacter); ok {
		facts, err := f.SSHFacts(ctx)
		if err != nil {
			return batch.SandboxSetup{}, fmt.Errorf("host %s: the SSH connection's facts: %w", host, err)
		}
		pol = pol.WithSSH(facts)
	}
	return batch.SandboxSetup{Runner: sandbox.NewRunner(sb, pol, sandbox.RunnerConfig{Guard: guard}), Sandboxed: true}, nil
}

// sshFacter is a connection that tells what it knows of the worker's SSH
// login (sshexec's *Client): the effect judge keeps it working.
type sshFacter interface {
	SSHFacts(ctx context.Context) (nightshift.SSHFacts, error)
}

// loginOf is the user an SSH login as user ("" for the default) is: the
// local user's name when unset, as ssh does.
func loginOf(user string) string {
	if user != "" {
		return user
	}
	if u, err := osuser.Current(); err == nil {
		return u.Username
	}
	return "root"
}
