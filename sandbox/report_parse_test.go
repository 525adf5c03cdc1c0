package sandbox

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift"
)

// TestReportParses reads the parse section as parse_checks writes it
// (records of six NUL-terminated fields) and refuses, with ErrReport and
// the problem named, what the helper never writes: a cut record, an odd
// state, a relative file, too many records. A message is cut and made
// valid UTF-8.
func TestReportParses(t *testing.T) {
	sec := func(name, body string) string { return fmt.Sprintf("%s %d\n%s\n", name, len(body), body) }
	base := sec("exit", "0") + sec("mounts", "0 overlay /\n") + sec("upper", "") + sec("lower", "") + sec("deleted", "") + sec("actions", "")
	rec := func(f ...string) string { return strings.Join(f, "\x00") + "\x00" }
	long := strings.Repeat("é", 3000)
	for _, tc := range []struct {
		name, body string
		want       []nightshift.ConfigParse
		err        string
	}{
		{name: "absent", body: ""},
		{name: "broken by the command",
			body: rec("visudo -c", "/etc/sudoers", "1", "0", "", ">>> /etc/sudoers.d/x: syntax error near line 1 <<<\nparse error in /etc/sudoers.d/x near line 1"),
			want: []nightshift.ConfigParse{{Program: "visudo -c", File: "/etc/sudoers", BeforeOK: true,
				Message: ">>> /etc/sudoers.d/x: syntax error near line 1 <<<\nparse error in /etc/sudoers.d/x near line 1"}}},
		{name: "broken before, two records",
			body: rec("apt-config dump", "/etc/apt/apt.conf.d", "0", "0", "E: Syntax error", "E: Syntax error") + rec("visudo -c", "/etc/sudoers", "1", "1", "", ""),
			want: []nightshift.ConfigParse{{Program: "apt-config dump", File: "/etc/apt/apt.conf.d", BeforeMessage: "E: Syntax error", Message: "E: Syntax error"},
				{Program: "visudo -c", File: "/etc/sudoers", BeforeOK: true, AfterOK: true}}},
		{name: "not checked",
			body: rec("visudo -c", "/etc/sudoers", "1", "-", "", "not checked: programs changed"),
			want: []nightshift.ConfigParse{{Program: "visudo -c", File: "/etc/sudoers", BeforeOK: true, Skipped: "not checked: programs changed"}}},
		{name: "not checked without a reason",
			body: rec("visudo -c", "/etc/sudoers", "1", "-", "", ""),
			want: []nightshift.ConfigParse{{Program: "visudo -c", File: "/etc/sudoers", BeforeOK: true, Skipped: "not checked"}}},
		{name: "huge message is cut",
			body: rec("visudo -c", "/etc/sudoers", "1", "0", "", long),
			want: []nightshift.ConfigParse{{Program: "visudo -c", File: "/etc/sudoers", BeforeOK: true, Message: strings.Repeat("é", 1000) + "…"}}},
		{name: "cut record", body: rec("visudo -c", "/etc/sudoers", "1", "0"), err: "parse has 4 fields"},
		{name: "no final NUL", body: "visudo -c\x00/etc/sudoers\x001\x001\x00\x00cut", err: "parse does not end in NUL"},
		{name: "bad before", body: rec("visudo -c", "/etc/sudoers", "yes", "1", "", ""), err: `bad before "yes"`},
		{name: "bad after", body: rec("visudo -c", "/etc/sudoers", "1", "", "", ""), err: `bad after ""`},
		{name: "relative file", body: rec("visudo -c", "etc/sudoers", "1", "1", "", ""), err: "absolute file"},
		{name: "no program", body: rec("", "/etc/sudoers", "1", "1", "", ""), err: "without a program"},
		{name: "too many", body: strings.Repeat(rec("visudo -c", "/etc/sudoers", "1", "1", "", ""), maxParses+1), err: "more than 64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := parseReport([]byte(base + sec("parse", tc.body)))
			if err != nil {
				t.Fatal(err)
			}
			eff, _, err := r.effects()
			if tc.err != "" {
				if !errors.Is(err, ErrReport) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want an ErrReport saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprintf("%+v", eff.Parses) != fmt.Sprintf("%+v", tc.want) {
				t.Errorf("got %+v\nwant %+v", eff.Parses, tc.want)
			}
		})
	}
}
