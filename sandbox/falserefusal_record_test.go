package sandbox_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/internal/debtarget"
)

// TestFalseRefusals' recorded evidence (issue 23, "Fast tests"). Trying
// the ≈600 commands of the three corpora on the Debian 12 target is most
// of this package's test time, and what a trial records (the effects) does
// not depend on the judge: the judge is a pure function of the effects and
// the policy. So a run for real of every command is recorded in
// falseRefusalsEvidence, stamped with the sha256 of what produces the
// effects (stampFiles, the test's setup, the Debian root's tarball and
// package versions), and every other run re-judges all of them from the
// recording with the judge of the tree, and tries a deterministic sample
// (sampleTrials) for real, each compared with its recording. When the
// stamp does not match or a corpus command has no recording, every
// command is tried for real, as before, and the log says how to record
// again; nothing passes on stale evidence.
var (
	recordFalseRefusals = flag.Bool("falserefusals.record", false, "TestFalseRefusals: try every command for real and rewrite "+falseRefusalsEvidence)
	allFalseRefusals    = flag.Bool("falserefusals.all", false, "TestFalseRefusals: try every command for real even when the recording is current (nothing is written)")
)

const (
	falseRefusalsEvidence = "../testdata/sandbox/falserefusals-evidence.jsonl.gz"
	// sampleTrials is how many commands, spread over the three corpora,
	// are tried for real when the recording is current.
	sampleTrials = 40
	recordHint   = "record again (as root): go test ./sandbox -run '^TestFalseRefusals$' -falserefusals.record -count=1 -timeout 60m"
)

// stampFiles produce a trial's effects: the helper that runs on the
// target, the package's Go code that starts it and parses its report, the
// effects' types, and how the Debian target is set up (its namespaces,
// capabilities and root).
var stampFiles = []string{"helper.sh", "sandbox.go", "report.go", "commit.go", "../effects.go",
	"../internal/debtarget/debtarget.go", "../internal/debtarget/userns.go", "../internal/debtarget/rootfs.go"}

// trialRecord is one command's trial as recorded: what Try returned, the
// PAM view included (Effects does not put it in its JSON).
type trialRecord struct {
	Source string `json:"source"`
	Name   string `json:"name"`
	// Command is the sha256 of the command tried.
	Command  string              `json:"command"`
	Exit     int                 `json:"exit"`
	TimedOut bool                `json:"timed_out,omitempty"`
	Stderr   string              `json:"stderr,omitempty"` // its last line
	Effects  nightshift.Effects  `json:"effects"`
	PAM      *nightshift.PAMView `json:"pam,omitempty"`
	Err      string              `json:"err,omitempty"`
}

// evidenceHeader is the recording's first line.
type evidenceHeader struct {
	Stamp string            `json:"stamp"`
	Parts map[string]string `json:"parts"`
	Cases int               `json:"cases"`
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// falseRefusalsStamp is the sha256 over stampFiles, the trials' setup and
// the Debian root's identity (its tarball's name, which changes with what
// goes into the root, and the Package and Version lines of its dpkg
// status, which change with a rebuild from a newer Debian point release),
// with each part for the log.
func falseRefusalsStamp(t testing.TB, h *target, setup string) (string, map[string]string) {
	t.Helper()
	parts := map[string]string{"setup": sha([]byte(setup))}
	for _, f := range stampFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		parts[f] = sha(b)
	}
	tarball, err := debtarget.Tarball(t.Context(), debtarget.Options{})
	if err != nil {
		t.Fatal(err)
	}
	parts["debian-tarball"] = filepath.Base(tarball)
	status, err := os.ReadFile(filepath.Join(h.tg.Root, "var/lib/dpkg/status"))
	if err != nil {
		t.Fatal(err)
	}
	var pkgs bytes.Buffer
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "Package: ") || strings.HasPrefix(l, "Version: ") {
			pkgs.WriteString(l + "\n")
		}
	}
	parts["debian-packages"] = sha(pkgs.Bytes())
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range parts {
			if !yield(k) {
				return
			}
		}
	})
	var all strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&all, "%s %s\n", k, parts[k])
	}
	return sha([]byte(all.String())), parts
}

// loadEvidence reads the recording. It returns nil and why when it cannot
// stand for the trials: absent, another stamp, or a command of cases
// without a recording of that command (evidenceFor).
func loadEvidence(stamp string, cases []corpusCase) (map[[2]string]trialRecord, string) {
	hd, recs, err := readEvidence()
	if err != nil {
		return nil, err.Error()
	}
	return evidenceFor(hd, recs, stamp, cases)
}

// readEvidence reads the recording's header and trials.
func readEvidence() (evidenceHeader, map[[2]string]trialRecord, error) {
	var hd evidenceHeader
	raw, err := os.ReadFile(falseRefusalsEvidence)
	if err != nil {
		return hd, nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return hd, nil, fmt.Errorf("%s: %w", falseRefusalsEvidence, err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<28)
	if !sc.Scan() || json.Unmarshal(sc.Bytes(), &hd) != nil {
		return hd, nil, fmt.Errorf("%s: no header line", falseRefusalsEvidence)
	}
	recs := map[[2]string]trialRecord{}
	for n := 2; sc.Scan(); n++ {
		var r trialRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return hd, nil, fmt.Errorf("%s:%d: %w", falseRefusalsEvidence, n, err)
		}
		recs[[2]string{r.Source, r.Name}] = r
	}
	if err := sc.Err(); err != nil {
		return hd, nil, fmt.Errorf("%s: %w", falseRefusalsEvidence, err)
	}
	return hd, recs, nil
}

// evidenceFor returns recs when they stand for the trials of cases under
// stamp, else nil and why.
func evidenceFor(hd evidenceHeader, recs map[[2]string]trialRecord, stamp string, cases []corpusCase) (map[[2]string]trialRecord, string) {
	if hd.Stamp != stamp {
		return nil, fmt.Sprintf("%s was recorded with stamp %s (%v), this tree and target give %s", falseRefusalsEvidence, hd.Stamp, hd.Parts, stamp)
	}
	for _, c := range cases {
		if r, ok := recs[[2]string{c.Source, c.Name}]; !ok || r.Command != sha([]byte(c.Command)) {
			return nil, fmt.Sprintf("%s %s: not recorded, or recorded with another command", c.Source, c.Name)
		}
	}
	return recs, ""
}

// writeEvidence rewrites the recording from a run that tried every case.
func writeEvidence(t *testing.T, stamp string, parts map[string]string, recs []trialRecord) {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	enc := json.NewEncoder(zw)
	if err := enc.Encode(evidenceHeader{Stamp: stamp, Parts: parts, Cases: len(recs)}); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(falseRefusalsEvidence, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %d trials in %s (%d bytes), stamp %s", len(recs), falseRefusalsEvidence, buf.Len(), stamp)
}

// sampleIndices picks about n of cases, spread evenly over each corpus in
// proportion to its size (a fixed stride, so every run tries the same
// ones), and the commands whose refusal is right.
func sampleIndices(cases []corpusCase, n int) []int {
	bySource := map[string][]int{}
	for i, c := range cases {
		bySource[c.Source] = append(bySource[c.Source], i)
	}
	pick := map[int]bool{}
	for _, idx := range bySource {
		k := max(1, (n*len(idx)+len(cases)-1)/len(cases))
		for j := range k {
			pick[idx[j*len(idx)/k]] = true
		}
	}
	for i, c := range cases {
		if slices.ContainsFunc(rightRefusals, func(w rightRefusal) bool { return w.source == c.Source && w.name == c.Name }) {
			pick[i] = true
		}
	}
	out := make([]int, 0, len(pick))
	for i := range pick {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

// recordOf is a live trial as the recording keeps it.
func recordOf(v verdict) trialRecord {
	r := trialRecord{Source: v.c.Source, Name: v.c.Name, Command: sha([]byte(v.c.Command)), Exit: v.exit,
		TimedOut: v.timedOut, Stderr: lastLine(v.stderr), Effects: v.effects, PAM: v.effects.PAM}
	if v.err != nil {
		r.Err = v.err.Error()
	}
	return r
}

// roundTrip is r as it reads back from the recording's JSON.
func roundTrip(t testing.TB, r trialRecord) trialRecord {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var out trialRecord
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// compareWithRecording checks a sampled command's live trial against its
// recording: the same exit status, timeout, changed paths and their kinds
// of change, modes and owners, recorded actions, sshd view, shadowed
// programs and PAM modules, and the same refusals, scoped and unscoped,
// when the recording is re-judged. File contents (hashes, sizes, diffs)
// that differ are logged, not failed: some commands write the day or a
// random salt (useradd's /etc/shadow, a generated key), and the verdicts
// compared are what the recording stands for.
func compareWithRecording(t *testing.T, live verdict, rec trialRecord, rejudged verdict) {
	t.Helper()
	id := live.c.Source + " " + live.c.Name
	if live.err != nil || rec.Err != "" {
		if (live.err == nil) != (rec.Err == "") {
			t.Errorf("%s: sandbox error %v now, %q recorded (%s)", id, live.err, rec.Err, recordHint)
		}
		return
	}
	if live.exit != rec.Exit || live.timedOut != rec.TimedOut {
		t.Errorf("%s: exit %d (timed out %v) now, %d (%v) recorded (%s)", id, live.exit, live.timedOut, rec.Exit, rec.TimedOut, recordHint)
	}
	shape := func(e nightshift.Effects) []string {
		var s []string
		for _, c := range e.Changes {
			s = append(s, fmt.Sprintf("%s %s before=%v/%o/%d:%d after=%v/%o/%d:%d/%s", c.Change, c.Path,
				c.Before.Kind, c.Before.Mode, c.Before.UID, c.Before.GID, c.After.Kind, c.After.Mode, c.After.UID, c.After.GID, c.After.Target))
		}
		for _, a := range e.Actions {
			s = append(s, "action "+a.String())
		}
		return s
	}
	if got, want := shape(live.effects), shape(rec.Effects); !slices.Equal(got, want) {
		t.Errorf("%s: effects now\n  %s\nrecorded\n  %s\n(%s)", id, strings.Join(got, "\n  "), strings.Join(want, "\n  "), recordHint)
	}
	if !reflect.DeepEqual(live.effects.SSHD, rec.Effects.SSHD) || !reflect.DeepEqual(live.effects.Shadows, rec.Effects.Shadows) {
		t.Errorf("%s: sshd view or shadowed programs differ from the recording: %+v %v, recorded %+v %v (%s)", id,
			live.effects.SSHD, live.effects.Shadows, rec.Effects.SSHD, rec.Effects.Shadows, recordHint)
	}
	if (live.effects.PAM == nil) != (rec.PAM == nil) || live.effects.PAM != nil && !reflect.DeepEqual(live.effects.PAM.After.Modules, rec.PAM.After.Modules) {
		t.Errorf("%s: PAM view differs from the recording (%s)", id, recordHint)
	}
	for i, c := range live.effects.Changes {
		if i < len(rec.Effects.Changes) && (c.After.SHA256 != rec.Effects.Changes[i].After.SHA256 || c.Diff != rec.Effects.Changes[i].Diff) {
			t.Logf("%s: %s has other contents than recorded (logged, not failed: see compareWithRecording)", id, c.Path)
		}
	}
	if !reflect.DeepEqual(live.refusals, rejudged.refusals) || !reflect.DeepEqual(live.unscoped, rejudged.unscoped) {
		t.Errorf("%s: refused %v (unscoped %v) now, %v (%v) from the recording (%s)", id, live.refusals, live.unscoped, rejudged.refusals, rejudged.unscoped, recordHint)
	}
}

// TestFalseRefusalsEvidenceStale checks that the recording stands for the
// trials only under its own stamp and for the commands it recorded: any
// other stamp, a command changed or a command added makes
// TestFalseRefusals try every command for real. (That the current tree's
// stamp matches is TestFalseRefusals' log line, on the target.)
func TestFalseRefusalsEvidenceStale(t *testing.T) {
	cases := loadCorpora(t)
	hd, all, err := readEvidence()
	if err != nil {
		t.Fatal(err)
	}
	if len(hd.Stamp) != 64 || hd.Cases != len(cases) || len(all) != len(cases) {
		t.Fatalf("header %+v, %d trials; want a sha256 stamp and %d cases", hd, len(all), len(cases))
	}
	if recs, why := evidenceFor(hd, all, hd.Stamp, cases); recs == nil {
		t.Fatalf("the recording does not hold the corpora as they are: %s (%s)", why, recordHint)
	}
	changed := slices.Clone(cases)
	changed[len(changed)/2].Command += " "
	added := append(slices.Clone(cases), corpusCase{"fresh", "not-recorded", "true"})
	for _, tt := range []struct {
		name  string
		stamp string
		cases []corpusCase
		why   string
	}{
		{"another stamp", strings.Repeat("0", 64), cases, "was recorded with stamp " + hd.Stamp},
		{"a command changed", hd.Stamp, changed, changed[len(changed)/2].Name + ": not recorded, or recorded with another command"},
		{"a command added", hd.Stamp, added, "fresh not-recorded: not recorded"},
	} {
		if recs, why := evidenceFor(hd, all, tt.stamp, tt.cases); recs != nil || !strings.Contains(why, tt.why) {
			t.Errorf("%s: %d records, why %q; want none, why containing %q", tt.name, len(recs), why, tt.why)
		}
	}
	idx := sampleIndices(cases, sampleTrials)
	per := map[string]int{}
	for _, i := range idx {
		per[cases[i].Source]++
	}
	if len(idx) < sampleTrials || per["ssg"] == 0 || per["remediation"] == 0 || per["fresh"] == 0 {
		t.Errorf("sample %v (%d commands): want at least %d, over all three corpora", per, len(idx), sampleTrials)
	}
}
