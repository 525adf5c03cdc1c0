package safety

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// modesHarm judges modes outside what permsHarm covers: a setuid or setgid
// program created or made so anywhere (a copy of bash in /tmp with mode
// 6755 gives root to every local user), except files the package
// manager's own lists say it installed; and a directory of the system
// trees made world-writable even with the sticky bit (chmod 1777 /etc:
// any user could add cron entries, profile scripts, sudoers files); and a
// file, or a directory without the sticky bit, created world-writable there.
func modesHarm(c nightshift.FileChange, owned map[string]bool, system bool, pol EffectsPolicy) []Refusal {
	if c.Change == nightshift.ChangeDeleted || owned[c.Path] {
		return nil
	}
	b, a := c.Before, c.After
	var out []Refusal
	bad := func(format string, x ...any) {
		out = append(out, Refusal{Entry: "perms-system", Reason: fmt.Sprintf(format, x...)})
	}
	if a.Kind == nightshift.FileRegular && a.Mode&0o6000 != 0 {
		added := a.Mode & 0o6000
		if c.Change != nightshift.ChangeCreated && b.Kind == nightshift.FileRegular {
			added &^= b.Mode
		}
		// Under the system trees the creation rule refuses a new one, and
		// permsHarm a change there and in the login's home.
		done := system || c.Change != nightshift.ChangeCreated && under(c.Path, pol.LoginHome)
		if added != 0 && !done {
			bad("would make %s a setuid/setgid program (%04o, owner %d:%d): whoever runs it gets its owner's or group's powers", c.Path, a.Mode, a.UID, a.GID)
		}
	}
	// Created world-writable: a file or a directory without the sticky
	// bit (a sticky one is a spool or a scratch place, which packages
	// make) in the system trees is anyone's to fill or replace.
	if system && c.Change == nightshift.ChangeCreated && a.Mode&0o002 != 0 &&
		(a.Kind == nightshift.FileRegular || a.Kind == nightshift.FileDir && a.Mode&0o1000 == 0) {
		bad("would create %s world-writable (%04o): any user could change what the system reads or runs there", c.Path, a.Mode)
	}
	if system && c.Change != nightshift.ChangeCreated && a.Kind == nightshift.FileDir && b.Kind == nightshift.FileDir &&
		a.Mode&0o002 != 0 && b.Mode&0o002 == 0 && a.Mode&0o1000 != 0 {
		bad("would make the directory %s world-writable (%04o -> %04o): any user could add files the system reads or runs", c.Path, b.Mode, a.Mode)
	}
	return out
}

// modesTakenHarm refuses, with StrictScope, mode and owner changes that
// take from the host what it needs, whatever the rule's check states
// about the other bits:
//
//   - setuid or setgid cleared on a regular executable file, unless the
//     rule's scope names that very file and its check states the bit
//     (chmod -R u-s over /usr/bin breaks passwd, su, sudo, mount);
//   - a directory's search bit taken from its owner, or from a class that
//     keeps its read bit (a file mode applied to directories: /var/log
//     0640, a home 0640), the directory then listed but not entered;
//   - a file under /etc, /usr or /boot given a non-root owner (created so
//     or changed from root), unless the check states owners (user_id): its
//     owner could rewrite what root reads or runs (an apt.conf.d file
//     owned by uid 1000 lets that user add hooks apt runs as root).
func modesTakenHarm(e nightshift.Effects, owned map[string]bool, pol EffectsPolicy) []Refusal {
	if !pol.StrictScope {
		return nil
	}
	var suid, search, owner []string
	for _, c := range e.Changes {
		if c.Change == nightshift.ChangeDeleted || owned[c.Path] || owned[usrAlias(c.Path)] {
			continue
		}
		b, a := c.Before, c.After
		same := c.Change != nightshift.ChangeCreated && b.Kind == a.Kind
		if same && a.Kind == nightshift.FileRegular && b.Mode&0o6000&^a.Mode != 0 && b.Mode&0o111 != 0 {
			exact := slices.Contains(pol.Scope, c.Path) &&
				(b.Mode&0o4000&^a.Mode == 0 || slices.Contains(pol.fileStates, "suid")) &&
				(b.Mode&0o2000&^a.Mode == 0 || slices.Contains(pol.fileStates, "sgid"))
			if !exact {
				suid = append(suid, fmt.Sprintf("%s (%04o -> %04o)", c.Path, b.Mode&0o7777, a.Mode&0o7777))
			}
		}
		if same && a.Kind == nightshift.FileDir {
			lost := b.Mode &^ a.Mode
			for _, cls := range []struct{ x, r uint32 }{{0o100, 0o400}, {0o010, 0o040}, {0o001, 0o004}} {
				if lost&cls.x != 0 && (cls.x == 0o100 || a.Mode&cls.r != 0) {
					search = append(search, fmt.Sprintf("%s (%04o -> %04o)", c.Path, b.Mode&0o7777, a.Mode&0o7777))
					break
				}
			}
		}
		if a.UID != 0 && (c.Change == nightshift.ChangeCreated || same && b.UID == 0) && a.Kind != nightshift.FileSymlink &&
			(under(c.Path, "/etc") || under(c.Path, "/usr") || under(c.Path, "/boot")) && !slices.Contains(pol.fileStates, "user_id") {
			owner = append(owner, fmt.Sprintf("%s (owner %d)", c.Path, a.UID))
		}
	}
	list := func(ps []string) string {
		if n := len(ps); n > 3 {
			ps = append(ps[:3:3], "and "+plural(n-3, "other"))
		}
		return strings.Join(ps, ", ")
	}
	var out []Refusal
	if len(suid) > 0 {
		out = append(out, Refusal{Entry: "perms-system", Reason: "would clear the setuid or setgid bit of " + list(suid) + ": the programs that need their owner's powers (passwd, su, sudo, mount) would stop working; the rule's check states that bit for no such file"})
	}
	if len(search) > 0 {
		out = append(out, Refusal{Entry: "perms-system", Reason: "would take the search bit of directory " + list(search) + " from its owner or from users who may still read it: what is inside could no longer be reached"})
	}
	if len(owner) > 0 {
		out = append(out, Refusal{Entry: "perms-system", Reason: "would give " + list(owner) + " to a user other than root: that user could rewrite what root reads or runs; the rule's check states no owner"})
	}
	return out
}
