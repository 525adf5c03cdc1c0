package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/internal/sshtarget"
	"github.com/nightshift-dev/nightshift/memory"
	"github.com/nightshift-dev/nightshift/retry"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/safety"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/sshexec"
	"github.com/nightshift-dev/nightshift/vllmsim"
	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

const demoUsage = `Usage:
  worker demo [--sshd] [--keep] [--json]

Runs the whole loop on this machine with nothing but this program: no GPU, no
remote host, no root, no sshd. It starts the vLLM simulator with a scripted
model and an in-process SSH server on 127.0.0.1 whose "host" is a temporary
directory, then works on two rules there:

  sshd_disable_root_login             fixed at the third attempt, after two
                                      wrong tries
  auditd_data_retention_max_log_file  a stubborn rule: 25 attempts whose
                                      commands print large outputs and never
                                      fix it, so the memory must keep every
                                      prompt inside the 16,384-token window

The table shows each attempt's prompt against the limit and how many turns
the memory has distilled into one-line summaries; the end shows the last
history block the model saw and the last prompt's token breakdown.

The SSH server runs only the demo's own scripted commands (the simulated
model's proposals, the rules' checks and the worker's host probe), with
/bin/sh in the temporary directory; it refuses any other command. Nothing
outside that directory is changed; it is removed at the end unless --keep is
given. --sshd uses a disposable OpenSSH server on 127.0.0.1 in place of the
in-process one (needs openssh-server installed).

Exit status: 0 the demo ran as scripted; 1 it did not; 2 usage error.
`

const demoExamples = `
Examples:
  worker demo
  worker demo --keep
  worker demo --json | grep '"event":"attempt"'
  worker demo --sshd
`

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	keep, jsonOut, useSSHD := new(bool), new(bool), new(bool)
	fs := newFlags(cmdDemo, stderr)
	fs.bind("keep", keep)
	fs.bind("json", jsonOut)
	fs.bind("sshd", useSSHD)
	setUsage(fs.FlagSet, demoUsage, demoExamples)
	rest, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("demo: unexpected argument %q", rest[0])
	}
	start := time.Now()
	dir, err := os.MkdirTemp("", "nightshift-demo-")
	if err != nil {
		return err
	}
	if *keep {
		fmt.Fprintf(stderr, "worker: demo directory: %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	root := filepath.Join(dir, "host")
	at := func(rel string) string { return rel }
	if *useSSHD {
		at = func(rel string) string { return shellQuote(filepath.Join(root, rel)) }
	}
	if err := writeDemoHost(root); err != nil {
		return err
	}
	script := newDemoScript(at)
	set, rulesFile, err := writeDemoRules(dir, script, at)
	if err != nil {
		return err
	}

	// The target: the in-process SSH server, or a disposable real sshd.
	var ssh *sshexec.Client
	var where string
	var host *demoHost
	if *useSSHD {
		if err := os.Mkdir(filepath.Join(dir, "sshd"), 0o700); err != nil {
			return err
		}
		target, err := sshtarget.Start(ctx, sshtarget.Options{Dir: filepath.Join(dir, "sshd")})
		if err != nil {
			return fmt.Errorf("demo: start the local SSH target: %w", err)
		}
		defer target.Close()
		ssh, err = sshexec.New(sshexec.Config{Host: target.Host, Port: target.Port, User: target.User,
			IdentityFiles: []string{target.IdentityFile}, KnownHostsFiles: []string{target.KnownHostsFile}, NoAgent: true,
			CommandTimeout: time.Minute})
		if err != nil {
			return err
		}
		defer ssh.Close()
		where = "disposable sshd at " + target.Addr
	} else {
		host, err = startDemoHost(ctx, root, script.allowed(), time.Minute)
		if err != nil {
			return fmt.Errorf("demo: start the in-process SSH server: %w", err)
		}
		defer host.Close()
		ssh = host.client
		where = "in-process SSH server at " + host.Addr() + " (runs only the demo's scripted commands)"
	}

	// The simulated vLLM server and the worker.
	model, err := served.Offline(served.Config{Tokenizer: "qwen3"})
	if err != nil {
		return err
	}
	simCounter := vllmsim.NewModelCounter(model)
	srv, err := vllmsim.New(vllmsim.Config{MaxModelLen: 16384, Counter: simCounter, PromptTokensDetails: true, Policy: script})
	if err != nil {
		return err
	}
	baseURL, stopSim, err := srv.Start(ctx)
	if err != nil {
		return err
	}
	defer stopSim()
	if !*jsonOut {
		fmt.Fprintf(stdout, "simulated vLLM at %s (%s, max_model_len %d)\n%s\nhost: %s\nrules: %s\n\n",
			baseURL, srv.Model(), srv.MaxModelLen(), where, root, rulesFile)
	}
	b, err := budget.New(budget.Config{ContextWindow: srv.MaxModelLen(), Reserve: budget.DefaultReserve})
	if err != nil {
		return err
	}
	oc := openai.DefaultConfig("")
	oc.BaseURL = strings.TrimRight(baseURL, "/") + "/v1"
	oc.HTTPClient = &http.Client{Transport: &retry.Transport{}}
	rec := &lastRequest{model: openai.NewClientWithConfig(oc)}
	rep := newReporter(stdout, *jsonOut, b.PromptLimit())
	last := &lastCall{}
	// On the in-process host, commands are judged by their effects (the
	// demo's stand-in for the recording sandbox); a real sshd has none.
	var target nightshift.Runner = ssh
	var sb *demoSandbox
	observers := nightshift.Observers{rep, last}
	fallback := ""
	if host != nil {
		sb = &demoSandbox{host: host, pol: safety.EffectsPolicy{Login: "demo", LoginHome: "/home/demo"}}
		target = sb
		observers = append(observers, sb)
	} else {
		fallback = "--sshd: no sandbox on the local sshd; the static check judged commands"
	}
	w, err := worker.New(worker.Config{
		Chat: rec, Model: model.With(srv.Model(), b), Target: target, Probe: ssh, Checks: ssh, Sandboxed: sb != nil, Fallback: fallback,
		Observer: observers, MemoryObserver: rep.memory(), RetryDeadline: worker.DefaultRetryDeadline,
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	var outs []nightshift.Outcome
	for _, id := range []string{demoQuickRule, demoStubbornRule} {
		r, _ := set.Get(id)
		out, err := w.Fix(ctx, r)
		outs = append(outs, out)
		if err != nil {
			rep.summary(outs)
			return err
		}
	}
	rep.summary(outs)
	if err := demoEnd(stdout, *jsonOut, root, rec, last, host, sb, time.Since(start)); err != nil {
		return err
	}
	if outs[0].Status != nightshift.RuleFixed || outs[1].Status != nightshift.RuleNotFixed || outs[1].Attempts != demoStubbornMax {
		return fmt.Errorf("demo: did not run as scripted: %s %s after %d attempts (want fixed), %s %s after %d (want not_fixed after %d)",
			outs[0].Rule, outs[0].Status, outs[0].Attempts, outs[1].Rule, outs[1].Status, outs[1].Attempts, demoStubbornMax)
	}
	return nil
}

// writeDemoHost writes the demo host's files under root.
func writeDemoHost(root string) error {
	files := map[string][]byte{
		"etc/ssh/sshd_config":   []byte(demoSSHDConfig),
		"etc/audit/auditd.conf": []byte(demoAuditdConf),
		"var/log/auth.log":      demoAuthLog(),
	}
	if err := os.MkdirAll(filepath.Join(root, "etc", "ssh", "sshd_config.d"), 0o755); err != nil {
		return err
	}
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeDemoRules writes the two rules to dir/rules.yaml and loads them.
func writeDemoRules(dir string, s *demoScript, at func(string) string) (*rules.Set, string, error) {
	y := fmt.Sprintf(`rules:
  - id: %s
    title: Disable SSH root login
    description: Root must not log in over SSH (the demo's copy of sshd_config).
    check: %q
    banned: ['systemctl (restart|stop) ssh']
    hints: Edit %s; SSG checks the main file, not sshd_config.d.
    paths: [/etc/ssh/sshd_config, /etc/ssh/sshd_config.d]
    max_attempts: 10
  - id: %s
    title: Configure auditd max_log_file
    description: auditd must keep log files of 32 MB (max_log_file = 32 in the demo's copy of auditd.conf).
    check: %q
    paths: [/etc/audit/auditd.conf]
    max_attempts: %d
`, demoQuickRule, s.checks[demoQuickRule], at("etc/ssh/sshd_config"), demoStubbornRule, s.checks[demoStubbornRule], demoStubbornMax)
	path := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		return nil, "", err
	}
	set, err := rules.Load(path)
	return set, path, err
}

// lastRequest passes chat requests to the model and keeps the last one.
type lastRequest struct {
	model worker.ChatModel
	mu    sync.Mutex
	req   openai.ChatCompletionRequest
}

func (l *lastRequest) CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	l.mu.Lock()
	l.req = req
	l.mu.Unlock()
	return l.model.CreateChatCompletion(ctx, req)
}

// history returns the history block of the last request ("" if none).
func (l *lastRequest) history() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.req.Messages {
		if strings.HasPrefix(m.Content, memory.DefaultHistoryHeader) {
			return m.Content
		}
	}
	return ""
}

// lastCall keeps the budget of the last model call.
type lastCall struct {
	mu sync.Mutex
	a  *budget.Assessment
}

func (l *lastCall) Observe(e nightshift.Event) {
	if e.Kind == nightshift.EventModelCall && e.Assessment != nil {
		l.mu.Lock()
		a := *e.Assessment
		l.a = &a
		l.mu.Unlock()
	}
}

// demoEnd prints what the demo shows at its end: the fixed line, the last
// history block the model saw, the last prompt's breakdown and what the
// in-process host ran and refused.
func demoEnd(w io.Writer, jsonOut bool, root string, rec *lastRequest, last *lastCall, host *demoHost, sb *demoSandbox, took time.Duration) error {
	var fixedLine string
	data, err := os.ReadFile(filepath.Join(root, "etc", "ssh", "sshd_config"))
	if err != nil {
		return err
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "PermitRootLogin") {
			fixedLine = l
		}
	}
	hist := rec.history()
	last.mu.Lock()
	a := last.a
	last.mu.Unlock()
	var refused []string
	if host != nil {
		refused = host.Refused()
	}
	var judged []demoJudged
	if sb != nil {
		judged = sb.judged()
	}
	if jsonOut {
		b, err := json.Marshal(struct {
			Event      string             `json:"event"`
			SSHDConfig string             `json:"sshd_config"`
			History    string             `json:"history"`
			Budget     *budget.Assessment `json:"budget"`
			Refused    []string           `json:"refused"`
			Judged     []demoJudged       `json:"judged,omitempty"`
			Duration   time.Duration      `json:"duration_ns"`
		}{"demo_end", fixedLine, hist, a, refused, judged, took})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	if len(judged) > 0 {
		fmt.Fprintf(w, "\n%s's commands, judged by their effects (run first in a copy of the host, the demo's stand-in for the recording sandbox):\n", demoQuickRule)
		for _, j := range judged[:min(len(judged), demoQuickFixAt)] {
			fmt.Fprintf(w, "  %-9s %s\n", j.Evidence.Verdict, oneLine(j.Command, 70))
			if len(j.Evidence.Reasons) > 0 {
				fmt.Fprintf(w, "            nothing applied: %s\n", strings.Join(j.Evidence.Reasons, "; "))
			} else {
				fmt.Fprintf(w, "            %s\n", j.Evidence.Effects.Summary(160))
			}
		}
	}
	fmt.Fprintf(w, "\n%s now says: %s\n", filepath.Join(root, "etc", "ssh", "sshd_config"), fixedLine)
	if hist != "" {
		// Which turns are distilled is the memory's rule: whenever a prompt
		// would pass the soft limit, the oldest turns until it is under the
		// low-water mark, never one of the last K.
		fmt.Fprintf(w, "\nThe last history block the model saw (the oldest turns, distilled whenever a prompt would pass the soft limit until it fell under the low-water mark, the last %d always kept verbatim; turns that ran the same command with the same result share a line):\n", memory.DefaultKeepTurns)
		for _, l := range strings.Split(hist, "\n") {
			fmt.Fprintf(w, "  │ %s\n", l)
		}
	}
	if a != nil {
		fmt.Fprintf(w, "\nThe last prompt: system %d + history %d + current turn %d = %d prompt tokens; + %d reserved for the reply = %d of %d (limit %d, distillation starts at %d)\n",
			a.System, a.History, a.Current, a.Prompt, a.Reserve, a.Total, a.Window, a.Limit, a.Soft)
	}
	if host != nil {
		fmt.Fprintf(w, "\nThe in-process host refused %d commands (it runs only the demo's own). Demo time: %s.\n", len(refused), took.Round(10*time.Millisecond))
	}
	return nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
