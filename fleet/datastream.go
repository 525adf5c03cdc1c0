package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/nightshift-dev/nightshift/internal/hostfile"
	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/scap"
)

// datastreamActivity reads a night's SCAP datastream on one of its hosts.
const datastreamActivity = "nightshift.Datastream"

// errTypeDatastream: the datastream, its profile or a rule id is not right
// (retrying cannot change it).
const errTypeDatastream = "InvalidDatastream"

// maxDatastreamHosts is how many hosts of the first host's zone the
// datastream activity tries, in inventory order, before giving up.
const maxDatastreamHosts = 8

// DatastreamSource asks for the rules of an SCAP profile from the source
// datastream at Path on the hosts, as `worker run --datastream` does: each
// rule is checked by oscap on the host against that file.
type DatastreamSource struct {
	Path    string   `json:"path"`               // on the hosts
	Profile string   `json:"profile"`            // short (anssi_bp28_high) or full id
	RuleIDs []string `json:"rule_ids,omitempty"` // empty: every rule the profile selects
}

// ProfileRule is a rule of an SCAP profile as a night carries it: the text
// the model sees and the oscap check.
type ProfileRule struct {
	ID          string `json:"id"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Hints       string `json:"hints,omitempty"`
	// The check: oscap xccdf eval --profile Profile --rule Rule Datastream.
	Datastream string `json:"datastream"`
	Profile    string `json:"profile"`
	Rule       string `json:"rule"`
	Oscap      string `json:"oscap,omitempty"`
	// Paths is the rule's scope, derived from its OVAL check, and
	// ScopeNote why it is empty where it could not be (rules.Rule).
	Paths     []string `json:"paths,omitempty"`
	ScopeNote string   `json:"scope_note,omitempty"`
	// Units, Sysctl and Keys are what the check reads besides files
	// (rules.Rule).
	Units  []string `json:"units,omitempty"`
	Sysctl []string `json:"sysctl,omitempty"`
	Keys   []string `json:"keys,omitempty"`
}

// rule is the worker rule of r.
func (r ProfileRule) rule() rules.Rule {
	return rules.Rule{ID: r.ID, Title: r.Title, Description: r.Description, Hints: r.Hints, Paths: r.Paths, ScopeNote: r.ScopeNote,
		Units: r.Units, Sysctl: r.Sysctl, Keys: r.Keys,
		Check: scap.Check{Datastream: r.Datastream, Profile: r.Profile, Rule: r.Rule, Oscap: r.Oscap},
		Pos:   rules.Position{File: r.Datastream}}
}

// datastreamInput is the datastream activity's input: the hosts to try, in
// order (the first that answers is read).
type datastreamInput struct {
	Hosts      []inventory.Host `json:"hosts"`
	Datastream DatastreamSource `json:"datastream"`
}

// oscapInput is an oscap check of checkInput.
type oscapInput struct {
	Datastream string `json:"datastream"`
	Profile    string `json:"profile"`
	Rule       string `json:"rule"`
	Oscap      string `json:"oscap,omitempty"`
}

// Datastream reads the datastream on the first host of in that answers
// and returns the rules of its profile. A host that does not answer is
// passed over; a file that cannot be read whole, an invalid datastream, an
// unknown profile or rule fails for good (InvalidDatastream); no host
// answering fails the attempt (retried).
func (a *Activities) datastream(ctx context.Context, in datastreamInput) ([]ProfileRule, error) {
	defer a.heartbeat(ctx)()
	ds := in.Datastream
	if a.Connector == nil {
		return nil, errors.New("fleet: this worker has no connector to hosts")
	}
	var errs []error
	for _, h := range in.Hosts {
		t, release, err := a.target(ctx, h)
		if err != nil {
			errs = append(errs, fmt.Errorf("host %s: %w", h.Name, err))
			continue
		}
		data, err := hostfile.Read(ctx, t, ds.Path, scap.MaxSize)
		release(errors.Is(err, hostfile.ErrHost))
		if errors.Is(err, hostfile.ErrHost) {
			errs = append(errs, fmt.Errorf("host %s: %w", h.Name, err))
			continue
		}
		if err != nil {
			return nil, invalidDatastream(fmt.Errorf("host %s: %w", h.Name, err))
		}
		parsed, err := scap.Parse(bytes.NewReader(data), h.Name+":"+ds.Path)
		if err != nil {
			return nil, invalidDatastream(err)
		}
		set, err := parsed.Set(scap.Options{Profile: ds.Profile, Rules: ds.RuleIDs, TargetPath: ds.Path})
		if errors.Is(err, scap.ErrUnknownProfile) {
			short := make([]string, 0, len(parsed.ProfileIDs()))
			for _, p := range parsed.ProfileIDs() {
				short = append(short, scap.ShortID(p))
			}
			return nil, invalidDatastream(fmt.Errorf("%w (it has %s)", err, strings.Join(short, ", ")))
		}
		if err != nil {
			return nil, invalidDatastream(err)
		}
		var out []ProfileRule
		for _, r := range set.Rules() {
			c, ok := r.Check.(scap.Check)
			if !ok {
				return nil, invalidDatastream(fmt.Errorf("rule %s: a %s check, not oscap", r.ID, r.Check.Kind()))
			}
			out = append(out, ProfileRule{ID: r.ID, Title: r.Title, Description: r.Description, Hints: r.Hints,
				Datastream: c.Datastream, Profile: c.Profile, Rule: c.Rule, Oscap: c.Oscap, Paths: r.Paths, ScopeNote: r.ScopeNote,
				Units: r.Units, Sysctl: r.Sysctl, Keys: r.Keys})
		}
		return out, nil
	}
	return nil, fmt.Errorf("fleet: read the datastream %s: no host answered: %w", ds.Path, errors.Join(errs...))
}

func invalidDatastream(err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), errTypeDatastream, err)
}
