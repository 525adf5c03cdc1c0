package batch_test

import (
	"context"
	"fmt"
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

	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/internal/simhost"
	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/retry"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/sshexec"
	"github.com/nightshift-dev/nightshift/vllmsim"
	"github.com/nightshift-dev/nightshift/worker"
)

// A simulated night: rules r000…, each of one of five kinds by its index,
// on simulated hosts h00… reached over SSH, with the vLLM simulator
// answering by nightPolicy. Every remediation command is unique per rule and
// attempt ("set rK tryN", "set rK ok"), so the hosts' exec logs tell how
// often each recorded command really ran.
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

// nightPolicy answers the worker as the kinds say.
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

// nightRules returns n rules.
func nightRules(t testing.TB, n int) []rules.Rule {
	t.Helper()
	var b strings.Builder
	b.WriteString("rules:\n")
	for i := range n {
		id := fmt.Sprintf("r%03d", i)
		fmt.Fprintf(&b, "  - id: %s\n    title: Simulated rule %d\n    description: Key %s must be ok.\n    check: \"test %s = ok\"\n    max_attempts: 5\n", id, i, id, id)
	}
	set, err := rules.Parse("night.yaml", []byte(b.String()))
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
	Rules  []rules.Rule
	Hosts  []*simhost.Host
	Inv    []inventory.Host
	Conn   batch.SSHConnector
	Worker worker.Config
	Sim    *vllmsim.Server
	calls  *countingModel
}

// nightOptions shapes a night.
type nightOptions struct {
	rules, hosts int
	dir          string         // hosts keep their state and exec logs under dir/hosts/NAME
	dieAfter     map[string]int // host name → commands before it stops answering
	policy       vllmsim.Policy // the model's answers; nil means nightPolicy
	outputCap    int            // sshexec's cap on each stream; 0 means its default
}

func startNight(t testing.TB, o nightOptions) *night {
	t.Helper()
	ctx := context.Background()
	model := loadModel(t)
	n := &night{Rules: nightRules(t, o.rules)}
	client := simhost.KeyFromSeed("client")
	var known strings.Builder
	for i := range o.hosts {
		name := fmt.Sprintf("h%02d", i)
		st := map[string]string{}
		for _, r := range n.Rules {
			if ruleKind(r.ID) == kindCompliant {
				st[r.ID] = "ok"
			}
		}
		cfg := simhost.Config{Name: name, AuthorizedKey: client.PublicKey(), State: st, DieAfter: o.dieAfter[name]}
		if o.dir != "" {
			cfg.Dir = filepath.Join(o.dir, "hosts", name)
		}
		h, err := simhost.Start(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		n.Hosts = append(n.Hosts, h)
		n.Inv = append(n.Inv, inventory.Host{Name: name, Address: "127.0.0.1", Port: h.Port, User: "root"})
		known.WriteString(h.KnownHostsLine() + "\n")
	}
	// A night in o.dir keeps its known_hosts there too: the kill test's
	// child is killed before t.TempDir's cleanup could run.
	khDir := o.dir
	if khDir == "" {
		khDir = t.TempDir()
	}
	kh := filepath.Join(khDir, "known_hosts")
	if err := os.WriteFile(kh, []byte(known.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	n.Conn = batch.SSHConnector{Base: sshexec.Config{Signers: []ssh.Signer{client}, NoAgent: true, KnownHostsFiles: []string{kh},
		DialTimeout: 5 * time.Second, CommandTimeout: 30 * time.Second, KeepAlive: -1,
		Redial: retry.Policy{BaseDelay: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond, MaxTries: 2}, OutputCap: o.outputCap}}

	simCounter := vllmsim.NewModelCounter(model)
	var policy vllmsim.Policy = nightPolicy{}
	if o.policy != nil {
		policy = o.policy
	}
	srv, err := vllmsim.New(vllmsim.Config{Counter: simCounter, Policy: policy, Seed: 1, Created: time.Unix(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := srv.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	n.Sim = srv
	b, err := budget.New(budget.Config{ContextWindow: srv.MaxModelLen(), Reserve: budget.DefaultReserve})
	if err != nil {
		t.Fatal(err)
	}
	oc := openai.DefaultConfig("")
	oc.BaseURL = strings.TrimRight(url, "/") + "/v1"
	oc.HTTPClient = &http.Client{}
	n.calls = &countingModel{inner: openai.NewClientWithConfig(oc)}
	n.Worker = worker.Config{Chat: n.calls, Model: model.With(srv.Model(), b),
		RetryDeadline: 5 * time.Second, RequestTimeout: 30 * time.Second}
	return n
}

// runner returns a Runner on j for the night.
func (n *night) runner(t testing.TB, j *journal.Journal, parallel, models int, stop <-chan struct{}) *batch.Runner {
	t.Helper()
	r, err := batch.New(batch.Config{Journal: j, Connector: n.Conn, Worker: n.Worker, ParallelHosts: parallel,
		ModelConcurrency: models, Stop: stop})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (n *night) spec() batch.Spec {
	return batch.Spec{Name: "simulated night", Rules: n.Rules, Hosts: n.Inv}
}

func openJournal(t testing.TB, path string) *journal.Journal {
	t.Helper()
	j, err := journal.Open(context.Background(), path, journal.Config{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	return j
}

// countingModel counts model calls and the most in flight at once; each
// call takes at least 2ms, so calls of parallel hosts overlap unless capped.
type countingModel struct {
	inner    worker.ChatModel
	calls    atomic.Int64
	inFlight atomic.Int64
	maxSeen  atomic.Int64
}

func (m *countingModel) CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	m.calls.Add(1)
	n := m.inFlight.Add(1)
	defer m.inFlight.Add(-1)
	for {
		old := m.maxSeen.Load()
		if n <= old || m.maxSeen.CompareAndSwap(old, n) {
			break
		}
	}
	time.Sleep(2 * time.Millisecond)
	return m.inner.CreateChatCompletion(ctx, req)
}
