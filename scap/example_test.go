package scap_test

import (
	"context"
	"fmt"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/scap"
)

func ExampleDatastream_Set() {
	ds, err := scap.Load("../testdata/scap/ssg-debian12-excerpt.xml")
	if err != nil {
		fmt.Println(err)
		return
	}
	set, err := ds.Set(scap.Options{
		Profile:    "anssi_bp28_high",
		Rules:      []string{"accounts_tmout"},
		TargetPath: "/usr/share/xml/scap/ssg/content/ssg-debian12-ds.xml",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	rule, _ := set.Get("accounts_tmout")
	fmt.Println(rule.Title)
	fmt.Println(rule.Hints)

	// The check runs oscap on the target; here a runner answers as oscap
	// does for a host without TMOUT.
	target := exitRunner{code: 2, stdout: "xccdf_org.ssgproject.content_rule_accounts_tmout:fail\n"}
	res, _ := rule.Evaluate(context.Background(), target)
	fmt.Println(rule.Check.Kind(), res.Status, res.Detail)
	// Output:
	// Set Interactive Session Timeout
	// Values of profile anssi_bp28_high the check uses:
	// var_accounts_tmout (Account Inactivity Timeout (seconds)) = 600
	// oscap fail oscap: fail: not compliant
}

// exitRunner answers every command with an exit code and stdout, as oscap
// on a host would.
type exitRunner struct {
	code   int
	stdout string
}

func (r exitRunner) Run(context.Context, string) (nightshift.Exec, error) {
	return nightshift.Exec{ExitCode: r.code, Stdout: r.stdout}, nil
}
