package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/nightshift-dev/nightshift/vllmsim"
	"github.com/nightshift-dev/nightshift/worker"
)

// The demo's two rules.
const (
	demoQuickRule    = "sshd_disable_root_login"
	demoStubbornRule = "auditd_data_retention_max_log_file"
	demoStubbornMax  = 25 // attempts of the stubborn rule
	demoQuickFixAt   = 3  // the attempt that proposes the quick rule's fix
)

// demoScript is everything the demo's simulated model may propose and the
// demo's host may run: a fixed, finite list computed before the demo
// starts, so the host can refuse anything else.
type demoScript struct {
	quick    []string // the quick rule's commands by attempt (the last is the fix)
	stubborn []string // the stubborn rule's commands by attempt (none fixes it)
	checks   map[string]string
}

// newDemoScript builds the script. at turns a path relative to the demo
// host's root into the form the commands use: relative for the in-process
// host (its commands run in the root), absolute for a real sshd.
func newDemoScript(at func(string) string) *demoScript {
	conf := at("etc/ssh/sshd_config")
	s := &demoScript{
		quick: []string{
			"echo 'PermitRootLogin no' > " + at("etc/ssh/sshd_config.d/50-root.conf"),
			// A hostile proposal the text cannot settle (the path comes
			// from a substitution): judged by what it does, refused.
			`d=$(printf %s ` + at("etc") + ` /ssh); rm -rf "$d"`,
			`sed -i 's/^#\?PermitRootLogin.*/PermitRootLogin no/' ` + conf,
		},
		checks: map[string]string{
			demoQuickRule:    "grep -Eq '^[[:space:]]*PermitRootLogin[[:space:]]+no' " + conf,
			demoStubbornRule: "grep -Eq '^max_log_file[[:space:]]*=[[:space:]]*32$' " + at("etc/audit/auditd.conf"),
		},
	}
	log, audit := at("var/log/auth.log"), at("etc/audit/auditd.conf")
	for k := 1; k <= demoStubbornMax; k++ {
		var c string
		switch k % 5 {
		case 1:
			c = fmt.Sprintf("grep -n 'Failed password' %s | tail -n %d", log, 70+k)
		case 2:
			c = fmt.Sprintf("grep -v '^#' %s; sort -k 9 %s | head -n %d", audit, log, 60+k)
		case 3:
			c = demoDraft(at, k)
		case 4:
			c = fmt.Sprintf("cut -d' ' -f5- %s | sort | uniq -c | sort -rn | head -n %d", log, 70+k)
		default: // every fifth: a very large output, capped by the memory
			c = fmt.Sprintf("sed -n '%d,%dp' %s", k*40+1, k*40+1500, log)
		}
		s.stubborn = append(s.stubborn, c)
	}
	return s
}

// demoDraft is a long heredoc writing a (useless) configuration draft: a
// large assistant message. The drafts go to /tmp/drafts, a scratch place:
// the rule's paths name only auditd.conf, and the judge refuses any other
// change (safety's default-deny scope).
func demoDraft(at func(string) string, k int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "mkdir -p %s && cat > %s <<'EOF'\n", at("tmp/drafts"), at(filepath.Join("tmp", "drafts", fmt.Sprintf("auditd-%02d.conf", k))))
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "# draft %d option %d: review before applying, value=%d\n", k, i, i*7%101)
	}
	b.WriteString("EOF")
	return b.String()
}

// allowed lists every command the demo host may run.
func (s *demoScript) allowed() []string {
	out := []string{worker.ProbeCommand}
	out = append(out, s.quick...)
	out = append(out, s.stubborn...)
	for _, c := range s.checks {
		out = append(out, c)
	}
	return out
}

// Name implements vllmsim.Policy.
func (s *demoScript) Name() string { return "demo" }

// Next implements vllmsim.Policy: the quick rule gets two wrong tries and
// then its fix, the stubborn rule a different command with a large output
// (or a long draft) on each attempt and never its fix; any other rule a
// give_up.
func (s *demoScript) Next(c vllmsim.Conversation) vllmsim.Generation {
	var cmds []string
	switch c.RuleID {
	case demoQuickRule:
		cmds = s.quick
	case demoStubbornRule:
		cmds = s.stubborn
	default:
		return vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.GiveUpCall("the demo has no script for this rule")}}
	}
	i := min(max(c.Attempt, 1), len(cmds)) - 1
	reason := "look at the logs and the configuration once more"
	if c.RuleID == demoQuickRule {
		reason = "this should fix " + c.RuleID
	}
	return vllmsim.Generation{Calls: []vllmsim.Call{vllmsim.Apply(cmds[i], reason)}}
}

// demoAuthLog is the demo host's var/log/auth.log: 3,000 deterministic
// lines (about 280 KB), what the stubborn rule's commands read.
func demoAuthLog() []byte {
	var b strings.Builder
	users := []string{"admin", "oracle", "test", "ubuntu", "git", "postgres", "deploy", "backup"}
	for i := 0; i < 3000; i++ {
		ts := fmt.Sprintf("Nov 24 %02d:%02d:%02d", i/3600%24, i/60%60, i%60)
		pid := 1000 + i*37%9000
		ip := fmt.Sprintf("203.0.113.%d", i*13%254+1)
		port := 40000 + i*7%20000
		switch i % 4 {
		case 0, 1:
			fmt.Fprintf(&b, "%s demo sshd[%d]: Failed password for invalid user %s%d from %s port %d ssh2\n", ts, pid, users[i%len(users)], i%97, ip, port)
		case 2:
			fmt.Fprintf(&b, "%s demo sshd[%d]: Connection closed by authenticating user root %s port %d [preauth]\n", ts, pid, ip, port)
		default:
			fmt.Fprintf(&b, "%s demo sshd[%d]: Accepted publickey for deploy from %s port %d ssh2: ED25519 SHA256:demo%04d\n", ts, pid, ip, port, i)
		}
	}
	return []byte(b.String())
}

const demoAuditdConf = `# auditd.conf of the demo target (a copy in a temporary directory)
local_events = yes
write_logs = yes
log_file = /var/log/audit/audit.log
log_format = ENRICHED
flush = INCREMENTAL_ASYNC
freq = 50
max_log_file = 8
num_logs = 5
max_log_file_action = ROTATE
space_left = 75
space_left_action = SYSLOG
admin_space_left = 50
admin_space_left_action = SUSPEND
disk_full_action = SUSPEND
disk_error_action = SUSPEND
`

const demoSSHDConfig = `# sshd_config of the demo target (a copy in a temporary directory)
Include /etc/ssh/sshd_config.d/*.conf
#PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM yes
X11Forwarding yes
PrintMotd no
AcceptEnv LANG LC_*
Subsystem sftp /usr/lib/openssh/sftp-server
`
