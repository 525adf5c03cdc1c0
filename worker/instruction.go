package worker

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/safety"

	"github.com/nightshift-dev/nightshift/internal/textcut"
	"github.com/nightshift-dev/nightshift/rules"
)

// ProbeCommand is the command the worker runs once per host before its
// first attempt to learn the host facts: it prints key=value lines and
// changes nothing on the host.
const ProbeCommand = `. /etc/os-release 2>/dev/null; echo "os=${PRETTY_NAME:-unknown}"; echo "id=${ID:-}"; echo "version=${VERSION_ID:-}"; ` +
	`for p in apt-get dnf yum zypper apk; do if command -v "$p" >/dev/null 2>&1; then echo "pkg=$p"; break; fi; done; ` +
	`echo "init=$(cat /proc/1/comm 2>/dev/null || echo unknown)"`

// probe learns the host facts once per Worker, through Config.Probe, and
// reports the probe with EventProbe. Concurrent callers wait for the one
// probe under way; a failed probe is not remembered, the next caller probes
// again. The facts returned are shared and must not be modified.
func (w *Worker) probe(ctx context.Context, rule string) (*nightshift.HostFacts, error) {
	w.probeMu.Lock()
	defer w.probeMu.Unlock()
	if w.facts != nil {
		return w.facts, nil
	}
	ex, err := w.cfg.Probe.Run(ctx, ProbeCommand)
	if err != nil {
		w.emit(nightshift.Event{Kind: nightshift.EventProbe, Rule: rule, Command: ProbeCommand, Error: err.Error()})
		return nil, fmt.Errorf("probe host: %w", err)
	}
	f := &nightshift.HostFacts{OS: "unknown", PackageManager: "unknown", Init: "unknown"}
	sc := bufio.NewScanner(strings.NewReader(ex.Stdout))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok || v == "" {
			continue
		}
		switch k {
		case "os":
			f.OS = v
		case "id":
			f.ID = v
		case "version":
			f.Version = v
		case "pkg":
			f.PackageManager = v
		case "init":
			f.Init = v
		}
	}
	w.facts = f
	facts := *f
	w.emit(nightshift.Event{Kind: nightshift.EventProbe, Rule: rule, Command: ProbeCommand, Exec: &ex, Facts: &facts})
	return f, nil
}

// instruction assembles the two pinned messages for a rule within maxTokens
// (counted together):
//
//   - the system message, the same for every rule and host of a run (so
//     that all their requests share one cached prefix on the model server;
//     the chat template renders the tools right after it): the worker's
//     instructions and the global ban list, never shortened;
//   - the task message, everything rule- or host-specific: the rule, its
//     text and check, the host facts, the hints, the rule's own bans —
//     presented as bans, like the global list — and the task, then as many
//     whole lessons as still fit (see withLessons). Its first line is
//     "Rule: <id>". The description and hints are shortened if they do not
//     fit.
func (w *Worker) instruction(r rules.Rule, bans *safety.BanList, f *nightshift.HostFacts, lessons []string, maxTokens int) (system, task string, err error) {
	system = renderSystem(w.cfg.Bans)
	sysTokens := w.cfg.Model.CountText(system)
	desc, hints := r.Description, r.Hints
	for cut := 0; ; cut++ {
		s := renderTask(r, w.cfg.Bans, bans, f, desc, hints)
		if sysTokens+w.cfg.Model.CountText(s) <= maxTokens {
			return system, w.withLessons(s, lessons, maxTokens-sysTokens), nil
		}
		switch {
		case len(desc) > 200:
			desc = textcut.Head(desc, len(desc)/2)
		case len(hints) > 200:
			hints = textcut.Head(hints, len(hints)/2)
		case desc != "" || hints != "":
			desc, hints = "", ""
		default:
			return "", "", fmt.Errorf("%w: the instruction for rule %s takes %d tokens with the ban lists alone, over its share of %d",
				ErrConfig, r.ID, sysTokens+w.cfg.Model.CountText(s), maxTokens)
		}
	}
}

// renderSystem renders the system message shared by every rule and host:
// the worker's instructions and the global ban list.
func renderSystem(global *safety.BanList) string {
	var b strings.Builder
	b.WriteString("You bring a host into compliance with the rule in the user message. Call ssh_apply with one shell command at a time; " +
		"it runs as root, non-interactively, with a timeout. After every command the worker re-runs the check and tells you the result. " +
		"Do not repeat a command that already failed; read the errors and change the approach. " +
		"When the rule cannot be fixed on this host, call give_up with the reason.\n")
	b.WriteString("\nBanned commands — the worker refuses them before they run, and they waste an attempt:\n")
	for _, p := range global.Patterns() {
		fmt.Fprintf(&b, "- %s\n", p)
	}
	return b.String()
}

// renderTask renders the task message: the rule, the host and the rule's
// own bans (those of bans beyond the global list).
func renderTask(r rules.Rule, global, bans *safety.BanList, f *nightshift.HostFacts, desc, hints string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Rule: %s\n", r.ID)
	if r.Title != "" {
		fmt.Fprintf(&b, "Title: %s\n", r.Title)
	}
	if desc != "" {
		fmt.Fprintf(&b, "Description: %s\n", strings.TrimSpace(desc))
	}
	if r.Check != nil {
		fmt.Fprintf(&b, "Check (exit status 0 means compliant): %s\n", r.Check.String())
	}
	fmt.Fprintf(&b, "Host: %s; package manager: %s; init (PID 1): %s\n", f.OS, f.PackageManager, f.Init)
	if hints != "" {
		fmt.Fprintf(&b, "Hints: %s\n", strings.TrimSpace(hints))
	}
	if own := bans.Patterns()[len(global.Patterns()):]; len(own) > 0 {
		b.WriteString("\nBanned commands for this rule too (refused before they run):\n")
		for _, p := range own {
			fmt.Fprintf(&b, "- %s\n", p)
		}
	}
	fmt.Fprintf(&b, "\nMake the host compliant with rule %s (%s). Its check currently fails. Propose the next command with ssh_apply.\n", r.ID, r.Title)
	return b.String()
}
