package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/debtarget"
	"github.com/nightshift-dev/nightshift/internal/ssgfix"
	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/scap"
	"github.com/nightshift-dev/nightshift/served"
	"github.com/nightshift-dev/nightshift/sshexec"
	"github.com/nightshift-dev/nightshift/vllmsim"

	"github.com/nightshift-dev/nightshift"
)

const excerptPath = "../../testdata/scap/ssg-debian12-excerpt.xml"

func TestDatastreamUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"--datastream without --profile", []string{"--datastream", "/ds.xml", "--rule", "x", "--host", "h"}, "--datastream needs --profile"},
		{"--profile without --datastream", []string{"--rules", "r.yaml", "--profile", "p", "--rule", "x", "--host", "h"}, "--profile applies only to --datastream"},
		{"both sources", []string{"--rules", "r.yaml", "--datastream", "/ds.xml", "--profile", "p", "--rule", "x", "--host", "h"}, "cannot be combined"},
		{"no --rule", []string{"--datastream", "/ds.xml", "--profile", "p", "--host", "h"}, "at least one --rule is required"},
		{"no source", []string{"--rule", "x", "--host", "h"}, "--rules is required (or --datastream with --profile)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := cli(t, "", tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 mentioning %q", code, stderr, tt.want)
			}
		})
	}
	_, stdout, _ := cli(t, "", "--datastream", "x", "--help")
	if !strings.Contains(stdout, "--datastream PATH") || !strings.Contains(stdout, "--profile ID") || !strings.Contains(stdout, "never as\nfixed") {
		t.Errorf("help lacks --datastream, --profile or the notapplicable note:\n%s", stdout)
	}
}

// localHost runs the commands datastreamRules sends to a host (wc, tail,
// head: fixed, read-only commands, never a model's) with this machine's
// sh, in dir, and counts them; fail makes the n-th command's connection
// fail.
type localHost struct {
	dir      string
	commands []string
	fail     int
	mutate   func(n int)
}

func (h *localHost) Run(ctx context.Context, command string) (nightshift.Exec, error) {
	h.commands = append(h.commands, command)
	if h.mutate != nil {
		h.mutate(len(h.commands))
	}
	if len(h.commands) == h.fail {
		return nightshift.Exec{ExitCode: -1}, &sshexec.OpError{Host: "h", Op: sshexec.OpSession, Err: nightshift.ErrOutcomeUnknown}
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = h.dir
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := nightshift.Exec{Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	case err != nil:
		return res, err
	}
	return res, nil
}

// TestDatastreamRules reads the SSG excerpt as the CLI reads a datastream
// on a host — in chunks through the SSH connection — padded past several
// chunks, and checks the rules it builds and every way it can fail.
func TestDatastreamRules(t *testing.T) {
	src, err := os.ReadFile(excerptPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// A trailing comment makes the file span three chunks; the datastream
	// is the same.
	big := append(append([]byte{}, src...), []byte("\n<!-- "+strings.Repeat("padding ", 2*hostChunk/8)+" -->\n")...)
	files := map[string][]byte{"ds.xml": big, "with space's.xml": src, "not-xml.xml": []byte("hello"), "empty.xml": nil}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name        string
		path        string
		profile     string
		ids         []string
		fail        int
		mutate      bool
		wantIDs     []string
		wantErr     string
		wantUsage   bool
		wantCommand int
	}{
		{"three chunks", "ds.xml", "anssi_bp28_high", []string{"accounts_tmout", "xccdf_org.ssgproject.content_rule_sshd_disable_root_login"}, 0, false,
			[]string{"accounts_tmout", "sshd_disable_root_login"}, "", false, 4},
		{"quoted path", "with space's.xml", "xccdf_org.ssgproject.content_profile_standard", []string{"sshd_set_keepalive"}, 0, false,
			[]string{"sshd_set_keepalive"}, "", false, 2},
		{"missing file", "nope.xml", "standard", []string{"a"}, 0, false, nil, "read nope.xml on the host: exit", true, 1},
		{"not a datastream", "not-xml.xml", "standard", []string{"a"}, 0, false, nil, "h:not-xml.xml", true, 2},
		{"empty file", "empty.xml", "standard", []string{"a"}, 0, false, nil, "invalid scap datastream", true, 1},
		{"unknown profile", "with space's.xml", "nosuch", []string{"accounts_tmout"}, 0, false, nil, "(it has anssi_bp28_high, standard)", true, 2},
		{"unknown rule", "with space's.xml", "standard", []string{"nosuchrule"}, 0, false, nil, `unknown xccdf rule "nosuchrule"`, true, 2},
		{"connection lost", "ds.xml", "standard", []string{"a"}, 2, false, nil, "outcome unknown", false, 2},
		{"file shrinks while read", "ds.xml", "standard", []string{"a"}, 0, true, nil, "the file changed while read", true, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &localHost{dir: dir, fail: tt.fail}
			if tt.mutate {
				shrink := filepath.Join(dir, "shrink.xml")
				if err := os.WriteFile(shrink, big, 0o644); err != nil {
					t.Fatal(err)
				}
				tt.path = "shrink.xml"
				h.mutate = func(n int) {
					if n == 3 {
						os.Truncate(shrink, int64(hostChunk)+10)
					}
				}
			}
			rs, err := datastreamRules(context.Background(), h, "h", tt.path, tt.profile, tt.ids)
			if len(h.commands) != tt.wantCommand {
				t.Errorf("%d commands, want %d: %q", len(h.commands), tt.wantCommand, h.commands)
			}
			if tt.wantErr != "" {
				var ue *usageError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || errors.As(err, &ue) != tt.wantUsage {
					t.Fatalf("err = %v (%T); want one naming %q, usage error %v", err, err, tt.wantErr, tt.wantUsage)
				}
				if !tt.wantUsage && exitCode(err, &strings.Builder{}) != exitUnreachable {
					t.Errorf("a lost connection exits %d, want 3", exitCode(err, &strings.Builder{}))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rs {
				got = append(got, r.ID)
				c, ok := r.Check.(scap.Check)
				if !ok || c.Datastream != tt.path || !strings.HasPrefix(c.Profile, "xccdf_org.ssgproject.content_profile_") {
					t.Errorf("%s: check %#v; want oscap against %s with the full profile id", r.ID, r.Check, tt.path)
				}
				if r.Title == "" || r.Description == "" {
					t.Errorf("%s: no title or description", r.ID)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.wantIDs, ",") {
				t.Errorf("rules %q, want %q", got, tt.wantIDs)
			}
		})
	}
	if _, err := readHostFile(context.Background(), &localHost{dir: dir}, "ds.xml", 1000); !errors.Is(err, scap.ErrTooLarge) {
		t.Errorf("a file over the limit: %v; want ErrTooLarge", err)
	}
}

// The SSG end-to-end tests run `worker --datastream … --profile …` against
// a disposable Debian 12 root (internal/debtarget) with trixie's SSG 0.1.76
// datastream and bookworm's OpenSCAP 1.3.7: every check is a real `oscap
// xccdf eval` on the target and every fix really changes its /etc. Commands
// the simulator proposes run only there.

const scapProfile = "xccdf_org.ssgproject.content_profile_anssi_bp28_high"

// scapFixed are the eight rules of the verified list that
// anssi_bp28_high selects and that fail on the fresh root (`generate fix`
// emits fixes only for the profile's failing rules), plus
// package_pam_pwquality_installed: accounts_password_pam_minlen's check
// needs pam_pwquality. sudo_add_env_reset, the ninth, comes after
// package_sudo_installed: Debian's sudoers has "Defaults env_reset", so
// installing sudo makes it compliant before any attempt, and it must be
// reported compliant, not fixed.
// scapLockout's official fix (PermitRootLogin no) would lock out the
// worker's own root login at sshd's next restart: the sandbox's judge
// refuses it every time and the rule ends needs_access_change. With a
// non-root login that becomes root with sudo, as a hardened fleet's worker
// logs in, the same fix is applied and the rule fixed
// (TestSCAPDatastreamSudoLogin).
const scapLockout = "sshd_disable_root_login"

var scapFixed = []string{
	"file_permissions_sshd_config",
	"accounts_tmout",
	"accounts_umask_etc_login_defs",
	"package_pam_pwquality_installed",
	"accounts_password_pam_minlen",
	"no_direct_root_logins",
	"package_sudo_installed",
	"package_audit_installed",
}

// scapBatch are the two rules of the verified list that the standard
// profile selects and anssi_bp28_high does not (idle_timeout needs the
// keepalive): the `worker run --datastream … --profile standard` batch
// fixes them after the single-host run.
var scapBatch = []string{"sshd_set_keepalive", "sshd_set_idle_timeout"}

const scapBatchProfile = "xccdf_org.ssgproject.content_profile_standard"

// startDebian starts the target; the client is the test's own root
// control login (checks, fixes generated, the test's own changes).
func startDebian(t *testing.T, opts debtarget.Options) (*debtarget.Target, *sshexec.Client) {
	t.Helper()
	testenv.NeedRoot(t, "the disposable Debian target (namespaces, chroot)")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	// Sandbox: the target keeps the capabilities a host's root has, so the
	// CLI's default --sandbox required runs every command there first.
	opts.Sandbox = true
	tg, err := debtarget.Start(ctx, opts)
	if err != nil {
		t.Fatalf("start the Debian 12 target (the root is built once and cached): %v", err)
	}
	t.Cleanup(func() {
		if err := tg.Close(); err != nil {
			t.Errorf("tear down the Debian target: %v", err)
		}
	})
	cfg := tg.SSHConfig()
	cfg.CommandTimeout = 3 * time.Minute
	c, err := sshexec.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return tg, c
}

// scapRules are rules of one profile as a SCAP end-to-end test starts
// from them: the status OpenSCAP must report for each on the fresh target
// and whether the night needs SSG's fix for them.
type scapRules struct {
	profile string
	ids     []string
	before  nightshift.CheckStatus // CheckNotRun: not checked
	fix     bool
}

// ssgFixes checks each group's rules on the fresh target (one oscap run a
// group) and returns SSG's own fix text (`oscap xccdf generate fix`) for
// every rule of the groups with fix set; a rule not as its group says, or
// without a fix, ends the test.
func ssgFixes(t *testing.T, c *sshexec.Client, groups ...scapRules) map[string]string {
	t.Helper()
	fixes := map[string]string{}
	for _, g := range groups {
		if g.before != nightshift.CheckNotRun {
			for id, res := range evaluate(t, c, g.profile, g.ids) {
				if res.Status != g.before {
					t.Fatalf("%s before any fix: %s (%s), want %s:\n%s", id, res.Status, res.Detail, g.before, res.Output)
				}
			}
		}
		if !g.fix {
			continue
		}
		got, err := ssgfix.Generate(context.Background(), c, debtarget.DatastreamPath, g.profile, g.ids)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range g.ids {
			if got[id] == "" {
				t.Fatalf("no official fix for %s: %q", id, got)
			}
			fixes[id] = got[id]
		}
	}
	return fixes
}

// scapModel starts the vLLM simulator whose eventual policy answers each
// rule with SSG's fix at attempt fixAt (a wrong command before), and
// returns it with its base URL (…/v1); the test's end stops it.
func scapModel(t *testing.T, fixes map[string]string, fixAt int) (*vllmsim.Server, string) {
	t.Helper()
	m, err := served.Offline(served.Config{Tokenizer: "qwen3"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := vllmsim.New(vllmsim.Config{Counter: vllmsim.NewModelCounter(m), Policy: vllmsim.Eventual(vllmsim.EventualConfig{FixAt: fixAt, Fixes: fixes})})
	if err != nil {
		t.Fatal(err)
	}
	url, stop, err := srv.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return srv, url + "/v1"
}

// evaluate checks the rules of profile with one oscap run on the target.
func evaluate(t *testing.T, c *sshexec.Client, profile string, ids []string) map[string]rules.CheckResult {
	t.Helper()
	checks := make([]scap.Check, len(ids))
	for i, id := range ids {
		checks[i] = scap.Check{Datastream: debtarget.DatastreamPath, Profile: profile, Rule: "xccdf_org.ssgproject.content_rule_" + id}
	}
	res, err := scap.EvaluateMany(context.Background(), c, checks)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]rules.CheckResult{}
	for i, id := range ids {
		out[id] = res[i]
	}
	return out
}

type summaryRule struct {
	Rule              string `json:"rule"`
	Status            string `json:"status"`
	Attempts          int    `json:"attempts"`
	ContextRejections int    `json:"context_rejections"`
	Reason            string `json:"reason"`
}

// summary reads the --json summary line.
func summary(t *testing.T, out string) map[string]summaryRule {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var s struct {
		Event string        `json:"event"`
		Rules []summaryRule `json:"rules"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &s); err != nil || s.Event != "summary" {
		t.Fatalf("last line is not the summary (%v):\n%s", err, out)
	}
	m := map[string]summaryRule{}
	for _, r := range s.Rules {
		m[r.Rule] = r
	}
	return m
}

// TestSCAPDatastreamEndToEnd: one `worker --datastream … --profile …` run
// over ten SSG rules, then a `worker run --datastream … --profile standard`
// batch over two more with an inventory whose first host is down. The
// simulator's eventual policy has learnt SSG's own fix text for each (from
// `oscap xccdf generate fix` on the target) and applies it after two wrong
// tries: OpenSCAP reports every rule fail before and pass after, the first
// run exits 0, the batch reports both rules fixed on the target and
// unreachable on the down host, and the control sshd survives the
// sshd_config remediations. A last run on rules OpenSCAP reports
// notapplicable and notchecked calls no model and exits 1, naming them as
// such.
func TestSCAPDatastreamEndToEnd(t *testing.T) {
	t.Parallel() // its own Debian target and model server
	start := time.Now()
	tg, c := startDebian(t, debtarget.Options{})
	all := append(append([]string{}, scapFixed...), "sudo_add_env_reset")
	fixes := ssgFixes(t, c,
		scapRules{profile: scapProfile, ids: append(append([]string{}, all...), scapLockout), before: nightshift.CheckFail},
		scapRules{profile: scapProfile, ids: append(append([]string{}, scapFixed...), scapLockout), fix: true},
		scapRules{profile: scapBatchProfile, ids: scapBatch, before: nightshift.CheckFail, fix: true})
	setup := time.Since(start)
	srv, url := scapModel(t, fixes, 3)
	common := []string{"--datastream", debtarget.DatastreamPath, "--known-hosts", tg.KnownHostsFile,
		"--base-url", url, "--max-attempts", "6"}
	args := append([]string{"--profile", "anssi_bp28_high", "--host", fmt.Sprintf("%s@%s", tg.User, tg.Addr),
		"--identity", tg.IdentityFile, "--json"}, common...)
	runStart := time.Now()
	var ruleArgs []string
	for _, id := range append(append([]string{}, all...), scapLockout) {
		ruleArgs = append(ruleArgs, "--rule", id)
	}
	code, out, errOut := cli(t, "", append(append([]string{}, args...), ruleArgs...)...)
	singleTime := time.Since(runStart)
	if code != exitNotFixed { // scapLockout needs an access change
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	sum := summary(t, out)
	attempts := 0
	for _, id := range scapFixed {
		if r := sum[id]; r.Status != "fixed" || r.Attempts != 3 {
			t.Errorf("%s: %+v; want fixed at attempt 3", id, r)
		}
		attempts += sum[id].Attempts
	}
	if r := sum["sudo_add_env_reset"]; r.Status != "compliant" || r.Attempts != 0 {
		t.Errorf("sudo_add_env_reset: %+v; want compliant once sudo is installed, with no attempt", r)
	}
	if r := sum[scapLockout]; r.Status != "needs_access_change" || !strings.Contains(r.Reason, "PermitRootLogin no") {
		t.Errorf("%s: %+v; want needs_access_change naming PermitRootLogin no", scapLockout, r)
	}
	// Every committed fix is reported with what it changed.
	if !strings.Contains(out, `"verdict":"committed"`) || !strings.Contains(out, `"path":"/etc/ssh/sshd_config"`) {
		t.Errorf("no committed sandbox evidence with sshd_config's change in the events")
	}
	// The fix text the model sent is what ran: a fixed rule's last command
	// is SSG's fix, byte for byte.
	for _, line := range strings.Split(out, "\n") {
		var ev struct {
			Event, Rule, Command string
			Attempt              int
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Command != "" && ev.Attempt == 3 && ev.Command != fixes[ev.Rule] {
			t.Errorf("%s attempt 3 ran %q, not SSG's fix", ev.Rule, ev.Command)
		}
	}

	// The batch: the rules come from the datastream on the inventory's
	// host; one host down before it is passed over (and marked unreachable).
	dir := t.TempDir()
	inv := filepath.Join(dir, "hosts.yaml")
	invText := fmt.Sprintf("hosts:\n  - host: gone\n    address: 127.0.0.1\n    port: 1\n    identity: %[4]s\n  - host: debian12\n    address: %[1]s\n    port: %[2]d\n    user: %[3]s\n    identity: %[4]s\n",
		tg.Host, tg.Port, tg.User, tg.IdentityFile)
	if err := os.WriteFile(inv, []byte(invText), 0o600); err != nil {
		t.Fatal(err)
	}
	jsonReport := filepath.Join(dir, "night.json")
	batchArgs := append([]string{"run", "--profile", "standard", "--inventory", inv, "--journal", filepath.Join(dir, "night.db"),
		"--json-report", jsonReport, "--no-progress"}, common...)
	for _, id := range scapBatch {
		batchArgs = append(batchArgs, "--rule", id)
	}
	etcBefore := etcManifest(t, c)
	batchStart := time.Now()
	code, out, errOut = cli(t, "", batchArgs...)
	batchTime := time.Since(batchStart)
	raw, err := os.ReadFile(jsonReport)
	if err != nil {
		t.Fatalf("exit %d, no JSON report (%v)\nstdout:\n%s\nstderr:\n%s", code, err, out, errOut)
	}
	var rep struct {
		Results []struct {
			Rule, Host, Outcome string
			Attempts            int
		}
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	// The report carries each fix's effects: the committed diff of
	// sshd_config (the batch rules' ClientAlive* settings).
	if !strings.Contains(string(raw), `"verdict": "committed"`) || !strings.Contains(string(raw), `+++ b/etc/ssh/sshd_config`) ||
		!strings.Contains(string(raw), `+ClientAlive`) {
		t.Errorf("the JSON report lacks the committed sshd_config diff:\n%s", raw)
	}
	got := map[string]string{}
	for _, r := range rep.Results {
		got[r.Host+" "+r.Rule] = fmt.Sprintf("%s/%d", r.Outcome, r.Attempts)
	}
	want := map[string]string{}
	for _, id := range scapBatch {
		want["debian12 "+id] = "fixed/3"
		want["gone "+id] = "unreachable/0"
		attempts += 3
	}
	if code != exitNotFixed || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("worker run: exit %d, results\n%v\nwant exit 1 and\n%v\nstdout:\n%s\nstderr:\n%s", code, got, want, out, errOut)
	}
	for id, res := range evaluate(t, c, scapProfile, all) {
		if res.Status != nightshift.CheckPass {
			t.Errorf("%s after the runs: %s (%s)", id, res.Status, res.Detail)
		}
	}
	for id, res := range evaluate(t, c, scapBatchProfile, scapBatch) {
		if res.Status != nightshift.CheckPass {
			t.Errorf("%s after the runs: %s (%s)", id, res.Status, res.Detail)
		}
	}
	if rej := srv.Stats().Rejections(); len(rej) != 0 {
		t.Errorf("%d context-length rejections", len(rej))
	}

	// Undo: a file changed after the night stops it, naming the file, and
	// nothing is restored; once the file is back as the night left it, the
	// night's changes come out byte for byte and its rules fail again.
	night := filepath.Join(dir, "night.db")
	hostRun(t, c, "cp -p /etc/ssh/sshd_config /root/sshd_config.keep && echo '# changed after the night' >> /etc/ssh/sshd_config")
	code, out, errOut = cli(t, "", "undo", night, "--run", "1")
	if code != exitNotFixed || !strings.Contains(out, "refused") || !strings.Contains(out, "/etc/ssh/sshd_config") {
		t.Errorf("undo after a later change: exit %d, want 1 naming /etc/ssh/sshd_config\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	hostRun(t, c, "mv -f /root/sshd_config.keep /etc/ssh/sshd_config")
	code, out, errOut = cli(t, "", "undo", night, "--run", "1")
	if code != exitOK || !strings.Contains(out, "undone") {
		t.Errorf("undo: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if after := etcManifest(t, c); after != etcBefore {
		t.Errorf("undo did not restore /etc byte for byte:\n%s", lineDiff(etcBefore, after))
	}
	for id, res := range evaluate(t, c, scapBatchProfile, scapBatch) {
		if res.Status != nightshift.CheckFail {
			t.Errorf("%s after undo: %s, want fail again", id, res.Status)
		}
	}
	if code, out, _ = cli(t, "", "undo", night, "--run", "1"); code != exitOK || !strings.Contains(out, "nothing to undo") {
		t.Errorf("second undo: exit %d: %s", code, out)
	}

	// Rules OpenSCAP cannot call fixed: no model call, exit 1, each named.
	calls := len(srv.Stats().Completions())
	code, out, errOut = cli(t, "", append(args, "--rule", "grub2_password", "--rule", "security_patches_up_to_date")...)
	sum = summary(t, out)
	if code != exitNotFixed || sum["grub2_password"].Status != "notapplicable" || sum["security_patches_up_to_date"].Status != "check_error" ||
		len(srv.Stats().Completions()) != calls {
		t.Errorf("notapplicable/notchecked run: exit %d, %d model calls, summary %+v\nstderr:\n%s", code, len(srv.Stats().Completions())-calls, sum, errOut)
	}
	for _, want := range []string{"rule grub2_password: notapplicable, not fixed", "rule security_patches_up_to_date: check_error, not fixed: oscap: notchecked"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}

	controlAlive(t, tg)
	t.Logf("%d rules fixed in %d attempts, %d compliant, %d model calls, 0 rejections; target up and fixes generated in %v, worker --rule %v, worker run %v, E2E wall time %v",
		len(scapFixed)+len(scapBatch), attempts, 1, calls, setup.Round(time.Millisecond), singleTime.Round(time.Millisecond), batchTime.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// controlAlive opens a new connection to the target's control sshd as
// the worker's login.
func controlAlive(t *testing.T, tg *debtarget.Target) {
	t.Helper()
	c, err := sshexec.New(tg.LoginConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := c.Run(context.Background(), "echo alive")
	if err != nil || strings.TrimSpace(r.Stdout) != "alive" {
		t.Fatalf("control connection at the end: %q, %v", r.Stdout, err)
	}
}

// etcManifest lists /etc on the target: every entry's mode, owner, size and
// link target, and every file's sha256 (what undo must restore).
func etcManifest(t *testing.T, c *sshexec.Client) string {
	t.Helper()
	return hostRun(t, c, "cd /etc && find . -xdev -printf '%p %m %u %g %s %l\\n' | sort && find . -xdev -type f -print0 | sort -z | xargs -0 sha256sum")
}

// hostRun runs a command on the target outside the worker.
func hostRun(t *testing.T, c *sshexec.Client, cmd string) string {
	t.Helper()
	r, err := c.Run(context.Background(), cmd)
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("%s: %v (exit %d): %s", cmd, err, r.ExitCode, r.Stderr)
	}
	return r.Stdout
}

// lineDiff lists the lines only one of a and b has.
func lineDiff(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	var out []string
	for l := range ma {
		if !mb[l] {
			out = append(out, "- "+l)
		}
	}
	for l := range mb {
		if !ma[l] {
			out = append(out, "+ "+l)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
