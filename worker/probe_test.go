package worker_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/worker"
)

// giveUpModel gives up at once.
type giveUpModel struct{}

func (giveUpModel) CreateChatCompletion(context.Context, openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	return openai.ChatCompletionResponse{Choices: []openai.ChatCompletionChoice{{Message: openai.ChatCompletionMessage{
		Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "call_1", Type: "function",
			Function: openai.FunctionCall{Name: nightshift.ToolGiveUp, Arguments: `{"reason": "cannot"}`}}}}}}}, nil
}

// scriptedRunner records the commands it is given and answers each with
// exec (or err); the rule's check ("test …") fails.
type scriptedRunner struct {
	mu   sync.Mutex
	ran  []string
	exec nightshift.Exec
	err  error
}

func (r *scriptedRunner) Run(_ context.Context, command string) (nightshift.Exec, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ran = append(r.ran, command)
	if command == "test -f /etc/x" {
		return nightshift.Exec{ExitCode: 1}, nil
	}
	return r.exec, r.err
}

type events struct {
	mu sync.Mutex
	ev []nightshift.Event
}

func (e *events) Observe(ev nightshift.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ev = append(e.ev, ev)
}

func (e *events) of(kind nightshift.EventKind) []nightshift.Event {
	var out []nightshift.Event
	for _, ev := range e.ev {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

func probeWorker(t *testing.T, target, probe nightshift.Runner, obs nightshift.Observer) (*worker.Worker, rules.Rule) {
	t.Helper()
	set, err := rules.Parse("probe.yaml", []byte("rules:\n  - id: x_exists\n    check: \"test -f /etc/x\"\n"))
	require.NoError(t, err)
	r, _ := set.Get("x_exists")
	w, err := worker.New(worker.Config{Chat: giveUpModel{}, Model: qwen3(t).With("m", nil), Target: target, Probe: probe,
		Observer: obs})
	require.NoError(t, err)
	return w, r
}

// TestProbeIsAnEvent: the probe runs through Config.Probe, once per
// Worker, never through the Target, and EventProbe reports its command,
// result and facts before the first model call.
func TestProbeIsAnEvent(t *testing.T) {
	t.Parallel()
	probeOut := nightshift.Exec{Stdout: "os=Debian GNU/Linux 12 (bookworm)\npkg=apt-get\ninit=systemd\n", Duration: 3}
	target, probe, ev := &scriptedRunner{}, &scriptedRunner{exec: probeOut}, &events{}
	w, r := probeWorker(t, target, probe, ev)
	for range 2 {
		out, err := w.Fix(context.Background(), r)
		require.NoError(t, err)
		require.Equal(t, nightshift.RuleGaveUp, out.Status)
	}
	assert.Equal(t, []string{worker.ProbeCommand}, probe.ran, "one probe per Worker")
	assert.NotContains(t, target.ran, worker.ProbeCommand)
	assert.Equal(t, []string{"test -f /etc/x", "test -f /etc/x"}, target.ran, "the target ran the checks only")

	probes := ev.of(nightshift.EventProbe)
	require.Len(t, probes, 1)
	p := probes[0]
	assert.Equal(t, "x_exists", p.Rule)
	assert.Equal(t, worker.ProbeCommand, p.Command)
	require.NotNil(t, p.Exec)
	assert.Equal(t, probeOut, *p.Exec)
	assert.Equal(t, &nightshift.HostFacts{OS: "Debian GNU/Linux 12 (bookworm)", PackageManager: "apt-get", Init: "systemd"}, p.Facts)
	assert.Empty(t, p.Error)
	for i, e := range ev.ev {
		if e.Kind == nightshift.EventModelCall {
			require.Less(t, indexOfKind(ev.ev, nightshift.EventProbe), i, "the probe event comes before the first model call")
			break
		}
	}
	// The attempt's end says the model gave up, with no check.
	ends := ev.of(nightshift.EventAttempt)
	require.Len(t, ends, 2)
	assert.Equal(t, nightshift.ActionGiveUp, ends[0].Action)
	assert.Equal(t, nightshift.CheckNotRun, ends[0].Check)
}

func indexOfKind(ev []nightshift.Event, k nightshift.EventKind) int {
	for i, e := range ev {
		if e.Kind == k {
			return i
		}
	}
	return -1
}

// TestProbeFailureIsReported: a probe whose runner fails ends the rule
// with the error, and EventProbe carries it (package batch marks the host
// unreachable from it).
func TestProbeFailureIsReported(t *testing.T) {
	t.Parallel()
	lost := errors.New("connection lost")
	target, probe, ev := &scriptedRunner{}, &scriptedRunner{err: lost}, &events{}
	w, r := probeWorker(t, target, probe, ev)
	_, err := w.Fix(context.Background(), r)
	require.ErrorIs(t, err, lost)
	probes := ev.of(nightshift.EventProbe)
	require.Len(t, probes, 1)
	assert.Nil(t, probes[0].Exec)
	assert.Nil(t, probes[0].Facts)
	assert.Contains(t, probes[0].Error, "connection lost")
	assert.Empty(t, ev.of(nightshift.EventModelCall))
}

// TestProbeDefaultsToTarget: without Config.Probe the Target runs it.
func TestProbeDefaultsToTarget(t *testing.T) {
	t.Parallel()
	target := &scriptedRunner{exec: nightshift.Exec{Stdout: "pkg=dnf\n"}}
	w, r := probeWorker(t, target, nil, nil)
	_, err := w.Fix(context.Background(), r)
	require.NoError(t, err)
	assert.Equal(t, []string{"test -f /etc/x", worker.ProbeCommand}, target.ran)
}
