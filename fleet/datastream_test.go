package fleet_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/nightshift-dev/nightshift/fleet"
	"github.com/nightshift-dev/nightshift/served"

	"github.com/nightshift-dev/nightshift"
)

const excerpt = "../testdata/scap/ssg-debian12-excerpt.xml"

// scapHost plays a Debian host with OpenSCAP: the commands that read a file
// (wc, tail | head: fixed and read-only) run with this machine's sh; oscap
// answers a rule's progress line from the host's state (pass once the key
// of the rule is "ok" or "try2"); "set KEY VALUE" sets a key; anything else
// (the probe) prints nothing.
type scapHost struct {
	mu    sync.Mutex
	state map[string]string
	log   []string
}

func (h *scapHost) exec(ctx context.Context, command string, stdout, stderr io.Writer) int {
	h.mu.Lock()
	h.log = append(h.log, command)
	h.mu.Unlock()
	switch f := strings.Fields(command); {
	case strings.HasPrefix(command, "if [ ! -e ") || strings.HasPrefix(command, "tail -c +"):
		cmd := exec.CommandContext(ctx, "sh", "-c", command)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		if err := cmd.Run(); err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				return ee.ExitCode()
			}
			return 127
		}
		return 0
	case len(f) > 0 && f[0] == "oscap":
		var full string
		for i := range f[:len(f)-1] {
			if f[i] == "--rule" {
				full = strings.Trim(f[i+1], "'")
			}
		}
		short := strings.TrimPrefix(full, "xccdf_org.ssgproject.content_rule_")
		h.mu.Lock()
		v := h.state[short]
		h.mu.Unlock()
		if v == "ok" || v == "try2" {
			fmt.Fprintf(stdout, "%s:pass\n", full)
			return 0
		}
		fmt.Fprintf(stdout, "%s:fail\n", full)
		return 2
	case len(f) == 3 && f[0] == "set":
		h.mu.Lock()
		h.state[f[1]] = f[2]
		h.mu.Unlock()
		fmt.Fprintf(stdout, "%s=%s\n", f[1], f[2])
		return 0
	}
	return 0
}

// A night given a datastream and a profile (fleet start --datastream
// --profile) reads the datastream on its host, works on the profile's
// rules with their text from the datastream, and checks each with oscap on
// the host through the check activity: a compliant rule costs no model
// call, a failing one is fixed by the simulated model at attempt 2.
func TestNightDatastream(t *testing.T) {
	src, err := os.ReadFile(excerpt)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ssg ds.xml") // a path that needs quoting
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	host := &scapHost{state: map[string]string{"accounts_tmout": "ok"}}
	n := startNight(t, nightOptions{rules: 1, hosts: 1, exec: host.exec})
	n.Night.RuleFiles, n.Night.MaxAttempts = nil, 3
	n.Night.Datastream = &fleet.DatastreamSource{Path: path, Profile: "anssi_bp28_high",
		RuleIDs: []string{"accounts_tmout", "sshd_disable_root_login"}}
	if err := n.Night.Validate(); err != nil {
		t.Fatalf("a night to read its rules from a datastream: %v", err)
	}
	res := runNight(t, n, n.activities(), nil)
	rep := fleet.Report(res)
	if len(rep.Results) != 2 {
		t.Fatalf("%d results, want 2:\n%s", len(rep.Results), comparable(t, rep))
	}
	want := map[string]nightshift.RuleStatus{"accounts_tmout": nightshift.RuleCompliant, "sshd_disable_root_login": nightshift.RuleFixed}
	for _, x := range rep.Results {
		if x.Outcome != want[x.Rule] || x.Title == "" || x.Title == x.Rule {
			t.Errorf("%s: %s, title %q; want %s and the datastream's title", x.Rule, x.Outcome, x.Title, want[x.Rule])
		}
		if x.Rule == "sshd_disable_root_login" && len(x.Attempts) != 2 {
			t.Errorf("%s: %d attempts, want 2", x.Rule, len(x.Attempts))
		}
	}
	oscap, reads := 0, 0
	for _, c := range host.log {
		switch {
		case strings.HasPrefix(c, "oscap xccdf eval ") && strings.HasSuffix(c, "'"+path+"'") &&
			strings.Contains(c, "--profile xccdf_org.ssgproject.content_profile_anssi_bp28_high"):
			oscap++
		case strings.HasPrefix(c, "if [ ! -e ") || strings.HasPrefix(c, "tail -c +"):
			reads++
		}
	}
	// accounts_tmout: 1 check; sshd_disable_root_login: before, after
	// attempt 1, after attempt 2.
	if oscap != 4 || reads != 2 {
		t.Errorf("the host ran %d oscap checks (want 4) and %d reads of the datastream (want 2):\n%s", oscap, reads, strings.Join(host.log, "\n"))
	}
	var described bool
	for _, req := range n.Client.Requests() {
		for _, m := range req.Messages {
			described = described || strings.Contains(m.Content, "PermitRootLogin")
		}
	}
	if !described {
		t.Error("no prompt carried the datastream's description of sshd_disable_root_login")
	}
}

// A datastream whose profile does not exist fails the night, naming the
// profiles it has; it is not retried.
func TestNightDatastreamUnknownProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ds.xml")
	src, err := os.ReadFile(excerpt)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	host := &scapHost{state: map[string]string{}}
	n := startNight(t, nightOptions{rules: 1, hosts: 1, exec: host.exec})
	n.Night.RuleFiles = nil
	n.Night.Datastream = &fleet.DatastreamSource{Path: path, Profile: "nosuch"}
	var s testsuite.WorkflowTestSuite
	s.SetLogger(tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(time.Minute)
	fleet.Register(env, &fleet.Workflows{LoadModel: func(string) (*served.Model, error) { return n.Model, nil }}, n.activities())
	env.ExecuteWorkflow(fleet.NightWorkflowName, n.Night)
	err = env.GetWorkflowError()
	if err == nil || !strings.Contains(err.Error(), "(it has anssi_bp28_high, standard)") {
		t.Fatalf("night: %v; want the profiles the datastream has", err)
	}
	reads := 0
	for _, c := range host.log {
		if strings.HasPrefix(c, "if [ ! -e ") {
			reads++
		}
	}
	if reads != 1 {
		t.Fatalf("the datastream was read %d times, want once (an invalid profile is not retried)", reads)
	}
}

// The same night on a real Temporal dev server through Serve: the
// datastream activity is registered on the zone's workers and the oscap
// check's input and result cross the server.
func TestNightDatastreamOnServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	src, err := os.ReadFile(excerpt)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ds.xml")
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	c := devServer(t)
	host := &scapHost{state: map[string]string{"accounts_tmout": "ok"}}
	n := startNight(t, nightOptions{rules: 1, hosts: 1, exec: host.exec})
	n.Night.RuleFiles, n.Night.MaxAttempts = nil, 3
	n.Night.Datastream = &fleet.DatastreamSource{Path: path, Profile: "anssi_bp28_high",
		RuleIDs: []string{"accounts_tmout", "sshd_disable_root_login"}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- fleet.Serve(sctx, fleet.ServeConfig{Client: c, Activities: n.activities(), ModelSlots: 1,
			Workflows: &fleet.Workflows{LoadModel: func(string) (*served.Model, error) { return n.Model, nil }}})
	}()
	defer func() { stop(); <-done }()
	run, err := fleet.Start(ctx, c, "ds", n.Night)
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	res, err := fleet.Fetch(ctx, c, "ds")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]nightshift.RuleStatus{}
	for _, x := range fleet.Report(res).Results {
		got[x.Rule] = x.Outcome
	}
	if got["accounts_tmout"] != nightshift.RuleCompliant || got["sshd_disable_root_login"] != nightshift.RuleFixed {
		t.Fatalf("outcomes %v; want accounts_tmout compliant, sshd_disable_root_login fixed", got)
	}
}
