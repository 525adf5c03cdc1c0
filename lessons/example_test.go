package lessons_test

import (
	"context"
	"fmt"
	"log"

	"github.com/nightshift-dev/nightshift/lessons"

	"github.com/nightshift-dev/nightshift"
)

// Example records what a rule's attempts on web-1 taught and gives it to the
// worker fixing the same rule on web-2.
func Example() {
	ctx := context.Background()
	store := lessons.NewMemoryStore(lessons.MemoryStoreConfig{})

	// The Recorder observes web-1's worker (worker.Config.Observer).
	rec, err := lessons.NewRecorder(lessons.RecorderConfig{Store: store, Host: "web-1"})
	if err != nil {
		log.Fatal(err)
	}
	exit := func(n int) *int { return &n }
	facts := &nightshift.HostFacts{OS: "Debian GNU/Linux 12 (bookworm)", PackageManager: "apt-get", Init: "systemd"}
	for _, e := range []nightshift.Event{
		{Kind: nightshift.EventRuleStart, Rule: "aide_build_database"},
		{Kind: nightshift.EventCommand, Rule: "aide_build_database", Attempt: 1, Command: "apt-get install -y aide", Action: nightshift.ActionRan, ExitCode: exit(100), Classes: []string{"dpkg lock held"}},
		{Kind: nightshift.EventCheck, Rule: "aide_build_database", Attempt: 1, Check: nightshift.CheckFail},
		{Kind: nightshift.EventAttempt, Rule: "aide_build_database", Attempt: 1, Check: nightshift.CheckFail},
		{Kind: nightshift.EventCommand, Rule: "aide_build_database", Attempt: 2, Command: "aideinit -y -f", Action: nightshift.ActionRan, ExitCode: exit(0)},
		{Kind: nightshift.EventCheck, Rule: "aide_build_database", Attempt: 2, Check: nightshift.CheckPass},
		{Kind: nightshift.EventAttempt, Rule: "aide_build_database", Attempt: 2, Check: nightshift.CheckPass},
		{Kind: nightshift.EventRuleEnd, Rule: "aide_build_database", Facts: facts, Outcome: &nightshift.Outcome{Status: nightshift.RuleFixed, Attempts: 2}},
	} {
		rec.Observe(e)
	}
	if err := rec.Flush(ctx); err != nil {
		log.Fatal(err)
	}

	// web-2's worker gets them through worker.Config.Lessons.
	src := lessons.NewSource(store, lessons.SourceConfig{})
	lines, err := src.Lessons(ctx, "aide_build_database", nightshift.HostFacts{OS: "Debian GNU/Linux 12 (bookworm)", PackageManager: "apt-get"})
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// worked on Debian GNU/Linux 12 (bookworm), apt-get: fixed in attempt 2: ran `aideinit -y -f` — exit 0; re-check passed
	// failed on Debian GNU/Linux 12 (bookworm), apt-get: ran `apt-get install -y aide` — exit 100: dpkg lock held; re-check failed
}
