package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/fleet"
	"github.com/nightshift-dev/nightshift/inventory"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/scap"
	"github.com/nightshift-dev/nightshift/served"
)

const fleetStartUsage = `Usage:
  worker fleet start --temporal ADDR --rules FILE|DIR [--rule ID …] --inventory FILE [--limit PATTERN …]
                     [--id RUN] [--schedule CRON] [--recipes JOURNAL | --no-recipes] [--wait [--html FILE] [--junit FILE] [--json-report FILE]] [flags]
  worker fleet start --temporal ADDR --datastream PATH-ON-HOSTS --profile ID [--rule ID …] --inventory FILE …

Starts a night on the fleet (or, with --schedule, creates a Temporal schedule
that starts one each time CRON matches, in UTC): the rules of the files, in
file order, on every selected host of the inventory, one rule at a time per
host and --parallel-hosts hosts at once. The rules' text travels with the
night, so workers need no copy. A host's zone is its nightshift_zone
inventory variable ("default" when unset); some 'worker fleet serve --zone Z'
must run for each zone.

A host started after another host of its key (os-release ID and VERSION_ID,
package manager) fixed a rule replays that fix before asking the model, as
'worker run' does. Recipes outlive the night: every night (a scheduled one
too) starts with the recipes of the fleet's recipe book (--book, a
long-lived workflow the first night starts) and publishes what its hosts
prove and demote to it, so tomorrow's night replays tonight's fixes and
never a recipe demoted on a host's key ('worker recipes list --temporal
ADDR' lists them; pin and retire change what later nights replay).
--recipes also seeds the night with a journal's recipes (those the book
lacks join it; the book's own state wins for the others); --no-recipes turns
replay off (fixes are still proved and published). 'worker fleet export RUN'
writes the night's proven fixes as a playbook.

The served model's name and context window are read from --base-url unless
--model and --context-window give them. RUN (--id, default nightshift-NAME-TIME)
is the workflow id that status, report and cancel take.

With --datastream the rules come from an SCAP source datastream at that
path on the hosts, as with 'worker run': the night reads it on the first
host of the first host's zone that answers (through that zone's workers,
which hold the SSH keys), takes the rules the profile selects (or the --rule
ones) and checks each with oscap on each host against that file. A
scheduled night reads it again each time, so it follows the hosts' SSG
package.

` + configHelp + `
A flag of 'worker run' that a night does not take is refused, with why,
from the command line and the file alike (its variable is left to run).
`

const fleetStartExamples = `
Examples:
  worker fleet start --rules rules/ --inventory hosts.yaml --id tonight --wait --html night.html
  worker fleet start --rules rules/ --inventory hosts.ini --limit webservers \
                     --schedule '0 2 * * *' --id nightly --base-url http://gpu1:8000/v1
`

func runFleetStart(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var tf temporalFlags
	m := &runMeta{}
	var rulesPaths, ruleIDs, limit stringList
	var name, id, schedule, book string
	var wait, noLessons, noRecipes bool
	var seed string
	var heartbeat time.Duration
	var hostsPerRun int
	var config string
	fs := newFlags(cmdStart, stderr)
	bindTemporalFlags(fs, &tf)
	for name, p := range map[string]any{
		"rules": &rulesPaths, "datastream": &m.Datastream, "profile": &m.Profile, "rule": &ruleIDs, "inventory": &m.Inventory,
		"limit": &limit, "name": &name, "id": &id, "schedule": &schedule, "wait": &wait, "no-lessons": &noLessons,
		"no-recipes": &noRecipes, "recipes": &seed, "book": &book,
		"tokenizer": &m.Tokenizer, "context-window": &m.ContextWindow, "max-tokens": &m.MaxTokens, "max-attempts": &m.MaxAttempts,
		"keep-turns": &m.KeepTurns, "command-timeout": &m.CommandTimeout, "heartbeat": &heartbeat, "hosts-per-run": &hostsPerRun,
		"sandbox": &m.Sandbox, "base-url": &m.BaseURL, "model": &m.Model, "api-key-env": &m.APIKeyEnv, "parallel-hosts": &m.ParallelHosts,
		"json-report": &m.JSONReport, "junit": &m.JUnit, "html": &m.HTML, "retry-deadline": &m.RetryDeadline, "request-timeout": &m.RequestTimeout,
		"config": &config,
	} {
		fs.bind(name, p)
	}
	// The flags of 'worker run' that a night does not take are parsed to
	// be refused by name.
	fs.addRefusedRunFlags(newRunFlags(&runMeta{}, &runFlags{}, io.Discard).FlagSet)
	setUsage(fs.FlagSet, fleetStartUsage, fleetStartExamples)
	rest, err := fs.parse(args)
	if err != nil {
		return err
	}
	// The file and the environment fill what the command line left, before
	// anything is checked.
	if err := fs.applyConfig(); err != nil {
		return err
	}
	if err := checkTemporalFlags(fs.FlagSet); err != nil {
		return err
	}
	if err := fs.refuseRunFlags(); err != nil {
		return err
	}
	baseURLGiven := false
	fs.Visit(func(f *flag.Flag) { baseURLGiven = baseURLGiven || f.Name == "base-url" })
	switch {
	case len(rest) > 0:
		return usagef("fleet start: unexpected argument %q", rest[0])
	case len(rulesPaths) > 0 && m.Datastream != "":
		return usagef("fleet start: --rules and --datastream cannot be combined")
	case m.Datastream != "" && m.Profile == "":
		return usagef("fleet start: --datastream needs --profile")
	case m.Profile != "" && m.Datastream == "":
		return usagef("fleet start: --profile applies only to --datastream")
	case (len(rulesPaths) == 0 && m.Datastream == "") || m.Inventory == "":
		return usagef("fleet start: --rules (or --datastream with --profile) and --inventory are required")
	case wait && schedule != "":
		return usagef("fleet start: --wait and --schedule cannot be combined")
	case !wait && (m.HTML != "" || m.JUnit != "" || m.JSONReport != ""):
		return usagef("fleet start: --html, --junit and --json-report need --wait (or use 'worker fleet report')")
	case seed != "" && noRecipes:
		return usagef("fleet start: --recipes and --no-recipes cannot be combined (a night without replay has no use for a seed)")
	case hostsPerRun < 1:
		return usagef("fleet start: --hosts-per-run must be positive")
	case heartbeat < time.Second:
		return usagef("fleet start: --heartbeat must be at least 1s")
	case m.ParallelHosts < 1 || m.MaxTokens < 1 || m.KeepTurns < 1 || m.MaxAttempts < 0 || m.ContextWindow < 0:
		return usagef("fleet start: --parallel-hosts, --max-tokens and --keep-turns must be positive, --max-attempts and --context-window not negative")
	case m.RetryDeadline <= 0 || m.CommandTimeout <= 0:
		return usagef("fleet start: --retry-deadline and --command-timeout must be positive (a night always retries the model and bounds its commands)")
	case m.RequestTimeout <= 0:
		return usagef("fleet start: --request-timeout %s must be positive", m.RequestTimeout)
	}
	if err := validateStart(m, rulesPaths); err != nil {
		return err
	}
	var files []fleet.RuleFile
	var ds *fleet.DatastreamSource
	if m.Datastream != "" {
		ds = &fleet.DatastreamSource{Path: m.Datastream, Profile: m.Profile, RuleIDs: ruleIDs}
		ruleIDs = nil
	} else if files, err = readRuleFiles(rulesPaths, stderr); err != nil {
		return err
	}
	var seeded []nightshift.Recipe
	if seed != "" {
		if seeded, err = seedRecipes(ctx, seed); err != nil {
			return err
		}
	}
	inv, err := inventory.Load(m.Inventory)
	if err != nil {
		return &usageError{err}
	}
	hosts, err := inv.Select(limit...)
	if err != nil {
		return &usageError{err}
	}
	model, err := fleetModel(ctx, m, baseURLGiven, stderr)
	if err != nil {
		return err
	}
	if name == "" {
		name = strings.Join(rulesPaths, " ")
		if ds != nil {
			name = scap.ShortID(m.Profile) + " of " + m.Datastream
		}
	}
	n := fleet.Night{Name: name, RuleFiles: files, RuleIDs: ruleIDs, Datastream: ds, Hosts: hosts, Model: model,
		MaxAttempts: m.MaxAttempts, KeepTurns: m.KeepTurns, ParallelHosts: m.ParallelHosts,
		RetryDeadline: m.RetryDeadline, RequestTimeout: m.RequestTimeout, CommandTimeout: m.CommandTimeout, Heartbeat: heartbeat, NoLessons: noLessons,
		HostsPerRun: hostsPerRun, Sandbox: string(m.Sandbox.orDefault()), NoRecipes: noRecipes}
	n.Recipes, n.Book = seeded, book
	if err := n.Validate(); err != nil {
		return &usageError{err}
	}
	if id == "" {
		id = "nightshift-" + slug(name) + "-" + time.Now().UTC().Format("20060102T150405Z")
	}
	c, err := tf.dial(ctx, stderr)
	if err != nil {
		return err
	}
	defer c.Close()
	if schedule != "" {
		if err := fleet.Schedule(ctx, c, id, schedule, n); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "schedule %s: a night of %s × %d hosts on %q (UTC); each night's id starts with %s\n",
			id, ruleCount(n), len(hosts), schedule, id)
		return nil
	}
	run, err := fleet.Start(ctx, c, id, n)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "night %s started: %s × %d hosts (run id %s)\n", id, ruleCount(n), len(hosts), run.GetRunID())
	if !wait {
		return nil
	}
	var res fleet.NightResult
	if err := run.Get(ctx, &res); err != nil {
		return fmt.Errorf("night %s: %w", id, err)
	}
	// The night's result leaves the hosts' results in their workflows.
	if res, err = fleet.Fetch(ctx, c, id); err != nil {
		return fmt.Errorf("night %s: %w", id, err)
	}
	return finishFleetReport(id, m, res, stdout)
}

// ruleCount says how many rules a night has: "12 rules", or for a
// datastream, whose rules the night reads on a host, which.
func ruleCount(n fleet.Night) string {
	if d := n.Datastream; d != nil {
		if len(d.RuleIDs) > 0 {
			return fmt.Sprintf("%d rules of profile %s (read from %s on a host)", len(d.RuleIDs), scap.ShortID(d.Profile), d.Path)
		}
		return fmt.Sprintf("the rules of profile %s (read from %s on a host)", scap.ShortID(d.Profile), d.Path)
	}
	rs, _ := n.Rules()
	return fmt.Sprintf("%d rules", len(rs))
}

// defaultServerTimeout bounds the one try at the default --base-url.
const defaultServerTimeout = 5 * time.Second

// fleetModel fixes the served model and its window for the night: from the
// flags, else from the server (a line on notices per failed try). The
// tokenizer (and, with --context-window, the budget) is checked first. The
// server at the default --base-url, which nobody named, is tried once:
// when it does not answer, the error says what the night needs.
func fleetModel(ctx context.Context, m *runMeta, baseURLGiven bool, notices io.Writer) (fleet.ModelSpec, error) {
	fm := fleet.ModelSpec{Name: m.Model, Tokenizer: m.Tokenizer, ContextWindow: m.ContextWindow, MaxTokens: m.MaxTokens}
	cfg := served.Config{BaseURL: m.BaseURL, APIKey: os.Getenv(m.APIKeyEnv), Name: m.Model, Tokenizer: m.Tokenizer,
		Budget: budget.Config{ContextWindow: m.ContextWindow, Reserve: m.MaxTokens}, Wait: min(m.RetryDeadline, 30*time.Second)}
	check := cfg
	if check.Budget.ContextWindow == 0 {
		check.Budget = budget.Config{} // the server's window sizes it: Connect checks the budget
	}
	om, err := served.Offline(check)
	if err != nil {
		return fm, &usageError{err}
	}
	om.Close()
	if fm.Name != "" && fm.ContextWindow > 0 {
		return fm, nil // the server is checked by the night's workers
	}
	var sm *served.Model
	if baseURLGiven {
		sm, err = connect(ctx, cfg, notices)
	} else {
		cfg.Wait = 0
		tctx, cancel := context.WithTimeout(ctx, defaultServerTimeout)
		sm, err = connect(tctx, cfg, nil)
		cancel()
		if err != nil && ctx.Err() == nil {
			return fm, usagef("fleet start: a night needs the served model's name and context window: give --model and --context-window, "+
				"or --base-url of the model server to ask (none answered at the default %s: %s)", m.BaseURL, shortCause(err.Error()))
		}
	}
	if err != nil {
		return fm, err
	}
	defer sm.Close()
	fm.Name, fm.ContextWindow = sm.Name(), sm.Budget().ContextWindow()
	return fm, nil
}

// readRuleFiles reads the rules files (a directory: its *.yaml and *.yml
// files in name order), checking that they parse, and warns on warn about
// the rules that declare no paths.
func readRuleFiles(paths []string, warn io.Writer) ([]fleet.RuleFile, error) {
	var out []fleet.RuleFile
	for _, p := range paths {
		set, err := rules.Load(p)
		if err != nil {
			return nil, &usageError{err}
		}
		warnUndeclared(warn, set.Rules())
		files := []string{p}
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			files = files[:0]
			entries, err := os.ReadDir(p)
			if err != nil {
				return nil, &usageError{err}
			}
			for _, e := range entries {
				ext := strings.ToLower(filepath.Ext(e.Name()))
				if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") && (ext == ".yaml" || ext == ".yml") {
					files = append(files, filepath.Join(p, e.Name()))
				}
			}
			sort.Strings(files)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, &usageError{err}
			}
			out = append(out, fleet.RuleFile{Name: f, Data: data})
		}
	}
	return out, nil
}

// slug keeps letters, digits and dashes of s, for workflow ids.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
		if b.Len() >= 40 {
			break
		}
	}
	return strings.Trim(b.String(), "-")
}
