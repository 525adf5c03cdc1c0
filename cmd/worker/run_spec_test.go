package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/scap"
	"github.com/nightshift-dev/nightshift/sshexec"

	"github.com/nightshift-dev/nightshift"
)

// localConnector connects inventory hosts to localHosts: hosts named in
// down answer every command with a lost connection; the others run the
// datastream reader's fixed, read-only commands (wc, tail, head) in dir.
type localConnector struct {
	dir      string
	down     map[string]bool
	connects []string
}

func (c *localConnector) Connect(_ context.Context, h inventory.Host) (nightshift.Target, error) {
	c.connects = append(c.connects, h.Name)
	return localTarget{&localHost{dir: c.dir}, h.Name, c.down[h.Name]}, nil
}

type localTarget struct {
	h    *localHost
	name string
	down bool
}

func (t localTarget) Run(ctx context.Context, command string) (nightshift.Exec, error) {
	if t.down {
		return nightshift.Exec{ExitCode: -1}, &sshexec.OpError{Host: t.name, Op: sshexec.OpDial, Err: syscall.ECONNREFUSED}
	}
	return t.h.Run(ctx, command)
}

func (localTarget) Close() error { return nil }

// TestLoadSpecDatastream: `worker run --datastream PATH --profile ID`
// builds its rules from the datastream on the hosts — the whole profile
// without --rule, in the profile's order — read from the first host that
// answers; an invalid profile is a usage error at once, and no host
// answering is exit 3 naming each host.
func TestLoadSpecDatastream(t *testing.T) {
	src, err := os.ReadFile(excerptPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ds.xml"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	inv := filepath.Join(dir, "hosts.yaml")
	if err := os.WriteFile(inv, []byte("hosts:\n  - host: db1\n  - host: web1\n  - host: web2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := scap.Load(excerptPath)
	if err != nil {
		t.Fatal(err)
	}
	profile, err := ds.Profile("anssi_bp28_high")
	if err != nil {
		t.Fatal(err)
	}
	var whole []string
	for _, id := range profile.Rules {
		whole = append(whole, scap.ShortID(id))
	}
	if len(whole) < 5 {
		t.Fatalf("the excerpt's anssi_bp28_high selects %d rules; the test needs a real profile", len(whole))
	}

	tests := []struct {
		name         string
		profile      string
		ids          []string
		down         []string
		wantIDs      []string
		wantConnects string
		wantErr      string
		wantCode     int
	}{
		{"whole profile", "anssi_bp28_high", nil, nil, whole, "db1", "", 0},
		{"some rules", "anssi_bp28_high", []string{"sshd_set_keepalive", "accounts_tmout"}, nil, []string{"sshd_set_keepalive", "accounts_tmout"}, "db1", "", 0},
		{"first host down", "anssi_bp28_high", nil, []string{"db1"}, whole, "db1,web1", "", 0},
		{"unknown profile", "nosuch", nil, []string{"db1"}, nil, "db1,web1", "(it has anssi_bp28_high, standard)", exitUsage},
		{"no host answers", "standard", nil, []string{"db1", "web1", "web2"}, nil, "db1,web1,web2",
			"read the datastream ds.xml: no host answered: host db1: read ds.xml on the host", exitUnreachable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := &localConnector{dir: dir, down: map[string]bool{}}
			for _, h := range tt.down {
				conn.down[h] = true
			}
			m := &runMeta{Datastream: "ds.xml", Profile: tt.profile, RuleIDs: tt.ids, Inventory: inv}
			spec, err := loadSpec(context.Background(), m, conn)
			if got := strings.Join(conn.connects, ","); got != tt.wantConnects {
				t.Errorf("connected to %s, want %s", got, tt.wantConnects)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || exitCode(err, &strings.Builder{}) != tt.wantCode {
					t.Fatalf("err = %v (exit %d); want exit %d naming %q", err, exitCode(err, &strings.Builder{}), tt.wantCode, tt.wantErr)
				}
				if tt.wantCode == exitUnreachable {
					for _, h := range tt.down {
						if !strings.Contains(err.Error(), "host "+h+":") {
							t.Errorf("the error does not name host %s: %v", h, err)
						}
					}
					if !errors.Is(err, syscall.ECONNREFUSED) {
						t.Errorf("the hosts' errors are not wrapped: %v", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range spec.Rules {
				got = append(got, r.ID)
				if c, ok := r.Check.(scap.Check); !ok || c.Datastream != "ds.xml" || c.Profile != profile.ID {
					t.Errorf("%s: check %#v; want oscap on the hosts' ds.xml with %s", r.ID, r.Check, profile.ID)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.wantIDs) {
				t.Errorf("rules %q\nwant %q", got, tt.wantIDs)
			}
			if len(spec.Hosts) != 3 || spec.Meta != m {
				t.Errorf("%d hosts, meta %v; want the 3 hosts and the flags", len(spec.Hosts), spec.Meta)
			}
		})
	}
}

// TestRunDatastreamUsage: the run's rule sources exclude each other and
// --datastream needs --profile.
func TestRunDatastreamUsage(t *testing.T) {
	base := []string{"run", "--inventory", "hosts.yaml", "--journal", "j.db"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no source", nil, "--rules is required (or --datastream with --profile)"},
		{"both sources", []string{"--rules", "r.yaml", "--datastream", "/ds.xml", "--profile", "p"}, "cannot be combined"},
		{"--datastream without --profile", []string{"--datastream", "/ds.xml"}, "--datastream needs --profile"},
		{"--profile without --datastream", []string{"--rules", "r.yaml", "--profile", "p"}, "--profile applies only to --datastream"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := cli(t, "", append(append([]string{}, base...), tt.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 naming %q", code, stderr, tt.want)
			}
		})
	}
}
