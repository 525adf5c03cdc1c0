package sandbox_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/internal/goldenfile"
	"github.com/nightshift-dev/nightshift/internal/ssgfix"
	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/safety"
	"github.com/nightshift-dev/nightshift/sandbox"
)

// The corpora of legitimate remediation content whose effects the judge
// must allow (issue 19, "False refusals").
const (
	ssgFixesFile      = "../testdata/safety/ssg-debian12-bash-fixes.txt"
	remediationsFile  = "../testdata/safety/remediations.jsonl"
	freshFile         = "../testdata/sandbox/remediations-fresh.jsonl"
	refusedEffectsOut = "../testdata/sandbox/refused-effects.golden"
)

// corpusCase is one command of a corpus.
type corpusCase struct {
	Source  string // "ssg", "remediation", "fresh"
	Name    string
	Command string
}

func loadCorpora(t *testing.T) []corpusCase {
	t.Helper()
	script, err := os.ReadFile(ssgFixesFile)
	if err != nil {
		t.Fatal(err)
	}
	fixes, err := ssgfix.Parse(string(script))
	if err != nil {
		t.Fatalf("parse %s: %v", ssgFixesFile, err)
	}
	var out []corpusCase
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range fixes {
			if !yield(k) {
				return
			}
		}
	}) {
		out = append(out, corpusCase{"ssg", name, fixes[name]})
	}
	for _, f := range []struct{ source, path string }{{"remediation", remediationsFile}, {"fresh", freshFile}} {
		file, err := os.Open(f.path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(file)
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			var c struct{ Name, Command string }
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil || c.Name == "" || c.Command == "" {
				t.Fatalf("%s:%d: not a {name, command} object: %v", f.path, n, err)
			}
			out = append(out, corpusCase{f.source, c.Name, c.Command})
		}
		file.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// verdict is what the judge made of one command's effects on the pristine
// target.
type verdict struct {
	c        corpusCase
	exit     int
	timedOut bool
	changes  int
	actions  []string
	refusals []safety.Refusal
	policy   safety.EffectsPolicy
	// unscoped are the refusals without the rule's scope (policy).
	unscoped []safety.Refusal
	effects  nightshift.Effects
	stderr   string
	err      error // the sandbox itself failed
	took     time.Duration
}

// offlineApt makes apt on the target fail fast instead of downloading (the
// tests reach nothing but loopback): packages in the target's apt cache
// (sudo, auditd, libpam-pwquality) install, others fail to download.
const offlineApt = `printf '%s\n' 'Acquire::http::Proxy "http://127.0.0.1:9/";' 'Acquire::https::Proxy "http://127.0.0.1:9/";' 'Acquire::Retries "0";' > /etc/apt/apt.conf.d/99nightshift-offline`

// sudoLogin is the worker's login in these tests: an unprivileged account
// with passwordless sudo and its own key, as on a hardened fleet, where
// root's SSH login is what the hardening turns off (SSG's
// sshd_disable_root_login, the remediations' PermitRootLogin no). A
// worker that logs in as root gets those refused, rightly: they lock it
// out. The target's control sshd accepts only root, so the test's
// transport stays root; the judge's policy and the sandbox's view of sshd
// and PAM (sandbox.Config.Login) are the sudo login's.
const sudoLogin = "ops"

// addSudoLogin creates sudoLogin on the target (home, key, sudoers entry),
// once.
func addSudoLogin(t testing.TB, h *target) {
	t.Helper()
	h.host(t, `id `+sudoLogin+` >/dev/null 2>&1 || { useradd -m -s /bin/bash `+sudoLogin+` &&
		install -d -m 700 -o `+sudoLogin+` -g `+sudoLogin+` /home/`+sudoLogin+`/.ssh &&
		cp /etc/nightshift/authorized_keys /home/`+sudoLogin+`/.ssh/authorized_keys &&
		chown `+sudoLogin+`: /home/`+sudoLogin+`/.ssh/authorized_keys && chmod 600 /home/`+sudoLogin+`/.ssh/authorized_keys &&
		install -d -m 750 /etc/sudoers.d && echo '`+sudoLogin+` ALL=(ALL) NOPASSWD: ALL' > /etc/sudoers.d/`+sudoLogin+` && chmod 440 /etc/sudoers.d/`+sudoLogin+`; }`)
}

// policy is the worker's: the sudo login over SSH on port 22 (the port
// SSG's and CIS's firewall content is about), no declared scope. SSG's
// fixes are judged as the worker judges them: default-deny under their
// rule's scope as scap derives it from the OVAL check (scopedPolicy:
// StrictScope for every rule, an empty scope where none is derived), the
// hand-written and fresh remediations, which name no rule, without.
var policy = safety.EffectsPolicy{Login: sudoLogin, SSHPort: 22}

// rightRefusal is a command of the corpora whose refusal is right: its
// effects really cut the worker's access.
type rightRefusal struct{ source, name, entry, reason, why string }

// rightRefusals are judged for the sudo login with its key.
var rightRefusals = []rightRefusal{
	{"ssg", "sshd_disable_pubkey_auth", "lockout", "PubkeyAuthentication no", "it turns the worker's key login off"},
	{"ssg", "package_openssh-server_removed", "delete-system", "/usr/sbin/sshd", "it removes the SSH server"},
	{"ssg", "sudo_remove_nopasswd", "lockout", "sudo from " + sudoLogin, "it comments out the login's NOPASSWD grant, and the worker runs sudo -n"},
	{"ssg", "sudo_require_authentication", "lockout", "sudo from " + sudoLogin, "it comments out the login's NOPASSWD grant, and the worker runs sudo -n"},
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// TestFalseRefusals runs every command of the three corpora of legitimate
// remediation content as a model's proposal through the recording sandbox
// on the disposable Debian 12 target, each against the pristine target
// (Try, JudgeEffects, Discard: nothing reaches the host), and requires:
// SSG's Debian 12 bash fixes 2% or fewer refused, the hand-written
// remediations none, the fresh set (written before the judge was tuned)
// 2% or fewer; the refusals that are right (a fix that really locks the
// worker's sudo login out) refused for that reason; each SSG fix judged
// as the worker judges it, under its rule's derived scope (the refusals
// that scope alone brings are logged as REFUSED-BY-SCOPE); and every refusal, with
// its reason, as testdata/sandbox/refused-effects.golden lists it (-update
// rewrites it). The static pre-filter is not involved.
//
// The trials come from a recording when it is current (issue 23, fast
// tests; falserefusal_record_test.go): every command is judged, with the
// judge of this tree, from the effects a run for real recorded in
// testdata/sandbox/falserefusals-evidence.jsonl.gz, and a deterministic
// sample of about sampleTrials commands over the three corpora (and the
// right refusals) is tried for real and compared with its recording. The
// recording is current when its stamp (sha256 of the sandbox helper, the
// Go files that collect effects, the effects' types, this test's setup,
// internal/debtarget's target setup, the Debian root's tarball name and
// package versions) is this tree's and
// it holds every corpus command as it is now; otherwise every command is
// tried for real, and the log says how to record again
// (-falserefusals.record). -falserefusals.all tries every command for real
// whatever the recording. The trade: a change outside the stamp that
// changes what a trial records (sshexec, the kernel's overlayfs) is seen
// only through the sample until the next recording.
func TestFalseRefusals(t *testing.T) {
	h := debian(t)
	ctx := context.Background()
	h.host(t, offlineApt)
	addSudoLogin(t, h)
	cfg := sandbox.Config{Timeout: 3 * time.Minute, Login: sudoLogin}
	sb := sandbox.New(h.c, cfg)
	if err := sb.Probe(ctx); err != nil {
		t.Fatalf("Probe: %v", err)
	}
	// Nothing may reach the host: a manifest of each tree the corpora
	// write (every entry's mode, owner, type, link target; every file's
	// sha256), before and after.
	const manifest = `for d in /etc /usr /var/lib /root /boot /srv /home /opt; do printf '%s ' $d; find $d -xdev -printf '%p %m %u:%g %y %l\n' -type f -exec sha256sum {} + 2>/dev/null | sha256sum; done`
	before := h.host(t, manifest)
	cases := loadCorpora(t)
	scopes := ssgScopes(t, h.tg.Root)
	polOf := func(c corpusCase) safety.EffectsPolicy {
		if c.Source == "ssg" {
			pol, _ := scopedPolicy(policy, scopes, c.Name)
			return pol
		}
		return policy
	}
	// What to try for real: every command when recording, when asked, or
	// when the recording cannot stand for the trials; else the sample.
	stamp, parts := falseRefusalsStamp(t, h, fmt.Sprintf("%s\n%s\n%+v", offlineApt, sudoLogin, cfg))
	var recs map[[2]string]trialRecord
	if !*recordFalseRefusals && !*allFalseRefusals {
		var why string
		if recs, why = loadEvidence(stamp, cases); recs == nil {
			t.Logf("STALE EVIDENCE: every command is tried for real: %s; %s", why, recordHint)
		}
	}
	live := make([]int, 0, len(cases))
	if recs != nil {
		live = sampleIndices(cases, sampleTrials)
		t.Logf("the recording %s is current (stamp %s): all %d commands re-judged from it, %d of them tried for real and compared with it", falseRefusalsEvidence, stamp, len(cases), len(live))
	} else {
		for i := range cases {
			live = append(live, i)
		}
	}
	results := make([]verdict, len(cases))
	var wg sync.WaitGroup
	next := make(chan int)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = judgeOne(ctx, sb, cases[i], polOf(cases[i]))
			}
		}()
	}
	for _, i := range live {
		next <- i
	}
	close(next)
	wg.Wait()
	if after := h.host(t, manifest); after != before {
		t.Errorf("the target's trees changed although every trial was discarded:\n%s\nwas\n%s", after, before)
	}
	// The recording keeps what the judge reads: each live trial read back
	// from its JSON is judged as the trial was.
	for _, i := range live {
		if r := results[i]; r.err == nil {
			back := judgeRecord(roundTrip(t, recordOf(r)), r.c, r.policy)
			if !reflect.DeepEqual(back.refusals, r.refusals) || !reflect.DeepEqual(back.unscoped, r.unscoped) {
				t.Errorf("%s %s: judged %v from the trial, %v from its recording's JSON", r.c.Source, r.c.Name, r.refusals, back.refusals)
			}
		}
	}
	switch {
	case *recordFalseRefusals:
		out := make([]trialRecord, len(results))
		for i, r := range results {
			out[i] = recordOf(r)
		}
		writeEvidence(t, stamp, parts, out)
	case recs != nil:
		sampled := results
		results = make([]verdict, len(cases))
		for i, c := range cases {
			results[i] = judgeRecord(recs[[2]string{c.Source, c.Name}], c, polOf(c))
		}
		for _, i := range live {
			compareWithRecording(t, sampled[i], recs[[2]string{cases[i].Source, cases[i].Name}], results[i])
			results[i].took = sampled[i].took
		}
	}

	total := map[string]int{}
	refused := map[string]int{}
	right := map[string]int{}
	failed := map[string]int{}
	var golden strings.Builder
	var slowest time.Duration
	var dump *json.Encoder
	if *refusalDump != "" {
		f, err := os.Create(*refusalDump)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		dump = json.NewEncoder(f)
	}
	scoped, newByScope := 0, 0
	for _, r := range results {
		total[r.c.Source]++
		if dump != nil {
			_ = dump.Encode(map[string]any{"source": r.c.Source, "name": r.c.Name, "scope": r.policy.Scope, "strict": r.policy.StrictScope,
				"refusals": r.refusals, "unscoped": r.unscoped, "effects": r.effects, "exit": r.exit})
		}
		if r.policy.StrictScope {
			scoped++
			if len(r.refusals) > 0 && len(r.unscoped) == 0 {
				newByScope++
				t.Logf("REFUSED-BY-SCOPE %s %s %s: %v", r.c.Source, r.c.Name, scopeString(r.policy), r.refusals)
			}
		}
		slowest = max(slowest, r.took)
		if r.exit != 0 {
			failed[r.c.Source]++
			t.Logf("EXIT %d %s %s: %s", r.exit, r.c.Source, r.c.Name, lastLine(r.stderr))
		}
		if r.err != nil {
			t.Errorf("%s %s: the sandbox failed: %v", r.c.Source, r.c.Name, r.err)
			continue
		}
		if r.timedOut {
			t.Errorf("%s %s: timed out in the sandbox", r.c.Source, r.c.Name)
		}
		if len(r.refusals) == 0 {
			continue
		}
		refused[r.c.Source]++
		if slices.ContainsFunc(rightRefusals, func(w rightRefusal) bool { return w.source == r.c.Source && w.name == r.c.Name }) {
			right[r.c.Source]++
		}
		var paths []string
		for _, c := range r.effects.Changes {
			paths = append(paths, c.Change.String()+" "+c.Path)
		}
		if len(paths) > 12 {
			paths = append(paths[:12], fmt.Sprintf("… %d more", len(paths)-12))
		}
		t.Logf("REFUSED %s %s (exit %d): %v\n  changes: %s\n  actions: %s", r.c.Source, r.c.Name, r.exit, r.refusals, strings.Join(paths, "; "), strings.Join(r.actions, "; "))
		for _, rf := range r.refusals {
			fmt.Fprintf(&golden, "%s %s\tentry=%s\treason=%q\n", r.c.Source, r.c.Name, rf.Entry, rf.Reason)
		}
	}
	for _, src := range []string{"ssg", "remediation", "fresh"} {
		t.Logf("%s: %d commands, %d refused (%.1f%%), %d exited non-zero in the sandbox", src, total[src], refused[src],
			100*float64(refused[src])/float64(max(total[src], 1)), failed[src])
	}
	t.Logf("slowest trial: %s; right refusals: %v; %d judged under their rule's derived scope (StrictScope), %d refused only because of it", slowest, right, scoped, newByScope)
	if total["ssg"] != 407 {
		t.Errorf("%d SSG fixes, want the 407 of SSG 0.1.76's Debian 12 datastream", total["ssg"])
	}
	if n := refused["ssg"]; 50*n > total["ssg"] {
		t.Errorf("%d of %d SSG fixes refused, more than 2%%", n, total["ssg"])
	}
	if n := refused["remediation"] - right["remediation"]; n > 0 {
		t.Errorf("%d hand-written remediations refused besides the %d right refusals, want none", n, right["remediation"])
	}
	if n := refused["fresh"]; 50*n > total["fresh"] {
		t.Errorf("%d of %d fresh remediations refused, more than 2%%", n, total["fresh"])
	}
	// The refusals that are right must stay refused, for that reason.
	for _, want := range rightRefusals {
		ok := false
		for _, r := range results {
			if r.c.Source == want.source && r.c.Name == want.name {
				for _, rf := range r.refusals {
					ok = ok || rf.Entry == want.entry && strings.Contains(rf.Reason, want.reason)
				}
			}
		}
		if !ok {
			t.Errorf("%s %s: not refused as %s (%q), though %s", want.source, want.name, want.entry, want.reason, want.why)
		}
	}
	goldenfile.Check(t, refusedEffectsOut, []byte(golden.String()))
}

func judgeOne(ctx context.Context, sb *sandbox.Sandbox, c corpusCase, pol safety.EffectsPolicy) verdict {
	v := verdict{c: c, policy: pol}
	start := time.Now()
	defer func() { v.took = time.Since(start) }()
	tr, err := sb.Try(ctx, c.Command)
	if err != nil {
		v.err = err
		return v
	}
	v.exit, v.timedOut, v.effects, v.stderr = tr.Exec.ExitCode, tr.Exec.TimedOut, tr.Effects, tr.Exec.Stderr
	v.changes = len(tr.Effects.Changes)
	for _, a := range tr.Effects.Actions {
		v.actions = append(v.actions, a.String())
	}
	v.refusals = safety.JudgeEffects(tr.Effects, pol)
	v.unscoped = safety.JudgeEffects(tr.Effects, policy)
	if err := sb.Discard(ctx, tr); err != nil {
		v.err = err
	}
	v.took = time.Since(start)
	return v
}

// judgeRecord is judgeOne's verdict from a recorded trial (judged now,
// with the judge of this tree).
func judgeRecord(r trialRecord, c corpusCase, pol safety.EffectsPolicy) verdict {
	v := verdict{c: c, policy: pol, exit: r.Exit, timedOut: r.TimedOut, effects: r.Effects, stderr: r.Stderr}
	if r.Err != "" {
		v.err = errors.New(r.Err)
		return v
	}
	v.effects.PAM = r.PAM
	v.changes = len(v.effects.Changes)
	for _, a := range v.effects.Actions {
		v.actions = append(v.actions, a.String())
	}
	v.refusals = safety.JudgeEffects(v.effects, pol)
	v.unscoped = safety.JudgeEffects(v.effects, policy)
	return v
}

// TestCommitSequence commits a random sample of SSG's Debian 12 fixes, and
// the package installs the target can do offline, in sequence through sandbox.Runner (Try, JudgeEffects, Commit, the
// approved actions), checking after each that the host holds exactly what
// the sandbox showed, then undoes them all, last first, and checks that
// every path they changed is back as it was.
func TestCommitSequence(t *testing.T) {
	h := debian(t)
	ctx := context.Background()
	h.host(t, offlineApt)
	script, err := os.ReadFile(ssgFixesFile)
	if err != nil {
		t.Fatal(err)
	}
	fixes, err := ssgfix.Parse(string(script))
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(fixes))
	for k := range fixes {
		names = append(names, k)
	}
	sort.Strings(names)
	seed := testenv.Seed(t, uint64(time.Now().UnixNano()))
	rng := rand.New(rand.NewPCG(seed, 19))
	rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	// Thirty at random, and the package installs the target's apt cache
	// serves offline (they change hundreds of paths and run maintainer
	// scripts whose service calls are recorded), then a fix that
	// configures what one of them installed.
	sample := slices.Clone(names[:30])
	slices.Sort(sample)
	for _, n := range []string{"package_sudo_installed", "package_audit_installed", "package_pam_pwquality_installed", "audit_rules_session_events", "audit_rules_dac_modification_chmod"} {
		if fixes[n] == "" {
			t.Fatalf("no SSG fix %s", n)
		}
		if !slices.Contains(sample, n) {
			sample = append(sample, n)
		}
	}

	// The state of every path before, as the test sees it on the host.
	state := func(paths []string) map[string]string {
		var b strings.Builder
		b.WriteString("for p in")
		for _, p := range paths {
			b.WriteString(" '" + strings.ReplaceAll(p, "'", `'\''`) + "'")
		}
		b.WriteString(`; do if [ -L "$p" ]; then s="l:$(readlink -- "$p")"; elif [ -f "$p" ]; then s="$(stat -c '%a %u %g' -- "$p") $(sha256sum <"$p" | cut -c1-64)"; elif [ -d "$p" ]; then s="d $(stat -c '%a %u %g' -- "$p")"; elif [ -e "$p" ]; then s=o; else s=-; fi; printf '%s\t%s\n' "$p" "$s"; done`)
		out := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(h.host(t, b.String())), "\n") {
			p, s, _ := strings.Cut(l, "\t")
			out[p] = s
		}
		return out
	}
	addSudoLogin(t, h)
	sb := sandbox.New(h.c, sandbox.Config{Timeout: 3 * time.Minute, Login: sudoLogin})
	run := sandbox.NewRunner(sb, policy, sandbox.RunnerConfig{})
	type done struct {
		name  string
		trial string
		paths []string
		pre   map[string]string
	}
	var committed []done
	nCommitted := 0
	for _, name := range sample {
		// The pre-images as the test sees them: the paths the fix changes
		// in a dry trial of its own (discarded).
		tr, err := sb.Try(ctx, fixes[name])
		if err != nil {
			t.Fatalf("%s: Try: %v", name, err)
		}
		var paths []string
		for _, c := range tr.Effects.Changes {
			paths = append(paths, c.Path)
		}
		if err := sb.Discard(ctx, tr); err != nil {
			t.Fatal(err)
		}
		pre := map[string]string{}
		if len(paths) > 0 {
			pre = state(paths)
		}
		ex, err := run.Run(ctx, fixes[name])
		if err != nil {
			t.Fatalf("%s: Run: %v", name, err)
		}
		ev := ex.Evidence
		if ev == nil {
			t.Fatalf("%s: no evidence", name)
		}
		switch ev.Verdict {
		case nightshift.VerdictCommitted:
			nCommitted++
		case nightshift.VerdictRefused:
			t.Logf("%s: refused: %v", name, ev.Reasons)
			continue
		default:
			// Conflict, discarded, rolled back or none: the commit path
			// failed for a fix judged alone on a quiet target.
			t.Errorf("%s: verdict %s: %v", name, ev.Verdict, ev.Reasons)
			continue
		}
		var got []string
		for _, c := range ev.Effects.Changes {
			got = append(got, c.Path)
		}
		if !slices.Equal(got, paths) {
			t.Errorf("%s: the committed run changed %v, the dry run %v", name, got, paths)
		}
		if len(got) == 0 {
			t.Logf("%s: committed, changing nothing (exit %d), %d actions", name, ex.ExitCode, len(ev.Effects.Actions))
			continue
		}
		// The host holds what the sandbox showed.
		now := state(got)
		for _, c := range ev.Effects.Changes {
			s := now[c.Path]
			switch {
			case c.Change == nightshift.ChangeDeleted:
				if s != "-" {
					t.Errorf("%s: %s deleted in the sandbox, on the host %q", name, c.Path, s)
				}
			case c.After.Kind == nightshift.FileRegular:
				want := fmt.Sprintf("%o %d %d %s", c.After.Mode, c.After.UID, c.After.GID, c.After.SHA256)
				if s != want {
					t.Errorf("%s: %s on the host is %q, the sandbox showed %q", name, c.Path, s, want)
				}
			case c.After.Kind == nightshift.FileSymlink:
				if s != "l:"+c.After.Target {
					t.Errorf("%s: %s on the host is %q, the sandbox showed a link to %s", name, c.Path, s, c.After.Target)
				}
			}
		}
		committed = append(committed, done{name, ev.Trial, got, pre})
		t.Logf("%s: committed %d changes, %d actions", name, len(got), len(ev.Effects.Actions))
	}
	if nCommitted < len(sample)*9/10 || len(committed) == 0 {
		t.Errorf("only %d of %d sampled fixes committed, %d of them changing files", nCommitted, len(sample), len(committed))
	}
	for i := len(committed) - 1; i >= 0; i-- {
		d := committed[i]
		if d.trial == "" {
			continue
		}
		if err := sb.Undo(ctx, d.trial); err != nil {
			t.Fatalf("undo %s (%s): %v", d.name, d.trial, err)
		}
		now := state(d.paths)
		for _, p := range d.paths {
			if now[p] != d.pre[p] {
				t.Errorf("undo %s: %s is %q, was %q", d.name, p, now[p], d.pre[p])
			}
		}
	}
}
