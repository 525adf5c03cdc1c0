package worker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/internal/sshtarget"
	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/internal/vllmref"
	"github.com/nightshift-dev/nightshift/retry"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/sshexec"
	"github.com/nightshift-dev/nightshift/vllmsim"
	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

var (
	modelOnce sync.Once
	model     *served.Model
	modelErr  error
)

// qwen3 is the Qwen3 tokenizer and chat template with a 16,384-token
// window and a reserve of 1,024, loaded once for all tests.
func qwen3(t testing.TB) *served.Model {
	t.Helper()
	modelOnce.Do(func() {
		model, modelErr = served.Offline(served.Config{Tokenizer: "qwen3", Budget: budget.Config{ContextWindow: 16384, Reserve: 1024}})
	})
	if modelErr != nil {
		t.Fatal(modelErr)
	}
	return model
}

// served is qwen3 named name (the simulator's model) with the budget of cfg.
func servedAs(t testing.TB, name string, cfg budget.Config) *served.Model {
	t.Helper()
	b, err := budget.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return qwen3(t).With(name, b)
}

// env is one worker wired to a real sshd on loopback and the vLLM simulator
// over real HTTP, with the Qwen3 tokenizer, a 16,384 window and max_tokens
// 1,024 unless the test changes them.
type env struct {
	t      *testing.T
	target *sshtarget.Target
	ssh    *sshexec.Client
	sim    *vllmsim.Server
	url    string
	mu     sync.Mutex
	bodies []openai.ChatCompletionRequest // every chat request the server received
	runs   []ran                          // every command the worker ran on the target, in order
	events []nightshift.Event
	dir    string
	// ref counts every prompt the simulator receives when
	// envOptions.reference is set (nil otherwise).
	ref *vllmref.Reference
}

type envOptions struct {
	// policy makes the simulator's policy; dir is the test's directory,
	// the only host path the sandboxed target may write to.
	policy       func(dir string) vllmsim.Policy
	serverWindow int // the simulator's max_model_len; 0 means 16384
	faults       []vllmsim.Fault
	errorStyle   vllmsim.ErrorStyle
	// reference makes the simulator count prompts (and reject them) with
	// the independent reference, Python Jinja2 and HF tokenizers
	// (internal/vllmref), instead of package served, which the worker
	// counts with.
	reference bool
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	m := qwen3(t)
	e := &env{t: t, dir: t.TempDir()}
	ctx := context.Background()
	// Commands come from the simulator's policies, some of them destructive
	// on purpose: they run in a sandbox whose only writable host path is
	// the test's directory.
	target, err := sshtarget.Start(ctx, sshtarget.Options{Sandbox: true, Writable: []string{e.dir}})
	if err != nil {
		t.Fatalf("start the sandboxed SSH target (the test command installs openssh-server and bubblewrap, and runs as root): %v", err)
	}
	t.Cleanup(func() { target.Close() })
	e.target = target
	e.ssh, err = sshexec.New(sshexec.Config{Host: target.Host, Port: target.Port, User: target.User, NoAgent: true,
		IdentityFiles: []string{target.IdentityFile}, KnownHostsFiles: []string{target.KnownHostsFile},
		CommandTimeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.ssh.Close() })

	sc := vllmsim.NewModelCounter(m)
	window := o.serverWindow
	if window == 0 {
		window = 16384
	}
	var prompts vllmsim.PromptCounter // nil: the simulator counts with sc
	if o.reference {
		e.ref, err = vllmref.Start(ctx, vllmref.Config{Family: "qwen3"})
		if errors.Is(err, vllmref.ErrUnavailable) {
			testenv.Unavailable(t, "the reference counter: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.ref.Close() })
		prompts = e.ref
	}
	e.sim, err = vllmsim.New(vllmsim.Config{MaxModelLen: window, Counter: sc, Prompts: prompts, Policy: o.policy(e.dir), Faults: o.faults,
		ErrorStyle: o.errorStyle, PromptTokensDetails: true})
	if err != nil {
		t.Fatal(err)
	}
	e.serve()
	return e
}

// serve serves e.sim over HTTP on loopback at e.url, recording every chat
// request body on its way to the simulator.
func (e *env) serve() {
	h := e.sim.Handler()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" {
			body, _ := io.ReadAll(r.Body)
			var req openai.ChatCompletionRequest
			if json.Unmarshal(body, &req) == nil {
				e.mu.Lock()
				e.bodies = append(e.bodies, req)
				e.mu.Unlock()
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	e.t.Cleanup(hs.Close)
	e.url = hs.URL
}

func (e *env) Observe(ev nightshift.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, ev)
}

type workerOptions struct {
	window, reserve int
	maxAttempts     int
	retryDeadline   time.Duration
	// sleep, when set, replaces the retry waits (and records them).
	sleep func(ctx context.Context, d time.Duration) error
}

func (e *env) worker(o workerOptions) *worker.Worker {
	e.t.Helper()
	if o.window == 0 {
		o.window = 16384
	}
	if o.reserve == 0 {
		o.reserve = 1024
	}
	oc := openai.DefaultConfig("")
	oc.BaseURL = e.url + "/v1"
	oc.HTTPClient = &http.Client{Transport: &retry.Transport{}} // as cmd/worker does
	cfg := worker.Config{
		Chat: openai.NewClientWithConfig(oc), Model: servedAs(e.t, e.sim.Model(), budget.Config{ContextWindow: o.window, Reserve: o.reserve}),
		Target: recordingTarget{e, e.ssh}, MaxAttempts: o.maxAttempts,
		RetryDeadline: o.retryDeadline, Observer: e,
	}
	if o.sleep != nil {
		cfg = worker.WithSleep(cfg, o.sleep)
	}
	w, err := worker.New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return w
}

// ran is one command run on the target and its result.
type ran struct {
	command string
	exec    nightshift.Exec
}

// recordingTarget records every command and result on their way back to
// the worker: what the target really printed, to compare prompts with.
type recordingTarget struct {
	e     *env
	inner nightshift.Runner
}

func (r recordingTarget) Run(ctx context.Context, command string) (nightshift.Exec, error) {
	ex, err := r.inner.Run(ctx, command)
	r.e.mu.Lock()
	r.e.runs = append(r.e.runs, ran{command, ex})
	r.e.mu.Unlock()
	return ex, err
}

// rule writes a rules file in the test's directory and loads one rule from it.
func (e *env) rule(yaml, id string) rules.Rule {
	e.t.Helper()
	p := filepath.Join(e.dir, id+".yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		e.t.Fatal(err)
	}
	set, err := rules.Load(p)
	if err != nil {
		e.t.Fatal(err)
	}
	r, ok := set.Get(id)
	if !ok {
		e.t.Fatalf("rule %s not loaded", id)
	}
	return r
}

func (e *env) requests() []openai.ChatCompletionRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]openai.ChatCompletionRequest(nil), e.bodies...)
}

func (e *env) eventsOf(kind nightshift.EventKind) []nightshift.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []nightshift.Event
	for _, ev := range e.events {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
