package distill

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// This file chooses the one line of a command's output that says most about
// why it failed (ErrorLine), and the decisive line of a re-check's output
// (CheckLine), for the summary lines.

// lineRule scores an output line: a line matching re scores score. Rules
// are tried in table order and the first match counts.
type lineRule struct {
	tool  string // documentation: whose messages the rule knows
	re    *regexp.Regexp
	score int
}

// Scores: a tool's own error message beats a generic error word, which
// beats a warning; the last line before a non-zero exit is the fallback.
const (
	scoreTool    = 100 // a hardening tool's error message
	scoreToolLow = 80  // a tool's message that is usually a consequence
	scoreError   = 60  // "error:", "fatal:", "E:" at the start
	scoreWord    = 40  // an error word anywhere
	scoreWarning = 20  // a warning
)

// errorLineRules are the parsers of the tools hardening uses, then the
// general rules. Each regular expression is matched against one line.
var errorLineRules = []lineRule{
	// apt, apt-get, dpkg
	{tool: "apt", re: regexp.MustCompile(`^E: `), score: scoreTool},
	{tool: "dpkg", re: regexp.MustCompile(`^dpkg: (error|dependency problems)`), score: scoreTool},
	{tool: "dpkg", re: regexp.MustCompile(`^dpkg: warning`), score: scoreWarning},
	{tool: "dpkg", re: regexp.MustCompile(`^dpkg(-query|-deb)?: `), score: scoreToolLow},
	{tool: "apt", re: regexp.MustCompile(`^W: (Failed to fetch|Some index files failed|GPG error|The repository .* is not signed)`), score: scoreToolLow},
	{tool: "apt", re: regexp.MustCompile(`^Err:\d+ `), score: scoreError},
	{tool: "apt", re: regexp.MustCompile(`^W: `), score: scoreWarning},
	// systemctl, service
	{tool: "systemctl", re: regexp.MustCompile(`^(Failed to [a-z-]+ |Unit \S+ (not found|is masked|could not be found))`), score: scoreTool},
	{tool: "systemctl", re: regexp.MustCompile(`^Job for \S+ failed`), score: scoreToolLow},
	{tool: "systemctl", re: regexp.MustCompile(`System has not been booted with systemd`), score: scoreTool},
	{tool: "systemctl", re: regexp.MustCompile(`Active: failed`), score: scoreToolLow},
	// sed
	{tool: "sed", re: regexp.MustCompile(`^(/\S+/)?sed: `), score: scoreTool},
	// sshd -t: "/etc/ssh/sshd_config: line 12: Bad configuration option: PermitRootLogn"
	{tool: "sshd", re: regexp.MustCompile(`^\S+: line \d+: |^(/\S+/)?sshd: |Missing privilege separation directory|[Nn]o hostkeys available`), score: scoreTool},
	{tool: "sshd", re: regexp.MustCompile(`: terminating, \d+ bad configuration options`), score: scoreToolLow},
	// auditctl, augenrules
	{tool: "auditctl", re: regexp.MustCompile(`^Error sending |^There was an error in line \d+|^Unknown (syscall|field|arch)|^Syscall name unknown|^auditctl: |^Rule exists|^Old style watch rules are slower`), score: scoreTool},
	// sysctl
	{tool: "sysctl", re: regexp.MustCompile(`^(/\S+/)?sysctl: `), score: scoreTool},
	// oscap
	{tool: "oscap", re: regexp.MustCompile(`^OpenSCAP Error|^oscap: |^Result\s+(fail|error|unknown)\b`), score: scoreTool},
	// grub-mkconfig, update-grub, grub2-mkconfig
	{tool: "grub", re: regexp.MustCompile(`^(/\S+/)?(grub2?-[a-z-]+|update-grub): |^Syntax error at line \d+|^error: (syntax error|invalid|file|out of memory)`), score: scoreTool},
	{tool: "grub", re: regexp.MustCompile(`^/etc/default/grub: line \d+: `), score: scoreTool},
	// PAM, pam-auth-update, authselect
	{tool: "pam", re: regexp.MustCompile(`PAM unable to dlopen|PAM adding faulty module|Module is unknown|pam_[a-z_]+(\.so)?\(\S+\): |^pam-auth-update: |^authselect: |^\[error\]`), score: scoreTool},
	// aide, augtool
	{tool: "aide", re: regexp.MustCompile(`^(/\S+/)?aide: |^AIDE (found differences|, version)|^Couldn't open file `), score: scoreToolLow},
	{tool: "augtool", re: regexp.MustCompile(`^error: Failed to execute command|^Saving failed|/augeas/files/\S+/error`), score: scoreTool},
	// general rules
	{tool: "any", re: regexp.MustCompile(`(?i)^(\S+: )?(error|fatal|critical)\b|^E\d*: `), score: scoreError},
}

// errorWords make a line an error line by the general rule (scoreWord),
// warnWords a warning; compared in lower case, as substrings.
var (
	errorWords = []string{"error", "failed", "failure", "fatal", "denied", "refused", "cannot", "can't", "could not", "couldn't",
		"unable", "invalid", "not found", "no such", "missing", "bad ", "unknown", "unrecognized", "not permitted", "read-only",
		"no space left", "timed out", "killed"}
	warnWords = []string{"warn"}
)

// errorLineBytes bounds an error line shown in a summary; a longer line is
// cut in its middle.
const errorLineBytes = 200

// ErrorLine returns the most informative line of a command's output
// (stderr and stdout, either order): the first line that the highest
// scoring rule matches — the messages of apt/dpkg, systemctl, sed, sshd -t,
// auditctl, sysctl, oscap, grub, PAM, aide and augtool first, then lines
// that start with "error:" or "E:", then lines with an error word, then
// warnings — and, when none matches and the command exited non-zero, the
// last non-empty line (the one a failing tool usually ends with). After
// exit 0 only a tool's own error message is chosen: a successful
// command's output is not its error. Shell trace lines ("+ cmd") are
// skipped. The line is trimmed and, when longer than 200 bytes, cut in
// its middle ("…"). It returns "" when nothing qualifies.
func ErrorLine(output string, exitCode int) string {
	if len(output) > 2*maxClassifyBytes {
		output = output[:maxClassifyBytes] + "\n" + output[len(output)-maxClassifyBytes:]
	}
	best, bestScore, last := "", 0, ""
	for len(output) > 0 {
		line := output
		if i := strings.IndexByte(output, '\n'); i >= 0 {
			line, output = output[:i], output[i+1:]
		} else {
			output = ""
		}
		line = strings.TrimSpace(strings.ToValidUTF8(line, "�"))
		if line == "" || strings.HasPrefix(line, "+ ") || isMarker(line) {
			continue
		}
		last = line
		if bestScore == scoreTool {
			continue // nothing scores higher; the first such line stays
		}
		if s := scoreLine(line); s > bestScore {
			best, bestScore = line, s
		}
	}
	switch {
	case exitCode == 0 && bestScore < scoreToolLow:
		return ""
	case bestScore >= scoreWarning+1:
		return cutLine(best, errorLineBytes)
	case exitCode != 0:
		return cutLine(last, errorLineBytes)
	}
	return ""
}

// isMarker reports a cut marker a runner or the memory wrote into output.
func isMarker(line string) bool {
	return strings.HasPrefix(line, "[…") || strings.HasPrefix(line, "[... ")
}

// triggers are lower-case fragments of which every line a rule of
// errorLineRules matches holds at least one (besides the lines starting
// with "E" or "W", checked apart): a line with none of them scores 0
// without running the regular expressions.
var triggers = []string{"err", "fail", "dpkg", "unit ", "job for", "systemd", "sed:", "line ", "sshd", "hostkey", "there was",
	"unknown", "syscall", "auditctl", "rule exists", "old style", "sysctl", "openscap", "oscap", "result", "grub", "syntax",
	"pam", "module", "authselect", "aide", "couldn't", "saving", "augeas", "fatal", "critical", "denied", "refused",
	"cannot", "can't", "could not", "unable", "invalid", "not found", "no such", "missing", "bad", "unrecognized",
	"not permitted", "read-only", "no space left", "timed out", "killed", "warn", "masked", "privilege separation"}

func scoreLine(line string) int {
	if len(line) > 1024 {
		line = line[:1024]
	}
	if line[0] != 'E' && line[0] != 'W' {
		lower := strings.ToLower(line)
		hit := false // a line without any trigger matches no rule
		for _, t := range triggers {
			if strings.Contains(lower, t) {
				hit = true
				break
			}
		}
		if !hit {
			return 0
		}
	}
	for i := range errorLineRules {
		if errorLineRules[i].re.MatchString(line) {
			return errorLineRules[i].score
		}
	}
	lower := strings.ToLower(line)
	for _, w := range errorWords {
		if strings.Contains(lower, w) {
			return scoreWord
		}
	}
	for _, w := range warnWords {
		if strings.Contains(lower, w) {
			return scoreWarning
		}
	}
	return 0
}

// oscapResult matches oscap's "Result	fail" line; oscapRule its "Rule	id".
var (
	oscapResult = regexp.MustCompile(`^Result\s+([a-z]+)\s*$`)
	oscapRule   = regexp.MustCompile(`^Rule\s+(\S+)\s*$`)
)

// CheckLine returns the decisive line of a rule check's output: for
// OpenSCAP's output the rule and its result ("oscap: sshd_disable_root_login
// fail"; a failing result first), otherwise the line ErrorLine chooses as
// after a non-zero exit (a check that fails usually prints the offending
// value last). It returns "" for empty output.
func CheckLine(output string) string {
	rule, worst := "", ""
	for _, l := range strings.Split(output, "\n") {
		l = strings.TrimSpace(l)
		if m := oscapRule.FindStringSubmatch(l); m != nil {
			rule = m[1]
			continue
		}
		if m := oscapResult.FindStringSubmatch(l); m != nil {
			r := shortRule(rule) + " " + m[1]
			if worst == "" || m[1] != "pass" && strings.HasSuffix(worst, " pass") {
				worst = r
			}
		}
	}
	if worst != "" {
		return "oscap: " + cutLine(strings.TrimSpace(worst), errorLineBytes)
	}
	return ErrorLine(output, 1)
}

// shortRule drops the XCCDF prefix of a rule id.
func shortRule(id string) string {
	if i := strings.Index(id, "_rule_"); i >= 0 {
		return id[i+len("_rule_"):]
	}
	return id
}

// cutLine shortens s to at most n bytes by cutting its middle ("…"),
// on rune boundaries.
func cutLine(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := n*3/5, n*2/5-len("…")
	h := s[:head]
	for !utf8.ValidString(h) && len(h) > 0 {
		h = h[:len(h)-1]
	}
	t := s[len(s)-tail:]
	for !utf8.ValidString(t) && len(t) > 0 {
		t = t[1:]
	}
	return h + "…" + t
}
