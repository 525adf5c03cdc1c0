package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/fleet"
	"github.com/nightshift-dev/nightshift/memory"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/sshexec"
	"github.com/nightshift-dev/nightshift/worker"
)

// command is a subcommand that takes flags from the registry; a flagSpec's
// cmds is a set of them.
type command uint32

const (
	cmdFix          command = 1 << iota // the main mode: worker --rules … --host …
	cmdRun                              // worker run
	cmdResume                           // worker resume
	cmdServe                            // worker fleet serve
	cmdStart                            // worker fleet start
	cmdFleetStatus                      // worker fleet status
	cmdFleetReport                      // worker fleet report
	cmdFleetCancel                      // worker fleet cancel
	cmdFleetUndo                        // worker fleet undo
	cmdHistory                          // worker history
	cmdUndo                             // worker undo
	cmdDemo                             // worker demo
	cmdSimulate                         // worker simulate-server
	cmdTokens                           // worker tokens
	cmdCheckCommand                     // worker check-command
	cmdRecipes                          // worker recipes
	cmdExport                           // worker export
	cmdFleetExport                      // worker fleet export

	cmdFleet = cmdServe | cmdStart | cmdFleetStatus | cmdFleetReport | cmdFleetCancel | cmdFleetUndo | cmdFleetExport
)

// commandNames name the commands in help and messages.
var commandNames = map[command]string{
	cmdFix: "worker", cmdRun: "worker run", cmdResume: "worker resume", cmdServe: "worker fleet serve",
	cmdStart: "worker fleet start", cmdFleetStatus: "worker fleet status", cmdFleetReport: "worker fleet report",
	cmdFleetCancel: "worker fleet cancel", cmdFleetUndo: "worker fleet undo", cmdHistory: "worker history", cmdUndo: "worker undo",
	cmdDemo: "worker demo", cmdSimulate: "worker simulate-server", cmdTokens: "worker tokens", cmdCheckCommand: "worker check-command",
	cmdRecipes: "worker recipes", cmdExport: "worker export", cmdFleetExport: "worker fleet export",
}

// The help's groups, in the order help prints them.
const (
	groupFlags    = "Flags" // a small command's own flags
	groupTarget   = "Target (the rules and the hosts)"
	groupSSH      = "SSH"
	groupModel    = "Model (the server)"
	groupMemory   = "Memory (the prompt's budget)"
	groupRun      = "Run (many hosts)"
	groupFleet    = "Fleet"
	groupTemporal = "Temporal"
	groupReports  = "Reports"
	groupOutput   = "Output"
	groupConfig   = "Configuration"
)

var groupOrder = []string{groupFlags, groupTarget, groupSSH, groupModel, groupMemory, groupRun, groupFleet, groupTemporal, groupReports, groupOutput, groupConfig}

// flagSpec is one flag, defined once for every subcommand that takes it.
type flagSpec struct {
	name  string
	usage string // flag.UnquoteUsage's form: a `VALUE` in backquotes names the value
	// def is the default, of the type of the variable the flag is bound to
	// (nil: its zero value; ignored for a flag.Value, whose own String is
	// the default).
	def   any
	group string
	// field is the library configuration field the flag sets
	// ("worker.Config.KeepTurns"; TestFlagFields checks that it exists).
	// The CLI passes the flag's value to it unchanged, so 0 means the same
	// thing on both sides. Empty for a flag of the CLI alone.
	field string
	cmds  command
	// usageFor replaces usage for some commands (where the same flag says
	// more, e.g. that a night refuses 0).
	usageFor map[command]string
	// notNight says why 'fleet start' refuses this flag of 'worker run'
	// (every run flag that start does not take has one:
	// TestStartRefusesRunFlags).
	notNight string
}

// durations and names used in several specs.
const (
	defaultBaseURL   = "http://localhost:8000/v1"
	defaultAPIKeyEnv = "OPENAI_API_KEY"
	defaultTokenizer = "qwen3"
	// defaultCommandTimeout is --command-timeout's default everywhere.
	defaultCommandTimeout = fleet.DefaultCommandTimeout
)

// flagRegistry is every flag of the commands above. Two specs may share a
// name only when no command takes both (a flag whose value has another
// type or meaning elsewhere: --rules is one file for the main mode, many
// for run).
var flagRegistry = []flagSpec{
	// Target.
	{name: "rules", usage: "rules YAML `FILE` or directory of YAML files (this or --datastream is required)", group: groupTarget, cmds: cmdFix},
	{name: "rules", usage: "rules YAML `FILE` or directory (repeatable; this or --datastream is required)", group: groupTarget, field: "fleet.Night.RuleFiles", cmds: cmdRun | cmdStart},
	{name: "datastream", usage: "SCAP source datastream `PATH` on the hosts, in place of --rules (needs --profile and oscap on the hosts)", group: groupTarget,
		field: "fleet.DatastreamSource.Path", cmds: cmdFix | cmdRun | cmdStart},
	{name: "profile", usage: "XCCDF profile `ID` of --datastream, short (anssi_bp28_high) or full", group: groupTarget,
		field: "fleet.DatastreamSource.Profile", cmds: cmdFix | cmdRun | cmdStart},
	{name: "rule", usage: "rule `ID` to work on (repeatable; default: every rule of the files, or of the profile)", group: groupTarget,
		field: "fleet.Night.RuleIDs", cmds: cmdFix | cmdRun | cmdStart, usageFor: map[command]string{cmdFix: "rule `ID` to fix (repeatable; required)"}},
	{name: "rule", usage: "only this rule `ID` (repeatable)", group: groupTarget, cmds: cmdFleetUndo | cmdUndo},
	{name: "rule", usage: "only the recipes of rule `ID`", group: groupTarget, cmds: cmdRecipes},
	{name: "state", usage: "only recipes in `STATE`: active, pinned, demoted or retired", group: groupTarget, cmds: cmdRecipes},
	{name: "ansible", usage: "write an Ansible playbook into `DIR` (created if absent)", group: groupOutput, cmds: cmdExport | cmdFleetExport},
	{name: "shell", usage: "write the same plan as one bash script to `FILE`", group: groupOutput, cmds: cmdExport | cmdFleetExport},
	{name: "host", usage: "target `[user@]host[:port]` (required)", group: groupTarget, field: "sshexec.Config.Host", cmds: cmdFix},
	{name: "host", usage: "only this inventory host `NAME` (repeatable)", group: groupTarget, cmds: cmdFleetUndo | cmdUndo},
	{name: "inventory", usage: "inventory `FILE`: YAML list or Ansible INI (required)", group: groupTarget, field: "fleet.Night.Hosts",
		cmds: cmdRun | cmdStart | cmdFleetUndo, usageFor: map[command]string{cmdFleetUndo: "the night's inventory `FILE` (required)"}},
	{name: "limit", usage: "host or group `PATTERN` to select, !PATTERN to exclude (repeatable; default: all)", group: groupTarget, cmds: cmdRun | cmdStart},
	{name: "max-attempts", usage: "`N` attempts at most per rule, a rule's max_attempts above N included (0: the rule's max_attempts, else 20)", group: groupTarget,
		field: "worker.Config.MaxAttempts", cmds: cmdFix | cmdRun | cmdStart},
	{name: "command-timeout", usage: "timeout of each command on a host (0: none)", def: defaultCommandTimeout, group: groupTarget,
		field: "sshexec.Config.CommandTimeout", cmds: cmdFix | cmdRun | cmdServe | cmdStart,
		usageFor: map[command]string{cmdStart: "timeout of each command or check activity (must be positive: a night bounds its commands)"}},
	{name: "sandbox", usage: sandboxUsage, group: groupTarget, field: "fleet.Night.Sandbox", cmds: cmdFix | cmdRun | cmdStart},
	{name: "sudo", usage: "run every command through sudo -n: the login is a non-root user with sudo (per host: ansible_become=true)", group: groupTarget,
		field: "sshexec.Config.Sudo", cmds: cmdFix | cmdRun, usageFor: map[command]string{cmdFix: "run every command through sudo -n: the login is a non-root user with sudo"},
		notNight: "a night's hosts use sudo through their inventory variable ansible_become=true"},

	// SSH.
	{name: "identity", usage: "private key `FILE` (default: ssh-agent and ~/.ssh/id_*; an inventory's own wins)", group: groupSSH,
		field: "sshexec.Config.IdentityFiles", cmds: cmdFix | cmdRun | cmdServe, usageFor: map[command]string{cmdFix: "private key `FILE` (default: ssh-agent and ~/.ssh/id_*)"},
		notNight: "the SSH keys of a night are those of the 'worker fleet serve' processes of each zone (their --identity)"},
	{name: "known-hosts", usage: "known_hosts `FILE` (default ~/.ssh/known_hosts)", group: groupSSH, field: "sshexec.Config.KnownHostsFiles",
		cmds: cmdFix | cmdRun | cmdServe, notNight: "host keys are checked by the 'worker fleet serve' processes of each zone (their --known-hosts)"},
	{name: "accept-new-host-key", usage: "trust unknown host keys on first use and record them in known_hosts (a changed key is still refused)", group: groupSSH,
		field: "sshexec.Config.AcceptNewHostKey", cmds: cmdFix | cmdRun | cmdServe,
		notNight: "host keys are checked by the 'worker fleet serve' processes of each zone (their --accept-new-host-key)"},
	{name: "host-reconnect-deadline", def: sshexec.DefaultReconnectDeadline, group: groupSSH, field: "sshexec.Config.ReconnectDeadline", cmds: cmdRun | cmdResume,
		usage:    "how long a host that answered may stay unreachable (its connection redialled with backoff) before it is marked unreachable (0: 4 redials, as for a first connection)",
		notNight: "a night's SSH connections are the 'worker fleet serve' processes' own, redialled by each activity's retries"},

	// Model.
	{name: "base-url", usage: "OpenAI-compatible `URL` of the model server", def: defaultBaseURL, group: groupModel, field: "worker.ClientConfig.BaseURL",
		cmds:     cmdFix | cmdRun | cmdResume | cmdServe | cmdStart,
		usageFor: map[command]string{cmdStart: "OpenAI-compatible `URL` of the model server, asked for the model's name and context window unless --model and --context-window give them (required then)"}},
	{name: "model", usage: "model `NAME` (default: the only model the server lists)", group: groupModel, field: "fleet.ModelSpec.Name", cmds: cmdFix | cmdRun | cmdResume | cmdStart},
	{name: "api-key-env", usage: "environment `VARIABLE` holding the API key", def: defaultAPIKeyEnv, group: groupModel, field: "worker.ClientConfig.APIKey",
		cmds: cmdFix | cmdRun | cmdResume | cmdServe | cmdStart},
	{name: "retry-deadline", def: worker.DefaultRetryDeadline, group: groupModel, field: "worker.Config.RetryDeadline", cmds: cmdFix | cmdRun | cmdResume | cmdStart,
		usage:    "how long the model server may stay unreachable before the run gives up (0: no retries, the first failure gives up)",
		usageFor: map[command]string{cmdStart: "how long the model server may stay unreachable before a host's night stops (must be positive: a night always retries the model)"}},
	{name: "request-timeout", def: worker.DefaultRequestTimeout, group: groupModel, field: "worker.Config.RequestTimeout", cmds: cmdFix | cmdRun | cmdResume | cmdStart,
		usage: "how long one model call may take, answer included; a call that takes longer is retried (the retry deadline bounds it too)"},
	{name: "max-reply-bytes", def: int64(worker.DefaultMaxReplyBytes), group: groupModel, field: "worker.ClientConfig.MaxReplyBytes", cmds: cmdFix | cmdRun | cmdResume | cmdServe,
		usage:    "cap on a model reply's body in `BYTES`; a longer reply is not read past the cap and is retried as a server fault",
		notNight: "a night's model calls are made by the 'worker fleet serve' processes (their --max-reply-bytes)"},
	{name: "verify-count", group: groupModel, cmds: cmdFix | cmdRun,
		usage:    "before the first model call, count its prompt with the server's /tokenize too; if the counts differ, stop (exit 2): the tokenizer or chat template is not the served model's",
		notNight: "a night does not cross-check counts with /tokenize; check with 'worker run --verify-count' on one host"},

	// Memory.
	{name: "tokenizer", usage: "tokenizer of the served model: qwen3, qwen2.5 or a tokenizer.json `FILE`", def: defaultTokenizer, group: groupMemory,
		field: "fleet.ModelSpec.Tokenizer", cmds: cmdFix | cmdRun | cmdStart,
		usageFor: map[command]string{cmdStart: "tokenizer of the served model: qwen3, qwen2.5 or a tokenizer.json `FILE` present on every worker"}},
	{name: "tokenizer", usage: "tokenizer to load before serving: qwen3, qwen2.5 or a tokenizer.json `FILE` (repeatable; default qwen3)", group: groupMemory,
		field: "fleet.ServeConfig.Tokenizers", cmds: cmdServe},
	{name: "tokenizer-backend", def: served.BackendGo.String(), group: groupMemory, cmds: cmdFix | cmdRun | cmdTokens,
		usage:    "tokenizer `IMPLEMENTATION`: go (pure Go, always built in) or native (the HuggingFace tokenizers library; only in builds with -tags hf_native)",
		notNight: "a night's workers load the pure-Go tokenizer"},
	{name: "context-window", usage: "context window in tokens (0: the server's max_model_len)", group: groupMemory, field: "budget.Config.ContextWindow",
		cmds: cmdFix | cmdRun | cmdStart},
	{name: "max-tokens", usage: "completion reserve sent as max_tokens", def: budget.DefaultReserve, group: groupMemory, field: "budget.Config.Reserve",
		cmds: cmdFix | cmdRun | cmdStart},
	{name: "keep-turns", usage: "turns kept verbatim once the prompt passes the soft limit (K)", def: memory.DefaultKeepTurns, group: groupMemory,
		field: "worker.Config.KeepTurns", cmds: cmdFix | cmdRun | cmdStart},
	{name: "distiller", def: distillerDeterministic, group: groupMemory, cmds: cmdFix | cmdRun,
		usage:    "who writes the one-line summaries of old turns: deterministic, or model (the served model, 30 s and one line's tokens each; the deterministic line whenever it fails, or claims what the re-check did not confirm)",
		notNight: "a night's summaries are the deterministic distiller's"},

	// Run.
	{name: "journal", usage: "journal `FILE` (SQLite; created if absent; required)", group: groupRun, field: "batch.Config.Journal", cmds: cmdRun,
		notNight: "a night is recorded in its Temporal history ('worker fleet status' and 'report' read it)"},
	{name: "name", usage: "run `NAME` for people (default: the rules files)", group: groupRun, field: "fleet.Night.Name", cmds: cmdRun | cmdStart},
	{name: "run", usage: "run `ID` to resume (default: the last unfinished run)", group: groupRun, cmds: cmdResume | cmdHistory | cmdUndo | cmdExport,
		usageFor: map[command]string{cmdHistory: "list the tasks of run `ID`", cmdUndo: "run `ID` whose changes to restore (required)",
			cmdExport: "run `ID` whose proven fixes to export (required)"}},
	{name: "prune", usage: "delete runs that ended more than `AGE` ago", group: groupRun, cmds: cmdHistory},
	{name: "accept-changed-rules", usage: "resume even though the rules changed since the run started (each rule in progress goes on with its new version)", group: groupRun, cmds: cmdResume},
	{name: "parallel-hosts", usage: "hosts worked on at once (one rule at a time each)", def: batch.DefaultParallelHosts, group: groupRun,
		field: "batch.Config.ParallelHosts", cmds: cmdRun | cmdResume | cmdStart},
	{name: "model-concurrency", usage: "model calls in flight at most, across hosts", def: batch.DefaultModelConcurrency, group: groupRun,
		field: "batch.Config.ModelConcurrency", cmds: cmdRun | cmdResume,
		notNight: "a night's cap on model calls is the sum of the --model-slots of the 'worker fleet serve' processes"},
	{name: "no-lessons", usage: "neither record lessons nor give them to later rules and hosts", group: groupRun, field: "fleet.Night.NoLessons", cmds: cmdRun | cmdResume | cmdStart},
	{name: "no-recipes", usage: "never replay a proven fix before asking the model (fixes are still proved into the journal file's recipes)", group: groupRun,
		field: "worker.Recipes.NoReplay", cmds: cmdRun | cmdResume | cmdStart,
		usageFor: map[command]string{cmdStart: "never replay a fix proven on an earlier host before asking the model (fixes are still proved into the night's recipes: 'worker fleet export')"}},
	{name: "recipes", usage: "seed the night with the replayable recipes of journal `FILE` ('worker recipes list FILE'); the recipe book's own state wins for those it has", group: groupRun,
		field: "fleet.Night.Recipes", cmds: cmdStart},
	{name: "book", usage: "the fleet's recipe book: the workflow `ID` nights read their recipes from and publish theirs to", def: fleet.DefaultBook, group: groupFleet,
		field: "fleet.Night.Book", cmds: cmdStart | cmdRecipes,
		usageFor: map[command]string{cmdRecipes: "with --temporal: the recipe book's workflow `ID`"}},
	{name: "metrics-addr", usage: "serve Prometheus metrics at http://`ADDR`/metrics while the run lasts (e.g. :9464)", group: groupRun, cmds: cmdRun | cmdResume,
		notNight: "a night's progress is in Temporal ('worker fleet status')"},
	{name: "no-progress", usage: "no progress on stderr (default: a live status on a terminal, plain lines otherwise)", group: groupRun, cmds: cmdRun | cmdResume,
		notNight: "a night's progress is in Temporal ('worker fleet status')"},

	// Fleet.
	{name: "zone", usage: "the `ZONE` whose hosts this process works on", def: fleet.DefaultZone, group: groupFleet, field: "fleet.ServeConfig.Zone", cmds: cmdServe},
	{name: "model-slots", usage: "model calls this process makes at once (0: none)", def: 2, group: groupFleet, field: "fleet.ServeConfig.ModelSlots", cmds: cmdServe},
	{name: "model-rate", usage: "fleet-wide cap on model calls started per `SECOND` (0: none)", group: groupFleet, field: "fleet.ServeConfig.ModelRate", cmds: cmdServe},
	{name: "host-slots", usage: "host activities (probe, check, command) at once", def: 64, group: groupFleet, field: "fleet.ServeConfig.HostSlots", cmds: cmdServe},
	{name: "host-conns", usage: "SSH connections kept open between a host's activities, least recently used closed first (0: none)", def: fleet.DefaultMaxIdleConns,
		group: groupFleet, field: "fleet.Activities.MaxIdleConns", cmds: cmdServe},
	{name: "host-idle", usage: "close a kept SSH connection unused this long", def: fleet.DefaultIdleConnTimeout, group: groupFleet,
		field: "fleet.Activities.IdleConnTimeout", cmds: cmdServe},
	{name: "id", usage: "workflow `ID` of the night, or of the schedule (default nightshift-NAME-TIME)", group: groupFleet, cmds: cmdStart},
	{name: "schedule", usage: "create a schedule starting the night on `CRON` (5 fields, UTC) instead of starting it now", group: groupFleet, cmds: cmdStart},
	{name: "schedule", usage: "delete the schedule `ID` instead", group: groupFleet, cmds: cmdFleetCancel},
	{name: "wait", usage: "wait for the night to end, print its summary and write the reports", group: groupFleet, cmds: cmdStart},
	{name: "heartbeat", usage: "how soon an activity whose worker died is found out (its command then reported unknown)", def: fleet.DefaultHeartbeat,
		group: groupFleet, field: "fleet.Night.Heartbeat", cmds: cmdStart},
	{name: "hosts-per-run", usage: "host workflows one run of the night workflow starts before it continues as new (bounds its history)", def: fleet.DefaultHostsPerRun,
		group: groupFleet, field: "fleet.Night.HostsPerRun", cmds: cmdStart},
	{name: "dry-run", usage: "list what would be restored; change nothing", group: groupTarget, cmds: cmdFleetUndo | cmdUndo},

	// Temporal.
	{name: "temporal", usage: "Temporal frontend `ADDR` (host:port)", def: client.DefaultHostPort, group: groupTemporal, field: "client.Options.HostPort", cmds: cmdFleet | cmdRecipes},
	{name: "namespace", usage: "Temporal `NAMESPACE`", def: client.DefaultNamespace, group: groupTemporal, field: "client.Options.Namespace", cmds: cmdFleet | cmdRecipes},
	{name: "tls-cert", usage: "TLS client certificate `FILE` (PEM) for mTLS to Temporal; needs --tls-key", group: groupTemporal, field: "fleet.TLS.Cert", cmds: cmdFleet | cmdRecipes},
	{name: "tls-key", usage: "TLS client private key `FILE` (PEM)", group: groupTemporal, field: "fleet.TLS.Key", cmds: cmdFleet | cmdRecipes},
	{name: "tls-ca", usage: "CA bundle `FILE` (PEM) that signed the frontend's certificate (default: the system's roots)", group: groupTemporal, field: "fleet.TLS.CA", cmds: cmdFleet | cmdRecipes},
	{name: "tls-server-name", usage: "`NAME` the frontend's certificate must carry (default: the host of --temporal)", group: groupTemporal, field: "fleet.TLS.ServerName", cmds: cmdFleet | cmdRecipes},

	// Reports.
	{name: "json-report", usage: "write the JSON summary to `FILE`", group: groupReports, cmds: cmdRun | cmdResume | cmdStart | cmdFleetReport},
	{name: "junit", usage: "write JUnit XML (one test case per rule × host) to `FILE`", group: groupReports, cmds: cmdRun | cmdResume | cmdStart | cmdFleetReport},
	{name: "html", usage: "write the self-contained HTML report to `FILE`", group: groupReports, cmds: cmdRun | cmdResume | cmdStart | cmdFleetReport},

	// Output.
	{name: "json", usage: "print one JSON object per event on stdout", group: groupOutput, cmds: cmdFix | cmdDemo},
	{name: "json", usage: "print JSON", group: groupOutput, cmds: cmdHistory | cmdCheckCommand | cmdRecipes, usageFor: map[command]string{cmdCheckCommand: "print the verdict as JSON"}},
	{name: "dry-run", usage: "check the rules and show the first prompt's budget; run no command and call no model", group: groupOutput, cmds: cmdFix},
	{name: "v", usage: "log budget events and retries to stderr", group: groupOutput, cmds: cmdFix | cmdRun | cmdResume},
	{name: "v", usage: "log the Temporal SDK's messages to stderr", group: groupOutput, cmds: cmdFleet | cmdRecipes},

	// The small commands' own.
	{name: "keep", usage: "keep the temporary directory", group: groupFlags, cmds: cmdDemo},
	{name: "sshd", usage: "use a disposable local OpenSSH server (needs openssh-server) in place of the in-process one", group: groupFlags, cmds: cmdDemo},
	{name: "addr", usage: "listen `ADDRESS`", def: "127.0.0.1:8000", group: groupFlags, cmds: cmdSimulate},
	{name: "policy", usage: "answer `POLICY`: stubborn, eventual, repeater, banned-proposer, malformed, give-up", def: "eventual", group: groupFlags, cmds: cmdSimulate},
	{name: "fix", usage: "eventual policy: the fix for a rule, `RULE=COMMAND` (repeatable)", group: groupFlags, cmds: cmdSimulate},
	{name: "fix-at", usage: "eventual policy: the attempt that proposes the fix", def: 3, group: groupFlags, cmds: cmdSimulate},
	{name: "max-model-len", usage: "the context window (max_model_len)", def: 16384, group: groupFlags, cmds: cmdSimulate},
	{name: "model", usage: "served model `NAME`", def: "Qwen/Qwen3-8B", group: groupFlags, cmds: cmdSimulate},
	{name: "tokenizer", usage: "tokenizer and chat template: qwen3, qwen2.5 or a `FILE`", def: defaultTokenizer, group: groupFlags, cmds: cmdSimulate | cmdTokens,
		usageFor: map[command]string{cmdTokens: "built-in tokenizer (qwen3, qwen2.5) or a tokenizer.json FILE or directory"}},
	{name: "error-style", usage: "vLLM release whose length errors are reproduced (default: the newest)", group: groupFlags, cmds: cmdSimulate},
	{name: "api-key-env", usage: "require the API key in this environment `VARIABLE` (like vllm --api-key)", group: groupFlags, cmds: cmdSimulate},
	{name: "enable-prompt-tokens-details", usage: "report usage.prompt_tokens_details.cached_tokens (like vllm --enable-prompt-tokens-details)", def: true,
		group: groupFlags, cmds: cmdSimulate},
	{name: "num-gpu-blocks", usage: "prefix cache capacity in 16-token `BLOCKS` (0: the simulator's default; -1: no prefix caching)", group: groupFlags, cmds: cmdSimulate},
	{name: "seed", usage: "policy seed", group: groupFlags, cmds: cmdSimulate},
	{name: "ids", usage: "print the token IDs as a JSON array instead of the count", group: groupFlags, cmds: cmdTokens},
	{name: "chat", usage: "read an OpenAI chat request and print its prompt token count as vLLM computes it", group: groupFlags, cmds: cmdTokens},
	{name: "rules", usage: "rules `FILE` or directory whose rule's banned patterns are added", group: groupFlags, cmds: cmdCheckCommand},
	{name: "rule", usage: "the rule `ID` (with --rules)", group: groupFlags, cmds: cmdCheckCommand},

	// Configuration.
	{name: "config", usage: "read flags from the YAML `FILE` (keys are flag names; flags > NIGHTSHIFT_* environment > file > defaults)", group: groupConfig,
		cmds: cmdFix | cmdRun | cmdServe | cmdStart},
}

// specFor returns the spec of flag name for command c.
func specFor(name string, c command) (*flagSpec, bool) {
	for i := range flagRegistry {
		if s := &flagRegistry[i]; s.name == name && s.cmds&c != 0 {
			return s, true
		}
	}
	return nil, false
}

// usage is the spec's usage for command c.
func (s *flagSpec) usageOf(c command) string {
	if u, ok := s.usageFor[c]; ok {
		return u
	}
	return s.usage
}

// flags is a command's flag set, whose flags come from the registry.
type flags struct {
	*flag.FlagSet
	cmd command
}

func newFlags(c command, out io.Writer) *flags {
	fs := flag.NewFlagSet(commandNames[c], flag.ContinueOnError)
	fs.SetOutput(out)
	return &flags{FlagSet: fs, cmd: c}
}

// bind declares flag name, from the registry, into p: a *string, *int,
// *int64, *bool, *float64, *time.Duration or a flag.Value. A name the
// registry does not give this command, or a p of another type than the
// spec's default, is a programming error: bind panics (every command's
// flags are bound by TestFlagRegistry).
func (f *flags) bind(name string, p any) {
	s, ok := specFor(name, f.cmd)
	if !ok {
		panic(fmt.Sprintf("flag --%s is not in the registry for %s", name, commandNames[f.cmd]))
	}
	usage := s.usageOf(f.cmd)
	switch p := p.(type) {
	case *string:
		f.StringVar(p, name, defaultOf[string](s), usage)
	case *int:
		f.IntVar(p, name, defaultOf[int](s), usage)
	case *int64:
		f.Int64Var(p, name, defaultOf[int64](s), usage)
	case *bool:
		f.BoolVar(p, name, defaultOf[bool](s), usage)
	case *uint64:
		f.Uint64Var(p, name, defaultOf[uint64](s), usage)
	case *float64:
		f.Float64Var(p, name, defaultOf[float64](s), usage)
	case *time.Duration:
		f.DurationVar(p, name, defaultOf[time.Duration](s), usage)
	case flag.Value:
		f.Var(p, name, usage)
	default:
		panic(fmt.Sprintf("flag --%s: cannot bind a %T", name, p))
	}
}

func defaultOf[T any](s *flagSpec) T {
	if s.def == nil {
		var zero T
		return zero
	}
	v, ok := s.def.(T)
	if !ok {
		panic(fmt.Sprintf("flag --%s: default %v is a %T, bound to a %T", s.name, s.def, s.def, *new(T)))
	}
	return v
}

// parse parses args, flags before, between and after the positional
// arguments (as people type them: 'fleet report tonight --html n.html');
// everything after "--" is positional. It returns the positional
// arguments; -h is errHelp, a bad flag a usage error.
func (f *flags) parse(args []string) ([]string, error) {
	pos, err := parseInterspersed(f.FlagSet, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, errHelp
		}
		return nil, &usageError{err}
	}
	return pos, nil
}

// parseInterspersed is fs.Parse that goes on past positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" && !takesValue(fs, args, n-1) {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// takesValue says whether args[i] is the value of the flag before it
// (--name -- gives --name the value "--").
func takesValue(fs *flag.FlagSet, args []string, i int) bool {
	if i == 0 {
		return false
	}
	prev := args[i-1]
	if !strings.HasPrefix(prev, "-") || strings.Contains(prev, "=") {
		return false
	}
	fl := fs.Lookup(strings.TrimLeft(prev, "-"))
	if fl == nil {
		return false
	}
	b, ok := fl.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}

// setUsage makes fs's usage print usage, the flags under their
// registry groups (a FlagSet whose flags are not in the registry: all
// under "Flags", in name order) and then examples.
func setUsage(fs *flag.FlagSet, usage, examples string) {
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprint(w, usage)
		printFlags(w, fs)
		fmt.Fprint(w, examples)
	}
}

// printFlags prints fs's flags as "--name VALUE" with their usage and
// non-zero default, under each registry group's title in groupOrder, in
// registry order; flags of no group under "Flags", in name order.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	c := commandOf(fs)
	byGroup := map[string][]*flag.Flag{}
	var other []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if isRefused(f) {
			return
		}
		if s, ok := specFor(f.Name, c); ok && c != 0 {
			byGroup[s.group] = append(byGroup[s.group], f)
			return
		}
		other = append(other, f)
	})
	if len(other) > 0 {
		fmt.Fprintln(w, "\nFlags:")
		for _, f := range other {
			printFlag(w, f)
		}
	}
	for _, g := range groupOrder {
		if len(byGroup[g]) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", g)
		for _, s := range flagRegistry {
			if s.group != g || s.cmds&c == 0 {
				continue
			}
			for _, f := range byGroup[g] {
				if f.Name == s.name {
					printFlag(w, f)
				}
			}
		}
	}
}

// commandOf is the command whose flag set fs is (0: none of the
// registry's).
func commandOf(fs *flag.FlagSet) command {
	for c, n := range commandNames {
		if n == fs.Name() {
			return c
		}
	}
	return 0
}

func printFlag(w io.Writer, f *flag.Flag) {
	name, usage := flag.UnquoteUsage(f)
	if name == "bool" { // flag's name for a bool's value: none is needed
		name = ""
	}
	head := "  --" + f.Name
	if len(f.Name) == 1 {
		head = "  -" + f.Name
	}
	if name != "" {
		head += " " + name
	}
	fmt.Fprintln(w, head)
	if !zeroDefault(f.DefValue) {
		usage += fmt.Sprintf(" (default %s)", f.DefValue)
	}
	fmt.Fprintf(w, "        %s\n", strings.ReplaceAll(usage, "\n", "\n        "))
}

func zeroDefault(v string) bool {
	switch v {
	case "", "0", "false", "0s", "[]":
		return true
	}
	return false
}

// refusedFlag is a flag of 'worker run' that 'fleet start' parses only to
// refuse it by name (refuseRunFlags).
type refusedFlag struct{ bool bool }

func (r refusedFlag) String() string   { return "" }
func (r refusedFlag) Set(string) error { return nil }
func (r refusedFlag) IsBoolFlag() bool { return r.bool }

func isRefused(f *flag.Flag) bool {
	_, ok := f.Value.(refusedFlag)
	return ok
}

// addRefusedRunFlags declares on fleet start's flags each flag of 'worker
// run' (run's flag set) that a night does not take, so that
// refuseRunFlags can name it.
func (f *flags) addRefusedRunFlags(run *flag.FlagSet) {
	run.VisitAll(func(fl *flag.Flag) {
		if f.Lookup(fl.Name) != nil {
			return
		}
		b, ok := fl.Value.(interface{ IsBoolFlag() bool })
		f.Var(refusedFlag{bool: ok && b.IsBoolFlag()}, fl.Name, "")
	})
}

// refuseRunFlags returns a usage error naming the first flag of 'worker
// run' given to fleet start that a night does not take, and why.
func (f *flags) refuseRunFlags() error {
	var err error
	f.Visit(func(fl *flag.Flag) {
		if !isRefused(fl) || err != nil {
			return
		}
		err = usagef("fleet start: --%s %s", fl.Name, refusedWhy(fl.Name))
	})
	return err
}

// refusedWhy says why fleet start refuses run's flag name.
func refusedWhy(name string) string {
	why := "a night does not take it"
	if s, ok := specFor(name, cmdRun); ok && s.notNight != "" {
		why = s.notNight
	}
	return "is a flag of 'worker run' that a night does not take: " + why
}
