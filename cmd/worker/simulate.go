package main

import (
	"context"
	"errors"
	"flag"
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
	fs := flag.NewFlagSet("worker simulate-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8000", "listen `ADDRESS`")
	policy := fs.String("policy", "eventual", "answer `POLICY`: stubborn, eventual, repeater, banned-proposer, malformed, give-up")
	var fixes stringList
	fs.Var(&fixes, "fix", "eventual policy: the fix for a rule, `RULE=COMMAND` (repeatable)")
	fixAt := fs.Int("fix-at", 3, "eventual policy: the attempt that proposes the fix")
	maxLen := fs.Int("max-model-len", 16384, "the context window (max_model_len)")
	model := fs.String("model", "Qwen/Qwen3-8B", "served model `NAME`")
	tokenizer := fs.String("tokenizer", "qwen3", "tokenizer and chat template: qwen3, qwen2.5 or a `FILE`")
	style := fs.String("error-style", "", "vLLM release whose length errors are reproduced (default: the newest)")
	apiKeyEnv := fs.String("api-key-env", "", "require the API key in this environment `VARIABLE` (like vllm --api-key)")
	details := fs.Bool("enable-prompt-tokens-details", true, "report usage.prompt_tokens_details.cached_tokens (like vllm --enable-prompt-tokens-details)")
	blocks := fs.Int("num-gpu-blocks", 0, "prefix cache capacity in 16-token `BLOCKS` (0: the simulator's default; -1: no prefix caching)")
	seed := fs.Uint64("seed", 0, "policy seed")
	setUsage(fs, simulateUsage, simulateExamples, nil)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return &usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("simulate-server: unexpected argument %q", fs.Arg(0))
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
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return &usageError{fmt.Errorf("simulate-server: %w", err)}
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "simulated vLLM serving %s (max_model_len %d, policy %s) on http://%s/v1\n", *model, *maxLen, *policy, ln.Addr())
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
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
