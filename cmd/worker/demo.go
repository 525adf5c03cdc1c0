package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/internal/sshtarget"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/sshexec"
	"github.com/nightshift-dev/nightshift/vllmsim"
	"github.com/nightshift-dev/nightshift/worker"
)

const demoUsage = `Usage:
  worker demo [--keep] [--json]

Runs the whole loop on this machine with no GPU and no remote host: it starts
the vLLM simulator (policy "eventual": two wrong tries, then the fix) and a
disposable OpenSSH server on 127.0.0.1 (needs openssh-server installed), and
fixes a sample rule, sshd_disable_root_login, on a copy of an sshd_config that
lives in a temporary directory. Nothing outside that directory is changed; it
is removed at the end unless --keep is given.

Flags:
`

const demoSSHDConfig = `# sshd_config of the demo target (a copy in a temporary directory)
Include /etc/ssh/sshd_config.d/*.conf
#PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM yes
X11Forwarding yes
PrintMotd no
AcceptEnv LANG LC_*
Subsystem sftp /usr/lib/openssh/sftp-server
`

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("worker demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	keep := fs.Bool("keep", false, "keep the temporary directory")
	jsonOut := fs.Bool("json", false, "print one JSON object per event")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), demoUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return &usageError{err}
	}
	dir, err := os.MkdirTemp("", "nightshift-demo-")
	if err != nil {
		return err
	}
	if *keep {
		fmt.Fprintf(stdout, "demo directory: %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	root := filepath.Join(dir, "host")
	conf := filepath.Join(root, "etc", "ssh", "sshd_config")
	if err := os.MkdirAll(filepath.Join(root, "etc", "ssh", "sshd_config.d"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(conf, []byte(demoSSHDConfig), 0o644); err != nil {
		return err
	}

	// The rule, its check and fix all point into the temporary directory.
	q := shellQuote(conf)
	ruleYAML := fmt.Sprintf(`rules:
  - id: sshd_disable_root_login
    title: Disable SSH root login
    description: Root must not log in over SSH (the demo's copy of sshd_config).
    check: "grep -Eq '^[[:space:]]*PermitRootLogin[[:space:]]+no' %s"
    banned: ['systemctl (restart|stop) ssh']
    hints: Edit %s; SSG checks the main file, not sshd_config.d.
    max_attempts: 10
`, q, conf)
	rulesFile := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(rulesFile, []byte(ruleYAML), 0o644); err != nil {
		return err
	}
	set, err := rules.Load(rulesFile)
	if err != nil {
		return err
	}
	rule, _ := set.Get("sshd_disable_root_login")

	// The disposable SSH target.
	if err := os.Mkdir(filepath.Join(dir, "sshd"), 0o700); err != nil {
		return err
	}
	target, err := sshtarget.Start(ctx, sshtarget.Options{Dir: filepath.Join(dir, "sshd")})
	if err != nil {
		return fmt.Errorf("demo: start the local SSH target: %w", err)
	}
	defer target.Close()

	// The simulated vLLM server: two harmless wrong tries, then the fix.
	model, err := budget.LoadModel("qwen3")
	if err != nil {
		return err
	}
	simCounter, err := vllmsim.NewBudgetCounter(model)
	if err != nil {
		return err
	}
	srv, err := vllmsim.New(vllmsim.Config{MaxModelLen: 16384, Counter: simCounter, PromptTokensDetails: true, Policy: vllmsim.Eventual(vllmsim.EventualConfig{
		FixAt: 3,
		Fixes: map[string]string{rule.ID: fmt.Sprintf(`sed -i 's/^#\?PermitRootLogin.*/PermitRootLogin no/' %s`, q)},
		WrongFixes: []string{
			fmt.Sprintf("echo 'PermitRootLogin no' > %s", shellQuote(filepath.Join(root, "etc", "ssh", "sshd_config.d", "50-root.conf"))),
			fmt.Sprintf("grep -n PermitRootLogin %s", q),
		},
	})})
	if err != nil {
		return err
	}
	baseURL, stopSim, err := srv.Start(ctx)
	if err != nil {
		return err
	}
	defer stopSim()
	fmt.Fprintf(stdout, "simulated vLLM at %s; disposable sshd at %s; sample rule in %s\n\n", baseURL, target.Addr, rulesFile)

	counter, err := budget.NewModelChatCounter(model)
	if err != nil {
		return err
	}
	b, err := budget.New(budget.Config{ContextWindow: srv.MaxModelLen(), Reserve: budget.DefaultReserve})
	if err != nil {
		return err
	}
	ssh, err := sshexec.New(sshexec.Config{Host: target.Host, Port: target.Port, User: target.User,
		IdentityFiles: []string{target.IdentityFile}, KnownHostsFiles: []string{target.KnownHostsFile}, NoAgent: true,
		CommandTimeout: time.Minute})
	if err != nil {
		return err
	}
	defer ssh.Close()
	oc := openai.DefaultConfig("")
	oc.BaseURL = strings.TrimRight(baseURL, "/") + "/v1"
	oc.HTTPClient = &http.Client{}
	rep := newReporter(stdout, *jsonOut, b.PromptLimit())
	w, err := worker.New(worker.Config{
		Model: openai.NewClientWithConfig(oc), ModelName: srv.Model(), Target: sshTarget{ssh},
		Counter: counter, Tokenizer: model.Tokenizer, Budget: b, Observer: rep,
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	out, err := w.Fix(ctx, rule)
	rep.summary([]worker.Outcome{out})
	if err != nil {
		return err
	}
	if !out.Fixed() {
		return &notFixed{1, 1}
	}
	fixed, _ := os.ReadFile(conf)
	for _, l := range strings.Split(string(fixed), "\n") {
		if strings.HasPrefix(l, "PermitRootLogin") {
			fmt.Fprintf(stdout, "\n%s now says: %s\n", conf, l)
		}
	}
	return nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
