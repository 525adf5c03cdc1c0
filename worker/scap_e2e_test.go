package worker_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/debtarget"
	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/scap"
	"github.com/nightshift-dev/nightshift/sshexec"
	"github.com/nightshift-dev/nightshift/vllmsim"

	"github.com/nightshift-dev/nightshift"
)

// The SSG end-to-end tests run the worker against a disposable Debian 12
// root (internal/debtarget) with trixie's SSG 0.1.76 datastream and
// bookworm's OpenSCAP: every check is a real `oscap xccdf eval`, every
// command really runs in the root. (The eventual policy applying SSG's own
// fixes over ten rules in one `worker --datastream` run is tested in
// cmd/worker.)

const scapProfile = "xccdf_org.ssgproject.content_profile_anssi_bp28_high"

type scapEnv struct {
	*env
	debian *debtarget.Target
	ds     *scap.Datastream
}

// newSCAPEnv starts the Debian target and wires the worker to it over a
// real SSH connection to its control sshd, with the simulator serving a
// window of maxModelLen tokens and the policy, made once the target is up.
func newSCAPEnv(t *testing.T, maxModelLen int, policy func(e *scapEnv) vllmsim.Policy) *scapEnv {
	t.Helper()
	testenv.NeedRoot(t, "the disposable Debian target (namespaces, chroot)")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	tg, err := debtarget.Start(ctx, debtarget.Options{})
	if err != nil {
		t.Fatalf("start the Debian 12 target (the test command runs as root; the root is built once and cached): %v", err)
	}
	t.Cleanup(func() {
		if err := tg.Close(); err != nil {
			t.Errorf("tear down the Debian target: %v", err)
		}
	})
	m := qwen3(t)
	e := &env{t: t, dir: t.TempDir()}
	cfg := tg.SSHConfig()
	cfg.CommandTimeout = 3 * time.Minute
	e.ssh, err = sshexec.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.ssh.Close() })
	// The worker reads the datastream the target has: the same file, read
	// through the root on this machine.
	ds, err := scap.Load(filepath.Join(tg.Root, debtarget.DatastreamPath))
	if err != nil {
		t.Fatal(err)
	}
	se := &scapEnv{env: e, debian: tg, ds: ds}
	sc := vllmsim.NewModelCounter(m)
	e.sim, err = vllmsim.New(vllmsim.Config{MaxModelLen: maxModelLen, Counter: sc, Policy: policy(se)})
	if err != nil {
		t.Fatal(err)
	}
	e.serve()
	return se
}

func (e *scapEnv) set(ids ...string) *rules.Set {
	e.t.Helper()
	set, err := e.ds.Set(scap.Options{Profile: scapProfile, Rules: ids, TargetPath: debtarget.DatastreamPath})
	if err != nil {
		e.t.Fatal(err)
	}
	return set
}

// TestSCAPStubbornStaysInsideTheWindow: 25 attempts of the stubborn policy
// on one SSG rule, each command run in the Debian root and judged by
// OpenSCAP: no context-length rejection, every prompt with what the model
// needs (assertPromptContents), and the target's sshd still accepts the
// control connection. The window is vLLM's --max-model-len
// 8192: the worker abbreviates the root's outputs, so at 16,384 the 25
// attempts would not reach the soft limit and the memory would have
// nothing to do. With new outputs shown cut to 1,024 tokens, 25 attempts
// at 8,192 stay just under it too (largest prompt 5,108 of a soft limit of
// 5,120): the window is 6,144.
func TestSCAPStubbornStaysInsideTheWindow(t *testing.T) {
	start := time.Now()
	const n, window = 25, 6144
	e := newSCAPEnv(t, window, func(*scapEnv) vllmsim.Policy {
		return vllmsim.Stubborn(vllmsim.StubbornConfig{Seed: 6, DraftDir: "/tmp/nightshift-stubborn"})
	})
	r, _ := e.set("sshd_disable_root_login").Get("sshd_disable_root_login")
	r.MaxAttempts = n
	out, err := e.worker(workerOptions{window: window}).Fix(context.Background(), r)
	if err != nil {
		t.Fatalf("Fix: %v (outcome %+v)", err, out)
	}
	if out.Status != nightshift.RuleNotFixed || out.Attempts != n {
		t.Fatalf("outcome %+v, want not_fixed after %d attempts", out, n)
	}
	if rej := e.sim.Stats().Rejections(); len(rej) != 0 || out.ContextRejections != 0 {
		t.Fatalf("%d context-length rejections", len(rej))
	}
	// Every attempt whose command ran was judged by OpenSCAP; attempts the
	// worker refused (exact repeats of failed commands) were not.
	ran, checked := map[int]bool{}, map[int]bool{}
	for _, ev := range e.eventsOf(nightshift.EventCommand) {
		if ev.Action == nightshift.ActionRan || ev.Action == nightshift.ActionTimedOut {
			ran[ev.Attempt] = true
		}
	}
	for _, ev := range e.eventsOf(nightshift.EventCheck) {
		checked[ev.Attempt] = true
	}
	if !checked[0] {
		t.Error("no oscap check before the first attempt")
	}
	for a := 1; a <= n; a++ {
		if ran[a] != checked[a] {
			t.Errorf("attempt %d: a command ran %v, oscap checked %v", a, ran[a], checked[a])
		}
	}
	if len(ran) < n/2 {
		t.Errorf("commands ran in only %d of %d attempts", len(ran), n)
	}
	// The conversation outgrew the soft limit, so the memory had to
	// distil it (a prompt has fewer messages than the one before: turns
	// became lines), and every prompt stayed inside the window.
	maxPrompt, distilled, before := 0, 0, 0
	for _, c := range e.eventsOf(nightshift.EventModelCall) {
		a := c.Assessment
		maxPrompt = max(maxPrompt, a.Prompt)
		if a.Total > a.Limit {
			t.Errorf("attempt %d: prompt over the window: %s", c.Attempt, a)
		}
		if a.Messages < before {
			distilled++
		}
		before = a.Messages
	}
	if distilled == 0 {
		t.Errorf("no prompt was compacted (largest %d tokens): the run did not test the memory", maxPrompt)
	}
	last3, fewer := assertPromptContents(t, e.env, "", qwen3(t).Tokenizer())
	e.controlAlive()
	t.Logf("%d attempts, %d commands run and checked by oscap, largest prompt %d of %d tokens, %d compactions, 0 rejections, the last 3 turns in %d prompts (fewer, those that fit, in %d); E2E wall time %v",
		out.Attempts, len(ran), maxPrompt, e.sim.MaxModelLen(), distilled, last3, fewer, time.Since(start).Round(time.Millisecond))
}

// controlAlive opens a new connection to the target's control sshd.
func (e *scapEnv) controlAlive() {
	e.t.Helper()
	c, err := sshexec.New(sshexec.Config{Host: e.debian.Host, Port: e.debian.Port, User: e.debian.User, NoAgent: true,
		IdentityFiles: []string{e.debian.IdentityFile}, KnownHostsFiles: []string{e.debian.KnownHostsFile}})
	if err != nil {
		e.t.Fatal(err)
	}
	defer c.Close()
	r, err := c.Run(context.Background(), "echo alive")
	if err != nil || strings.TrimSpace(r.Stdout) != "alive" {
		e.t.Fatalf("control connection at the end: %q, %v", r.Stdout, err)
	}
}
