package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/internal/debtarget"
	"github.com/nightshift-dev/nightshift/internal/testenv"
)

// TestSCAPExportAppliedByAnsible (issue 24): a night on the Debian 12
// target fixes the SCAP rules through the sandbox, with SSG's own fix text
// as the model's answer; `worker export --ansible` writes the playbook,
// which ansible-playbook (Debian's ansible-core) accepts; applied over SSH
// to a fresh target, it makes OpenSCAP report every one of those rules
// pass, and a second application changes nothing.
func TestSCAPExportAppliedByAnsible(t *testing.T) {
	t.Parallel() // its own Debian target and model server
	playbook, err := exec.LookPath("ansible-playbook")
	if err != nil {
		testenv.Unavailable(t, "ansible-playbook (Debian's ansible-core, installed by the test command): %v", err)
	}
	ctx := context.Background()
	tg, c := startDebian(t, debtarget.Options{})
	_, url := scapModel(t, ssgFixes(t, c, scapRules{profile: scapProfile, ids: scapFixed, fix: true}), 1)

	dir := t.TempDir()
	inv := filepath.Join(dir, "hosts.yaml")
	if err := os.WriteFile(inv, []byte(fmt.Sprintf("hosts:\n  - host: debian12\n    address: %s\n    port: %d\n    user: %s\n    identity: %s\n",
		tg.Host, tg.Port, tg.User, tg.IdentityFile)), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "night.db")
	args := []string{"run", "--datastream", debtarget.DatastreamPath, "--profile", "anssi_bp28_high", "--inventory", inv, "--journal", db,
		"--known-hosts", tg.KnownHostsFile, "--base-url", url, "--max-attempts", "3", "--no-progress"}
	for _, id := range scapFixed {
		args = append(args, "--rule", id)
	}
	if code, out, errOut := cli(t, "", args...); code != 0 {
		t.Fatalf("night: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for id, res := range evaluate(t, c, scapProfile, scapFixed) {
		if res.Status != nightshift.CheckPass {
			t.Fatalf("%s after the night: %s (%s)", id, res.Status, res.Detail)
		}
	}

	play := filepath.Join(dir, "play")
	if code, out, errOut := cli(t, "", "export", db, "--run", "1", "--ansible", play, "--shell", filepath.Join(dir, "fix.sh")); code != 0 {
		t.Fatalf("export: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, id := range scapFixed {
		if _, err := os.Stat(filepath.Join(play, "tasks", id+".yml")); err != nil {
			t.Errorf("no task file for %s: %v", id, err)
		}
	}
	ansible := func(tg *debtarget.Target, extra ...string) string {
		t.Helper()
		hosts := filepath.Join(dir, "inventory.ini")
		line := fmt.Sprintf("target ansible_host=%s ansible_port=%d ansible_user=%s ansible_ssh_private_key_file=%s ansible_become=false "+
			"ansible_ssh_common_args='-o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes'\n",
			tg.Host, tg.Port, tg.User, tg.IdentityFile, tg.KnownHostsFile)
		if err := os.WriteFile(hosts, []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(ctx, playbook, append([]string{"-i", hosts, filepath.Join(play, "site.yml")}, extra...)...)
		cmd.Env = append(os.Environ(), "ANSIBLE_HOME="+t.TempDir(), "ANSIBLE_LOCAL_TEMP="+t.TempDir(), "ANSIBLE_NOCOLOR=1",
			"ANSIBLE_HOST_KEY_CHECKING=True", "ANSIBLE_RETRY_FILES_ENABLED=False")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("ansible-playbook %v: %v\n%s", extra, err, out)
		}
		return string(out)
	}
	t.Logf("%s", ansible(tg, "--syntax-check"))

	fresh, fc := startDebian(t, debtarget.Options{})
	for id, res := range evaluate(t, fc, scapProfile, scapFixed) {
		if res.Status != nightshift.CheckFail {
			t.Fatalf("%s on the fresh target before the playbook: %s, want fail", id, res.Status)
		}
	}
	first := ansible(fresh)
	if n := recap(t, first, "changed"); n == 0 {
		t.Fatalf("the first application changed nothing:\n%s", first)
	}
	for id, res := range evaluate(t, fc, scapProfile, scapFixed) {
		if res.Status != nightshift.CheckPass {
			t.Errorf("%s after the playbook: %s (%s)\n%s", id, res.Status, res.Detail, res.Output)
		}
	}
	second := ansible(fresh)
	if n := recap(t, second, "changed"); n != 0 {
		t.Errorf("the second application changed %d task(s), want none:\n%s", n, second)
	}
	if n := recap(t, second, "failed"); n != 0 {
		t.Errorf("the second application failed %d task(s):\n%s", n, second)
	}
}

// recap reads a count of the PLAY RECAP line.
func recap(t *testing.T, out, what string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^target\s+:.*\b` + what + `=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %s= in the play recap:\n%s", what, out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
