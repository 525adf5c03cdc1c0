package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/sshexec"
)

// sshBase is the SSH configuration every host of a batch run shares; an
// inventory host's own address, port, user and key override it.
func sshBase(m *runMeta, logger *slog.Logger) sshexec.Config {
	cfg := sshexec.Config{AcceptNewHostKey: m.AcceptNew, CommandTimeout: m.CommandTimeout, Logger: logger, Sudo: m.Sudo,
		ReconnectDeadline: m.ReconnectDeadline}
	if m.Identity != "" {
		cfg.IdentityFiles = []string{m.Identity}
	}
	if m.KnownHosts != "" {
		cfg.KnownHostsFiles = []string{m.KnownHosts}
	}
	return cfg
}

// loadSpec reads the inventory and the rules m names: from rules files, or
// from the SCAP datastream on the hosts, read through conn from the first
// selected host that answers.
func loadSpec(ctx context.Context, m *runMeta, conn nightshift.Connector) (batch.Spec, error) {
	var spec batch.Spec
	inv, err := inventory.Load(m.Inventory)
	if err != nil {
		return spec, &usageError{err}
	}
	if spec.Hosts, err = inv.Select(m.Limit...); err != nil {
		return spec, &usageError{err}
	}
	if len(spec.Hosts) == 0 {
		return spec, usagef("nothing to do: no host selected in %s", m.Inventory)
	}
	if m.Datastream != "" {
		spec.Rules, err = hostDatastreamRules(ctx, conn, spec.Hosts, m.Datastream, m.Profile, m.RuleIDs)
	} else {
		spec.Rules, err = fileRules(m.Rules, m.RuleIDs)
	}
	if err != nil {
		return spec, err
	}
	if len(spec.Rules) == 0 {
		return spec, usagef("nothing to do: no rules")
	}
	spec.Meta = m
	return spec, nil
}

// fileRules reads the rules files, every rule or only ids, in that order.
func fileRules(paths, ids []string) ([]rules.Rule, error) {
	var all []rules.Rule
	byID := map[string]rules.Rule{}
	for _, p := range paths {
		set, err := rules.Load(p)
		if err != nil {
			return nil, &usageError{err}
		}
		for _, r := range set.Rules() {
			if _, dup := byID[r.ID]; dup {
				return nil, usagef("rule %s is defined in more than one of the rules files", r.ID)
			}
			byID[r.ID] = r
			all = append(all, r)
		}
	}
	if len(ids) == 0 {
		return all, nil
	}
	out := make([]rules.Rule, 0, len(ids))
	for _, id := range ids {
		r, ok := byID[id]
		if !ok {
			return nil, usagef("rule %q is not in %s", id, strings.Join(paths, ", "))
		}
		out = append(out, r)
	}
	return out, nil
}

// hostDatastreamRules builds the rules of profile (every rule it selects,
// or ids) from the datastream at path on the hosts. It reads the file from
// the first host that answers: a host that does not is passed over (the
// run marks it unreachable), an invalid datastream, profile or rule id is
// a usage error at once. When no host answers the error names each one.
func hostDatastreamRules(ctx context.Context, conn nightshift.Connector, hosts []inventory.Host, path, profile string, ids []string) ([]rules.Rule, error) {
	var errs []error
	for _, h := range hosts {
		t, err := conn.Connect(ctx, h)
		if err != nil {
			errs = append(errs, fmt.Errorf("host %s: %w", h.Name, err))
			continue
		}
		rs, err := datastreamRules(ctx, t, h.Name, path, profile, ids)
		t.Close()
		var u *unreachable
		if errors.As(err, &u) {
			errs = append(errs, fmt.Errorf("host %s: %w", h.Name, err))
			continue
		}
		return rs, err
	}
	return nil, &unreachable{fmt.Errorf("read the datastream %s: no host answered: %w", path, errors.Join(errs...))}
}
