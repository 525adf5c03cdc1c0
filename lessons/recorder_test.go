package lessons

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/goldenfile"

	"github.com/nightshift-dev/nightshift"
)

func code(n int) *int { return &n }

// night is the event stream of four rules on one host, as the worker emits it.
func night() []nightshift.Event {
	facts := &nightshift.HostFacts{OS: deb, PackageManager: "apt-get", Init: "systemd"}
	ev := []nightshift.Event{
		// fixed in attempt 3
		{Kind: nightshift.EventRuleStart, Rule: "aide_build_database"},
		{Kind: nightshift.EventCheck, Rule: "aide_build_database", Check: nightshift.CheckFail},
		{Kind: nightshift.EventModelCall, Rule: "aide_build_database", Attempt: 1},
		{Kind: nightshift.EventCommand, Rule: "aide_build_database", Attempt: 1, Command: "apt-get install -y aide", Action: nightshift.ActionRan, ExitCode: code(100), Classes: []string{"dpkg lock held"}},
		{Kind: nightshift.EventCheck, Rule: "aide_build_database", Attempt: 1, Check: nightshift.CheckFail},
		{Kind: nightshift.EventAttempt, Rule: "aide_build_database", Attempt: 1, Check: nightshift.CheckFail},
		{Kind: nightshift.EventModelCall, Rule: "aide_build_database", Attempt: 2},
		{Kind: nightshift.EventCommand, Rule: "aide_build_database", Attempt: 2, Action: nightshift.ActionMalformed, Detail: "arguments are not JSON"},
		{Kind: nightshift.EventCommand, Rule: "aide_build_database", Attempt: 2, Command: "rm -rf /var/lib/aide", Action: nightshift.ActionBlocked, Detail: `rm\s+-rf\s+/`},
		{Kind: nightshift.EventAttempt, Rule: "aide_build_database", Attempt: 2},
		{Kind: nightshift.EventModelCall, Rule: "aide_build_database", Attempt: 3},
		{Kind: nightshift.EventCommand, Rule: "aide_build_database", Attempt: 3, Command: "while fuser /var/lib/dpkg/lock-frontend; do sleep 5; done; apt-get install -y aide", Action: nightshift.ActionRan, ExitCode: code(0)},
		{Kind: nightshift.EventCommand, Rule: "aide_build_database", Attempt: 3, Command: "aideinit -y -f", Action: nightshift.ActionRan, ExitCode: code(0)},
		{Kind: nightshift.EventCheck, Rule: "aide_build_database", Attempt: 3, Check: nightshift.CheckPass},
		{Kind: nightshift.EventAttempt, Rule: "aide_build_database", Attempt: 3, Check: nightshift.CheckPass},
		{Kind: nightshift.EventRuleEnd, Rule: "aide_build_database", Facts: facts, Outcome: &nightshift.Outcome{Rule: "aide_build_database", Status: nightshift.RuleFixed, Attempts: 3}},
		// compliant: nothing learned
		{Kind: nightshift.EventRuleStart, Rule: "sshd_disable_root_login"},
		{Kind: nightshift.EventCheck, Rule: "sshd_disable_root_login", Check: nightshift.CheckPass},
		{Kind: nightshift.EventRuleEnd, Rule: "sshd_disable_root_login", Outcome: &nightshift.Outcome{Rule: "sshd_disable_root_login", Status: nightshift.RuleCompliant}},
		// gave up
		{Kind: nightshift.EventRuleStart, Rule: "grub2_password"},
		{Kind: nightshift.EventCommand, Rule: "grub2_password", Attempt: 1, Command: "grub-mkpasswd-pbkdf2", Action: nightshift.ActionTimedOut},
		{Kind: nightshift.EventAttempt, Rule: "grub2_password", Attempt: 1},
		{Kind: nightshift.EventCommand, Rule: "grub2_password", Attempt: 2, Action: nightshift.ActionGiveUp, Detail: "needs an interactive password"},
		{Kind: nightshift.EventAttempt, Rule: "grub2_password", Attempt: 2, Action: nightshift.ActionGiveUp},
		{Kind: nightshift.EventRuleEnd, Rule: "grub2_password", Facts: facts, Outcome: &nightshift.Outcome{Rule: "grub2_password", Status: nightshift.RuleGaveUp, Attempts: 2, Reason: "needs an\ninteractive password"}},
	}
	// not fixed: the same failure nine times, then seven different ones
	ev = append(ev, nightshift.Event{Kind: nightshift.EventRuleStart, Rule: "audit_rules"})
	for a := 1; a <= 16; a++ {
		cmd := "augenrules --load"
		if a > 9 {
			cmd = fmt.Sprintf("echo '-w /etc/passwd -p wa -k %d' >> /etc/audit/rules.d/x.rules", a)
		}
		ev = append(ev,
			nightshift.Event{Kind: nightshift.EventCommand, Rule: "audit_rules", Attempt: a, Command: cmd, Action: nightshift.ActionRan, ExitCode: code(1 - a/10)},
			nightshift.Event{Kind: nightshift.EventCheck, Rule: "audit_rules", Attempt: a, Check: nightshift.CheckFail},
			nightshift.Event{Kind: nightshift.EventAttempt, Rule: "audit_rules", Attempt: a, Check: nightshift.CheckFail})
	}
	return append(ev, nightshift.Event{Kind: nightshift.EventRuleEnd, Rule: "audit_rules", Facts: facts,
		Outcome: &nightshift.Outcome{Rule: "audit_rules", Status: nightshift.RuleNotFixed, Attempts: 16}})
}

func TestRecorderGolden(t *testing.T) {
	store := NewMemoryStore(MemoryStoreConfig{})
	rec, err := NewRecorder(RecorderConfig{Store: store, Host: "web-1", Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range night() {
		rec.Observe(e)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, l := range rec.Pending() {
		if err := enc.Encode(l); err != nil {
			t.Fatal(err)
		}
	}
	golden(t, "recorder.golden.jsonl", b.Bytes())

	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Pending()); n != 0 {
		t.Fatalf("%d lessons pending after Flush", n)
	}
	got, err := store.Lessons(context.Background(), Query{Rule: "aide_build_database", OS: deb, PackageManager: "apt-get"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Kind != Worked {
		t.Fatalf("stored lessons:\n%s", dump(got))
	}
}

// failingStore fails every Add until healed.
type failingStore struct {
	*MemoryStore
	fail bool
}

func (s *failingStore) Add(ctx context.Context, ls ...Lesson) error {
	if s.fail {
		return fmt.Errorf("disk full")
	}
	return s.MemoryStore.Add(ctx, ls...)
}

func TestRecorderFlushKeepsLessonsOnError(t *testing.T) {
	store := &failingStore{MemoryStore: NewMemoryStore(MemoryStoreConfig{}), fail: true}
	rec, err := NewRecorder(RecorderConfig{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range night() {
		rec.Observe(e)
	}
	n := len(rec.Pending())
	if err := rec.Flush(context.Background()); err == nil {
		t.Fatal("Flush succeeded against a failing store")
	}
	if len(rec.Pending()) != n {
		t.Fatalf("%d lessons pending after a failed Flush, want %d", len(rec.Pending()), n)
	}
	store.fail = false
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, err := store.Lessons(context.Background(), Query{Rule: "audit_rules", Limit: -1}); err != nil || len(got) != DefaultMaxFailed {
		t.Fatalf("%d lessons of audit_rules stored (err %v), want %d", len(got), err, DefaultMaxFailed)
	}
}

func TestNewRecorderNeedsStore(t *testing.T) {
	if _, err := NewRecorder(RecorderConfig{}); err == nil {
		t.Fatal("NewRecorder without a Store succeeded")
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got)
}
