package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/nightshift-dev/nightshift/internal/readfile"
	"github.com/nightshift-dev/nightshift/rules"
	"github.com/nightshift-dev/nightshift/safety"
)

const checkCommandUsage = `Usage:
  worker check-command [--rules FILE|DIR --rule ID] [--json] < command

Reads one command (any text, several lines too) on standard input and says
what the worker's static pre-filter does with it: "allowed"; "blocked:
REASON" when the text alone shows the harm (the construct and the ban-table
entry that matched); or "sandbox: REASON" when the text cannot settle it (it
cannot be analysed, or a value it uses is only known when it runs): the
worker then runs it first in the recording sandbox and applies only the
effects the judge allows, and refuses it where no sandbox runs (--sandbox
auto or off). With --rules and --rule, the rule's own banned patterns are
added to the built-in bans. Exit status: 0 allowed, 1 blocked, 3 sandbox,
2 usage error. Nothing is run.
`

const checkCommandExamples = `
Examples:
  echo 'rm -rf /etc' | worker check-command
  printf 'true\r#; reboot' | worker check-command --json
  worker check-command --rules rules/ --rule sshd_disable_root_login < fix.sh
`

// maxCommandInput bounds standard input: a command longer than the checker
// analyses is refused by it anyway.
const maxCommandInput = 1 << 20

// quietExit ends the program with a code and nothing more on stderr.
type quietExit int

func (q quietExit) Error() string { return fmt.Sprintf("exit %d", int(q)) }
func (q quietExit) ExitCode() int { return int(q) }

func runCheckCommand(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	rulesPath, ruleID, asJSON := new(string), new(string), new(bool)
	fs := newFlags(cmdCheckCommand, helpOutput(args, stdout, stderr))
	fs.bind("rules", rulesPath)
	fs.bind("rule", ruleID)
	fs.bind("json", asJSON)
	setUsage(fs.FlagSet, checkCommandUsage, checkCommandExamples)
	rest, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("check-command: unexpected argument %q (the command is read from standard input)", rest[0])
	}
	if (*rulesPath == "") != (*ruleID == "") {
		return usagef("check-command: --rules and --rule go together")
	}
	bans := safety.DefaultBanList()
	if *rulesPath != "" {
		set, err := rules.Load(*rulesPath)
		if err != nil {
			return &usageError{fmt.Errorf("check-command: %w", err)}
		}
		r, ok := set.Get(*ruleID)
		if !ok {
			return usagef("check-command: no rule %q in %s (rules: %s)", *ruleID, *rulesPath, strings.Join(set.IDs(), ", "))
		}
		if bans, err = r.BanList(nil); err != nil {
			return &usageError{fmt.Errorf("check-command: %w", err)}
		}
	}
	data, err := readfile.ReadAll(stdin, "standard input", maxCommandInput)
	if err != nil {
		return &usageError{fmt.Errorf("check-command: %w", err)}
	}
	command := strings.TrimSuffix(string(data), "\n")
	if strings.TrimSpace(command) == "" {
		return usagef("check-command: no command on standard input")
	}
	ban, blocked := bans.Match(command)
	if *asJSON {
		v := struct {
			Allowed   bool   `json:"allowed"`
			Certain   bool   `json:"certain,omitempty"`
			Entry     string `json:"entry,omitempty"`
			Reason    string `json:"reason,omitempty"`
			Construct string `json:"construct,omitempty"`
			Hint      string `json:"hint,omitempty"`
			Pattern   string `json:"pattern,omitempty"`
		}{!blocked, blocked && ban.Certain, ban.Entry, ban.Reason, ban.Construct, ban.Hint, ban.Pattern}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			return err
		}
	} else if blocked && ban.Certain {
		fmt.Fprintf(stdout, "blocked: %s\n", ban)
	} else if blocked {
		fmt.Fprintf(stdout, "sandbox: %s\n", ban)
	} else {
		fmt.Fprintln(stdout, "allowed")
	}
	switch {
	case blocked && ban.Certain:
		return quietExit(1)
	case blocked:
		return quietExit(3)
	}
	return nil
}
