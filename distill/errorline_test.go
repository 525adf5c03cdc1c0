package distill

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift"
)

// TestErrorLine: for each hardening tool, real messages (as the tools print
// them) among noise; the line chosen is the tool's own error.
func TestErrorLine(t *testing.T) {
	tests := []struct {
		name, output string
		exit         int
		want         string
	}{
		{"apt locate", "Reading package lists...\nBuilding dependency tree...\nE: Unable to locate package aide-dynamic\n", 100, "E: Unable to locate package aide-dynamic"},
		{"apt fetch over Ign", "Ign:1 http://deb.example.invalid bookworm InRelease\nErr:1 http://deb.example.invalid bookworm InRelease\n  Could not resolve 'deb.example.invalid'\nW: Failed to fetch http://deb.example.invalid/InRelease  Could not resolve 'deb.example.invalid'\n", 100,
			"W: Failed to fetch http://deb.example.invalid/InRelease  Could not resolve 'deb.example.invalid'"},
		{"dpkg", "Setting up foo (1.0) ...\ndpkg: error processing package foo (--configure):\n installed foo package post-installation script subprocess returned error exit status 1\nErrors were encountered while processing:\n foo\n", 1, "dpkg: error processing package foo (--configure):"},
		{"systemctl masked", "Failed to restart auditd.service: Unit auditd.service is masked.\n", 1, "Failed to restart auditd.service: Unit auditd.service is masked."},
		{"systemctl job", "Job for ssh.service failed because the control process exited with error code.\nSee \"systemctl status ssh.service\" and \"journalctl -xeu ssh.service\" for details.\n", 1, "Job for ssh.service failed because the control process exited with error code."},
		{"sed", "sed: -e expression #1, char 42: unterminated `s' command\n", 1, "sed: -e expression #1, char 42: unterminated `s' command"},
		{"sshd -t", "/etc/ssh/sshd_config: line 14: Bad configuration option: PermitRootLogn\n/etc/ssh/sshd_config: terminating, 1 bad configuration options\n", 255, "/etc/ssh/sshd_config: line 14: Bad configuration option: PermitRootLogn"},
		{"auditctl", "No rules\nThere was an error in line 5 of /etc/audit/audit.rules\n", 1, "There was an error in line 5 of /etc/audit/audit.rules"},
		{"auditctl syscall", "Syscall name unknown: adjtimexx\nThere was an error in line 3 of /etc/audit/rules.d/time.rules\n", 1, "Syscall name unknown: adjtimexx"},
		{"sysctl", "net.ipv4.ip_forward = 0\nsysctl: cannot stat /proc/sys/net/ipv4/conf/all/accept_source_routes: No such file or directory\n", 255, "sysctl: cannot stat /proc/sys/net/ipv4/conf/all/accept_source_routes: No such file or directory"},
		{"oscap", "Title\tDisable SSH Root Login\nRule\txccdf_org.ssgproject.content_rule_sshd_disable_root_login\nResult\tfail\n", 2, "Result\tfail"},
		{"oscap error", "OpenSCAP Error: Unable to open file: '/usr/share/xml/scap/ssg/content/ssg-debian13-ds.xml' [oscap-tool.c:288]\n", 1, "OpenSCAP Error: Unable to open file: '/usr/share/xml/scap/ssg/content/ssg-debian13-ds.xml' [oscap-tool.c:288]"},
		{"grub", "Generating grub configuration file ...\n/etc/default/grub: line 12: syntax error near unexpected token `('\n", 1, "/etc/default/grub: line 12: syntax error near unexpected token `('"},
		{"grub-mkconfig", "grub-mkconfig: error: cannot find a GRUB drive for /dev/vda1.  Check your device.map.\n", 1, "grub-mkconfig: error: cannot find a GRUB drive for /dev/vda1.  Check your device.map."},
		{"pam", "Nov 25 03:12:01 db1 sudo: PAM unable to dlopen(pam_pwquality.so): /lib/security/pam_pwquality.so: cannot open shared object file\n", 1,
			"Nov 25 03:12:01 db1 sudo: PAM unable to dlopen(pam_pwquality.so): /lib/security/pam_pwquality.so: cannot open shared object file"},
		{"general error prefix", "checking\nerror: option --frobnicate not recognised\nusage: x [opts]\n", 2, "error: option --frobnicate not recognised"},
		{"last line before non-zero exit", "reading /etc/audit/auditd.conf\nmax_log_file = 8\n", 1, "max_log_file = 8"},
		{"exit 0: noise is not an error", "warning: something\nsshd[1]: error: could not load host key\n", 0, ""},
		{"exit 0: a tool's own error still is", "E: Sub-process returned an error code\n", 0, "E: Sub-process returned an error code"},
		{"trace lines skipped", "+ sed -i s/a/b/ f\n", 1, ""},
		{"empty", "", 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ErrorLine(tt.output, tt.exit))
		})
	}
	long := "E: " + strings.Repeat("x", 500) + " tail of the message"
	got := ErrorLine(long, 100)
	assert.LessOrEqual(t, len(got), errorLineBytes)
	assert.True(t, strings.HasPrefix(got, "E: xxx") && strings.HasSuffix(got, "tail of the message"), "cut in the middle: %q", got)
}

// TestErrorLineRealOutputs: the outputs captured from real tools
// (testdata/outputs) each give a line that is in the output and names an
// error; none is empty after a failure.
func TestErrorLineRealOutputs(t *testing.T) {
	files := map[string]string{
		"apt-get-install-dpkg-lock.txt":        "Could not get lock",
		"apt-get-install-unable-to-locate.txt": "Unable to locate package",
		"apt-get-install-dpkg-interrupted.txt": "dpkg was interrupted",
		"sshd-t-errors.txt":                    "line ",
		"sed-errors.txt":                       "sed: ",
		"systemctl-no-systemd.txt":             "System has not been booted with systemd",
		"dpkg-install-postinst-failed.txt":     "dpkg: error processing",
		"aide-config-error.txt":                "ERROR",
		"command-not-found.txt":                "not found",
		"apt-get-not-root.txt":                 "E: ",
		"systemctl-status-sshd-failed.txt":     "",
		"apt-get-update-failed-fetch.txt":      "Failed to fetch",
		"augtool-errors.txt":                   "",
		"find-permission-denied.txt":           "Permission denied",
		"yum-install-lock.txt":                 "",
		"dnf-install-no-match.txt":             "",
		"aide-check-no-database.txt":           "",
		"aide-init-timeout-killed.txt":         "",
		"apt-get-install-success.txt":          "",
		"dpkg-configure-a.txt":                 "",
		"journalctl-u-ssh.txt":                 "",
		"ls-la-etc.txt":                        "",
		"oscap-xccdf-eval.txt":                 "",
		"sysctl-system.txt":                    "",
		"aide-check-changes.txt":               "",
		"aide-init.txt":                        "",
	}
	for name, want := range files {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "outputs", name))
		require.NoError(t, err)
		got := ErrorLine(string(data), 1)
		require.NotEmpty(t, got, "%s: no line after exit 1", name)
		assert.Contains(t, string(data), strings.Split(got, "…")[0], "%s: the line is not from the output", name)
		assert.Contains(t, got, want, "%s", name)
	}
}

func TestCheckLine(t *testing.T) {
	oscap := "Title\tSet SSH Idle Timeout\nRule\txccdf_org.ssgproject.content_rule_sshd_set_idle_timeout\nResult\tpass\n\n" +
		"Title\tDisable SSH Root Login\nRule\txccdf_org.ssgproject.content_rule_sshd_disable_root_login\nResult\tfail\n"
	assert.Equal(t, "oscap: sshd_disable_root_login fail", CheckLine(oscap))
	assert.Equal(t, "PermitRootLogin yes", CheckLine("# checking\nPermitRootLogin yes\n"))
	assert.Equal(t, "", CheckLine(""))
}

// TestCodeSpanReadsBack: a command written with CodeSpan is recovered
// exactly by the Markdown rule (strip the fence and one space each side
// when both are spaces), whatever quotes and backquotes it holds.
func TestCodeSpanReadsBack(t *testing.T) {
	for _, cmd := range []string{
		"ls", "cut '-d ' -f5- /etc/passwd", "echo `date`", "`id`", "a ``b`` c", "grep -v '^#' f | sort",
	} {
		s := CodeSpan(cmd)
		n := 0
		for n < len(s) && s[n] == '`' {
			n++
		}
		inner := s[n : len(s)-n]
		require.Equal(t, strings.Repeat("`", n), s[len(s)-n:], "%q: the fences differ", s)
		if strings.HasPrefix(inner, " ") && strings.HasSuffix(inner, " ") && len(inner) > 1 {
			inner = inner[1 : len(inner)-1]
		}
		assert.Equal(t, cmd, inner, "%q", s)
		assert.NotContains(t, inner, strings.Repeat("`", n), "%q: the fence occurs inside", s)
	}
}

// TestAbbreviateKeepsQuotes: a quoted argument with blanks is one word: an
// abbreviated command never leaves a quotation open.
func TestAbbreviateKeepsQuotes(t *testing.T) {
	d := New(Config{CommandTokens: 14})
	cmd := `grep -v '^#' etc/audit/auditd.conf | cut '-d ' -f5- | sort -k 2 | head -n 67 | awk '{print $1, $2, $3, $4}' | tee /tmp/out.txt`
	s := d.Summarize(Turn{Number: 1, Steps: []Step{{Action: nightshift.ActionRan, Command: cmd}}})
	got := s.Steps[0].Command
	assert.Less(t, len(got), len(cmd), "not abbreviated: %q", got)
	assert.Zero(t, strings.Count(got, "'")%2, "an odd number of quotes: %q", got)
	assert.Equal(t, []string{"a", "'b c'", `"d e"`, "$(f g)", `h\ i`}, shellWords(`a 'b c' "d e" $(f g) h\ i`))
}

func TestTurnsLine(t *testing.T) {
	assert.Equal(t, "[Turn 4: x]", TurnsLine([]int{4}, "x"))
	assert.Equal(t, "[Turns 4, 9, 14: x]", TurnsLine([]int{4, 9, 14}, "x"))
	assert.Equal(t, "[Turns 4–6, 9, 10: x]", TurnsLine([]int{4, 5, 6, 9, 10}, "x"))
	var many []int
	for i := 1; i <= 40; i++ {
		many = append(many, i*3)
	}
	assert.Equal(t, "[Turns 3, 6, 9, 12, 15 … 117, 120 (40 turns): x]", TurnsLine(many, "x"))
}

func TestChangesAndCheckLineShown(t *testing.T) {
	d := New(Config{})
	s := d.Summarize(Turn{Number: 3, Check: nightshift.CheckFail, CheckOutput: "max_log_file = 8\n",
		Steps: []Step{{Action: nightshift.ActionRan, Command: "sed -i s/8/32/ /etc/audit/auditd.conf", Changes: []nightshift.FileChange{{Path: "/etc/audit/auditd.conf", Change: nightshift.ChangeModified}, {Path: "/etc/audit/auditd.conf.bak", Change: nightshift.ChangeCreated}}}}})
	assert.Equal(t, "[Turn 3: ran `sed -i s/8/32/ /etc/audit/auditd.conf` — changed /etc/audit/auditd.conf, /etc/audit/auditd.conf.bak (created) — exit 0; re-check failed: \"max_log_file = 8\"]", s.Line())
	assert.Equal(t, "ran `sed -i s/8/32/ /etc/audit/auditd.conf` — changed /etc/audit/auditd.conf, /etc/audit/auditd.conf.bak (created) — exit 0; re-check failed: \"max_log_file = 8\"", s.Body())
}
