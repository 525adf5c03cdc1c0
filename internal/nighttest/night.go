package nighttest

import (
	"context"
	"fmt"
	"io"
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
	"golang.org/x/crypto/ssh"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/internal/simhost"
	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/orchestrate"
	"github.com/nightshift-dev/nightshift/retry"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/sshexec"
	"github.com/nightshift-dev/nightshift/vllmsim"
	"github.com/nightshift-dev/nightshift/worker"
)

// The kinds of rule, by the rule's index modulo Kinds.
const (
	KindCompliant = iota // compliant before any attempt: no model call
	KindFix1             // fixed at attempt 1
	KindFix3             // a wrong try, a banned command, the fix at attempt 3
	KindGiveUp           // a wrong try, then give_up
	KindNever            // wrong tries until max_attempts (5)
	Kinds
)

// RuleKind is the kind of rule id ("r007").
func RuleKind(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "r"))
	return n % Kinds
}

// Policy answers the worker as the kinds say.
type Policy struct{}

// Name is the policy's name.
func (Policy) Name() string { return "night" }

// Next is the model's answer in conversation c.
func (Policy) Next(c vllmsim.Conversation) vllmsim.Generation {
	id, a := c.RuleID, c.Attempt
	try := vllmsim.Apply(fmt.Sprintf("set %s try%d", id, a), "look around")
	fix := vllmsim.Apply(fmt.Sprintf("set %s ok", id), "the fix")
	switch RuleKind(id) {
	case KindFix1:
		return vllmsim.Generation{Calls: []vllmsim.Call{fix}}
	case KindFix3:
		switch a {
		case 1:
			return vllmsim.Generation{Calls: []vllmsim.Call{try}}
		case 2:
			return vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply("rm -rf /", "start over")}}
		}
		return vllmsim.Generation{Calls: []vllmsim.Call{fix}}
	case KindGiveUp:
		if a >= 2 {
			return vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.GiveUpCall("cannot be fixed remotely")}}
		}
		return vllmsim.Generation{Calls: []vllmsim.Call{try}}
	}
	return vllmsim.Generation{Text: "Trying something else.", Calls: []vllmsim.Call{try}}
}

// RulesYAML is the rules file of n rules.
func RulesYAML(n int) []byte {
	var b strings.Builder
	b.WriteString("rules:\n")
	for i := range n {
		id := fmt.Sprintf("r%03d", i)
		fmt.Fprintf(&b, "  - id: %s\n    title: Simulated rule %d\n    description: Key %s must be ok.\n    check: \"test %s = ok\"\n    max_attempts: 5\n", id, i, id, id)
	}
	return []byte(b.String())
}

// Rules returns n rules.
func Rules(t testing.TB, n int) []rules.Rule {
	t.Helper()
	set, err := rules.Parse("night.yaml", RulesYAML(n))
	if err != nil {
		t.Fatal(err)
	}
	return set.Rules()
}

var (
	modelOnce sync.Once
	qwen3     *served.Model
	modelErr  error
)

// LoadModel is the built-in qwen3 model (served.Offline), loaded once.
func LoadModel(t testing.TB) *served.Model {
	t.Helper()
	modelOnce.Do(func() { qwen3, modelErr = served.Offline(served.Config{Tokenizer: "qwen3"}) })
	if modelErr != nil {
		t.Fatal(modelErr)
	}
	return qwen3
}

// Options shape a night.
type Options struct {
	Rules, Hosts int
	// Dir, if set, keeps the hosts' state and exec logs under
	// Dir/hosts/NAME, and the known_hosts file in Dir (a child process
	// killed by a test outlives t.TempDir's cleanup).
	Dir      string
	DieAfter map[string]int // host name → commands before it stops answering
	// Zones, if set, puts host i in zone Zones[i%len] (its ZoneVar
	// variable).
	Zones   []string
	ZoneVar string
	// Exec, when set, runs the hosts' commands (simhost.Config.Exec).
	Exec      func(ctx context.Context, command string, stdout, stderr io.Writer) int
	OutputCap int            // sshexec's cap on each stream; 0 means its default
	Policy    vllmsim.Policy // the model's answers; nil means Policy
	// PromptTokensDetails makes the simulator report prefix-cached tokens.
	PromptTokensDetails bool
	// Host, when set, adjusts host i's configuration before it starts (its
	// OS family and version, Locked keys).
	Host func(i int, c *simhost.Config)
}

// Night is a simulated night's fixtures.
type Night struct {
	Rules []rules.Rule
	Hosts []*simhost.Host
	Inv   []inventory.Host
	Conn  orchestrate.SSHConnector
	Sim   *vllmsim.Server
	Model *served.Model
	// Client calls the simulator, counting and keeping the calls.
	Client *Model
}

// Start starts a night's hosts and model server.
func Start(t testing.TB, o Options) *Night {
	t.Helper()
	ctx := context.Background()
	model := LoadModel(t)
	n := &Night{Rules: Rules(t, o.Rules), Model: model}
	client := simhost.KeyFromSeed("client")
	var known strings.Builder
	for i := range o.Hosts {
		name := fmt.Sprintf("h%02d", i)
		st := map[string]string{}
		for _, r := range n.Rules {
			if RuleKind(r.ID) == KindCompliant {
				st[r.ID] = "ok"
			}
		}
		cfg := simhost.Config{Name: name, AuthorizedKey: client.PublicKey(), State: st, DieAfter: o.DieAfter[name], Exec: o.Exec}
		if o.Dir != "" {
			cfg.Dir = filepath.Join(o.Dir, "hosts", name)
		}
		if o.Host != nil {
			o.Host(i, &cfg)
		}
		h, err := simhost.Start(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		n.Hosts = append(n.Hosts, h)
		ih := inventory.Host{Name: name, Address: "127.0.0.1", Port: h.Port, User: "root"}
		if len(o.Zones) > 0 {
			ih.Vars = map[string]string{o.ZoneVar: o.Zones[i%len(o.Zones)]}
		}
		n.Inv = append(n.Inv, ih)
		known.WriteString(h.KnownHostsLine() + "\n")
	}
	khDir := o.Dir
	if khDir == "" {
		khDir = t.TempDir()
	}
	kh := filepath.Join(khDir, "known_hosts")
	if err := os.WriteFile(kh, []byte(known.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	n.Conn = orchestrate.SSHConnector{Base: sshexec.Config{Signers: []ssh.Signer{client}, NoAgent: true, KnownHostsFiles: []string{kh},
		DialTimeout: 5 * time.Second, CommandTimeout: 30 * time.Second, KeepAlive: -1,
		Redial: retry.Policy{BaseDelay: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond, MaxTries: 2}, OutputCap: o.OutputCap}}

	simCounter := vllmsim.NewModelCounter(model)
	var policy vllmsim.Policy = Policy{}
	if o.Policy != nil {
		policy = o.Policy
	}
	srv, err := vllmsim.New(vllmsim.Config{Counter: simCounter, Policy: policy, Seed: 1, Created: time.Unix(1, 0), PromptTokensDetails: o.PromptTokensDetails})
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
	n.Client = &Model{Inner: openai.NewClientWithConfig(oc)}
	return n
}

// WorkerConfig is the worker configuration `worker run` would use for the
// night: the simulator through Client, its window.
func (n *Night) WorkerConfig(t testing.TB) worker.Config {
	t.Helper()
	b, err := budget.New(budget.Config{ContextWindow: n.Sim.MaxModelLen(), Reserve: budget.DefaultReserve})
	if err != nil {
		t.Fatal(err)
	}
	return worker.Config{Chat: n.Client, Model: n.Model.With(n.Sim.Model(), b),
		RetryDeadline: 5 * time.Second, RequestTimeout: 30 * time.Second}
}

// Model counts model calls and the most in flight at once, and keeps
// every request. Each call takes at least Delay, so that calls of
// parallel hosts overlap unless capped.
type Model struct {
	Inner    worker.ChatModel
	Delay    time.Duration
	calls    atomic.Int64
	inFlight atomic.Int64
	maxSeen  atomic.Int64
	mu       sync.Mutex
	reqs     []openai.ChatCompletionRequest
}

// CreateChatCompletion counts and keeps the call, then makes it.
func (m *Model) CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
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
	time.Sleep(m.Delay)
	return m.Inner.CreateChatCompletion(ctx, req)
}

// Calls is how many calls were made.
func (m *Model) Calls() int64 { return m.calls.Load() }

// MaxInFlight is the most calls in flight at once.
func (m *Model) MaxInFlight() int64 { return m.maxSeen.Load() }

// Requests returns the requests made, in order.
func (m *Model) Requests() []openai.ChatCompletionRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]openai.ChatCompletionRequest(nil), m.reqs...)
}
