package nightshift_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift"
)

func TestEffectsSummary(t *testing.T) {
	zero := 0
	e := nightshift.Effects{
		Changes: []nightshift.FileChange{
			{Path: "/etc/ssh/sshd_config", Change: nightshift.ChangeModified,
				Diff: "--- a/etc/ssh/sshd_config\n+++ b/etc/ssh/sshd_config\n@@ -1,2 +1,2 @@\n-PermitRootLogin yes\n+PermitRootLogin no\n"},
			{Path: "/usr/share/doc", Change: nightshift.ChangeDeleted, Entries: 1532},
			{Path: "/etc/shadow", Change: nightshift.ChangeMeta, Before: nightshift.FileState{Mode: 0o644}, After: nightshift.FileState{Mode: 0o640, GID: 42}},
		},
		Actions: []nightshift.RecordedAction{{Argv: []string{"systemctl", "reload", "ssh"}, Exit: &zero}, {Argv: []string{"echo", "a b"}}},
	}
	want := "changed /etc/ssh/sshd_config: -PermitRootLogin yes +PermitRootLogin no; deleted /usr/share/doc (1532 entries); " +
		"mode/owner of /etc/shadow 0644 0:0 -> 0640 0:42; will run: systemctl reload ssh, echo 'a b'"
	if got := e.Summary(0); got != want {
		t.Errorf("Summary:\n got %q\nwant %q", got, want)
	}
	if got := e.Summary(60); len(got) > 64 || !strings.HasSuffix(got, "more)") {
		t.Errorf("Summary(60) = %q", got)
	}
	if got := (nightshift.Effects{}).Summary(0); got != "changed nothing" {
		t.Errorf("empty Summary = %q", got)
	}
}

func TestEvidenceJSON(t *testing.T) {
	in := nightshift.Evidence{Trial: "ab", Verdict: nightshift.VerdictRefused, Reasons: []string{"would delete /etc/ssh"},
		Effects: nightshift.Effects{Changes: []nightshift.FileChange{{Path: "/etc/ssh", Change: nightshift.ChangeDeleted,
			Before: nightshift.FileState{Kind: nightshift.FileDir}}}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"verdict":"refused"`) || !strings.Contains(string(b), `"change":"deleted"`) || !strings.Contains(string(b), `"kind":"dir"`) {
		t.Errorf("JSON = %s", b)
	}
	var out nightshift.Evidence
	if err := json.Unmarshal(b, &out); err != nil || out.Verdict != in.Verdict || out.Effects.Changes[0].Before.Kind != nightshift.FileDir {
		t.Errorf("round trip: %+v, %v", out, err)
	}
	var v nightshift.Verdict
	if err := v.UnmarshalText([]byte("approved")); !errors.Is(err, nightshift.ErrUnknownValue) {
		t.Errorf("unknown verdict: %v", err)
	}
}

func TestActionOfEvidence(t *testing.T) {
	for v, want := range map[nightshift.Verdict]nightshift.Action{
		nightshift.VerdictCommitted: nightshift.ActionRan, nightshift.VerdictRefused: nightshift.ActionBlocked,
		nightshift.VerdictConflict: nightshift.ActionBlocked, nightshift.VerdictDiscarded: nightshift.ActionBlocked,
	} {
		if got := nightshift.ActionOf(nightshift.Exec{Evidence: &nightshift.Evidence{Verdict: v}}, nil); got != want {
			t.Errorf("%s: %s, want %s", v, got, want)
		}
	}
}
