package journal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift"
)

// TestJournalKeepsNoSecret: evidence a Runner did not redact is stored
// redacted (no password hash in the file's bytes), and the journal's files
// are readable by their owner only (they keep command output, which may
// hold what a command printed).
func TestJournalKeepsNoSecret(t *testing.T) {
	ctx := context.Background()
	const hash = "$6$abcdefgh$oGoxMtczJ0/xYkNKQnGuC3pOdNoGsZRZNs7n5JzX8KfMJWEmD2Bx4wBt/tMCPvjE87aPyrlQPEKxEcxV6d4J6."
	j, path := openTest(t, Config{})
	run := must(j.StartRun(ctx, RunSpec{Name: "secrets"}))(t)
	task := must(j.StartTask(ctx, run, "accounts_password", "h1"))(t)
	p := must(j.BeginCommand(ctx, task, 1, "usermod -p HASH root"))(t)
	ev := &nightshift.Evidence{Verdict: nightshift.VerdictCommitted, Effects: nightshift.Effects{Changes: []nightshift.FileChange{{
		Path: "/etc/shadow", Change: nightshift.ChangeModified,
		Diff: "--- a/etc/shadow\n+++ b/etc/shadow\n@@ -1 +1 @@\n-root:*:19000:0:99999:7:::\n+root:" + hash + ":19000:0:99999:7:::\n",
	}}}}
	ok(t, j.FinishCommand(ctx, p, CommandResult{Exec: nightshift.Exec{Evidence: ev}}))
	steps := must(j.Steps(ctx, task))(t)
	got := steps[len(steps)-1].Command.Result.Evidence
	if got == nil || !strings.Contains(got.Effects.Changes[0].Diff, "+root:<password hash changed, $6$>:19000") {
		t.Fatalf("stored evidence %+v, want the masked shadow line", got)
	}
	if !strings.Contains(ev.Effects.Changes[0].Diff, hash) {
		t.Error("FinishCommand changed the caller's evidence")
	}
	ok(t, j.Close())
	files, err := filepath.Glob(path + "*")
	if err != nil || len(files) == 0 {
		t.Fatalf("journal files: %v %v", files, err)
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v, want owner-only", f, fi.Mode().Perm())
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "oGoxMtczJ0") {
			t.Errorf("%s holds the password hash", f)
		}
	}
}
