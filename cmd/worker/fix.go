package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/sshexec"
	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

const fixUsage = `Usage:
  worker --rules FILE|DIR --rule ID [--rule ID …] --host [user@]host[:port] [flags]
  worker --datastream PATH-ON-HOST --profile ID --rule ID [--rule ID …] --host [user@]host[:port] [flags]

Fixes each rule on the host: checks it, asks the model for commands, runs them
over SSH and re-checks until the rule passes, the model gives up or the
attempts run out.

With --datastream the rules come from an SCAP source datastream on the host
(SCAP Security Guide's ssg-*-ds.xml): --rule takes short ids
(sshd_disable_root_login) or full XCCDF ids, the model sees each rule's
title, description, rationale and the profile's values, and every check is
'oscap xccdf eval --profile ID --rule RULE' on the host. A rule OpenSCAP
reports notapplicable, error or notchecked is reported as such, never as
fixed.

Exit status: 0 every rule compliant; 1 some rule not fixed (or not
applicable, or its check failed); 2 usage or configuration error; 3 the
model server or the host unreachable.
`

// fixExamples end the main mode's help.
const fixExamples = `
Examples:
  worker --rules rules.yaml --rule sshd_disable_root_login --host root@db1
  worker --rules rules/ --rule aide_build_database --rule accounts_tmout \
         --host admin@10.0.0.7:2222 --identity ~/.ssh/nightshift --base-url http://gpu1:8000/v1
  worker --rules rules.yaml --rule sshd_set_keepalive --host root@db1 --json > events.jsonl
  worker --rules rules.yaml --rule sshd_disable_root_login --host root@db1 --dry-run
  worker --datastream /usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml \
         --profile anssi_bp28_high --rule sshd_disable_root_login --rule accounts_tmout --host root@db1
`

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

type fixFlags struct {
	rulesPath      string
	datastream     string
	profile        string
	ruleIDs        stringList
	host           string
	identity       string
	knownHosts     string
	acceptNew      bool
	baseURL        string
	model          string
	apiKeyEnv      string
	maxAttempts    int
	contextWindow  int
	maxTokens      int
	keepTurns      int
	tokenizer      string
	dryRun         bool
	jsonOut        bool
	retryDeadline  time.Duration
	requestTimeout time.Duration
	maxReplyBytes  int64
	commandTimeout time.Duration
	sandbox        sandboxMode
	sudo           bool
	verbose        bool
	backendName    string
	verifyCount    bool
	distiller      string
	dest           sshexec.Destination // host, parsed by validate
	backend        served.Backend      // backendName, parsed by validate
}

func parseFixFlags(args []string, stderr io.Writer) (*fixFlags, error) {
	f := &fixFlags{}
	fs := newFixFlagSet(f, stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, errHelp
		}
		return nil, &usageError{err}
	}
	if err := f.validate(fs); err != nil {
		return nil, err
	}
	return f, nil
}

// newFixFlagSet declares the main mode's flags into f.
func newFixFlagSet(f *fixFlags, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&f.rulesPath, "rules", "", "rules YAML `FILE` or directory of YAML files (this or --datastream is required)")
	fs.StringVar(&f.datastream, "datastream", "", "SCAP source datastream `PATH` on the host, in place of --rules (needs --profile and oscap on the host)")
	fs.StringVar(&f.profile, "profile", "", "XCCDF profile `ID` of --datastream, short (anssi_bp28_high) or full")
	fs.Var(&f.ruleIDs, "rule", "rule `ID` to fix (repeatable; required)")
	fs.StringVar(&f.host, "host", "", "target `[user@]host[:port]` (required)")
	fs.StringVar(&f.identity, "identity", "", "private key `FILE` (default: ssh-agent and ~/.ssh/id_*)")
	fs.StringVar(&f.knownHosts, "known-hosts", "", "known_hosts `FILE` (default ~/.ssh/known_hosts)")
	fs.BoolVar(&f.acceptNew, "accept-new-host-key", false, "trust an unknown host key on first use and record it in known_hosts (a changed key is still refused)")
	fs.StringVar(&f.baseURL, "base-url", "http://localhost:8000/v1", "OpenAI-compatible `URL` of the model server")
	fs.StringVar(&f.model, "model", "", "model `NAME` (default: the only model the server lists)")
	fs.StringVar(&f.apiKeyEnv, "api-key-env", "OPENAI_API_KEY", "environment `VARIABLE` holding the API key")
	fs.IntVar(&f.maxAttempts, "max-attempts", 0, "`N` attempts at most per rule, a rule's max_attempts above N included (default: the rule's max_attempts, else 20)")
	fs.IntVar(&f.contextWindow, "context-window", 0, "context window in tokens (default: the server's max_model_len)")
	fs.IntVar(&f.maxTokens, "max-tokens", budget.DefaultReserve, "completion reserve sent as max_tokens")
	fs.IntVar(&f.keepTurns, "keep-turns", 3, "turns kept verbatim once the prompt passes the soft limit (K)")
	fs.StringVar(&f.tokenizer, "tokenizer", "qwen3", "tokenizer of the served model: qwen3, qwen2.5 or a tokenizer.json `FILE`")
	fs.BoolVar(&f.dryRun, "dry-run", false, "check the rules and show the first prompt's budget; run no command and call no model")
	fs.BoolVar(&f.jsonOut, "json", false, "print one JSON object per event on stdout")
	fs.DurationVar(&f.retryDeadline, "retry-deadline", worker.DefaultRetryDeadline, "how long the model server may stay unreachable before the run gives up (0: no retries)")
	fs.DurationVar(&f.commandTimeout, "command-timeout", 5*time.Minute, "timeout of each command on the host (0: none)")
	fs.Var(&f.sandbox, "sandbox", sandboxUsage)
	fs.BoolVar(&f.sudo, "sudo", false, "run every command through sudo -n: the login is a non-root user with sudo")
	addReplyFlags(fs, &f.requestTimeout, &f.maxReplyBytes)
	fs.BoolVar(&f.verbose, "v", false, "log budget events and retries to stderr")
	addModelOptionFlags(fs, &f.backendName, &f.verifyCount, &f.distiller)
	setUsage(fs, fixUsage, fixExamples, fixGroups)
	return fs
}

// validate checks the flags before anything is read or dialled: what is
// required and exclusive, numbers and durations, the host's syntax and
// port, and that the files named exist and are readable regular files.
func (f *fixFlags) validate(fs *flag.FlagSet) error {
	switch {
	case fs.NArg() > 0:
		return usagef("unexpected argument %q", fs.Arg(0))
	case f.rulesPath == "" && f.datastream == "":
		return usagef("--rules is required (or --datastream with --profile)")
	case f.rulesPath != "" && f.datastream != "":
		return usagef("--rules and --datastream cannot be combined")
	case f.datastream != "" && f.profile == "":
		return usagef("--datastream needs --profile")
	case f.profile != "" && f.datastream == "":
		return usagef("--profile applies only to --datastream")
	case len(f.ruleIDs) == 0:
		return usagef("at least one --rule is required")
	case f.host == "":
		return usagef("--host is required")
	case f.maxAttempts < 0 || f.contextWindow < 0 || f.maxTokens <= 0 || f.keepTurns < 1:
		return usagef("--max-attempts and --context-window must not be negative, --max-tokens and --keep-turns must be positive")
	case f.verifyCount && f.dryRun:
		return usagef("--verify-count checks the first model call, and --dry-run makes none")
	}
	backend, err := checkModelOptions(f.backendName, f.distiller)
	if err != nil {
		return err
	}
	f.backend = backend
	if err := nonNegative(map[string]time.Duration{"--retry-deadline": f.retryDeadline, "--command-timeout": f.commandTimeout}); err != nil {
		return err
	}
	if err := checkReplyFlags(f.requestTimeout, f.maxReplyBytes); err != nil {
		return err
	}
	dest, err := sshexec.ParseDestination(f.host)
	if err != nil {
		return usagef("--host: %v", err)
	}
	f.dest = dest
	if err := checkBaseURL(f.baseURL); err != nil {
		return err
	}
	if f.rulesPath != "" {
		if err := checkInput("--rules", f.rulesPath, true); err != nil {
			return err
		}
	}
	if f.identity != "" {
		if err := checkInput("--identity", f.identity, false); err != nil {
			return err
		}
	}
	if f.knownHosts != "" && !f.acceptNew {
		if err := checkInput("--known-hosts", f.knownHosts, false); err != nil {
			return err
		}
	}
	return checkTokenizerArg(f.tokenizer)
}

// unreachable marks errors that exit with code 3.
type unreachable struct{ err error }

func (e *unreachable) Error() string { return e.err.Error() }
func (e *unreachable) Unwrap() error { return e.err }
func (e *unreachable) ExitCode() int { return exitUnreachable }

// notFixed is returned when some rule is not compliant at the end.
type notFixed struct{ n, total int }

func (e *notFixed) Error() string { return fmt.Sprintf("%d of %d rules not fixed", e.n, e.total) }
func (e *notFixed) ExitCode() int { return exitNotFixed }

func runFix(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseFixFlags(args, stderr)
	if err != nil {
		return err
	}
	var selected []rules.Rule
	if f.rulesPath != "" {
		set, err := rules.Load(f.rulesPath)
		if err != nil {
			return &usageError{err}
		}
		for _, id := range f.ruleIDs {
			r, ok := set.Get(id)
			if !ok {
				return usagef("rule %q is not in %s (it has %s)", id, f.rulesPath, strings.Join(set.IDs(), ", "))
			}
			selected = append(selected, r)
		}
	}
	logLevel := slog.LevelWarn
	if f.verbose {
		logLevel = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: logLevel}))

	sg := catchSignals(ctx, stderr)
	defer sg.close()
	// The model server: its model and context window.
	ms, err := connectModel(sg.start, modelFlags{tokenizer: f.tokenizer, backend: f.backend, baseURL: f.baseURL, model: f.model, apiKeyEnv: f.apiKeyEnv,
		contextWindow: f.contextWindow, maxTokens: f.maxTokens, retryDeadline: f.retryDeadline, maxReplyBytes: f.maxReplyBytes, notices: stderr})
	if err != nil {
		return sg.startErr(err, "waiting for the model server "+f.baseURL)
	}

	// The host.
	dest := f.dest
	scfg := sshexec.Config{Host: dest.Host, Port: dest.Port, User: dest.User, AcceptNewHostKey: f.acceptNew, Sudo: f.sudo,
		CommandTimeout: sshCommandTimeout(f.commandTimeout), Logger: logger, Passphrase: sshexec.TerminalPassphrase(), OnDialFailure: dialNotices(stderr)}
	if f.identity != "" {
		scfg.IdentityFiles = []string{f.identity}
	}
	if f.knownHosts != "" {
		scfg.KnownHostsFiles = []string{f.knownHosts}
	}
	ssh, err := sshexec.New(scfg)
	if err != nil {
		return &usageError{err}
	}
	defer ssh.Close()
	if err := ssh.Connect(sg.start); err != nil {
		if sg.stopped() {
			return sg.startErr(err, "connecting to "+f.host)
		}
		var op *sshexec.OpError
		if errors.As(err, &op) && (op.Op == sshexec.OpHostKey || op.Op == sshexec.OpAuth) {
			return &usageError{err}
		}
		return &unreachable{err}
	}
	if f.datastream != "" {
		// The rules are read from the datastream the host's oscap will
		// evaluate them with.
		if selected, err = datastreamRules(sg.start, ssh, f.host, f.datastream, f.profile, f.ruleIDs); err != nil {
			return sg.startErr(err, "reading the datastream from "+f.host)
		}
	}

	rep := newReporter(stdout, f.jsonOut, ms.model.Budget().PromptLimit())
	stop, hardCtx, cancel := sg.stop, sg.hard, sg.cancelHard

	var model worker.ChatModel = ms.client
	var verifier *served.CountCheck
	if f.verifyCount {
		verifier = countCheck(ms, cancel)
		model = verifier
	}
	distiller, err := newDistiller(f.distiller, ms)
	if err != nil {
		return err
	}
	sb, err := hostSandbox(ctx, f.sandbox, f.host, ssh, scfg, loginOf(dest.User), dest.Port, f.commandTimeout)
	if err != nil {
		return err
	}
	w, err := worker.New(worker.Config{
		Chat: model, Model: ms.model, Target: sb.Runner, Probe: ssh, Checks: ssh, Sandboxed: sb.Sandboxed, Fallback: sb.Fallback,
		MaxAttempts: f.maxAttempts, KeepTurns: f.keepTurns,
		RetryDeadline: workerDeadline(f.retryDeadline), RequestTimeout: f.requestTimeout, Logger: logger, Observer: worker.Observers{rep, retryNotices{w: stderr, baseURL: f.baseURL}}, Stop: stop,
		Distiller: distiller,
	})
	if err != nil {
		return &usageError{err}
	}
	if f.dryRun {
		return dryRun(hardCtx, w, selected, stdout)
	}
	var outcomes []worker.Outcome
	var runErr error
	for _, r := range selected {
		out, err := w.Fix(hardCtx, r)
		outcomes = append(outcomes, out)
		if err != nil {
			var ue *worker.UnreachableError
			var op *sshexec.OpError
			switch {
			case errors.As(err, &ue), errors.As(err, &op):
				runErr = &unreachable{err}
			case hardCtx.Err() != nil || out.Status == nightshift.RuleInterrupted:
				runErr = err
			default:
				fmt.Fprintf(stderr, "worker: rule %s: %v\n", r.ID, err)
				continue
			}
			break
		}
		if out.Status == nightshift.RuleInterrupted {
			break
		}
	}
	if err := verifyFailure(verifier); err != nil {
		return err
	}
	rep.summary(outcomes)
	for _, o := range outcomes {
		if o.Status == nightshift.RuleNotApplicable || o.Status == nightshift.RuleCheckError || o.Status == nightshift.RuleNeedsAccessChange {
			fmt.Fprintf(stderr, "worker: rule %s: %s, not fixed: %s\n", o.Rule, o.Status, o.Reason)
		}
	}
	if runErr != nil {
		return runErr
	}
	bad := 0
	for _, o := range outcomes {
		if !o.Fixed() {
			bad++
		}
	}
	if bad > 0 || len(outcomes) < len(selected) {
		return &notFixed{bad + len(selected) - len(outcomes), len(selected)}
	}
	return nil
}

func dryRun(ctx context.Context, w *worker.Worker, rs []rules.Rule, stdout io.Writer) error {
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tCHECK\tINSTRUCTION+TASK TOKENS\tPROMPT LIMIT")
	for _, r := range rs {
		p, err := w.Plan(ctx, r)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", r.ID, p.Check, p.PromptTokens, p.Limit)
	}
	return tw.Flush()
}
