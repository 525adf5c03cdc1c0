package safety

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// What the host shares, kept whatever the rule. Three harms no scope
// sees, because they happen inside the rule's own paths:
//
//   - a shared sticky world-writable directory (mode 1777: /tmp,
//     /var/tmp, /dev/shm, /run/lock, or any directory the host has so)
//     keeps every bit of 1777 unless the rule's paths name that very
//     directory and its check's state names the bit taken (sticky,
//     owrite, oread, oexec…): every user and service
//     writes its temporary files there (1777 -> 1775 makes mktemp fail
//     for all but root);
//   - a changed text file under /etc that ended in a newline still ends
//     in one: the next append (echo >>) joins its line to the last, and
//     a program reading the file refuses the result (sshd at its next
//     restart);
//   - a line of /etc/passwd, shadow, group or gshadow removed, and not
//     edited into a line of the same name, deletes that account or group,
//     unless the check names it (its patterns or keys): restoring passwd
//     from passwd- deletes the accounts made since.
func sharedHarm(e nightshift.Effects, owned map[string]bool, pol EffectsPolicy) []Refusal {
	var out []Refusal
	for _, c := range e.Changes {
		if owned[c.Path] {
			continue
		}
		if why := sharedDirTaken(c, pol); why != "" {
			out = append(out, Refusal{Entry: "perms-system", Reason: why})
		}
		if c.Change == nightshift.ChangeModified && c.After.Kind == nightshift.FileRegular && under(c.Path, "/etc") && lostFinalNewline(c.Diff) {
			out = append(out, Refusal{Entry: "config", Reason: "would leave " + c.Path + " without the newline it ended in: the next line appended joins its last line, and the program reading it refuses the result"})
		}
		if c.Change == nightshift.ChangeModified {
			if gone := accountsRemoved(c, pol); len(gone) > 0 {
				out = append(out, Refusal{Entry: "accounts", Reason: fmt.Sprintf("would delete %s from %s (its line removed, none of that name added): the rule's check does not name it", strings.Join(gone, ", "), c.Path)})
			}
		}
	}
	return out
}

// sharedDirTaken says why a mode change takes a bit of 1777 from a
// directory that had them all, or "".
func sharedDirTaken(c nightshift.FileChange, pol EffectsPolicy) string {
	if c.Change == nightshift.ChangeDeleted || c.Change == nightshift.ChangeCreated || c.Before.Kind != nightshift.FileDir ||
		c.Before.Mode&0o1777 != 0o1777 || (c.After.Kind == nightshift.FileDir && c.After.Mode&0o1777 == 0o1777) {
		return ""
	}
	lost := uint32(0o1777)
	if c.After.Kind == nightshift.FileDir {
		lost &^= c.After.Mode
	}
	states := []struct {
		bit   uint32
		state string
	}{{0o1000, "sticky"}, {0o400, "uread"}, {0o200, "uwrite"}, {0o100, "uexec"}, {0o040, "gread"}, {0o020, "gwrite"}, {0o010, "gexec"}, {0o004, "oread"}, {0o002, "owrite"}, {0o001, "oexec"}}
	// Only a rule whose paths name this very directory may take a bit its
	// check states: a rule over world-writable directories in general
	// states owrite to find them, not to take it from /tmp.
	exact := slices.Contains(pol.Scope, c.Path)
	var unnamed []string
	for _, s := range states {
		if lost&s.bit != 0 && !(exact && slices.Contains(pol.fileStates, s.state)) {
			unnamed = append(unnamed, s.state)
		}
	}
	if len(unnamed) == 0 {
		return ""
	}
	after := "a " + c.After.Kind.String()
	if c.After.Kind == nightshift.FileDir {
		after = fmt.Sprintf("%04o", c.After.Mode&0o7777)
	}
	return fmt.Sprintf("would take %s from %s (%04o -> %s), a shared sticky directory every user and service writes to; the rule's paths do not name it with a check stating that bit", strings.Join(unnamed, ", "), c.Path, c.Before.Mode&0o7777, after)
}

// lostFinalNewline reports whether a unified diff takes the final newline
// from a file that had one: "\ No newline at end of file" follows an
// added line, and no removed or context line.
func lostFinalNewline(diff string) bool {
	lines := strings.Split(diff, "\n")
	newSide, oldSide := false, false
	for i := 1; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], `\`) {
			continue
		}
		switch p := lines[i-1]; {
		case strings.HasPrefix(p, "+"):
			newSide = true
		case strings.HasPrefix(p, "-"):
			oldSide = true
		case strings.HasPrefix(p, " "):
			newSide, oldSide = true, true
		}
	}
	return newSide && !oldSide
}

// accountsRemoved returns the names whose line an account file's diff
// removes without adding one of the same name, which the check does not
// name.
func accountsRemoved(c nightshift.FileChange, pol EffectsPolicy) []string {
	switch c.Path {
	case "/etc/passwd", "/etc/shadow", "/etc/group", "/etc/gshadow":
	default:
		return nil
	}
	name := func(l string) string {
		n, _, ok := strings.Cut(l, ":")
		if !ok {
			return ""
		}
		return strings.TrimSpace(n)
	}
	added := map[string]bool{}
	for _, l := range addedLines(c.Diff) {
		added[name(l)] = true
	}
	var gone []string
	for _, l := range removedLines(c.Diff) {
		n := name(l)
		if n == "" || added[n] || slices.Contains(gone, n) || checkNames(n, pol) {
			continue
		}
		gone = append(gone, n)
	}
	return gone
}

// checkNames reports whether the rule's check names n (in a line pattern
// or a key).
func checkNames(n string, pol EffectsPolicy) bool {
	return slices.ContainsFunc(append(slices.Clip(pol.linePatterns), pol.Keys...), func(k string) bool { return strings.Contains(k, n) })
}
