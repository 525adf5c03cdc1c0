package orchestrate

import (
	"context"
	"fmt"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/sshexec"
)

// SSHConnector connects to inventory hosts with sshexec. Base holds what
// every host shares (keys, known_hosts, timeouts, output cap); each host's
// address, port, user and identity file override it when set.
type SSHConnector struct {
	Base sshexec.Config
}

// Connect returns a client for h. It does not dial: the first command does
// (and a host that does not answer fails it).
func (c SSHConnector) Connect(_ context.Context, h inventory.Host) (nightshift.Target, error) {
	cl, err := sshexec.New(c.Config(h))
	if err != nil {
		return nil, fmt.Errorf("host %s: %w", h.Name, err)
	}
	return cl, nil
}

// Config is the SSH configuration Connect uses for h: Base with the host's
// address, port, user, key and sudo.
func (c SSHConnector) Config(h inventory.Host) sshexec.Config {
	cfg := c.Base
	cfg.Host = h.Address
	if cfg.Host == "" {
		cfg.Host = h.Name
	}
	if h.Port != 0 {
		cfg.Port = h.Port
	}
	if h.User != "" {
		cfg.User = h.User
	}
	if h.Become {
		cfg.Sudo = true
	}
	if h.Identity != "" {
		cfg.IdentityFiles = append([]string{h.Identity}, cfg.IdentityFiles...)
	}
	return cfg
}
