package fleet_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/fleet"
	"github.com/nightshift-dev/nightshift/internal/nighttest"
	"github.com/nightshift-dev/nightshift/internal/simhost"
	"github.com/nightshift-dev/nightshift/orchestrate"
	"github.com/nightshift-dev/nightshift/report"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"
	"github.com/nightshift-dev/nightshift/worker"
)

// night is the simulated night of internal/nighttest as a fleet night.
type night struct {
	Night  fleet.Night
	Hosts  []*simhost.Host
	Conn   orchestrate.SSHConnector
	Sim    *vllmsim.Server
	Client *nighttest.Model
	Model  *served.Model
	sim    *nighttest.Night
}

type nightOptions struct {
	rules, hosts int
	dieAfter     map[string]int
	zones        []string // host i's zone is zones[i%len]; none: default
	// exec, when set, runs the hosts' commands (simhost.Config.Exec).
	exec func(ctx context.Context, command string, stdout, stderr io.Writer) int
	// host adjusts host i's configuration (its OS family, Locked keys);
	// policy, when set, is the model's.
	host   func(i int, c *simhost.Config)
	policy vllmsim.Policy
}

func startNight(t testing.TB, o nightOptions) *night {
	t.Helper()
	nt := nighttest.Start(t, nighttest.Options{Rules: o.rules, Hosts: o.hosts, DieAfter: o.dieAfter, Zones: o.zones, ZoneVar: fleet.ZoneVar,
		Exec: o.exec, PromptTokensDetails: true, Host: o.host, Policy: o.policy})
	n := &night{Hosts: nt.Hosts, Conn: nt.Conn, Sim: nt.Sim, Client: nt.Client, Model: nt.Model, sim: nt}
	n.Night = fleet.Night{Name: "simulated night", RuleFiles: []fleet.RuleFile{{Name: "night.yaml", Data: nighttest.RulesYAML(o.rules)}},
		Hosts: nt.Inv,
		// One host at a time: the SDK's test environment has data races
		// between child workflows that run at once (seen with -race in
		// testWorkflowEnvironmentImpl.ExecuteActivity). Hosts in parallel
		// are covered on a real server by cmd/worker's TestFleetIntegration.
		// Lessons and recipes off: every host asks the model, as the
		// worker configuration batch comparisons start from.
		ParallelHosts: 1, RetryDeadline: 5 * time.Second, CommandTimeout: 30 * time.Second, NoLessons: true, NoRecipes: true,
		Model: fleet.ModelSpec{Name: nt.Sim.Model(), Tokenizer: "qwen3", ContextWindow: nt.Sim.MaxModelLen(), MaxTokens: budget.DefaultReserve}}
	return n
}

// activities are the night's real activities: SSH to the simulated hosts,
// HTTP to the simulator.
func (n *night) activities() *fleet.Activities {
	return &fleet.Activities{Connector: n.Conn, Model: n.Client, HeartbeatEvery: 200 * time.Millisecond, MaxIdleConns: fleet.DefaultMaxIdleConns}
}

// workerConfig is the worker configuration `worker run` would use for the
// night, for comparisons with package batch.
func (n *night) workerConfig(t testing.TB) worker.Config { return n.sim.WorkerConfig(t) }

// runNight runs the night workflow in the SDK's test environment with the
// real activities, following its runs when it continues as new (the test
// environment does not) and reading hosts' results from their workflows
// as fleet.Fetch does.
func runNight(t *testing.T, n *night, a *fleet.Activities, prepare func(env *testsuite.TestWorkflowEnvironment)) fleet.NightResult {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	hosts := map[string]fleet.HostResult{}
	in := n.Night
	for run := 1; ; run++ {
		env := s.NewTestWorkflowEnvironment()
		env.SetTestTimeout(3 * time.Minute)
		fleet.Register(env, &fleet.Workflows{LoadModel: func(string) (*served.Model, error) { return n.Model, nil }}, a)
		env.SetOnChildWorkflowCompletedListener(func(_ *workflow.Info, v converter.EncodedValue, err error) {
			var hr fleet.HostResult
			if err == nil && v.Get(&hr) == nil {
				hosts[hr.Host] = hr
			}
		})
		if prepare != nil {
			prepare(env)
		}
		env.ExecuteWorkflow(fleet.NightWorkflowName, in)
		if !env.IsWorkflowCompleted() {
			t.Fatal("the night did not complete")
		}
		err := env.GetWorkflowError()
		var can *workflow.ContinueAsNewError
		if errors.As(err, &can) {
			in = fleet.Night{}
			if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &in); err != nil {
				t.Fatal(err)
			}
			if in.Carry == nil || in.Carry.Runs != run {
				t.Fatalf("run %d continued as new with %+v", run, in.Carry)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var res fleet.NightResult
		if err := env.GetWorkflowResult(&res); err != nil {
			t.Fatal(err)
		}
		if res.Runs != run || !res.InChildren {
			t.Fatalf("result says %d runs (InChildren %v), the night took %d", res.Runs, res.InChildren, run)
		}
		failed := map[string]fleet.HostResult{}
		for _, hr := range res.HostRuns {
			failed[hr.Host] = hr
		}
		res.HostRuns = nil
		for _, h := range res.Hosts {
			if hr, ok := failed[h]; ok {
				res.HostRuns = append(res.HostRuns, hr)
			} else if hr, ok := hosts[h]; ok {
				res.HostRuns = append(res.HostRuns, hr)
			}
		}
		return res
	}
}

// comparable is a report without times, as JSON. The model server's usage
// (prompt and prefix-cached tokens) stays: it is compared too, so the
// nights compared must send their requests to fresh simulators in the same
// order (one host at a time), as the prefix cache's hits depend on it.
func comparable(t testing.TB, r *report.Run) string {
	t.Helper()
	c := *r
	c.Started, c.Finished = time.Time{}, time.Time{}
	c.Results = append([]report.TaskResult(nil), r.Results...)
	for i := range c.Results {
		c.Results[i].Duration = 0
	}
	b, err := json.MarshalIndent(c, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// testWriter sends log lines to the test's log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
