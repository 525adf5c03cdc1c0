package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/journal"
	"github.com/nightshift-dev/nightshift/orchestrate"
	"github.com/nightshift-dev/nightshift/report"
	"github.com/nightshift-dev/nightshift/scap"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/sshexec"
	"github.com/nightshift-dev/nightshift/worker"

	"github.com/nightshift-dev/nightshift"
)

const runUsage = `Usage:
  worker run --rules FILE|DIR [--rules …] [--rule ID …] --inventory FILE [--limit PATTERN …]
             --journal FILE [flags]
  worker run --datastream PATH-ON-HOSTS --profile ID [--rule ID …] --inventory FILE
             --journal FILE [flags]
  worker run --config FILE [flags]

Works on many rules on many hosts overnight: every rule of the rules files, or
every rule an SCAP profile selects (or only the --rule ones), in file order, on
every host of the inventory (or those
--limit selects: group or host names, "!name" to exclude), one rule at a time
per host and --parallel-hosts hosts at once, with at most --model-concurrency
model calls in flight. A host that stops answering is marked unreachable and
skipped; the others go on. A host that answered and then stops (sshd
restarted, a reboot, a network blip) is redialled with backoff for up to
--host-reconnect-deadline (10m) before it is marked unreachable; 'worker
resume' tries unreachable hosts again.

Every step is committed to the journal (SQLite) before the next starts. After a
crash, a kill or a stop, 'worker resume JOURNAL' continues the run: finished
rules are not redone and no recorded command is run again. 'worker history
JOURNAL' lists runs and tasks. The journal is locked while a worker writes
it, on the file itself: a second 'worker run' or 'resume' through any path to
it (a symlink, a hard link) is refused before anything runs (exit 2). An empty
(zero-byte) --journal file becomes a new journal; resume and history refuse
one.

The first SIGINT or SIGTERM finishes each host's current step (a command or a
check that is running), records it and exits (resume later): every wait ends
at once — a model call, its retry backoff (a server's Retry-After included), a
redial of a host. Before the night starts (waiting for the model server,
reading a datastream) the first signal exits at once with status 1, nothing
run on any host. A second signal exits at once, the journal still consistent.
SIGINT is caught even when the worker was started with it ignored (a
background job of a script).

Progress goes to stderr: a live status on a terminal, one line per event
otherwise (--no-progress: none). When a rule ends on a host, what its attempts
taught (what worked, what failed and why) is stored in the journal's file, and
the instruction for that rule on later hosts and runs carries the most relevant
lessons (--no-lessons: neither). --metrics-addr serves Prometheus metrics at
/metrics while the run lasts.

With --datastream the rules come from an SCAP source datastream that is at
PATH on every host (SSG's ssg-*-ds.xml): it is read over SSH from the first
selected host that answers, and each rule is checked by 'oscap xccdf eval' on
its host. Rules OpenSCAP finds notapplicable or cannot check (error,
notchecked) are reported as such, never as fixed.

Inventories: a YAML list of hosts, or Ansible's INI format.

` + configHelp + `
Exit status: 0 every rule compliant; 1 some rule not fixed, or the run was
stopped before its end; 2 usage or configuration error; 3 the model server
unreachable, or (--datastream) no host answered to read the datastream.
`

const runExamples = `
Examples:
  worker run --rules rules/ --inventory hosts.ini --limit webservers --journal night.db \
             --html night.html --junit night.xml --base-url http://gpu1:8000/v1
  worker run --datastream /usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml \
             --profile anssi_bp28_high --inventory hosts.yaml --journal night.db
  worker run --config night.yaml --limit dbservers
  worker resume night.db
`

// runMeta is what a batch run records to be resumed: flags, never secrets.
type runMeta struct {
	Rules            []string      `json:"rules_paths,omitempty"`
	Datastream       string        `json:"datastream,omitempty"` // path on the hosts
	Profile          string        `json:"profile,omitempty"`
	RuleIDs          []string      `json:"rule_ids,omitempty"`
	Inventory        string        `json:"inventory"`
	Limit            []string      `json:"limit,omitempty"`
	BaseURL          string        `json:"base_url"`
	Model            string        `json:"model,omitempty"`
	APIKeyEnv        string        `json:"api_key_env"`
	Tokenizer        string        `json:"tokenizer"`
	TokenizerBackend string        `json:"tokenizer_backend,omitempty"` // "": go
	VerifyCount      bool          `json:"verify_count,omitempty"`
	Distiller        string        `json:"distiller,omitempty"` // "": deterministic
	ContextWindow    int           `json:"context_window,omitempty"`
	MaxTokens        int           `json:"max_tokens"`
	MaxAttempts      int           `json:"max_attempts,omitempty"`
	KeepTurns        int           `json:"keep_turns"`
	Identity         string        `json:"identity,omitempty"`
	KnownHosts       string        `json:"known_hosts,omitempty"`
	AcceptNew        bool          `json:"accept_new_host_key,omitempty"`
	CommandTimeout   time.Duration `json:"command_timeout_ns"`
	Sandbox          sandboxMode   `json:"sandbox,omitempty"`
	Sudo             bool          `json:"sudo,omitempty"`
	RetryDeadline    time.Duration `json:"retry_deadline_ns"`
	RequestTimeout   time.Duration `json:"request_timeout_ns,omitempty"` // 0 (a run recorded before the flag): the default
	MaxReplyBytes    int64         `json:"max_reply_bytes,omitempty"`    // 0 (a run recorded before the flag): the default
	// ReconnectDeadline is --host-reconnect-deadline; a run recorded
	// before it existed gets the default (decodeMeta).
	ReconnectDeadline time.Duration `json:"reconnect_deadline_ns"`
	ParallelHosts     int           `json:"parallel_hosts"`
	ModelConcurrency  int           `json:"model_concurrency"`
	// RulesDigest is each rule's digest when the run started (see
	// rulesDigest); resume compares it with the rules it reads.
	RulesDigest map[string]string `json:"rules_digest,omitempty"`
	JSONReport  string            `json:"json_report,omitempty"`
	JUnit       string            `json:"junit,omitempty"`
	HTML        string            `json:"html,omitempty"`
}

// runFlags are run's flags that are not recorded as such in runMeta.
type runFlags struct {
	rulesPaths, ruleIDs, limit stringList
	journalPath, name, config  string
	verbose                    bool
	observe                    observeFlags
}

// newRunFlags declares run's flags into m and r.
func newRunFlags(m *runMeta, r *runFlags, out io.Writer) *flags {
	fs := newFlags(cmdRun, out)
	for name, p := range map[string]any{
		"rules": &r.rulesPaths, "datastream": &m.Datastream, "profile": &m.Profile, "rule": &r.ruleIDs, "inventory": &m.Inventory,
		"limit": &r.limit, "journal": &r.journalPath, "name": &r.name, "tokenizer": &m.Tokenizer, "context-window": &m.ContextWindow,
		"max-tokens": &m.MaxTokens, "max-attempts": &m.MaxAttempts, "keep-turns": &m.KeepTurns, "identity": &m.Identity,
		"known-hosts": &m.KnownHosts, "accept-new-host-key": &m.AcceptNew, "command-timeout": &m.CommandTimeout, "sandbox": &m.Sandbox,
		"sudo": &m.Sudo, "v": &r.verbose, "tokenizer-backend": &m.TokenizerBackend, "verify-count": &m.VerifyCount, "distiller": &m.Distiller,
		"config": &r.config,
	} {
		fs.bind(name, p)
	}
	bindRunFlags(fs, m, &r.observe)
	setUsage(fs.FlagSet, runUsage, runExamples)
	return fs
}

// bindRunFlags declares the flags run and resume share; resume ignores
// unset ones and keeps the recorded values.
func bindRunFlags(fs *flags, m *runMeta, of *observeFlags) {
	for name, p := range map[string]any{
		"base-url": &m.BaseURL, "model": &m.Model, "api-key-env": &m.APIKeyEnv, "parallel-hosts": &m.ParallelHosts,
		"model-concurrency": &m.ModelConcurrency, "json-report": &m.JSONReport, "junit": &m.JUnit, "html": &m.HTML,
		"retry-deadline": &m.RetryDeadline, "request-timeout": &m.RequestTimeout, "max-reply-bytes": &m.MaxReplyBytes,
		"host-reconnect-deadline": &m.ReconnectDeadline,
		"metrics-addr":            &of.metricsAddr, "no-progress": &of.noProgress, "no-lessons": &of.noLessons, "no-recipes": &of.noRecipes,
	} {
		fs.bind(name, p)
	}
}

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	m := &runMeta{}
	var r runFlags
	fs := newRunFlags(m, &r, stderr)
	rest, err := fs.parse(args)
	if err != nil {
		return err
	}
	if err := fs.applyConfig(); err != nil {
		return err
	}
	rulesPaths, ruleIDs, limit, journalPath, name, verbose, of := r.rulesPaths, r.ruleIDs, r.limit, r.journalPath, r.name, r.verbose, r.observe
	switch {
	case len(rest) > 0:
		return usagef("unexpected argument %q", rest[0])
	case len(rulesPaths) == 0 && m.Datastream == "":
		return usagef("--rules is required (or --datastream with --profile)")
	case len(rulesPaths) > 0 && m.Datastream != "":
		return usagef("--rules and --datastream cannot be combined")
	case m.Datastream != "" && m.Profile == "":
		return usagef("--datastream needs --profile")
	case m.Profile != "" && m.Datastream == "":
		return usagef("--profile applies only to --datastream")
	case m.Inventory == "" || journalPath == "":
		return usagef("--inventory and --journal are required")
	case m.ParallelHosts < 1 || m.ModelConcurrency < 1 || m.MaxTokens < 1 || m.KeepTurns < 1 || m.MaxAttempts < 0 || m.ContextWindow < 0:
		return usagef("--parallel-hosts, --model-concurrency, --max-tokens and --keep-turns must be positive, --max-attempts and --context-window not negative")
	}
	if err := validateRun(m, rulesPaths, journalPath); err != nil {
		return err
	}
	if err := of.validate(); err != nil {
		return err
	}
	m.Rules, m.RuleIDs, m.Limit = abs(rulesPaths), ruleIDs, limit
	m.Inventory, m.Identity, m.KnownHosts = absPath(m.Inventory), absPath(m.Identity), absPath(m.KnownHosts)
	m.Tokenizer = tokenizerArg(m.Tokenizer)
	if name == "" {
		name = strings.Join(rulesPaths, " ")
		if m.Datastream != "" {
			name = scap.ShortID(m.Profile) + " of " + m.Datastream
		}
	}
	sg := catchSignals(ctx, stderr)
	defer sg.close()
	base := sshBase(m, nil)
	base.OnDialFailure = dialNotices(stderr) // --datastream is read from the first host that answers
	spec, err := loadSpec(sg.start, m, orchestrate.SSHConnector{Base: base})
	if err != nil {
		return sg.startErr(err, "reading the datastream from the hosts")
	}
	warnUndeclared(stderr, spec.Rules)
	spec.Name = name
	m.RulesDigest = rulesDigest(spec.Rules)
	// Open takes the journal's lock (on the file, whatever path reaches
	// it) before anything runs.
	j, err := journal.Open(ctx, journalPath, journal.Config{})
	if err != nil {
		return journalError(err)
	}
	defer j.Close()
	return runBatch(ctx, sg, j, m, spec, 0, verbose, of, stdout, stderr)
}

// abs makes paths absolute, so a resume from another directory finds them.
func abs(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = absPath(p)
	}
	return out
}

func absPath(p string) string {
	if p == "" {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// tokenizerArg makes a tokenizer file name absolute; built-in names stay.
func tokenizerArg(t string) string {
	if strings.ContainsRune(t, os.PathSeparator) || strings.HasSuffix(t, ".json") {
		return absPath(t)
	}
	return t
}

// runBatch runs spec (resume > 0: continues that run), writes the reports
// and prints a summary.
func runBatch(ctx context.Context, sg *signals, j *journal.Journal, m *runMeta, spec batch.Spec, resume journal.RunID, verbose bool, of observeFlags, stdout, stderr io.Writer) error {
	logLevel := slog.LevelWarn
	if verbose {
		logLevel = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: logLevel}))
	// A run recorded before these flags existed has neither.
	m.TokenizerBackend = cmp.Or(m.TokenizerBackend, served.BackendGo.String())
	m.Distiller = cmp.Or(m.Distiller, distillerDeterministic)
	backend, err := checkModelOptions(m.TokenizerBackend, m.Distiller)
	if err != nil {
		return err
	}
	ms, err := connectModel(sg.start, modelFlags{tokenizer: m.Tokenizer, backend: backend, baseURL: m.BaseURL, model: m.Model, apiKeyEnv: m.APIKeyEnv,
		contextWindow: m.ContextWindow, maxTokens: m.MaxTokens, retryDeadline: m.RetryDeadline, maxReplyBytes: m.MaxReplyBytes, notices: stderr})
	if err != nil {
		return sg.startErr(err, "waiting for the model server "+m.BaseURL)
	}
	distiller, err := newDistiller(m.Distiller, ms)
	if err != nil {
		return err
	}
	scfg := sshBase(m, logger)
	scfg.OnDialFailure = dialNotices(stderr)

	obs, err := startObservers(ctx, j, of, ms.model.Tokenizer(), logger, stderr)
	if err == nil {
		obs.notices = retryNotices{w: stderr, baseURL: m.BaseURL}
	}
	if err != nil {
		return &usageError{err}
	}
	defer obs.close()
	stop, hardCtx, cancel := sg.stop, sg.hard, sg.cancelHard
	var model worker.ChatModel = ms.client
	var verifier *served.CountCheck
	if m.VerifyCount {
		verifier = countCheck(ms, cancel)
		model = verifier
	}
	bcfg := batch.Config{
		Journal: j, Connector: orchestrate.SSHConnector{Base: scfg},
		Worker: worker.Config{Chat: model, Model: ms.model, MaxAttempts: m.MaxAttempts, KeepTurns: m.KeepTurns,
			RetryDeadline: m.RetryDeadline, RequestTimeout: m.RequestTimeout, Logger: logger, Distiller: distiller},
		ParallelHosts: m.ParallelHosts, ModelConcurrency: m.ModelConcurrency, Stop: stop,
		Sandbox: func(ctx context.Context, h inventory.Host, conn nightshift.Runner) (batch.SandboxSetup, error) {
			fresh := orchestrate.SSHConnector{Base: scfg}.Config(h)
			return hostSandbox(ctx, m.Sandbox, h.Name, conn, fresh, loginOf(fresh.User), fresh.Port, m.CommandTimeout)
		},
	}
	obs.configure(&bcfg)
	r, err := batch.New(bcfg)
	if err != nil {
		return &usageError{err}
	}
	var res batch.RunResult
	if resume > 0 {
		res, err = r.Resume(hardCtx, resume, spec)
	} else {
		res, err = r.Run(hardCtx, spec)
	}
	// The run is over: the last progress, the metrics server and the
	// lessons store stop before the reports.
	if cerr := obs.close(); cerr != nil {
		logger.Warn("closing progress, metrics or lessons", "err", cerr)
	}
	if errors.Is(err, batch.ErrSpec) {
		return &usageError{err}
	}
	if verr := verifyFailure(verifier); verr != nil {
		// Nothing was asked of the model; the tasks stay unfinished.
		return verr
	}
	if res.Run == 0 {
		return err
	}
	// Reports and the summary, also after a stop or a failure.
	rctx := context.WithoutCancel(ctx)
	rep, rerr := batch.Report(rctx, j, res.Run, 0)
	if rerr != nil {
		return errors.Join(err, rerr)
	}
	if werr := writeReports(m, rep); werr != nil {
		return errors.Join(err, werr)
	}
	printSummary(stdout, j.Path(), res, rep)
	switch {
	case errors.Is(err, nightshift.ErrModelUnreachable):
		return &unreachable{err}
	case err != nil:
		return err
	case res.Stopped:
		return &stopped{path: j.Path(), done: res.Finished, total: res.Total}
	}
	bad := 0
	for _, x := range rep.Results {
		if !x.Outcome.Passed() {
			bad++
		}
	}
	if bad > 0 {
		return &notFixed{bad, len(rep.Results)}
	}
	return nil
}

// stopped reports a run ended by a signal before its end: exit 1.
type stopped struct {
	path        string
	done, total int
}

func (e *stopped) Error() string {
	return fmt.Sprintf("stopped with %d of %d rules × hosts finished; continue with: worker resume %s", e.done, e.total, e.path)
}
func (e *stopped) ExitCode() int { return exitNotFixed }

func writeReports(m *runMeta, rep *report.Run) error {
	outs := []struct {
		path  string
		write func(io.Writer, *report.Run) error
	}{{m.JSONReport, report.WriteJSON}, {m.JUnit, report.WriteJUnit}, {m.HTML, report.WriteHTML}}
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		f, err := os.Create(o.path)
		if err != nil {
			return err
		}
		err = o.write(f, rep)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", o.path, err)
		}
	}
	return nil
}

func printSummary(w io.Writer, path string, res batch.RunResult, rep *report.Run) {
	s := report.NewSummary(rep)
	fmt.Fprintf(w, "run %d in %s: %d of %d rules × hosts finished", res.Run, path, res.Finished, res.Total)
	if rep.NotStarted > 0 {
		fmt.Fprintf(w, ", %d not started", rep.NotStarted)
	}
	if len(res.Unreachable) > 0 {
		fmt.Fprintf(w, "; unreachable: %s", strings.Join(res.Unreachable, ", "))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, o := range nightshift.RuleStatuses() {
		if n := s.Totals.Outcomes[o]; n > 0 {
			fmt.Fprintf(tw, "  %s\t%d\n", o, n)
		}
	}
	tw.Flush()
}

// decodeMeta reads the flags a run recorded.
func decodeMeta(raw json.RawMessage) (*runMeta, error) {
	m := &runMeta{ReconnectDeadline: sshexec.DefaultReconnectDeadline}
	if err := json.Unmarshal(raw, m); err != nil || (len(m.Rules) == 0 && m.Datastream == "") || m.Inventory == "" {
		return nil, usagef("the run was not started by 'worker run' (no rules files or datastream, or no inventory recorded)")
	}
	return m, nil
}

// validateRun checks run's flags before anything is read or dialled:
// durations, the model server's URL, and that the files named exist and
// are readable regular files (the journal may not exist yet).
func validateRun(m *runMeta, rulesPaths []string, journalPath string) error {
	if err := nonNegative(map[string]time.Duration{"--retry-deadline": m.RetryDeadline, "--command-timeout": m.CommandTimeout,
		"--host-reconnect-deadline": m.ReconnectDeadline}); err != nil {
		return err
	}
	if err := checkReplyFlags(m.RequestTimeout, m.MaxReplyBytes); err != nil {
		return err
	}
	if err := checkBaseURL(m.BaseURL); err != nil {
		return err
	}
	if err := checkRulesAndInventory(m, rulesPaths); err != nil {
		return err
	}
	if err := checkSSHFiles(m); err != nil {
		return err
	}
	if _, err := os.Stat(journalPath); err == nil {
		if err := checkInput("--journal", journalPath, false); err != nil {
			return err
		}
	}
	if _, err := checkModelOptions(m.TokenizerBackend, m.Distiller); err != nil {
		return err
	}
	if err := checkOutputs(m); err != nil {
		return err
	}
	return checkTokenizerArg(m.Tokenizer)
}
