package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/vllmsim"
)

const simulateUsage = `Usage:
  worker simulate-server [--addr 127.0.0.1:8000] [--policy NAME] [--fix RULE=COMMAND …] [flags]

Serves a vLLM-faithful OpenAI-compatible API with no GPU: GET /v1/models (with
max_model_len), POST /tokenize, and POST /v1/chat/completions that counts every
prompt exactly as vLLM would and rejects over-long requests with vLLM's error
bodies. Answers come from a scripted policy: stubborn, eventual, repeater,
banned-proposer, malformed or give-up.
`

const simulateExamples = `
Examples:
  worker simulate-server --policy eventual --fix sshd_disable_root_login="sed -i 's/^#*PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config"
  worker simulate-server --policy stubborn --max-model-len 16384 --error-style requested
`

func runSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	addr, policy, model, tokenizer, style, apiKeyEnv := new(string), new(string), new(string), new(string), new(string), new(string)
	fixAt, maxLen, blocks := new(int), new(int), new(int)
	details, seed := new(bool), new(uint64)
	var fixes stringList
	fs := newFlags(cmdSimulate, stderr)
	for name, p := range map[string]any{"addr": addr, "policy": policy, "fix": &fixes, "fix-at": fixAt, "max-model-len": maxLen,
		"model": model, "tokenizer": tokenizer, "error-style": style, "api-key-env": apiKeyEnv,
		"enable-prompt-tokens-details": details, "num-gpu-blocks": blocks, "seed": seed} {
		fs.bind(name, p)
	}
	setUsage(fs.FlagSet, simulateUsage, simulateExamples)
	rest, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("simulate-server: unexpected argument %q", rest[0])
	}
	fixMap := map[string]string{}
	for _, f := range fixes {
		id, cmd, ok := strings.Cut(f, "=")
		if !ok || id == "" || strings.TrimSpace(cmd) == "" {
			return usagef("simulate-server: --fix %q is not RULE=COMMAND", f)
		}
		fixMap[id] = cmd
	}
	pol, err := simPolicy(*policy, fixMap, *fixAt, *seed)
	if err != nil {
		return &usageError{err}
	}
	m, err := served.Offline(served.Config{Tokenizer: *tokenizer})
	if err != nil {
		return &usageError{err}
	}
	counter := vllmsim.NewModelCounter(m)
	cfg := vllmsim.Config{Model: *model, MaxModelLen: *maxLen, Counter: counter, Policy: pol, Seed: *seed,
		PromptTokensDetails: *details, CacheBlocks: *blocks}
	if *style != "" {
		if cfg.ErrorStyle, err = vllmsim.ParseErrorStyle(*style); err != nil {
			return &usageError{err}
		}
	}
	if *apiKeyEnv != "" {
		if cfg.APIKey = os.Getenv(*apiKeyEnv); cfg.APIKey == "" {
			return usagef("simulate-server: %s is empty", *apiKeyEnv)
		}
	}
	srv, err := vllmsim.New(cfg)
	if err != nil {
		return &usageError{err}
	}
	// The signals are caught before the port opens: whoever sees it open
	// (a script's waitport) may interrupt at once.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return &usageError{fmt.Errorf("simulate-server: %w", err)}
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "simulated vLLM serving %s (max_model_len %d, policy %s) on http://%s/v1\n", *model, *maxLen, *policy, ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return hs.Shutdown(sctx)
	}
}

func simPolicy(name string, fixes map[string]string, fixAt int, seed uint64) (vllmsim.Policy, error) {
	switch name {
	case "eventual":
		return vllmsim.Eventual(vllmsim.EventualConfig{Seed: seed, FixAt: fixAt, Fixes: fixes}), nil
	case "stubborn":
		return vllmsim.Stubborn(vllmsim.StubbornConfig{Seed: seed}), nil
	case "malformed":
		return vllmsim.Malformed(seed), nil
	}
	return vllmsim.PolicyByName(name, "")
}
