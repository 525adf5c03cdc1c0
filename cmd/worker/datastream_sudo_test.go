package main

import (
	"encoding/json"
	"fmt"
	stdhtml "html"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/debtarget"

	"github.com/nightshift-dev/nightshift"
)

// scapSudoCompliant: on a fleet whose worker logs in as a user with sudo,
// sudo is installed (with Debian's "Defaults env_reset") before any
// attempt: both rules are reported compliant, not fixed.
var scapSudoCompliant = []string{"package_sudo_installed", "sudo_add_env_reset"}

// scapSudoExtra are rules of anssi_bp28_high that fail on the fresh root
// and that only the sudo variant fixes, so it fixes 11 or more rules with
// package_sudo_installed compliant.
var scapSudoExtra = []string{"accounts_umask_etc_bashrc", "set_password_hashing_algorithm_logindefs"}

// TestSCAPDatastreamSudoLogin runs the SSG end-to-end rules as a hardened
// fleet does: the worker logs in as debtarget.LoginUser, an unprivileged
// user, and becomes root with sudo (`worker --sudo`; in the inventory,
// ansible_become=true), so the sandbox runs under sudo and the lockout net
// judges for that login. sshd_disable_root_login, which the root-login
// variant (TestSCAPDatastreamEndToEnd) must end needs_access_change, is
// then fixed like the others: `PermitRootLogin no` does not lock out a
// login that is not root. A `worker --sudo` run fixes the standard
// profile's two rules; a `worker run` batch from an Ansible INI inventory
// fixes the anssi_bp28_high rules, sshd_disable_root_login among them,
// and its JSON and HTML reports carry each committed diff.
func TestSCAPDatastreamSudoLogin(t *testing.T) {
	t.Parallel() // its own Debian target and model server
	start := time.Now()
	tg, c := startDebian(t, debtarget.Options{SudoLogin: true})
	var fixed []string
	for _, id := range scapFixed {
		if !slices.Contains(scapSudoCompliant, id) {
			fixed = append(fixed, id)
		}
	}
	fixed = append(append(fixed, scapLockout), scapSudoExtra...)
	fixes := ssgFixes(t, c,
		scapRules{profile: scapProfile, ids: fixed, before: nightshift.CheckFail, fix: true},
		scapRules{profile: scapProfile, ids: scapSudoCompliant, before: nightshift.CheckPass},
		scapRules{profile: scapBatchProfile, ids: scapBatch, before: nightshift.CheckFail, fix: true})
	setup := time.Since(start)
	srv, url := scapModel(t, fixes, 3)
	common := []string{"--datastream", debtarget.DatastreamPath, "--known-hosts", tg.KnownHostsFile,
		"--base-url", url, "--max-attempts", "6"}

	// worker --sudo: the standard profile's two rules.
	args := append([]string{"--sudo", "--profile", "standard", "--host", fmt.Sprintf("%s@%s", tg.Login, tg.Addr),
		"--identity", tg.IdentityFile, "--json"}, common...)
	for _, id := range scapBatch {
		args = append(args, "--rule", id)
	}
	singleStart := time.Now()
	code, out, errOut := cli(t, "", args...)
	singleTime := time.Since(singleStart)
	if code != exitOK {
		t.Fatalf("worker --sudo: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	sum := summary(t, out)
	for _, id := range scapBatch {
		if r := sum[id]; r.Status != "fixed" || r.Attempts != 3 {
			t.Errorf("worker --sudo: %s: %+v; want fixed at attempt 3", id, r)
		}
	}
	if !strings.Contains(out, `"verdict":"committed"`) || !strings.Contains(out, `+ClientAlive`) {
		t.Errorf("worker --sudo: no committed sandbox evidence with the ClientAlive* diff of sshd_config in the events:\n%s", out)
	}

	// worker run: the anssi_bp28_high rules from an Ansible inventory whose
	// host becomes root with sudo.
	dir := t.TempDir()
	inv := filepath.Join(dir, "hosts.ini")
	invText := fmt.Sprintf("[debian]\ndebian12 ansible_host=%s ansible_port=%d ansible_user=%s ansible_ssh_private_key_file=%s ansible_become=true\n",
		tg.Host, tg.Port, tg.Login, tg.IdentityFile)
	if err := os.WriteFile(inv, []byte(invText), 0o600); err != nil {
		t.Fatal(err)
	}
	jsonReport, htmlReport := filepath.Join(dir, "night.json"), filepath.Join(dir, "night.html")
	batchArgs := append([]string{"run", "--profile", "anssi_bp28_high", "--inventory", inv, "--journal", filepath.Join(dir, "night.db"),
		"--json-report", jsonReport, "--html", htmlReport, "--no-progress"}, common...)
	for _, id := range append(append([]string{}, fixed...), scapSudoCompliant...) {
		batchArgs = append(batchArgs, "--rule", id)
	}
	batchStart := time.Now()
	code, out, errOut = cli(t, "", batchArgs...)
	batchTime := time.Since(batchStart)
	raw, err := os.ReadFile(jsonReport)
	if err != nil {
		t.Fatalf("exit %d, no JSON report (%v)\nstdout:\n%s\nstderr:\n%s", code, err, out, errOut)
	}
	var rep struct {
		Results []struct {
			Rule, Host, Outcome, Reason string
			Attempts                    int
		}
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rep.Results {
		got[r.Rule] = fmt.Sprintf("%s/%d", r.Outcome, r.Attempts)
		if r.Rule == scapLockout && r.Outcome != "fixed" {
			t.Errorf("%s: %s (%s); want fixed: PermitRootLogin no does not lock out the %s login", r.Rule, r.Outcome, r.Reason, tg.Login)
		}
	}
	want := map[string]string{}
	for _, id := range fixed {
		want[id] = "fixed/3"
	}
	for _, id := range scapSudoCompliant {
		want[id] = "compliant/0"
	}
	if code != exitOK || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("worker run: exit %d, results\n%v\nwant exit 0 and\n%v\nstdout:\n%s\nstderr:\n%s", code, got, want, out, errOut)
	}
	// Both reports carry sshd_disable_root_login's committed diff of
	// sshd_config.
	page, err := os.ReadFile(htmlReport)
	if err != nil {
		t.Fatal(err)
	}
	// (The HTML escapes the diff's text: "+" is "&#43;" there.)
	for name, body := range map[string]string{"JSON": string(raw), "HTML": stdhtml.UnescapeString(string(page))} {
		for _, want := range []string{"+++ b/etc/ssh/sshd_config", "+PermitRootLogin no"} {
			if !strings.Contains(body, want) {
				t.Errorf("the %s report lacks %q (sshd_disable_root_login's committed diff)", name, want)
			}
		}
	}
	if !strings.Contains(string(raw), `"verdict": "committed"`) || strings.Contains(string(raw), "needs_access_change") {
		t.Errorf("the JSON report: no committed evidence, or a needs_access_change:\n%s", raw)
	}
	if !strings.Contains(string(page), `class="effects v-committed"`) {
		t.Errorf("the HTML report shows no committed effects")
	}

	for id, res := range evaluate(t, c, scapProfile, append(append([]string{}, fixed...), scapSudoCompliant...)) {
		if res.Status != nightshift.CheckPass {
			t.Errorf("%s after the runs: %s (%s)", id, res.Status, res.Detail)
		}
	}
	for id, res := range evaluate(t, c, scapBatchProfile, scapBatch) {
		if res.Status != nightshift.CheckPass {
			t.Errorf("%s after the runs: %s (%s)", id, res.Status, res.Detail)
		}
	}
	// The target's own sshd now refuses root and still takes the worker's
	// login; the worker's login through the control sshd still works.
	eff := hostRun(t, c, "sshd -T -C user=root,host=127.0.0.1,addr=127.0.0.1 | grep -i '^permitrootlogin'; sshd -T -C user="+tg.Login+",host=127.0.0.1,addr=127.0.0.1 | grep -i '^pubkeyauthentication'")
	if !strings.Contains(eff, "permitrootlogin no") || !strings.Contains(eff, "pubkeyauthentication yes") {
		t.Errorf("the target's sshd after the night: %q", eff)
	}
	if rej := srv.Stats().Rejections(); len(rej) != 0 {
		t.Errorf("%d context-length rejections", len(rej))
	}
	controlAlive(t, tg)
	t.Logf("%d rules fixed as %s with sudo (%d through worker --sudo, %d through worker run), %d compliant; target up and fixes generated in %v, worker --sudo %v, worker run %v, E2E wall time %v",
		len(fixed)+len(scapBatch), tg.Login, len(scapBatch), len(fixed), len(scapSudoCompliant), setup.Round(time.Millisecond),
		singleTime.Round(time.Millisecond), batchTime.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}
