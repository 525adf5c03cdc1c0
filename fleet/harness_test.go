package fleet_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
	"golang.org/x/crypto/ssh"

	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/fleet"
	"github.com/nightshift-dev/nightshift/internal/simhost"
	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/report"
	"github.com/nightshift-dev/nightshift/retry"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/sshexec"
	"github.com/nightshift-dev/nightshift/vllmsim"
	"github.com/nightshift-dev/nightshift/worker"
)

// The simulated night of package batch's tests: rules r000… of five kinds
// by index, simulated hosts reached over SSH, the vLLM simulator answering
// by nightPolicy. Each remediation command is unique per rule and attempt,
// so the hosts' exec logs tell how often each command really ran.
const (
	kindCompliant = iota // compliant before any attempt: no model call
	kindFix1             // fixed at attempt 1
	kindFix3             // a wrong try, a banned command, the fix at attempt 3
	kindGiveUp           // a wrong try, then give_up
	kindNever            // wrong tries until max_attempts (5)
	kinds
)

func ruleKind(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "r"))
	return n % kinds
}

type nightPolicy struct{}

func (nightPolicy) Name() string { return "night" }

func (nightPolicy) Next(c vllmsim.Conversation) vllmsim.Generation {
	id, a := c.RuleID, c.Attempt
	try := vllmsim.Apply(fmt.Sprintf("set %s try%d", id, a), "look around")
	fix := vllmsim.Apply(fmt.Sprintf("set %s ok", id), "the fix")
	switch ruleKind(id) {
	case kindFix1:
		return vllmsim.Generation{Calls: []vllmsim.Call{fix}}
	case kindFix3:
		switch a {
		case 1:
			return vllmsim.Generation{Calls: []vllmsim.Call{try}}
		case 2:
			return vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply("rm -rf /", "start over")}}
		}
		return vllmsim.Generation{Calls: []vllmsim.Call{fix}}
	case kindGiveUp:
		if a >= 2 {
			return vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.GiveUpCall("cannot be fixed remotely")}}
		}
		return vllmsim.Generation{Calls: []vllmsim.Call{try}}
	}
	return vllmsim.Generation{Text: "Trying something else.", Calls: []vllmsim.Call{try}}
}

func rulesYAML(n int) []byte {
	var b strings.Builder
	b.WriteString("rules:\n")
	for i := range n {
		id := fmt.Sprintf("r%03d", i)
		fmt.Fprintf(&b, "  - id: %s\n    title: Simulated rule %d\n    description: Key %s must be ok.\n    check: \"test %s = ok\"\n    max_attempts: 5\n", id, i, id, id)
	}
	return []byte(b.String())
}

var (
	modelOnce sync.Once
	qwen3     *served.Model
	modelErr  error
)

func loadModel(t testing.TB) *served.Model {
	t.Helper()
	modelOnce.Do(func() { qwen3, modelErr = served.Offline(served.Config{Tokenizer: "qwen3"}) })
	if modelErr != nil {
		t.Fatal(modelErr)
	}
	return qwen3
}

// night is a simulated night's fixtures.
type night struct {
	Night  fleet.Night
	Hosts  []*simhost.Host
	Conn   batch.SSHConnector
	Sim    *vllmsim.Server
	Client *recordingModel
	Model  *served.Model
}

type nightOptions struct {
	rules, hosts int
	dieAfter     map[string]int
	zones        []string // host i's zone is zones[i%len]; none: default
	// exec, when set, runs the hosts' commands (simhost.Config.Exec).
	exec func(ctx context.Context, command string, stdout, stderr io.Writer) int
}

func startNight(t testing.TB, o nightOptions) *night {
	t.Helper()
	ctx := context.Background()
	model := loadModel(t)
	n := &night{Model: model}
	n.Night = fleet.Night{Name: "simulated night", RuleFiles: []fleet.RuleFile{{Name: "night.yaml", Data: rulesYAML(o.rules)}},
		// One host at a time: the SDK's test environment has data races
		// between child workflows that run at once (seen with -race in
		// testWorkflowEnvironmentImpl.ExecuteActivity). Hosts in parallel
		// are covered on a real server by cmd/worker's TestFleetIntegration.
		ParallelHosts: 1, RetryDeadline: 5 * time.Second, CommandTimeout: 30 * time.Second, NoLessons: true}
	client := simhost.KeyFromSeed("client")
	var known strings.Builder
	for i := range o.hosts {
		name := fmt.Sprintf("h%02d", i)
		st := map[string]string{}
		for r := range o.rules {
			if id := fmt.Sprintf("r%03d", r); ruleKind(id) == kindCompliant {
				st[id] = "ok"
			}
		}
		h, err := simhost.Start(ctx, simhost.Config{Name: name, AuthorizedKey: client.PublicKey(), State: st, DieAfter: o.dieAfter[name], Exec: o.exec})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		n.Hosts = append(n.Hosts, h)
		ih := inventory.Host{Name: name, Address: "127.0.0.1", Port: h.Port, User: "root"}
		if len(o.zones) > 0 {
			ih.Vars = map[string]string{fleet.ZoneVar: o.zones[i%len(o.zones)]}
		}
		n.Night.Hosts = append(n.Night.Hosts, ih)
		known.WriteString(h.KnownHostsLine() + "\n")
	}
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := os.WriteFile(kh, []byte(known.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	n.Conn = batch.SSHConnector{Base: sshexec.Config{Signers: []ssh.Signer{client}, NoAgent: true, KnownHostsFiles: []string{kh},
		DialTimeout: 5 * time.Second, CommandTimeout: 30 * time.Second, KeepAlive: -1,
		Redial: retry.Policy{BaseDelay: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond, MaxTries: 2}}}
	simCounter := vllmsim.NewModelCounter(model)
	srv, err := vllmsim.New(vllmsim.Config{Counter: simCounter, Policy: nightPolicy{}, Seed: 1, Created: time.Unix(1, 0), PromptTokensDetails: true})
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := srv.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	n.Sim = srv
	oc := openai.DefaultConfig("")
	oc.BaseURL = strings.TrimRight(url, "/") + "/v1"
	oc.HTTPClient = &http.Client{}
	n.Client = &recordingModel{inner: openai.NewClientWithConfig(oc)}
	n.Night.Model = fleet.ModelSpec{Name: srv.Model(), Tokenizer: "qwen3", ContextWindow: srv.MaxModelLen(), MaxTokens: budget.DefaultReserve}
	return n
}

// activities are the night's real activities: SSH to the simulated hosts,
// HTTP to the simulator.
func (n *night) activities() *fleet.Activities {
	return &fleet.Activities{Connector: n.Conn, Model: n.Client, HeartbeatEvery: 200 * time.Millisecond}
}

// workerConfig is the worker configuration `worker run` would use for the
// night, for comparisons with package batch.
func (n *night) workerConfig(t testing.TB) worker.Config {
	b, err := budget.New(budget.Config{ContextWindow: n.Night.Model.ContextWindow, Reserve: n.Night.Model.MaxTokens})
	if err != nil {
		t.Fatal(err)
	}
	return worker.Config{Chat: n.Client, Model: n.Model.With(n.Night.Model.Name, b),
		RetryDeadline: 5 * time.Second, RequestTimeout: 30 * time.Second}
}

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

// recordingModel counts model calls and the most in flight at once, and
// keeps every request.
type recordingModel struct {
	inner    worker.ChatModel
	calls    atomic.Int64
	inFlight atomic.Int64
	maxSeen  atomic.Int64
	mu       sync.Mutex
	reqs     []openai.ChatCompletionRequest
}

func (m *recordingModel) CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	m.calls.Add(1)
	n := m.inFlight.Add(1)
	defer m.inFlight.Add(-1)
	for {
		old := m.maxSeen.Load()
		if n <= old || m.maxSeen.CompareAndSwap(old, n) {
			break
		}
	}
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	return m.inner.CreateChatCompletion(ctx, req)
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
