package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/testenv"
)

// demoTools are the programs the demo's scripted commands use (besides
// /bin/sh): a bare Debian has them all (coreutils, grep, sed).
var demoTools = []string{"cat", "cut", "grep", "head", "mkdir", "rm", "sed", "sort", "tail", "uniq"}

// TestDemo runs the README's first command as on a machine with no sshd,
// ssh or bwrap: PATH holds only the tools the scripted commands use. The
// quick rule is fixed, the stubborn one runs its 25 attempts with its
// prompts inside the limit while the memory distils old turns, and the end
// shows the last history block and the prompt breakdown. The figures
// docs/benchmarks.md and the README quote are the ones it printed.
func TestDemo(t *testing.T) {
	bin := t.TempDir()
	for _, tool := range demoTools {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	for _, absent := range []string{"sshd", "ssh", "bwrap"} {
		if p, err := exec.LookPath(absent); err == nil {
			t.Fatalf("%s is on the test's PATH at %s", absent, p)
		}
	}
	code, out, errOut := cli(t, "", "demo")
	if code != exitOK {
		t.Fatalf("demo: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"in-process SSH server", "PROMPT/LIMIT", "now says: PermitRootLogin no",
		"sshd_disable_root_login             fixed      3",
		"auditd_data_retention_max_log_file  not_fixed  25",
		"The last history block the model saw", "[Turn 1: ran `grep -n 'Failed password' var/log/auth.log",
		"The last prompt: system", "refused 0 commands",
		// Judged under the rule's paths (the worker gives every rule a
		// default-deny scope).
		"would change /etc/ssh, outside the rule's paths /etc/ssh/sshd_config, /etc/ssh/sshd_config.d",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	// Every attempt's prompt is within the limit, and the memory has
	// distilled turns by the end.
	row := regexp.MustCompile(`(?m)^auditd_data_retention_max_log_file +(\d+) .* (\d+)/(\d+) +(\d+) verbatim(?:, (\d+) distilled)?`)
	rows := row.FindAllStringSubmatch(out, -1)
	if len(rows) != 25 {
		t.Fatalf("%d attempt rows of the stubborn rule, want 25:\n%s", len(rows), out)
	}
	for _, r := range rows {
		prompt, _ := strconv.Atoi(r[2])
		limit, _ := strconv.Atoi(r[3])
		if prompt > limit {
			t.Errorf("attempt %s: prompt %d over the limit %d", r[1], prompt, limit)
		}
	}
	if d, _ := strconv.Atoi(rows[24][5]); d < 15 {
		t.Errorf("only %d turns distilled by attempt 25", d)
	}
	checkDemoFigures(t, out)
}

// TestDemoHostRefuses: the demo's in-process host runs its allowed commands
// in its directory and refuses any other without running it.
func TestDemoHostRefuses(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	h, err := startDemoHost(ctx, dir, []string{"echo ok > made-by-allowed"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	r, err := h.client.Run(ctx, "echo ok > made-by-allowed")
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("allowed command: %+v, %v", r, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "made-by-allowed")); err != nil {
		t.Fatalf("the allowed command did not run in the demo directory: %v", err)
	}
	victim := filepath.Join(t.TempDir(), "must-not-exist")
	r, err = h.client.Run(ctx, "touch "+victim)
	if err != nil || r.ExitCode != exitRefused || !strings.Contains(r.Stderr, "refused: not one of the demo's own scripted commands") {
		t.Fatalf("other command: %+v, %v; want exit %d and the refusal", r, err, exitRefused)
	}
	if _, err := os.Stat(victim); !os.IsNotExist(err) {
		t.Fatalf("the refused command ran: %v", err)
	}
	if got := h.Refused(); len(got) != 1 || got[0] != "touch "+victim {
		t.Fatalf("Refused() = %q", got)
	}
}

// TestDemoSSHD runs 'worker demo --sshd': the same demo through a
// disposable local OpenSSH server (which needs openssh-server: CI installs
// it).
func TestDemoSSHD(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sshd"); err != nil {
		if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
			testenv.Unavailable(t, "sshd is not installed")
		}
	}
	code, out, errOut := cli(t, "", "demo", "--sshd")
	if code != exitOK {
		t.Fatalf("demo --sshd: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"disposable sshd at", "now says: PermitRootLogin no", "not_fixed  25", "The last prompt: system"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo --sshd output lacks %q:\n%s", want, out)
		}
	}
}
