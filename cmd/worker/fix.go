package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

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

` + configHelp + `
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
	config         string
	dest           sshexec.Destination // host, parsed by validate
	backend        served.Backend      // backendName, parsed by validate
}

func parseFixFlags(args []string, stderr io.Writer) (*fixFlags, error) {
	f := &fixFlags{}
	fs := newFixFlagSet(f, stderr)
	rest, err := fs.parse(args)
	if err != nil {
		return nil, err
	}
	// The file and the environment fill what the command line left, before
	// anything is checked.
	if err := fs.applyConfig(); err != nil {
		return nil, err
	}
	if err := f.validate(rest); err != nil {
		return nil, err
	}
	return f, nil
}

// newFixFlagSet declares the main mode's flags into f.
func newFixFlagSet(f *fixFlags, out io.Writer) *flags {
	fs := newFlags(cmdFix, out)
	for name, p := range map[string]any{
		"rules": &f.rulesPath, "datastream": &f.datastream, "profile": &f.profile, "rule": &f.ruleIDs, "host": &f.host,
		"identity": &f.identity, "known-hosts": &f.knownHosts, "accept-new-host-key": &f.acceptNew,
		"base-url": &f.baseURL, "model": &f.model, "api-key-env": &f.apiKeyEnv, "max-attempts": &f.maxAttempts,
		"context-window": &f.contextWindow, "max-tokens": &f.maxTokens, "keep-turns": &f.keepTurns, "tokenizer": &f.tokenizer,
		"dry-run": &f.dryRun, "json": &f.jsonOut, "retry-deadline": &f.retryDeadline, "command-timeout": &f.commandTimeout,
		"sandbox": &f.sandbox, "sudo": &f.sudo, "request-timeout": &f.requestTimeout, "max-reply-bytes": &f.maxReplyBytes,
		"v": &f.verbose, "tokenizer-backend": &f.backendName, "verify-count": &f.verifyCount, "distiller": &f.distiller,
		"config": &f.config,
	} {
		fs.bind(name, p)
	}
	setUsage(fs.FlagSet, fixUsage, fixExamples)
	return fs
}

// validate checks the flags before anything is read or dialled: what is
// required and exclusive, numbers and durations, the host's syntax and
// port, and that the files named exist and are readable regular files.
func (f *fixFlags) validate(rest []string) error {
	switch {
	case len(rest) > 0:
		return usagef("unexpected argument %q", rest[0])
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
		warnUndeclared(stderr, selected)
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
		CommandTimeout: f.commandTimeout, Logger: logger, Passphrase: sshexec.TerminalPassphrase(), OnDialFailure: dialNotices(stderr)}
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
	wcfg := worker.Config{
		Chat: model, Model: ms.model,
		MaxAttempts: f.maxAttempts, KeepTurns: f.keepTurns, RetryDeadline: f.retryDeadline, RequestTimeout: f.requestTimeout,
		Logger: logger, Observer: nightshift.Observers{rep, retryNotices{w: stderr, baseURL: f.baseURL}}, Distiller: distiller,
	}
	sb, err := hostSandbox(ctx, f.sandbox, f.host, ssh, scfg, loginOf(dest.User), dest.Port, f.commandTimeout)
	if err != nil {
		return err
	}
	if f.dryRun {
		wcfg.Target = sb.Runner
		w, err := worker.New(wcfg)
		if err != nil {
			return &usageError{err}
		}
		return dryRun(hardCtx, w, selected, stdout)
	}
	outcomes, err := runOneHost(ctx, hardCtx, stop, wcfg, f.host, ssh, sb, selected)
	if verr := verifyFailure(verifier); verr != nil {
		return verr
	}
	var runErr error
	switch {
	case errors.Is(err, nightshift.ErrModelUnreachable):
		runErr = &unreachable{err}
	case err != nil:
		runErr = err
	}
	rep.summary(outcomes)
	for _, o := range outcomes {
		switch o.Status {
		case nightshift.RuleNotApplicable, nightshift.RuleCheckError, nightshift.RuleNeedsAccessChange:
			fmt.Fprintf(stderr, "worker: rule %s: %s, not fixed: %s\n", o.Rule, o.Status, o.Reason)
		case nightshift.RuleFailed:
			fmt.Fprintf(stderr, "worker: rule %s: %s\n", o.Rule, o.Reason)
		case nightshift.RuleUnreachable:
			if runErr == nil {
				runErr = &unreachable{errors.New(o.Reason)}
			}
		default:
			// the summary says how the others ended
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
