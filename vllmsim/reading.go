package vllmsim

import (
	"fmt"
	"regexp"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/nightshift-dev/nightshift"
)

// This file holds the prompt-reading policies: simulated models whose next
// proposal depends on facts an earlier command printed, so that what a
// memory keeps of a long conversation becomes a measurable fix rate.

// Scenario is one remediation whose fix is knowable only from facts that
// earlier commands printed: the policy side (which commands reveal the
// facts, how the facts read in a prompt, the fix they make possible, what
// the model proposes without them) and the host side (what each command
// prints, whether the rule is fixed). A Scenario is made by
// RejectedOptionScenario, PreconditionsScenario or TrapScenario for one
// seed: the seed picks the host's hidden values (an option name, a unit, a
// file), which the policy can only learn from the prompt.
type Scenario struct {
	// Name identifies the scenario ("rejected-option", "preconditions",
	// "trap").
	Name string
	// Reveal maps an attempt to the command the model runs at it to learn
	// a fact.
	Reveal map[int]string
	// Facts are what the model looks for in its prompt (the contents of
	// its system, user and tool messages, not its own calls); all must be
	// found for Fix.
	Facts []*regexp.Regexp
	// fix writes the fix from the facts' submatches; guess writes what the
	// model proposes when some fact (nil) is missing.
	fix, guess func(found [][]string) string
	// outputs are what the host prints for each command it knows; fixCmd
	// is the command that fixes the rule, trap the one that must not be
	// run twice ("" when none).
	outputs map[string]hostOutput
	fixCmd  string
	trap    string
}

type hostOutput struct {
	stdout, stderr string
	exit           int
}

// FixCommand is the command that fixes the rule on this scenario's host.
func (s *Scenario) FixCommand() string { return s.fixCmd }

// Respond is what the scenario's host does with a command: it returns the
// command's result and whether the rule is fixed after it. trapRuns is how
// many times the trap command ran before this one (callers keep it per
// host); a fix after the trap ran twice does not take (the trap broke what
// the fix needs). Commands the scenario does not know print noise (see
// Noise) and exit 0.
func (s *Scenario) Respond(command string, trapRuns int, attempt int, seed uint64) (r nightshift.Exec, fixed bool) {
	if command == s.fixCmd {
		if s.trap != "" && trapRuns >= 2 {
			return nightshift.Exec{Stderr: "Error sending enable request (Operation not permitted)\n", ExitCode: 1}, false
		}
		return nightshift.Exec{Stdout: "done\n"}, true
	}
	if o, ok := s.outputs[command]; ok {
		return nightshift.Exec{Stdout: o.stdout, Stderr: o.stderr, ExitCode: o.exit}, false
	}
	return nightshift.Exec{Stdout: Noise(seed, attempt, 600+pick(seed, "noise-size", attempt, 1400))}, false
}

// IsTrap reports whether command is the scenario's trap.
func (s *Scenario) IsTrap(command string) bool { return s.trap != "" && command == s.trap }

// Noise returns about tokens tokens (at four bytes a token) of a
// realistic, harmless journal excerpt, different for each seed and
// attempt; it names no error.
func Noise(seed uint64, attempt, tokens int) string {
	var b strings.Builder
	units := []string{"systemd[1]: Started Session %d of User root.", "CRON[%d]: (root) CMD (command -v debian-sa1 > /dev/null && debian-sa1 1 1)",
		"kernel: audit: type=1400 audit(1732500000.%03d:42): apparmor=\"STATUS\" operation=\"profile_load\" name=\"nvidia_modprobe\"",
		"sshd[%d]: Accepted publickey for root from 10.0.0.7 port 51514 ssh2: ED25519 SHA256:7o2N",
		"systemd-logind[612]: New session %d of user root.", "rsyslogd[%d]: [origin software=\"rsyslogd\"] rsyslogd was HUPed"}
	for i := 0; b.Len() < 4*tokens; i++ {
		u := units[pick(seed, "noise", attempt*1000+i, len(units))]
		fmt.Fprintf(&b, "Nov 25 03:%02d:%02d db1 "+u+"\n", (attempt+i/60)%60, i%60, 1000+attempt*37+i)
	}
	return b.String()
}

// values the seeds choose from; each scenario picks one per seed.
var (
	rejectedOptions = []string{"PermitRootLogn", "PasswordAuthentification", "ClientAliveIntervall", "MaxAuthTry", "X11Forwardin",
		"AllowTcpForwardin", "PermitEmptyPassword", "LoginGraceTim", "UsePrivilegeSeperation", "HostbasedAuthentification"}
	maskedUnits = []string{"audit-rules.service", "auditd-plugins.service", "audispd.service", "augenrules.service"}
	ruleFiles   = []string{"/etc/audit/rules.d/30-stig.rules", "/etc/audit/rules.d/43-module-load.rules", "/etc/audit/rules.d/50-privileged.rules",
		"/etc/audit/rules.d/70-time-change.rules", "/etc/audit/rules.d/99-finalize.rules"}
	auditConfs = []string{"/etc/audit/auditd.conf", "/etc/audit/auditd-local.conf", "/etc/audit/conf.d/retention.conf"}
)

// RejectedOptionScenario: at attempt 1 the model runs `sshd -t`, which
// rejects an option the host's sshd_config misspells (chosen by seed,
// "Bad configuration option: PermitRootLogn"). The fix deletes that option's
// line; without the option's name the model guesses a line that is not
// the culprit (the guess exits 0 and prints nothing).
func RejectedOptionScenario(seed uint64) *Scenario {
	opt := rejectedOptions[pick(seed, "option", 0, len(rejectedOptions))]
	line := 8 + pick(seed, "line", 0, 120)
	fixOf := func(o string) string { return fmt.Sprintf("sed -i '/^%s /d' /etc/ssh/sshd_config", o) }
	return &Scenario{
		Name:   "rejected-option",
		Reveal: map[int]string{1: "sshd -t"},
		Facts:  []*regexp.Regexp{regexp.MustCompile(`Bad configuration option: (\w+)`)},
		fix:    func(f [][]string) string { return fixOf(f[0][1]) },
		guess:  func([][]string) string { return fixOf("PermitRootLogin") },
		outputs: map[string]hostOutput{
			"sshd -t": {stderr: fmt.Sprintf("/etc/ssh/sshd_config: line %d: Bad configuration option: %s\n/etc/ssh/sshd_config: terminating, 1 bad configuration options\n", line, opt), exit: 255},
		},
		fixCmd: fixOf(opt),
	}
}

// PreconditionsScenario: the fix works only after two preconditions
// reported by two separate early attempts: at attempt 2 `systemctl
// restart auditd` reports a masked unit (chosen by seed), at attempt 5
// `augenrules --load` reports the rules file with a bad line (file and
// line chosen by seed). The fix unmasks the unit and deletes the line;
// with one fact only, the model applies half of it, which fails with a
// message that names neither.
func PreconditionsScenario(seed uint64) *Scenario {
	unit := maskedUnits[pick(seed, "unit", 0, len(maskedUnits))]
	file := ruleFiles[pick(seed, "file", 0, len(ruleFiles))]
	n := 3 + pick(seed, "rule-line", 0, 30)
	fixOf := func(unit, file, line string) string {
		var parts []string
		if unit != "" {
			parts = append(parts, "systemctl unmask "+unit)
		}
		if file != "" {
			parts = append(parts, fmt.Sprintf("sed -i '%sd' %s", line, file))
		}
		return strings.Join(append(parts, "augenrules --load", "systemctl restart auditd"), " && ")
	}
	half := hostOutput{stderr: "Job for auditd.service failed because the control process exited with error code.\n", exit: 1}
	s := &Scenario{
		Name:   "preconditions",
		Reveal: map[int]string{2: "systemctl restart auditd", 5: "augenrules --load"},
		Facts: []*regexp.Regexp{regexp.MustCompile(`Unit (\S+\.service) is masked`),
			regexp.MustCompile(`error in line (\d+) of (/etc/audit/rules\.d/\S+\.rules)`)},
		fix: func(f [][]string) string { return fixOf(f[0][1], f[1][2], f[1][1]) },
		guess: func(f [][]string) string {
			switch {
			case f[0] != nil:
				return fixOf(f[0][1], "", "")
			case f[1] != nil:
				return fixOf("", f[1][2], f[1][1])
			}
			return fixOf("", "", "")
		},
		outputs: map[string]hostOutput{
			"systemctl restart auditd": {stderr: fmt.Sprintf("Failed to restart auditd.service: Unit %s is masked.\n", unit), exit: 1},
			"augenrules --load":        {stdout: "No rules\nenabled 1\nfailure 1\n", stderr: fmt.Sprintf("There was an error in line %d of %s\n", n, file), exit: 1},
		},
		fixCmd: fixOf(unit, file, fmt.Sprint(n)),
	}
	s.outputs[fixOf(unit, "", "")] = half
	s.outputs[fixOf("", file, fmt.Sprint(n))] = half
	s.outputs[fixOf("", "", "")] = half
	return s
}

// TrapScenario: at attempt 3 the model edits the audit configuration
// (file chosen by seed) with plain `sed -i`, which fails because the file
// is a symlink ("sed: couldn't edit …: not a regular file"). Later the
// model wants to edit it again: with that failure in its prompt it uses
// `sed --follow-symlinks`, the fix; without it, it runs the trap again —
// and a second run of the trap breaks the host for the fix (the rule can
// no longer be fixed).
func TrapScenario(seed uint64) *Scenario {
	conf := auditConfs[pick(seed, "conf", 0, len(auditConfs))]
	size := 8 << pick(seed, "size", 0, 4)
	trap := fmt.Sprintf("sed -i 's/^max_log_file .*/max_log_file = %d/' %s", size, conf)
	fixCmd := fmt.Sprintf("sed --follow-symlinks -i 's/^max_log_file .*/max_log_file = %d/' %s", size, conf)
	return &Scenario{
		Name:   "trap",
		Reveal: map[int]string{3: trap},
		Facts:  []*regexp.Regexp{regexp.MustCompile(`couldn't edit (\S+): not a regular file`)},
		fix: func(f [][]string) string {
			return fmt.Sprintf("sed --follow-symlinks -i 's/^max_log_file .*/max_log_file = %d/' %s", size, f[0][1])
		},
		guess:   func([][]string) string { return trap },
		outputs: map[string]hostOutput{trap: {stderr: fmt.Sprintf("sed: couldn't edit %s: not a regular file\n", conf), exit: 4}},
		fixCmd:  fixCmd,
		trap:    trap,
	}
}

// ReadingConfig configures Reading.
type ReadingConfig struct {
	// Seed varies the exploring commands and when the model acts.
	Seed uint64
	// Scenario is the remediation. Required.
	Scenario *Scenario
	// ActAt is the attempt from which the model acts on what its prompt
	// holds; the seed adds 0–ActSpread attempts. 0 means 12.
	ActAt int
	// ActSpread: 0 means 8.
	ActSpread int
}

type reading struct {
	cfg   ReadingConfig
	actAt int
}

// Reading is a simulated model that reads its prompt: it runs the
// scenario's revealing commands at their attempts, explores with
// read-only commands of large output (a different one each attempt) until
// it acts, and from then on proposes the scenario's fix when every fact it
// needs is in its prompt — and otherwise what the scenario's model
// proposes without them: a wrong guess, half the fix, or the trap again.
// So the fix rate and the attempts to fix measure what a memory kept.
func Reading(cfg ReadingConfig) Policy {
	if cfg.ActAt <= 0 {
		cfg.ActAt = 12
	}
	if cfg.ActSpread <= 0 {
		cfg.ActSpread = 8
	}
	return reading{cfg: cfg, actAt: cfg.ActAt + pick(cfg.Seed, "act", 0, cfg.ActSpread+1)}
}

func (p reading) Name() string { return "reading-" + p.cfg.Scenario.Name }

// exploreCommands are read-only, each made distinct per attempt.
var exploreCommands = []string{
	"journalctl --no-pager -n %d",
	"tail -n %d /var/log/syslog",
	"journalctl -u ssh --no-pager -n %d",
	"grep -h CRON /var/log/syslog | tail -n %d",
	"journalctl -k --no-pager -n %d",
}

func (p reading) Next(c Conversation) Generation {
	s := p.cfg.Scenario
	if cmd, ok := s.Reveal[c.Attempt]; ok {
		return Generation{Calls: []Call{Apply(cmd, "find out what blocks the fix")}}
	}
	if c.Attempt < p.actAt {
		e := exploreCommands[pick(p.cfg.Seed, "explore", c.Attempt, len(exploreCommands))]
		return Generation{Calls: []Call{Apply(fmt.Sprintf(e, 100+c.Attempt), "collect more information")}}
	}
	found, all := FindFacts(c.Messages, s.Facts)
	if all {
		return Generation{Calls: []Call{Apply(s.fix(found), "fix it with what the earlier errors said")}}
	}
	return Generation{Calls: []Call{Apply(s.guess(found), "try the usual fix")}}
}

// FindFacts looks for each fact in the contents of the messages a model
// reads as facts (system, user and tool messages; not its own calls), the
// newest match winning, and reports whether all were found.
func FindFacts(msgs []openai.ChatCompletionMessage, facts []*regexp.Regexp) (found [][]string, all bool) {
	found = make([][]string, len(facts))
	for _, m := range msgs {
		if m.Role == openai.ChatMessageRoleAssistant {
			continue
		}
		text := messageText(m)
		for i, re := range facts {
			if ms := re.FindAllStringSubmatch(text, -1); len(ms) > 0 {
				found[i] = ms[len(ms)-1]
			}
		}
	}
	all = true
	for _, f := range found {
		all = all && f != nil
	}
	return found, all
}
