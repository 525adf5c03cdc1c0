package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckCommand(t *testing.T) {
	dir := t.TempDir()
	rulesFile := filepath.Join(dir, "r.yaml")
	if err := os.WriteFile(rulesFile, []byte("rules:\n  - id: sshd_root\n    check: \"grep -q '^PermitRootLogin no' /etc/ssh/sshd_config\"\n    banned: ['systemctl (restart|stop) ssh']\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stdout string // prefix
		stderr string // substring
	}{
		{"allowed", nil, "sshd -t && systemctl reload ssh\n", 0, "allowed\n", ""},
		{"multi-line allowed", nil, "cat > /etc/issue <<'EOF'\nAuthorized use only\nEOF\nchmod 644 /etc/issue\n", 0, "allowed\n", ""},
		{"blocked", nil, "rm -rf /etc\n", 1, "blocked: deletes the operating system (delete-system): rm -rf /etc", ""},
		{"carriage return", nil, "true\r#; reboot", 3, `sandbox: cannot be checked before it runs: the command cannot be analysed: carriage return (\r) at byte 4 (unanalysable): "true\r#; reboot"`, ""},
		{"rule pattern, normal form", []string{"--rules", rulesFile, "--rule", "sshd_root"}, "systemctl -q restart ss[h]\n", 1, "blocked: matches an added ban pattern (pattern): systemctl restart ssh", ""},
		{"rule pattern, --", []string{"--rules", rulesFile, "--rule", "sshd_root"}, "systemctl restart -- ssh\n", 1, "blocked: matches an added ban pattern (pattern)", ""},
		{"unknown rule", []string{"--rules", rulesFile, "--rule", "nope"}, "true\n", 2, "", `check-command: no rule "nope"`},
		{"rules without rule", []string{"--rules", rulesFile}, "true\n", 2, "", "--rules and --rule go together"},
		{"empty input", nil, "\n", 2, "", "no command on standard input"},
		{"argument", []string{"rm"}, "", 2, "", `unexpected argument "rm"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(context.Background(), append([]string{"check-command"}, tt.args...), strings.NewReader(tt.stdin), &out, &errOut)
			code := exitCode(err, &errOut)
			if code != tt.code || !strings.HasPrefix(out.String(), tt.stdout) || !strings.Contains(errOut.String(), tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stdout %q…, stderr …%q…", code, out.String(), errOut.String(), tt.code, tt.stdout, tt.stderr)
			}
			if (tt.code == 1 || tt.code == 3) && errOut.Len() != 0 {
				t.Errorf("blocked wrote to stderr: %q", errOut.String())
			}
		})
	}
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"check-command", "--json"}, strings.NewReader("echo b > /proc/sysrq-trigger"), &out, &errOut)
	var v struct {
		Allowed          bool
		Entry, Construct string
	}
	if code := exitCode(err, &errOut); code != 1 || json.Unmarshal(out.Bytes(), &v) != nil || v.Allowed || v.Entry != "power" || v.Construct != "> /proc/sysrq-trigger" {
		t.Errorf("--json: exit %d, %s %+v", code, out.String(), v)
	}
}
