package nightshift_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nightshift-dev/nightshift"
)

// echoRunner is a Runner for the example: it "runs" nothing and reports the
// command as its output.
type echoRunner struct{}

func (echoRunner) Run(_ context.Context, command string) (nightshift.Exec, error) {
	return nightshift.Exec{Stdout: command + "\n", ExitCode: 0}, nil
}

func Example() {
	var r nightshift.Runner = echoRunner{}
	ex, _ := r.Run(context.Background(), "true")
	fmt.Printf("%q exited=%v\n", ex.Stdout, ex.Exited())

	out, _ := json.Marshal(struct {
		Action nightshift.Action      `json:"action"`
		Check  nightshift.CheckStatus `json:"check"`
		Status nightshift.RuleStatus  `json:"status"`
	}{nightshift.ActionRan, nightshift.CheckFail, nightshift.RuleNotFixed})
	fmt.Println(string(out))

	var s nightshift.RuleStatus
	fmt.Println(s.UnmarshalText([]byte("fixd")))
	// Output:
	// "true\n" exited=true
	// {"action":"ran","check":"fail","status":"not_fixed"}
	// rule status: unknown value "fixd"
}
