package safety

import (
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift"
)

// TestParseHarm judges the sandbox's parse checks through JudgeEffects: a
// configuration that parsed before and fails after is refused with the
// program and its first error line; one already broken, one that parses
// after, and one whose trial side was not checked are not.
func TestParseHarm(t *testing.T) {
	visudoMsg := "/etc/sudoers.d/hardening:1:10: syntax error\nDefualts use_pty\n         ^~~~~~~"
	aptMsg := "E: Syntax error /etc/apt/apt.conf.d/99x:2: Extra junk at end of file\nE: Could not read"
	for _, tc := range []struct {
		name   string
		login  string
		parse  nightshift.ConfigParse
		entry  string
		reason []string
	}{
		{name: "sudoers broken by the command", login: "root",
			parse: nightshift.ConfigParse{Program: "visudo -c", File: "/etc/sudoers", BeforeOK: true, Message: visudoMsg},
			entry: "config-parse", reason: []string{"/etc/sudoers", "visudo -c: /etc/sudoers.d/hardening:1:10: syntax error", "parsed before"}},
		{name: "sudoers broken, the worker logs in as ops", login: "ops",
			parse: nightshift.ConfigParse{Program: "visudo -c", File: "/etc/sudoers", BeforeOK: true, Message: visudoMsg},
			entry: "lockout", reason: []string{"syntax error", "for ops too"}},
		{name: "apt.conf.d without its semicolon",
			parse: nightshift.ConfigParse{Program: "apt-config dump", File: "/etc/apt/apt.conf.d", BeforeOK: true, Message: "W: noise\n" + aptMsg},
			entry: "config-parse", reason: []string{"apt-config dump: E: Syntax error /etc/apt/apt.conf.d/99x:2: Extra junk"}},
		{name: "no message",
			parse: nightshift.ConfigParse{Program: "apt-config dump", File: "/etc/apt/apt.conf.d", BeforeOK: true},
			entry: "config-parse", reason: []string{"failed without a message"}},
		{name: "a long first line is cut",
			parse: nightshift.ConfigParse{Program: "apt-config dump", File: "/etc/apt/apt.conf.d", BeforeOK: true, Message: strings.Repeat("x", 500)},
			entry: "config-parse", reason: []string{strings.Repeat("x", 200) + "…"}},
		{name: "already broken on the host",
			parse: nightshift.ConfigParse{Program: "visudo -c", File: "/etc/sudoers", BeforeMessage: visudoMsg, Message: visudoMsg}},
		{name: "parses after",
			parse: nightshift.ConfigParse{Program: "visudo -c", File: "/etc/sudoers", BeforeOK: true, AfterOK: true}},
		{name: "fixed by the command",
			parse: nightshift.ConfigParse{Program: "visudo -c", File: "/etc/sudoers", BeforeMessage: visudoMsg, AfterOK: true}},
		{name: "trial side not checked",
			parse: nightshift.ConfigParse{Program: "visudo -c", File: "/etc/sudoers", BeforeOK: true, Skipped: "not checked: the command changed programs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := nightshift.Effects{Parses: []nightshift.ConfigParse{tc.parse}}
			var got []Refusal
			for _, r := range JudgeEffects(e, EffectsPolicy{Login: tc.login}) {
				if r.Entry == "config-parse" || strings.Contains(r.Reason, tc.parse.Program) {
					got = append(got, r)
				}
			}
			if tc.entry == "" {
				if len(got) > 0 {
					t.Fatalf("refused: %v", got)
				}
				return
			}
			if len(got) != 1 || got[0].Entry != tc.entry {
				t.Fatalf("got %v, want one %s refusal", got, tc.entry)
			}
			for _, w := range tc.reason {
				if !strings.Contains(got[0].Reason, w) {
					t.Errorf("reason %q does not say %q", got[0].Reason, w)
				}
			}
		})
	}
}
