package fleet_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/testsuite"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/fleet"
	"github.com/nightshift-dev/nightshift/internal/debtarget"
	"github.com/nightshift-dev/nightshift/internal/nighttest"
	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/orchestrate"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

// sandboxPolicy proposes, at attempt 1, a command the static check cannot
// analyse that deletes /usr/share/doc, then the fix.
type sandboxPolicy struct{}

func (sandboxPolicy) Name() string { return "sandbox-night" }

func (sandboxPolicy) Next(c vllmsim.Conversation) vllmsim.Generation {
	if c.Attempt == 1 {
		return vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply(`d=$(printf /usr/share/do%s c); rm -rf "$d"`, "clean up first")}}
	}
	return vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply(
		`echo 'kernel.kptr_restrict = 1' > /etc/sysctl.d/60-nightshift.conf && sysctl -p /etc/sysctl.d/60-nightshift.conf`, "the fix")}}
}

// TestNightThroughSandbox: a night's commands run through the recording
// sandbox on a real Debian 12 host (Night.Sandbox required): the command
// that would delete /usr/share/doc is refused with what it would have
// done and nothing of it reaches the host; the fix is committed with its
// diff and the recorded sysctl action, and the rule ends fixed.
func TestNightThroughSandbox(t *testing.T) {
	testenv.NeedRoot(t, "a Debian 12 target in namespaces")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// The worker logs in through the host's own sshd, as on a real host:
	// the lockout net's canary checks the configuration it uses.
	tg, err := debtarget.StartSystem(ctx, debtarget.Options{Sandbox: true})
	if err != nil {
		t.Fatalf("start the Debian 12 target: %v", err)
	}
	t.Cleanup(func() { tg.Close() })
	model := nighttest.LoadModel(t)
	counter := vllmsim.NewModelCounter(model)
	srv, err := vllmsim.New(vllmsim.Config{Counter: counter, Policy: sandboxPolicy{}, Seed: 1, Created: time.Unix(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := srv.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	oc := openai.DefaultConfig("")
	oc.BaseURL = strings.TrimRight(url, "/") + "/v1"
	oc.HTTPClient = &http.Client{}
	rules := "rules:\n  - id: kptr\n    check: \"grep -qx 'kernel.kptr_restrict = 1' /etc/sysctl.d/60-nightshift.conf\"\n    max_attempts: 3\n    paths: [/etc/sysctl.d]\n"
	sc := tg.SSHConfig("root")
	n := &night{Model: model, Client: &nighttest.Model{Inner: openai.NewClientWithConfig(oc)}, Conn: orchestrate.SSHConnector{Base: sc}}
	n.Night = fleet.Night{Name: "sandboxed night", RuleFiles: []fleet.RuleFile{{Name: "night.yaml", Data: []byte(rules)}},
		Hosts:         []inventory.Host{{Name: "debian12", Address: sc.Host, Port: sc.Port, User: "root"}},
		ParallelHosts: 1, RetryDeadline: 5 * time.Second, CommandTimeout: time.Minute, NoLessons: true, Sandbox: "required",
		Model: fleet.ModelSpec{Name: srv.Model(), Tokenizer: "qwen3", ContextWindow: srv.MaxModelLen(), MaxTokens: budget.DefaultReserve}}
	res := runNight(t, n, n.activities(), nil)
	if len(res.HostRuns) != 1 || len(res.HostRuns[0].Tasks) != 1 {
		t.Fatalf("result: %+v", res)
	}
	task := res.HostRuns[0].Tasks[0]
	if task.Outcome.Status != nightshift.RuleFixed || task.Outcome.Attempts != 2 {
		t.Fatalf("outcome %+v; want fixed at attempt 2", task.Outcome)
	}
	if len(task.Commands) != 2 {
		t.Fatalf("commands: %+v", task.Commands)
	}
	refused, fix := task.Commands[0].Command, task.Commands[1].Command
	if refused.Evidence == nil || refused.Evidence.Verdict != nightshift.VerdictRefused || !strings.Contains(strings.Join(refused.Evidence.Reasons, " "), "would delete") {
		t.Errorf("first command: %+v; want refused naming what it would delete", refused.Evidence)
	}
	if fix.Evidence == nil || fix.Evidence.Verdict != nightshift.VerdictCommitted || len(fix.Evidence.Effects.Changes) != 1 ||
		fix.Evidence.Effects.Changes[0].Path != "/etc/sysctl.d/60-nightshift.conf" || len(fix.Evidence.Effects.Actions) != 1 {
		t.Errorf("fix: %+v; want committed with its file and the sysctl action", fix.Evidence)
	}
	tgt, err := orchestrate.SSHConnector{Base: sc}.Connect(ctx, n.Night.Hosts[0])
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close()
	ex, err := tgt.Run(ctx, "test -d /usr/share/doc && ls /usr/share/doc | wc -l")
	if err != nil || ex.ExitCode != 0 || strings.TrimSpace(ex.Stdout) == "0" {
		t.Errorf("/usr/share/doc on the host after the night: %q %v", ex.Stdout, err)
	}

	// The fleet's undo: the night's committed change comes back out.
	todo, err := fleet.UndoTrials(res, n.Night.Hosts, nil, nil)
	if err != nil || len(todo) != 1 || len(todo[0].Trials) != 1 {
		t.Fatalf("UndoTrials: %+v, %v", todo, err)
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(2 * time.Minute)
	fleet.Register(env, &fleet.Workflows{}, n.activities())
	env.ExecuteWorkflow(fleet.UndoWorkflowName, fleet.UndoInput{Night: "sandboxed", Hosts: todo})
	var ur fleet.UndoResult
	if err := env.GetWorkflowResult(&ur); err != nil {
		t.Fatal(err)
	}
	if len(ur.Hosts) != 1 || len(ur.Hosts[0].Undone) != 1 || ur.Hosts[0].Refused != "" {
		t.Fatalf("undo result: %+v", ur)
	}
	if ex, err := tgt.Run(ctx, "test -e /etc/sysctl.d/60-nightshift.conf"); err != nil || ex.ExitCode == 0 {
		t.Errorf("the night's file is still there after undo (%v)", err)
	}
}
