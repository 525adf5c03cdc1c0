package vllmsim

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// pick returns a deterministic index in [0, n) for (seed, salt, attempt).
func pick(seed uint64, salt string, attempt, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s\x00%d", seed, salt, attempt)
	return int(h.Sum64() % uint64(n))
}

// ---- stubborn ----

// StubbornConfig configures Stubborn.
type StubbornConfig struct {
	// Seed varies the order of the commands.
	Seed uint64
	// DraftDir is where the heredocs write their (useless) config drafts;
	// "" means "/tmp/nightshift-stubborn".
	DraftDir string
	// HeredocLines is the length of each heredoc; 0 means 400.
	HeredocLines int
}

type stubborn struct{ cfg StubbornConfig }

// Stubborn never fixes anything: every attempt runs a read-only command with
// a large output (journalctl -n 2000, find / -xdev -type f, cat
// /var/log/dpkg.log, yes … | head -n 3000, …) or writes a long heredoc
// config draft under DraftDir. It never proposes a banned or destructive
// command. Its purpose is to grow the conversation until the worker's
// memory must compress it.
func Stubborn(cfg StubbornConfig) Policy {
	if cfg.DraftDir == "" {
		cfg.DraftDir = "/tmp/nightshift-stubborn"
	}
	if cfg.HeredocLines <= 0 {
		cfg.HeredocLines = 400
	}
	return stubborn{cfg}
}

func (stubborn) Name() string { return "stubborn" }

// stubbornCommands are read-only commands with large outputs.
var stubbornCommands = []string{
	"journalctl --no-pager -n 2000",
	"find / -xdev -type f",
	"cat /var/log/dpkg.log",
	"yes 'log line: nightshift stubborn policy is still looking at this host' | head -n 3000",
	"ps auxww",
	"ls -laR /usr/share/doc",
	"sysctl -a",
	"dpkg -l",
}

func (p stubborn) Next(c Conversation) Generation {
	n := len(stubbornCommands) + 1
	i := pick(p.cfg.Seed, c.RuleID, c.Attempt, n)
	if i == len(stubbornCommands) {
		return Generation{
			Text:  "Let me write a complete configuration draft first.",
			Calls: []Call{Apply(p.heredoc(c.Attempt), "write a full configuration draft")},
		}
	}
	return Generation{Calls: []Call{Apply(stubbornCommands[i], "collect more information")}}
}

func (p stubborn) heredoc(attempt int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "mkdir -p %s && cat > %s/draft-%d.conf <<'EOF'\n", p.cfg.DraftDir, p.cfg.DraftDir, attempt)
	for i := 1; i <= p.cfg.HeredocLines; i++ {
		fmt.Fprintf(&b, "# option %d: nightshift draft setting kept for review, value=%d\n", i, i*7%101)
	}
	b.WriteString("EOF")
	return b.String()
}

// ---- eventual ----

// EventualConfig configures Eventual.
type EventualConfig struct {
	// Seed varies the wrong fixes.
	Seed uint64
	// FixAt is the attempt at which the fix is proposed; 0 means 3.
	FixAt int
	// Fixes maps a rule id to its fix command.
	Fixes map[string]string
	// DefaultFix is proposed for rules without an entry in Fixes; "" means
	// the policy keeps proposing wrong fixes for such rules.
	DefaultFix string
	// WrongFixes are the ineffective commands proposed before FixAt; nil
	// means a built-in list of harmless commands that change nothing the
	// rule checks. "%d" in a command is replaced by the attempt number.
	WrongFixes []string
}

type eventual struct{ cfg EventualConfig }

var defaultWrongFixes = []string{
	"mkdir -p /tmp/nightshift-eventual && echo 'setting applied' > /tmp/nightshift-eventual/attempt-%d",
	"touch /tmp/nightshift-eventual-%d.flag",
	"echo 'configuration reviewed (attempt %d)' >> /tmp/nightshift-eventual.log",
	"true # attempt %d: the setting is already correct",
}

// Eventual proposes wrong (harmless, ineffective) fixes for attempts before
// FixAt and the configured fix for the conversation's rule from attempt FixAt
// on.
func Eventual(cfg EventualConfig) Policy {
	if cfg.FixAt <= 0 {
		cfg.FixAt = 3
	}
	if len(cfg.WrongFixes) == 0 {
		cfg.WrongFixes = defaultWrongFixes
	}
	return eventual{cfg}
}

func (eventual) Name() string { return "eventual" }

func (p eventual) Next(c Conversation) Generation {
	fix, ok := p.cfg.Fixes[c.RuleID]
	if !ok {
		fix = p.cfg.DefaultFix
	}
	if c.Attempt >= p.cfg.FixAt && fix != "" {
		return Generation{Calls: []Call{Apply(fix, "apply the fix for "+c.RuleID)}}
	}
	w := p.cfg.WrongFixes[pick(p.cfg.Seed, c.RuleID, c.Attempt, len(p.cfg.WrongFixes))]
	if strings.Contains(w, "%d") {
		w = strings.ReplaceAll(w, "%d", fmt.Sprint(c.Attempt))
	}
	return Generation{Calls: []Call{Apply(w, "this should fix "+c.RuleID)}}
}

// ---- repeater ----

type repeater struct{ first string }

// Repeater proposes first on the first attempt and, from then on, the last
// ssh_apply command found in the conversation again and again (first when
// none is found). first "" means "test -f /etc/nightshift/fixed", which fails
// on a clean target.
func Repeater(first string) Policy {
	if first == "" {
		first = "test -f /etc/nightshift/fixed"
	}
	return repeater{first}
}

func (repeater) Name() string { return "repeater" }

func (p repeater) Next(c Conversation) Generation {
	cmd := c.LastCommand
	if cmd == "" {
		cmd = p.first
	}
	return Generation{Calls: []Call{Apply(cmd, "try again")}}
}

// ---- banned proposer ----

// BannedConfig configures BannedProposer.
type BannedConfig struct {
	// Seed varies the mix.
	Seed uint64
	// Marker is the file every banned command touches before anything else
	// ("touch MARKER; reboot"), so a test proves nothing banned ran by the
	// marker's absence. "" means "/tmp/nightshift-banned-marker".
	Marker string
}

type banned struct{ cfg BannedConfig }

// bannedCommands are the destructive commands BannedProposer proposes.
var bannedCommands = []string{
	"rm -rf /",
	"reboot",
	"systemctl stop ssh",
	"shutdown -h now",
	"mkfs.ext4 /dev/sda1",
	"dd if=/dev/zero of=/dev/sda bs=1M",
	"chmod -R 000 /etc",
	"iptables -P INPUT DROP",
	"sudo reboot",
	"systemctl disable --now sshd",
}

// BannedCommands returns the destructive commands BannedProposer proposes,
// each prefixed with "touch MARKER; " in its calls.
func BannedCommands() []string { return append([]string(nil), bannedCommands...) }

var harmlessCommands = []string{
	"uname -a",
	"id",
	"cat /etc/os-release",
	"uptime",
}

// BannedProposer mixes harmless commands with banned ones: for each
// attempt it proposes (chosen by seed) a banned command, a harmless one, or
// a harmless call followed by a banned call in the same message. Every banned
// command is written "touch MARKER; <command>".
func BannedProposer(cfg BannedConfig) Policy {
	if cfg.Marker == "" {
		cfg.Marker = "/tmp/nightshift-banned-marker"
	}
	return banned{cfg}
}

func (banned) Name() string { return "banned-proposer" }

func (p banned) Next(c Conversation) Generation {
	b := bannedCommands[pick(p.cfg.Seed, "banned"+c.RuleID, c.Attempt, len(bannedCommands))]
	bad := Apply("touch "+p.cfg.Marker+"; "+b, "this will definitely fix it")
	h := Apply(harmlessCommands[pick(p.cfg.Seed, "harmless"+c.RuleID, c.Attempt, len(harmlessCommands))], "look around")
	switch pick(p.cfg.Seed, "mix"+c.RuleID, c.Attempt, 3) {
	case 0:
		return Generation{Calls: []Call{bad}}
	case 1:
		return Generation{Calls: []Call{h}}
	default:
		return Generation{Calls: []Call{h, bad}}
	}
}

// ---- malformed ----

// Malformation is one kind of broken model output.
type Malformation int

const (
	// MalformedJSON: the <tool_call> block is not valid JSON. vLLM's hermes
	// parser then returns the whole output as content, with no tool calls.
	MalformedJSON Malformation = iota
	// MalformedStringArguments: "arguments" is a JSON string, not an object;
	// the call's arguments are then a JSON string literal ("\"uname -a\"").
	MalformedStringArguments
	// MalformedUnknownTool: a call to a tool that was not offered.
	MalformedUnknownTool
	// MalformedNoToolCall: prose only, no tool call.
	MalformedNoToolCall
	// MalformedEmptyCommand: ssh_apply with command "".
	MalformedEmptyCommand
	// MalformedMissingCommand: ssh_apply without a command argument.
	MalformedMissingCommand
	// MalformedUnclosed: an unclosed <tool_call> with truncated JSON, also
	// returned as content.
	MalformedUnclosed
	malformationCount
)

// Malformations returns every Malformation in order.
func Malformations() []Malformation {
	out := make([]Malformation, malformationCount)
	for i := range out {
		out[i] = Malformation(i)
	}
	return out
}

// Generation returns the model output for the malformation.
func (m Malformation) Generation() Generation {
	switch m {
	case MalformedJSON:
		return Generation{Raw: "<tool_call>\n{\"name\": \"ssh_apply\", \"arguments\": {\"command\": \"uname -a\",}}\n</tool_call>"}
	case MalformedStringArguments:
		return Generation{Raw: "<tool_call>\n{\"name\": \"ssh_apply\", \"arguments\": \"uname -a\"}\n</tool_call>"}
	case MalformedUnknownTool:
		return Generation{Calls: []Call{{Name: "run_shell", Args: Args{{"cmd", "uname -a"}}}}}
	case MalformedNoToolCall:
		return Generation{Text: "I would check the SSH daemon configuration and make sure root login is disabled."}
	case MalformedEmptyCommand:
		return Generation{Calls: []Call{Apply("", "")}}
	case MalformedMissingCommand:
		return Generation{Calls: []Call{{Name: nightshift.ToolApply, Args: Args{{"reason", "no command given"}}}}}
	default: // MalformedUnclosed
		return Generation{Raw: "<tool_call>\n{\"name\": \"ssh_apply\", \"arguments\": {\"command\": \"grep -n PermitRoot"}
	}
}

// String names the malformation.
func (m Malformation) String() string {
	names := []string{"json", "string-arguments", "unknown-tool", "no-tool-call", "empty-command", "missing-command", "unclosed"}
	if m >= 0 && int(m) < len(names) {
		return names[m]
	}
	return fmt.Sprintf("Malformation(%d)", int(m))
}

type malformed struct{ seed uint64 }

// Malformed produces a different broken output on each attempt, cycling
// through every Malformation from a seed-chosen offset. Note that through
// vLLM's hermes parser a returned tool call's arguments are always valid JSON
// (they are re-serialized with json.dumps); broken JSON reaches the client as
// content without tool calls.
func Malformed(seed uint64) Policy { return malformed{seed} }

func (malformed) Name() string { return "malformed" }

func (p malformed) Next(c Conversation) Generation {
	off := pick(p.seed, c.RuleID, 0, int(malformationCount))
	return Malformation((off + c.Attempt - 1) % int(malformationCount)).Generation()
}

// ---- give up ----

type giveUp struct {
	at     int
	reason string
}

// GiveUp runs harmless diagnostics before attempt at (at ≤ 1: at once) and
// then calls give_up with reason ("" means a built-in reason).
func GiveUp(at int, reason string) Policy {
	if reason == "" {
		reason = "I cannot find a safe way to fix this rule on this host."
	}
	return giveUp{at, reason}
}

func (giveUp) Name() string { return "give-up" }

func (p giveUp) Next(c Conversation) Generation {
	if c.Attempt >= p.at {
		return Generation{Calls: []Call{GiveUpCall(p.reason)}}
	}
	return Generation{Calls: []Call{Apply(harmlessCommands[(c.Attempt-1)%len(harmlessCommands)], "look around")}}
}

// ---- script ----

type script struct{ steps []Generation }

// Script answers attempt i with steps[i-1], repeating the last step after
// the end (an empty script answers with empty text).
func Script(steps ...Generation) Policy { return script{steps} }

func (script) Name() string { return "script" }

func (p script) Next(c Conversation) Generation {
	if len(p.steps) == 0 {
		return Generation{}
	}
	i := min(max(c.Attempt, 1), len(p.steps)) - 1
	return p.steps[i]
}

// PolicyByName returns a built-in policy with default settings (seed 0):
// "stubborn", "eventual", "repeater", "banned-proposer", "malformed" or
// "give-up". The eventual policy's default fix is fix.
func PolicyByName(name, fix string) (Policy, error) {
	switch name {
	case "stubborn":
		return Stubborn(StubbornConfig{}), nil
	case "eventual":
		return Eventual(EventualConfig{DefaultFix: fix}), nil
	case "repeater":
		return Repeater(""), nil
	case "banned-proposer":
		return BannedProposer(BannedConfig{}), nil
	case "malformed":
		return Malformed(0), nil
	case "give-up":
		return GiveUp(1, ""), nil
	}
	return nil, fmt.Errorf("%w: unknown policy %q (want stubborn, eventual, repeater, banned-proposer, malformed or give-up)", ErrConfig, name)
}
