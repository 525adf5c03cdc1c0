package progress_test

import (
	"log"
	"os"
	"time"

	"github.com/nightshift-dev/nightshift/progress"

	"github.com/nightshift-dev/nightshift"
)

// Example writes plain progress lines, as when the output is not a
// terminal, for one host fixing one rule.
func Example() {
	now := time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	p, err := progress.New(progress.Config{Out: os.Stdout, Mode: progress.Plain, Now: clock})
	if err != nil {
		log.Fatal(err)
	}
	p.Plan("web-1", 1)
	p.RuleStarted("web-1", "sshd_disable_root_login")
	obs := p.Observer("web-1") // worker.Config.Observer of web-1's worker
	now = now.Add(9 * time.Second)
	obs.Observe(nightshift.Event{Kind: nightshift.EventAttempt, Rule: "sshd_disable_root_login", Attempt: 1, Check: nightshift.CheckPass, PromptTokens: 1834})
	p.RuleEnded("web-1", "sshd_disable_root_login", nightshift.RuleFixed)
	if err := p.Close(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// [00:00:00] web-1: 1 rule planned
	// [00:00:00] web-1 sshd_disable_root_login: started (rule 1 of 1)
	// [00:00:09] web-1 sshd_disable_root_login: attempt 1: pass (prompt 1834 tokens)
	// [00:00:09] web-1 sshd_disable_root_login: fixed after 1 attempt in 9s (1/1 rules, ETA 0s)
	// [00:00:09] 1/1 rules · elapsed 9s · ETA 0s · 1 fixed or compliant, 0 not
}
