package safety_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift/internal/goldenfile"
	"github.com/nightshift-dev/nightshift/internal/ssgfix"
	"github.com/nightshift-dev/nightshift/safety"
)

// The corpora of issue 11's "How to prove it" (testdata/safety/README.md
// describes their formats):
//
//   - banned.jsonl: banned-command variants across every category of the
//     ban table and every evasion technique the issue lists; none may pass.
//   - remediations.jsonl: hand-written remediations a model proposes for
//     SSG rules on Debian, Ubuntu and RHEL; they must be allowed.
//   - ssg-debian12-bash-fixes.txt: every bash fix SSG ships for Debian 12
//     (see ssgFixesFile); they must be allowed.
//
// A remediation or SSG fix the checker refuses goes in refused.golden with
// the construct and the reason (go test -update ./safety rewrites it), and
// that list must stay under 2% of the SSG fixes and at most 3 hand-written
// remediations.
const (
	bannedFile       = "../testdata/safety/banned.jsonl"
	remediationsFile = "../testdata/safety/remediations.jsonl"
	refusedGolden    = "../testdata/safety/refused.golden"

	minBanned       = 300
	minRemediations = 70
	// maxRefusedHandWritten and maxRefusedSSGPercent are issue 11's limits.
	maxRefusedHandWritten = 3
	maxRefusedSSGPercent  = 2
)

// categories are the entries of the ban table a banned command is filed
// under; "unanalysable" is a command refused because it cannot be
// checked.
var categories = map[string]bool{
	"delete-system": true, "recursive-perms": true, "format-disk": true, "write-device": true,
	"power": true, "firewall": true, "password": true, "ssh-access": true, "network": true,
	"fork-bomb": true, "unanalysable": true,
}

// oracles: what real bash does, with logging stubs for every program, that
// is banned: executes a banned argv, opens a protected path for writing,
// signals PID 1 or every process, or nothing (refused because it cannot
// be analysed or is deferred).
var oracles = map[string]bool{"exec": true, "write": true, "signal": true, "none": true}

type bannedCase struct {
	Name      string `json:"name"`
	Category  string `json:"category"`
	Technique string `json:"technique"`
	Command   string `json:"command"`
	Oracle    string `json:"oracle"`
}

type remediation struct {
	Name    string `json:"name"`
	Distro  string `json:"distro"`
	Command string `json:"command"`
}

// readJSONL decodes one JSON object per line of path into T, rejecting
// unknown fields, blank names and duplicate names.
func readJSONL[T any](t *testing.T, path string, name func(T) string) []T {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []T
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v T
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		n := name(v)
		if n == "" {
			t.Fatalf("%s:%d: no name", path, line)
		}
		if prev, dup := seen[n]; dup {
			t.Fatalf("%s:%d: name %q already used on line %d", path, line, n, prev)
		}
		seen[n] = line
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

func loadBanned(t *testing.T) []bannedCase {
	t.Helper()
	cases := readJSONL(t, bannedFile, func(c bannedCase) string { return c.Name })
	for _, c := range cases {
		if !categories[c.Category] || !oracles[c.Oracle] || c.Technique == "" || strings.TrimSpace(c.Command) == "" {
			t.Fatalf("%s: %q: category %q, oracle %q, technique %q, command %q: want a known category and oracle and a technique and command",
				bannedFile, c.Name, c.Category, c.Oracle, c.Technique, c.Command)
		}
	}
	return cases
}

func loadRemediations(t *testing.T) []remediation {
	t.Helper()
	rems := readJSONL(t, remediationsFile, func(r remediation) string { return r.Name })
	for _, r := range rems {
		if strings.TrimSpace(r.Command) == "" {
			t.Fatalf("%s: %q has no command", remediationsFile, r.Name)
		}
	}
	return rems
}

// loadSSGFixes splits the committed oscap output with the worker's parser
// into rule id → fix text, in rule id order.
func loadSSGFixes(t *testing.T) (ids []string, fixes map[string]string) {
	t.Helper()
	data, err := os.ReadFile(ssgFixesFile)
	if err != nil {
		t.Fatal(err)
	}
	fixes, err = ssgfix.Parse(string(data))
	if err != nil {
		t.Fatalf("%s: %v", ssgFixesFile, err)
	}
	for id := range fixes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, fixes
}

// TestBannedCorpus: every banned-command variant is refused.
func TestBannedCorpus(t *testing.T) {
	cases := loadBanned(t)
	if len(cases) < minBanned {
		t.Errorf("%s has %d commands, want at least %d", bannedFile, len(cases), minBanned)
	}
	bl := safety.DefaultBanList()
	passed, otherEntry := 0, 0
	perCategory := map[string]int{}
	for _, c := range cases {
		perCategory[c.Category]++
		t.Run(c.Name, func(t *testing.T) {
			ban, banned := bl.Match(c.Command)
			if !banned {
				passed++
				t.Errorf("allowed %q (%s, %s): want it refused", c.Command, c.Category, c.Technique)
				return
			}
			if ban.Entry != c.Category {
				otherEntry++
			}
		})
	}
	t.Logf("banned corpus: %d commands %v; %d allowed (must be 0); %d refused under another entry than their category (informational: an evasion may be refused as unanalysable)",
		len(cases), perCategory, passed, otherEntry)
}

// pathInReason matches the file a reason names, so that refusals can be
// counted by reason.
var pathInReason = regexp.MustCompile(`/[^ ]+`)

// refusal is one line of refused.golden.
func refusal(source, name string, ban safety.Ban) string {
	return fmt.Sprintf("%s %s\tentry=%s\tconstruct=%q\treason=%q", source, name, ban.Entry, ban.Construct, ban.Reason)
}

// TestRemediationsAllowed: the hand-written remediations and every SSG
// fix are allowed, except those listed in refused.golden, and that list
// stays within issue 11's limits.
func TestRemediationsAllowed(t *testing.T) {
	rems := loadRemediations(t)
	if len(rems) < minRemediations {
		t.Errorf("%s has %d commands, want at least %d", remediationsFile, len(rems), minRemediations)
	}
	ids, fixes := loadSSGFixes(t)
	if len(ids) == 0 {
		t.Fatalf("%s holds no fixes", ssgFixesFile)
	}
	bl := safety.DefaultBanList()
	var lines []string
	refusedHand, refusedSSG := 0, 0
	byReason := map[string]int{}
	for _, r := range rems {
		if ban, banned := bl.Match(r.Command); banned {
			if ban.Certain {
				t.Errorf("remediation %s refused as certain: %s", r.Name, ban)
			}
			refusedHand++
			byReason[pathInReason.ReplaceAllString(ban.Reason, "PATH")]++
			lines = append(lines, refusal("remediation", r.Name, ban))
		}
	}
	for _, id := range ids {
		if ban, banned := bl.Match(fixes[id]); banned {
			refusedSSG++
			byReason[pathInReason.ReplaceAllString(ban.Reason, "PATH")]++
			lines = append(lines, refusal("ssg", id, ban))
		}
	}
	reasons := make([]string, 0, len(byReason))
	for r := range byReason {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if byReason[reasons[i]] != byReason[reasons[j]] {
			return byReason[reasons[i]] > byReason[reasons[j]]
		}
		return reasons[i] < reasons[j]
	})
	for _, r := range reasons {
		t.Logf("refused %4d: %s", byReason[r], r)
	}
	got := strings.Join(lines, "\n")
	if got != "" {
		got += "\n"
	}
	goldenfile.Check(t, refusedGolden, []byte(got))
	t.Logf("hand-written remediations: %d, refused %d (limit %d); SSG Debian 12 bash fixes: %d, refused %d (%.2f%%, limit under %d%%)",
		len(rems), refusedHand, maxRefusedHandWritten, len(ids), refusedSSG, 100*float64(refusedSSG)/float64(len(ids)), maxRefusedSSGPercent)
	if refusedHand > maxRefusedHandWritten {
		t.Errorf("%d hand-written remediations refused, at most %d may be", refusedHand, maxRefusedHandWritten)
	}
	if refusedSSG*100 >= maxRefusedSSGPercent*len(ids) {
		t.Errorf("%d of %d SSG fixes refused, must stay under %d%%", refusedSSG, len(ids), maxRefusedSSGPercent)
	}
}

// heldOutFile is remediation content written before the pre-filter was
// changed for issue 19 and never tuned against (testdata/safety/README.md).
const heldOutFile = "../testdata/safety/heldout-remediations.jsonl"

// maxCertainHeldOutPercent is issue 19's bound on certain refusals of
// remediation content the pre-filter was not built against.
const maxCertainHeldOutPercent = 2

// TestHeldOutRemediations: of the held-out remediations, at most 2% are
// refused as certain (uncertain refusals go to the sandbox); each refusal
// is logged with its reason.
func TestHeldOutRemediations(t *testing.T) {
	rems := readJSONL(t, heldOutFile, func(r remediation) string { return r.Name })
	if len(rems) < 100 {
		t.Fatalf("%s has %d commands, want at least 100", heldOutFile, len(rems))
	}
	bl := safety.DefaultBanList()
	certain, uncertain := 0, 0
	for _, r := range rems {
		ban, banned := bl.Match(r.Command)
		if !banned {
			continue
		}
		if ban.Certain {
			certain++
		} else {
			uncertain++
		}
		t.Logf("%s: certain=%v %s", r.Name, ban.Certain, ban)
	}
	t.Logf("held-out remediations: %d, refused as certain %d (%.1f%%), as uncertain %d (%.1f%%)",
		len(rems), certain, 100*float64(certain)/float64(len(rems)), uncertain, 100*float64(uncertain)/float64(len(rems)))
	if certain*100 > maxCertainHeldOutPercent*len(rems) {
		t.Errorf("%d of %d held-out remediations refused as certain, at most %d%% may be", certain, len(rems), maxCertainHeldOutPercent)
	}
}
