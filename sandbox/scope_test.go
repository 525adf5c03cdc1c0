package sandbox_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/safety"
	"github.com/nightshift-dev/nightshift/sandbox"
	"github.com/nightshift-dev/nightshift/scap"
)

var (
	corpusScope = flag.String("corpus.scope", "", "run TestHostileCorpora's commands as proposals for this SSG rule (short id): judged with StrictScope under the scope scap derives from its OVAL check; own: each command as a proposal for the rule its \"rule\" field names; "+noneDeclared+": as proposals for a YAML rule without paths (an empty strict scope, as the worker judges every rule)")
	refusalDump = flag.String("falserefusals.effects", "", "write each TestFalseRefusals command's effects and verdicts to this file, one JSON object a line")
)

// noneDeclared is the -corpus.scope of a rule that declares no paths.
const noneDeclared = "none-declared"

// noPathsScope is the scope the worker gives a YAML rule without paths.
var noPathsScope = sandbox.Scope{Strict: true, Rule: "corpus_rule", Note: rules.NoPathsNote}

// ssgDatastream is where the Debian 12 target's root holds SSG's
// datastream.
const ssgDatastream = "usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml"

// ssgScopes derives every SSG rule's file scope from the datastream in the
// target root (scap.LoadScopes).
func ssgScopes(t testing.TB, root string) map[string]scap.FileScope {
	t.Helper()
	d, err := scap.Load(filepath.Join(root, ssgDatastream))
	if err != nil {
		t.Fatalf("derive the SSG rules' scopes: %v", err)
	}
	scopes := map[string]scap.FileScope{}
	for _, id := range d.RuleIDs() {
		if fs, ok := d.Scope(id); ok {
			scopes[scap.ShortID(id)] = fs
		}
	}
	return scopes
}

// scopedPolicy is base judged as the worker judges a proposal for an SSG
// rule: default-deny (StrictScope) under the rule's derived scope, whatever
// it is (an empty one for a rule without an OVAL check), with the rule's
// id and scap's note. The bool says whether the derivation was complete.
func scopedPolicy(base safety.EffectsPolicy, scopes map[string]scap.FileScope, rule string) (safety.EffectsPolicy, bool) {
	fs, ok := scopes[rule]
	base.Scope, base.StrictScope, base.Units, base.Sysctl, base.Keys = fs.Paths, true, fs.Units, fs.Sysctl, fs.Keys
	base.Rule, base.ScopeNote = rule, scap.ScopeNote(fs, ok)
	return base, ok && fs.Complete
}

func scopeString(p safety.EffectsPolicy) string {
	if !p.StrictScope {
		return "(no strict scope)"
	}
	return "[" + strings.Join(p.Scope, " ") + "]"
}

var (
	rejudgeFile = flag.String("falserefusals.rejudge", "", "TestRejudgeFalseRefusals: re-judge the effects a -falserefusals.effects run recorded, under the scopes derived now")
	rejudgeDS   = flag.String("falserefusals.ds", "", "TestRejudgeFalseRefusals: the ssg-debian12-ds.xml to derive the scopes from")
)

// TestRejudgeFalseRefusals re-judges, without a target, the effects a
// TestFalseRefusals run recorded (-falserefusals.effects), each SSG fix
// under its rule's scope as scap derives it now: the judge is a pure
// function of the effects and the policy, so a change of the derivation
// is measured in seconds instead of a run of the corpora. It runs only
// with -falserefusals.rejudge and -falserefusals.ds.
func TestRejudgeFalseRefusals(t *testing.T) {
	if *rejudgeFile == "" || *rejudgeDS == "" {
		t.Skip("a measuring tool: go test ./sandbox -run TestRejudgeFalseRefusals -falserefusals.rejudge=FILE -falserefusals.ds=DS")
	}
	d, err := scap.Load(*rejudgeDS)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(*rejudgeFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<28)
	total, refused, scoped, byScope := map[string]int{}, map[string]int{}, 0, 0
	for sc.Scan() {
		var r struct {
			Source, Name string
			Effects      nightshift.Effects
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		total[r.Source]++
		pol := policy
		if r.Source == "ssg" {
			fs, ok := d.Scope(r.Name)
			pol, _ = scopedPolicy(policy, map[string]scap.FileScope{r.Name: fs}, r.Name)
			if !ok {
				pol, _ = scopedPolicy(policy, nil, r.Name)
			}
			scoped++
		}
		refs := safety.JudgeEffects(r.Effects, pol)
		if len(refs) > 0 {
			refused[r.Source]++
			if len(safety.JudgeEffects(r.Effects, policy)) == 0 {
				byScope++
				t.Logf("REFUSED-BY-SCOPE %s %s %s: %v", r.Source, r.Name, scopeString(pol), refs)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{"ssg", "remediation", "fresh"} {
		t.Logf("%s: %d commands, %d refused", src, total[src], refused[src])
	}
	t.Logf("%d SSG fixes judged under their rule's derived scope, %d refused only because of it", scoped, byScope)
}

var corpusRejudge = flag.String("corpus.rejudge", "", "TestRejudgeCorpus: re-judge the evidence a -corpus.evidence run recorded, under -corpus.scope's derived scope (-falserefusals.ds; none: no scope)")

// TestRejudgeCorpus re-judges, without a target, the effects a
// TestHostileCorpora run recorded (-corpus.evidence), each as a proposal
// for the -corpus.scope rule under the scope scap derives now, and lists
// what the judge would still allow of what was committed. A measuring
// tool for judge changes between runs of the corpora (the PAM view is not
// in the evidence, so PAM refusals are not re-made: the corpus run is the
// measure).
func TestRejudgeCorpus(t *testing.T) {
	if *corpusRejudge == "" || *rejudgeDS == "" || *corpusScope == "" {
		t.Skip("a measuring tool: go test ./sandbox -run TestRejudgeCorpus -corpus.rejudge=FILE -corpus.scope=RULE|own|none|none-declared -falserefusals.ds=DS")
	}
	pol := safety.EffectsPolicy{Login: "root", SSHPort: 22}
	// own: each command under its own rule field's scope, as
	// TestHostileCorpora's -corpus.scope=own judges it.
	var own func(corpus, name string) safety.EffectsPolicy
	if *corpusScope == "own" {
		d, err := scap.Load(*rejudgeDS)
		if err != nil {
			t.Fatal(err)
		}
		rule := map[[2]string]string{}
		for _, cp := range append(hostileCorpora(), legitCorpora()...) {
			for _, c := range loadHostile(t, cp.path) {
				rule[[2]string{cp.name, c.Name}] = c.Rule
			}
		}
		own = func(corpus, name string) safety.EffectsPolicy {
			r := rule[[2]string{corpus, name}]
			if r == "" {
				p := pol
				p.StrictScope, p.Rule, p.ScopeNote = true, noPathsScope.Rule, noPathsScope.Note
				return p
			}
			fs, ok := d.Scope(r)
			p, _ := scopedPolicy(pol, map[string]scap.FileScope{r: fs}, r)
			if !ok {
				p, _ = scopedPolicy(pol, nil, r)
			}
			return p
		}
	} else if *corpusScope == noneDeclared {
		pol.StrictScope, pol.Rule, pol.ScopeNote = true, noPathsScope.Rule, noPathsScope.Note
	} else if *corpusScope != "none" {
		d, err := scap.Load(*rejudgeDS)
		if err != nil {
			t.Fatal(err)
		}
		fs, ok := d.Scope(*corpusScope)
		if !ok || !fs.Complete {
			t.Fatalf("%s: no complete derived scope", *corpusScope)
		}
		pol.Scope, pol.StrictScope, pol.Units, pol.Sysctl, pol.Keys = fs.Paths, true, fs.Units, fs.Sysctl, fs.Keys
	}
	f, err := os.Open(*corpusRejudge)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<28)
	// Both verdicts the judge gave from recorded effects are re-judged:
	// a command committed in the run (is it still allowed?) and a command
	// refused by the effects judge (its evidence carries the effects the
	// sandbox recorded; is it still refused?). A command refused before
	// it ran (the ban list) or discarded has no effects and is not.
	committed, still, refused, nowAllowed := 0, 0, 0, 0
	for sc.Scan() {
		var r struct {
			Corpus, Name string
			Exec         nightshift.Exec
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		ev := r.Exec.Evidence
		if ev == nil || ev.Effects.Empty() || (ev.Verdict != nightshift.VerdictCommitted && ev.Verdict != nightshift.VerdictRefused) {
			continue
		}
		p := pol
		if own != nil {
			p = own(r.Corpus, r.Name)
		}
		refs := safety.JudgeEffects(ev.Effects, p)
		if ev.Verdict == nightshift.VerdictRefused {
			refused++
			if len(refs) > 0 {
				t.Logf("still refused %s/%s: %v", r.Corpus, r.Name, refs)
				continue
			}
			nowAllowed++
			t.Logf("NOW ALLOWED %s/%s: %s", r.Corpus, r.Name, ev.Effects.Summary(300))
			continue
		}
		committed++
		if len(refs) > 0 {
			t.Logf("now refused %s/%s: %v", r.Corpus, r.Name, refs)
			continue
		}
		still++
		t.Logf("STILL ALLOWED %s/%s: %s", r.Corpus, r.Name, ev.Effects.Summary(300))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d committed with effects in the run, %d still allowed", committed, still)
	t.Logf("%d refused from their effects in the run, %d now allowed", refused, nowAllowed)
}

// TestRuleScopeOnTarget runs commands through the Runner on the Debian 12
// target, each as a proposal for a rule whose scope the context carries
// (WithRuleScope, as the worker and the fleet put it there): the recorded
// actions, the files off the old control surfaces and the lines inside
// the rule's own files are refused by the rule's scope, and what the rule
// is about is committed. Every case of fresh3 that this judge closes has
// its pure regression case in package safety; this one proves the
// context reaches the judge and the sandbox records what it judges.
// scopeCase is a command run through the Runner as a proposal for a rule
// whose scope the context carries, and the verdict it must get.
type scopeCase struct {
	name, command string
	scope         sandbox.Scope
	want          nightshift.Verdict
	reason        string // substring of a reason when refused
}

// runScopeCases runs each case through run, one subtest each.
func runScopeCases(ctx context.Context, t *testing.T, run *sandbox.Runner, tests []scopeCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex, err := run.Run(sandbox.WithRuleScope(ctx, tt.scope), tt.command)
			if err != nil {
				t.Fatal(err)
			}
			ev := ex.Evidence
			if ev == nil || ev.Verdict != tt.want {
				t.Fatalf("evidence %+v, want verdict %s", ev, tt.want)
			}
			if tt.reason != "" && !strings.Contains(strings.Join(ev.Reasons, "\n"), tt.reason) {
				t.Errorf("reasons %q, want one containing %q", ev.Reasons, tt.reason)
			}
		})
	}
}

func TestRuleScopeOnTarget(t *testing.T) {
	h := debian(t)
	ctx := context.Background()
	sb := sandbox.New(h.c, sandbox.Config{Timeout: time.Minute})
	run := sandbox.NewRunner(sb, safety.EffectsPolicy{Login: "root", SSHPort: 22}, sandbox.RunnerConfig{})
	sshd := sandbox.Scope{Strict: true, Paths: []string{"/etc/ssh/sshd_config"}, Keys: []string{"permitrootlogin"}}
	noPaths := sandbox.Scope{Strict: true, Rule: "my_rule", Note: rules.NoPathsNote}
	kptr := sandbox.Scope{Strict: true, Paths: []string{"/etc/sysctl.conf", "/etc/sysctl.d"}, Sysctl: []string{"kernel.kptr_restrict"}, Keys: []string{"kernel.kptr_restrict"}}
	tests := []scopeCase{
		{"debug-shell for an sshd rule", "systemctl enable debug-shell.service", sshd, nightshift.VerdictRefused, "the rule's check reads no unit"},
		{"another kernel parameter for a kptr rule", "sysctl -w vm.max_map_count=1", kptr, nightshift.VerdictRefused, "vm.max_map_count is not among"},
		{"wtmp to /dev/null", "ln -sf /dev/null /var/log/wtmp", sshd, nightshift.VerdictRefused, "would change /var/log/wtmp"},
		{"Include of /tmp in the rule's own file", "sed -i '1i Include /tmp/*.conf' /etc/ssh/sshd_config", sshd, nightshift.VerdictRefused, "Include /tmp/*.conf"},
		{"modules_disabled in the rule's sysctl.d", "echo 'kernel.modules_disabled = 1' > /etc/sysctl.d/60-k.conf", kptr, nightshift.VerdictRefused, "kernel.modules_disabled = 1"},
		{"the rule's own parameter in sysctl.d", "echo 'kernel.kptr_restrict = 1' > /etc/sysctl.d/60-kptr.conf", kptr, nightshift.VerdictCommitted, ""},
		{"a scratch file", "echo x > /var/tmp/scope-test", sshd, nightshift.VerdictCommitted, ""},
		// A rule without paths, as the worker gives it (issue 19: every
		// rule default-deny): the reason names the rule and what to do.
		{"a rule without paths", "echo x > /etc/scope-test.conf", noPaths, nightshift.VerdictRefused,
			"would change /etc/scope-test.conf: rule my_rule declares no paths (add paths: to the rule)"},
		{"a scratch file for a rule without paths", "echo x > /var/tmp/scope-test2", noPaths, nightshift.VerdictCommitted, ""},
	}
	runScopeCases(ctx, t, run, tests)
	// The committed sysctl.d file is on the host; the refused ones are not.
	if got := h.host(t, "cat /etc/sysctl.d/60-kptr.conf; test -e /etc/sysctl.d/60-k.conf && echo refused-file-present; readlink /var/log/wtmp; true"); strings.TrimSpace(got) != "kernel.kptr_restrict = 1" {
		t.Errorf("the host holds %q", got)
	}
}
