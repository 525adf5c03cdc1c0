package worker

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/nightshift-dev/nightshift/rules"
)

// HostFacts are what one probe learns of the target.
type HostFacts struct {
	OS             string `json:"os"`              // PRETTY_NAME from os-release
	PackageManager string `json:"package_manager"` // apt-get, dnf, yum, zypper, apk
	Init           string `json:"init"`            // the name of PID 1 (systemd, init, sshd, …)
}

// ProbeCommand is the command the worker runs once per host before its
// first attempt to learn the host facts: it prints key=value lines and
// changes nothing on the host.
const ProbeCommand = `. /etc/os-release 2>/dev/null; echo "os=${PRETTY_NAME:-unknown}"; ` +
	`for p in apt-get dnf yum zypper apk; do if command -v "$p" >/dev/null 2>&1; then echo "pkg=$p"; break; fi; done; ` +
	`echo "init=$(cat /proc/1/comm 2>/dev/null || echo unknown)"`

// probe learns the host facts once per Worker.
func (w *Worker) probe(ctx context.Context) (*HostFacts, error) {
	if w.facts != nil {
		return w.facts, nil
	}
	ex, err := w.cfg.Target.Run(ctx, ProbeCommand)
	if err != nil {
		return nil, fmt.Errorf("probe host: %w", err)
	}
	f := &HostFacts{OS: "unknown", PackageManager: "unknown", Init: "unknown"}
	sc := bufio.NewScanner(strings.NewReader(ex.Stdout))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok || v == "" {
			continue
		}
		switch k {
		case "os":
			f.OS = v
		case "pkg":
			f.PackageManager = v
		case "init":
			f.Init = v
		}
	}
	w.facts = f
	return f, nil
}

// instruction assembles the system message for a rule within maxTokens: the
// rule and the ban list always, the description and hints shortened if they
// do not fit, then as many whole lessons as still fit (see withLessons). The
// first line is "Rule: <id>".
func (w *Worker) instruction(r rules.Rule, bans *rules.BanList, f *HostFacts, lessons []string, maxTokens int) (string, error) {
	desc, hints := r.Description, r.Hints
	for cut := 0; ; cut++ {
		s := renderInstruction(r, bans, f, desc, hints)
		if w.cfg.Tokenizer.Count(s) <= maxTokens {
			return w.withLessons(s, lessons, maxTokens), nil
		}
		switch {
		case len(desc) > 200:
			desc = abbreviate(desc, len(desc)/2)
		case len(hints) > 200:
			hints = abbreviate(hints, len(hints)/2)
		case desc != "" || hints != "":
			desc, hints = "", ""
		default:
			return "", fmt.Errorf("%w: the instruction for rule %s takes %d tokens with the ban list alone, over its share of %d",
				ErrConfig, r.ID, w.cfg.Tokenizer.Count(s), maxTokens)
		}
	}
}

func renderInstruction(r rules.Rule, bans *rules.BanList, f *HostFacts, desc, hints string) string {
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
	b.WriteString("\nYou bring this host into compliance with the rule above. Call ssh_apply with one shell command at a time; " +
		"it runs as root, non-interactively, with a timeout. After every command the worker re-runs the check and tells you the result. " +
		"Do not repeat a command that already failed; read the errors and change the approach. " +
		"When the rule cannot be fixed on this host, call give_up with the reason.\n")
	b.WriteString("\nBanned commands — the worker refuses them before they run, and they waste an attempt:\n")
	for _, p := range bans.Patterns() {
		fmt.Fprintf(&b, "- %s\n", p)
	}
	return b.String()
}
