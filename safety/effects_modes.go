package safety

import (
	"fmt"

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
