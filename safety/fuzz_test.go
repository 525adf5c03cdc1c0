package safety

import (
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift/shell"
)

// FuzzMatch: Match never panics and its verdict survives the common
// wrappers: a banned command stays banned behind sudo sh -c and after
// "true &&".
func FuzzMatch(f *testing.F) {
	for _, c := range mustBan {
		f.Add(c)
	}
	for _, c := range mustAllow {
		f.Add(c)
	}
	f.Add(`$'\x`)
	f.Add("a <<")
	f.Add("cat <<-E\n\tx\n\tE\n")
	f.Add(`${`)
	f.Add(`$((1+$(echo 2)))`)
	f.Add("`")
	b := DefaultBanList()
	f.Fuzz(func(t *testing.T, cmd string) {
		ban, banned := b.Match(cmd)
		if banned && (ban.Pattern == "" || ban.Reason == "") {
			t.Fatalf("ban without description: %+v", ban)
		}
		if banned && len(cmd) < shell.MaxLen/2 {
			var wraps []string
			if !strings.HasPrefix(cmd, "-") && !strings.HasPrefix(cmd, "+") {
				// sh -c reads a script starting with - or + as its
				// options (sh -c '-o"' runs nothing).
				wraps = append(wraps, "sudo sh -c "+shellQuote(cmd))
			}
			if ban.Entry != "unanalysable" {
				// Text that does not parse can be completed by what a
				// wrapper appends (a newline ends a here-document).
				wraps = append(wraps, "true && "+cmd+"\n")
			}
			for _, wrapped := range wraps {
				if _, ok := b.Match(wrapped); !ok {
					t.Fatalf("%q is banned but %q is not", cmd, wrapped)
				}
			}
		}
	})
}
