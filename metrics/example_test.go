package metrics_test

import (
	"bufio"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/metrics"

	"github.com/nightshift-dev/nightshift"
)

// Example counts one rule fixed in its first attempt and scrapes the
// metrics as Prometheus would. In the CLI, worker.Config.Observer is m (or a
// fan-out including it), Model and Target are wrapped with m.Model and
// m.Target, and m.Serve serves --metrics-addr.
func Example() {
	m, err := metrics.New(metrics.Config{NoRuntime: true})
	if err != nil {
		log.Fatal(err)
	}
	exit0 := 0
	for _, e := range []nightshift.Event{
		{Kind: nightshift.EventRuleStart, Rule: "sshd_disable_root_login"},
		{Kind: nightshift.EventModelCall, Rule: "sshd_disable_root_login", Attempt: 1, Assessment: &budget.Assessment{Prompt: 1834}},
		{Kind: nightshift.EventCommand, Rule: "sshd_disable_root_login", Attempt: 1, Action: nightshift.ActionRan, ExitCode: &exit0},
		{Kind: nightshift.EventAttempt, Rule: "sshd_disable_root_login", Attempt: 1, Check: nightshift.CheckPass},
		{Kind: nightshift.EventRuleEnd, Rule: "sshd_disable_root_login", Outcome: &nightshift.Outcome{Status: nightshift.RuleFixed, Attempts: 1}},
	} {
		m.Observe(e)
	}

	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		for _, p := range []string{"nightshift_fixes_total ", `nightshift_attempts_total{result="pass"}`, "nightshift_prompt_tokens_sum", `nightshift_prompt_tokens_bucket{le="2048"}`} {
			if strings.HasPrefix(line, p) {
				fmt.Println(line)
			}
		}
	}
	// Output:
	// nightshift_attempts_total{result="pass"} 1
	// nightshift_fixes_total 1
	// nightshift_prompt_tokens_bucket{le="2048"} 1
	// nightshift_prompt_tokens_sum 1834
}
