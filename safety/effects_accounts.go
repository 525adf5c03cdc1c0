package safety

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// Account takeover: a hardening rule locks accounts, removes members and
// keys, and tightens modes; it never gives an account root's powers, a
// login, a password, a key, or a privileged group. accountsHarm refuses
// those whatever command made them (usermod, groupmod, vigr, sed, a
// copy): an account other than root given UID or GID 0, a system account
// (UID below 1000, or one whose shell refused logins) given a login
// shell, an account unlocked or created with a usable password hash, a
// member or administrator added to a privileged group, the root group
// renamed or removed, a key line added to any authorized_keys, polkit
// rules that authorise without asking, and the account files' modes that
// let others write them, read the hashes, or stop programs from reading
// the user database.

// privilegedGroups give root, or read or write what root's does, to their
// members.
var privilegedGroups = strings.Fields("root sudo wheel admin adm shadow disk docker lxd incus-admin libvirt kmem sys staff")

// debianPrivilegedGIDs are the fixed IDs Debian's base-passwd gives the
// privileged groups (a primary group changed to one of them).
var debianPrivilegedGIDs = map[string]string{"0": "root", "3": "sys", "4": "adm", "6": "disk", "15": "kmem", "27": "sudo", "42": "shadow", "50": "staff"}

// accountLines splits a diff of a colon-separated account file into the
// removed and added lines, by their first field.
func accountLines(diff string) (removed, added map[string][]string) {
	removed, added = map[string][]string{}, map[string][]string{}
	for _, l := range strings.Split(diff, "\n") {
		if strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++") || len(l) < 2 {
			continue
		}
		f := strings.Split(l[1:], ":")
		switch l[0] {
		case '-':
			removed[f[0]] = f
		case '+':
			added[f[0]] = f
		}
	}
	return removed, added
}

func field(f []string, i int) string {
	if i < len(f) {
		return f[i]
	}
	return ""
}

// listItems splits a comma-separated member list.
func listItems(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// accountsHarm judges one change of the account files, authorized_keys
// and polkit's rules.
func accountsHarm(c nightshift.FileChange, pol EffectsPolicy, changed map[string]bool) []Refusal {
	var out []Refusal
	bad := func(entry, reason string) { out = append(out, Refusal{Entry: entry, Reason: reason}) }
	out = append(out, accountModes(c)...)
	if r := keysAdded(c); r != "" {
		bad("takeover", r)
	}
	if r := polkitYes(c); r != "" {
		bad("takeover", r)
	}
	file := strings.TrimSuffix(c.Path, "-")
	if file != "/etc/passwd" && file != "/etc/shadow" && file != "/etc/group" && file != "/etc/gshadow" {
		return out
	}
	if c.Change != nightshift.ChangeModified && c.Change != nightshift.ChangeCreated || c.After.Kind != nightshift.FileRegular {
		return out
	}
	if file == "/etc/group" && c.Diff == "" && c.After.Size > 0 {
		bad("takeover", "would change "+c.Path+", whose diff could not be captured to judge")
		return out
	}
	// A backup the shadow tools rewrote along with its file holds the
	// file's previous contents, not a change of the command's.
	if c.Path != file && changed[file] {
		return out
	}
	removed, added := accountLines(c.Diff)
	takeover := func(format string, a ...any) { bad("takeover", fmt.Sprintf(format, a...)) }
	for name, f := range added {
		old, existed := removed[name]
		switch file {
		case "/etc/passwd":
			if name != "root" && field(f, 2) == "0" && field(old, 2) != "0" {
				takeover("would give %s UID 0 in %s: it would be a second root", name, c.Path)
			}
			if name != "root" && field(f, 3) != field(old, 3) {
				if g, ok := debianPrivilegedGIDs[field(f, 3)]; ok {
					takeover("would make GID %s (%s on Debian) the primary group of %s in %s", field(f, 3), g, name, c.Path)
				}
			}
			if existed && name != "root" && refusingShell(field(old, 6)) && !refusingShell(field(f, 6)) {
				takeover("would give the system account %s (shell %s) the login shell %s in %s", name, field(old, 6), field(f, 6), c.Path)
			} else if uid, err := strconv.Atoi(field(f, 2)); existed && err == nil && uid > 0 && (uid < 1000 || uid == 65534) &&
				field(f, 6) != field(old, 6) && !refusingShell(field(f, 6)) {
				takeover("would give the system account %s (UID %s) the login shell %s in %s", name, field(f, 2), field(f, 6), c.Path)
			}
			if name != "root" && name != pol.Login && usableHash(field(f, 1)) && !usableHash(field(old, 1)) {
				takeover("would give %s a password hash in %s (which takes precedence over /etc/shadow): a password login nobody asked for", name, c.Path)
			}
		case "/etc/shadow":
			if name == "root" || name == pol.Login {
				continue // judged by passwordHarm
			}
			if !existed && usableHash(field(f, 1)) {
				takeover("would create the account %s with a usable password in %s: a password login nobody asked for", name, c.Path)
			} else if existed && field(old, 1) != "" && !usableHash(field(old, 1)) && usableHash(field(f, 1)) {
				takeover("would unlock %s with a usable password hash in %s (it had %s): a password login nobody asked for", name, c.Path, textcutHead(field(old, 1), 12))
			}
		case "/etc/group", "/etc/gshadow":
			gshadow := file == "/etc/gshadow"
			if !gshadow && name != "root" && field(f, 2) == "0" && field(old, 2) != "0" {
				takeover("would give the group %s GID 0 in %s: its members would have root's group", name, c.Path)
			}
			if gshadow && usableHash(field(f, 1)) && !usableHash(field(old, 1)) {
				takeover("would set a password on the group %s in %s: whoever knows it joins the group with newgrp", name, c.Path)
			}
			if !isPrivilegedGroup(name) {
				continue
			}
			fields := []int{3}
			if gshadow {
				fields = []int{2, 3} // administrators, members
			}
			for _, i := range fields {
				had := map[string]bool{}
				for _, m := range listItems(field(old, i)) {
					had[m] = true
				}
				for _, m := range listItems(field(f, i)) {
					if !had[m] {
						takeover("would add %s to the privileged group %s in %s", m, name, c.Path)
					}
				}
			}
		}
	}
	if file == "/etc/group" || file == "/etc/gshadow" {
		if _, gone := removed["root"]; gone {
			if _, still := added["root"]; !still {
				takeover("would rename or remove the root group in %s: files, sudo and su rules that name it would no longer resolve", c.Path)
			}
		}
	}
	return out
}

func isPrivilegedGroup(g string) bool {
	for _, p := range privilegedGroups {
		if g == p {
			return true
		}
	}
	return false
}

// accountModes judges mode and owner changes of the account files.
func accountModes(c nightshift.FileChange) []Refusal {
	file := strings.TrimSuffix(c.Path, "-")
	if file != "/etc/passwd" && file != "/etc/shadow" && file != "/etc/group" && file != "/etc/gshadow" {
		return nil
	}
	if c.Change == nightshift.ChangeDeleted || c.Change == nightshift.ChangeCreated || c.After.Kind != nightshift.FileRegular || c.Before.Kind != nightshift.FileRegular {
		return nil
	}
	b, a := c.Before, c.After
	if b.Mode == a.Mode && b.GID == a.GID {
		return nil
	}
	var out []Refusal
	bad := func(why string) {
		out = append(out, Refusal{Entry: "perms-system", Reason: "would " + why + " (" + c.Path + " " + modeOwner(b) + " -> " + modeOwner(a) + ")"})
	}
	secret := file == "/etc/shadow" || file == "/etc/gshadow"
	if a.Mode&0o022 != 0 && (a.Mode&0o022 != b.Mode&0o022 || a.GID != b.GID) {
		bad("let users other than root write " + c.Path + ": whoever writes it can make an account root's")
	}
	switch {
	case secret && a.Mode&0o004 != 0 && b.Mode&0o004 == 0:
		bad("make " + c.Path + " readable by every user: the password hashes could be cracked offline")
	case secret && a.Mode&0o040 != 0 && a.GID != b.GID && a.GID != 0 && a.GID != 42:
		bad("let the group " + strconv.Itoa(a.GID) + " read the password hashes in " + c.Path)
	case !secret && c.Path == file && a.Mode&0o004 == 0 && b.Mode&0o004 != 0:
		bad("make " + c.Path + " unreadable to users other than root: user and group lookups of every program not running as root would fail")
	}
	return out
}

func modeOwner(s nightshift.FileState) string {
	return "0" + strconv.FormatUint(uint64(s.Mode), 8) + " " + strconv.Itoa(s.UID) + ":" + strconv.Itoa(s.GID)
}

// isKeysFile says whether sshd may read p as a list of authorized keys
// (/etc/skel's copy goes to every new account).
func isKeysFile(p string) bool {
	b := path.Base(p)
	return b == "authorized_keys" || b == "authorized_keys2" || under(p, "/etc/ssh/authorized_keys")
}

// keyBlob is the base64 key of an authorized_keys line (options, type and
// comment dropped), or the line itself when none is found.
func keyBlob(l string) string {
	f := strings.Fields(l)
	for i, w := range f {
		if (strings.HasPrefix(w, "ssh-") || strings.HasPrefix(w, "ecdsa-") || strings.HasPrefix(w, "sk-") || strings.Contains(w, "@openssh.com")) && i+1 < len(f) {
			return f[i+1]
		}
	}
	return strings.TrimSpace(l)
}

// keysAdded refuses a key line added to an authorized_keys file (one
// whose key was not there before: options added to an existing key are a
// restriction), or such a file made a symlink.
func keysAdded(c nightshift.FileChange) string {
	if !isKeysFile(c.Path) || c.Change == nightshift.ChangeDeleted || c.Change == nightshift.ChangeMeta {
		return ""
	}
	if c.After.Kind == nightshift.FileSymlink {
		return "would make " + c.Path + " a symlink to " + c.After.Target + ": sshd would accept the keys of a file that cannot be judged"
	}
	if c.After.Kind != nightshift.FileRegular {
		return ""
	}
	if c.Diff == "" && c.After.Size > 0 {
		return "would write " + c.Path + ", whose diff could not be captured to judge (a hardening rule never adds login keys)"
	}
	had := map[string]bool{}
	for _, l := range removedLines(c.Diff) {
		had[keyBlob(l)] = true
	}
	for _, l := range addedLines(c.Diff) {
		s := strings.TrimSpace(l)
		if s == "" || strings.HasPrefix(s, "#") || had[keyBlob(s)] {
			continue
		}
		who := "its account"
		switch {
		case under(c.Path, "/root"):
			who = "root"
		case under(c.Path, "/home"):
			who = strings.SplitN(strings.TrimPrefix(c.Path, "/home/"), "/", 2)[0]
		case under(c.Path, "/etc/skel"):
			who = "every account created later"
		}
		return "would add the key " + textcutHead(s, 70) + " to " + c.Path + ": whoever holds it logs in as " + who + " (a hardening rule never adds login keys)"
	}
	return ""
}

// polkitYes refuses polkit rules that authorise without authentication.
func polkitYes(c nightshift.FileChange) string {
	if c.Change != nightshift.ChangeCreated && c.Change != nightshift.ChangeModified {
		return ""
	}
	rules := (under(c.Path, "/etc/polkit-1/rules.d") || under(c.Path, "/usr/share/polkit-1/rules.d")) && strings.HasSuffix(c.Path, ".rules")
	pkla := (under(c.Path, "/etc/polkit-1/localauthority") || under(c.Path, "/var/lib/polkit-1/localauthority")) && strings.HasSuffix(c.Path, ".pkla")
	if !rules && !pkla {
		return ""
	}
	if c.After.Kind == nightshift.FileSymlink {
		return "would make the polkit rules " + c.Path + " a symlink to " + c.After.Target + ", whose contents cannot be judged"
	}
	for _, l := range addedLines(c.Diff) {
		s := strings.TrimSpace(l)
		low := strings.ToLower(strings.ReplaceAll(s, " ", ""))
		if rules && strings.Contains(s, "Result.YES") || pkla && (strings.HasPrefix(low, "resultany=yes") || strings.HasPrefix(low, "resultactive=yes") || strings.HasPrefix(low, "resultinactive=yes")) {
			return "would make polkit authorise actions without asking (" + textcutHead(s, 80) + " in " + c.Path + "): local users could manage units, packages and accounts as root"
		}
	}
	return ""
}
