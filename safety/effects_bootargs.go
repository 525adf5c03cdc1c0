package safety

import (
	"path"
	"slices"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// What a rule may change in the files the next boot reads, by what its
// check names (StrictScope):
//
//   - the kernel command line (GRUB_CMDLINE_LINUX and
//     GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub and its grub.d
//     drop-ins, /etc/kernel/cmdline): a command may add, change or remove
//     only the arguments the check names (EffectsPolicy.Keys'
//     KernelArgPrefix entries, which package scap derives from the check's
//     patterns: mce for grub2_mce_argument, apparmor and security for
//     grub2_enable_apparmor); any other argument added or removed is
//     refused by name (mem=1G, rootdelay=900, break=premount,
//     systemd.mask=ssh.service, rootfstype=xfs, an lsm= list). A reference
//     to the variable's own earlier value ($GRUB_CMDLINE_LINUX) is not an
//     argument. The boot menu's timeouts and hidden style
//     (GRUB_TIMEOUT, GRUB_TIMEOUT_STYLE, GRUB_HIDDEN_TIMEOUT…) change only
//     for a rule whose check reads them;
//   - /etc/fstab: a line a command adds or changes may add to its mount
//     point's options only the options the check names (its value
//     checks: nodev for mount_option_dev_shm_nodev), the restricting ones
//     (nodev, nosuid, noexec, ro) and the neutral ones (defaults, rw,
//     auto, nofail, relatime…); an option that sets an owner, a mode, a
//     size or anything else, or a changed file system type or source, is
//     refused;
//   - modules-load.d: for a rule whose check disables a module (an
//     install MODULE /bin/false or blacklist line), a line that loads
//     that module at boot is refused.

// KernelArgPrefix marks an entry of EffectsPolicy.Keys that names a kernel
// argument the check reads (mce, l1tf, apparmor): a fix may add or change
// only these on the kernel command line.
const KernelArgPrefix = "kernelarg:"

// cmdlineFile reports whether p sets the kernel command line for the next
// boot.
func cmdlineFile(p string) bool {
	return p == "/etc/default/grub" || path.Dir(p) == "/etc/default/grub.d" || p == "/etc/kernel/cmdline"
}

// grubMenuKeys set the boot menu's timeouts and visibility.
var grubMenuKeys = strings.Fields("GRUB_TIMEOUT GRUB_TIMEOUT_STYLE GRUB_HIDDEN_TIMEOUT GRUB_HIDDEN_TIMEOUT_QUIET GRUB_RECORDFAIL_TIMEOUT GRUB_DEFAULT GRUB_DISABLE_OS_PROBER GRUB_DISABLE_LINUX_UUID GRUB_INIT_TUNE GRUB_TERMINAL")

// cmdlineArgs returns the kernel arguments of the command-line lines
// among ls (GRUB_CMDLINE_LINUX* in a grub file, every line of
// /etc/kernel/cmdline), without references to a variable.
func cmdlineArgs(p string, ls []string) []string {
	var out []string
	for _, l := range ls {
		if freeLine(l) {
			continue
		}
		if p != "/etc/kernel/cmdline" {
			k, v, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "export ")), "=")
			if !ok || !strings.HasPrefix(k, "GRUB_CMDLINE_LINUX") {
				continue
			}
			l = v
		}
		for _, w := range cmdlineWords(l) {
			if w == "" || strings.HasPrefix(w, "$") {
				continue
			}
			out = append(out, w)
		}
	}
	return out
}

// argName is a kernel argument's name: before "=", with "-" read as "_"
// as the kernel does.
func argName(w string) string {
	k, _, _ := strings.Cut(w, "=")
	return strings.ReplaceAll(k, "-", "_")
}

// bootArgsHarm refuses, with StrictScope, the kernel arguments and boot
// menu settings a command changes that the rule's check does not name.
func bootArgsHarm(e nightshift.Effects, owned map[string]bool, pol EffectsPolicy) []Refusal {
	if !pol.StrictScope {
		return nil
	}
	allowed := map[string]bool{}
	for _, a := range pol.kernelArgs {
		allowed[argName(a)] = true
	}
	var out []Refusal
	for _, c := range e.Changes {
		if !cmdlineFile(c.Path) || owned[c.Path] || c.After.Kind != nightshift.FileRegular && c.Change != nightshift.ChangeDeleted {
			continue
		}
		before, after := cmdlineArgs(c.Path, removedLines(c.Diff)), cmdlineArgs(c.Path, addedLines(c.Diff))
		var added, removed []string
		for _, w := range after {
			if !slices.Contains(before, w) && !allowed[argName(w)] && !slices.Contains(added, w) {
				added = append(added, w)
			}
		}
		for _, w := range before {
			if !slices.Contains(after, w) && !allowed[argName(w)] && !slices.Contains(removed, w) {
				removed = append(removed, w)
			}
		}
		names := "names no kernel argument"
		if len(pol.kernelArgs) > 0 {
			names = "names only " + strings.Join(pol.kernelArgs, ", ")
		}
		if len(added) > 0 {
			out = append(out, Refusal{Entry: "scope", Reason: "would add " + strings.Join(added, " ") + " to the kernel command line in " + c.Path + ": the rule's check " + names})
		}
		if len(removed) > 0 {
			out = append(out, Refusal{Entry: "scope", Reason: "would remove " + strings.Join(removed, " ") + " from the kernel command line in " + c.Path + ": the rule's check " + names})
		}
		if c.Path == "/etc/kernel/cmdline" {
			continue
		}
		for _, l := range addedLines(c.Diff) {
			k, _, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "export ")), "=")
			if !ok || freeLine(l) || !slices.Contains(grubMenuKeys, k) || slices.ContainsFunc(pol.Keys, func(x string) bool { return strings.EqualFold(x, k) }) {
				continue
			}
			out = append(out, Refusal{Entry: "scope", Reason: "would set " + strings.TrimSpace(l) + " in " + c.Path + ": the boot menu's settings, which the rule's check does not read"})
		}
	}
	return out
}

// Mount options by what they do: restricting ones take a right away from
// the file system's users, neutral ones change no right (timestamps,
// error handling, when and whether it mounts). systemd's x-systemd.*
// options are not neutral but for automount: device-timeout=0 waits for
// a device forever at boot, requires= and the ordering ones tie the boot
// to other units, makefs formats the device.
var (
	restrictingMountOptions = strings.Fields("nodev nosuid noexec ro")
	neutralMountOptions     = strings.Fields(`defaults rw auto noauto nofail _netdev relatime noatime nodiratime strictatime lazytime
		norelatime user_xattr acl discard errors=remount-ro errors=continue errors=panic`)
)

// neutralMountOption reports whether o changes no right on the file system.
func neutralMountOption(o string) bool {
	return slices.Contains(restrictingMountOptions, o) || slices.Contains(neutralMountOptions, o) ||
		o == "x-systemd.automount" || strings.HasPrefix(o, "comment=")
}

// virtualMount reports whether e mounts no disk: a file system in memory
// or the kernel's (tmpfs, proc, …), which a rule may add (a tmpfs /dev/shm
// with nodev), where a new disk is no hardening. (A bind is judged by its
// option, which is neither restricting nor neutral.)
func virtualMount(e fstabEntry) bool {
	switch e.fstype {
	case "tmpfs", "ramfs", "proc", "sysfs", "devpts", "mqueue", "hugetlbfs", "cgroup2", "securityfs", "debugfs", "tracefs", "bpf":
		return true
	}
	return false
}

// contextLines are the lines a change keeps, in its diff's hunks (the
// whole file for what the helper diffs whole, /etc/fstab among them).
func contextLines(diff string) []string {
	var out []string
	for _, l := range strings.Split(diff, "\n") {
		if strings.HasPrefix(l, " ") {
			out = append(out, l[1:])
		}
	}
	return out
}

// fstabEntry is one line of /etc/fstab.
type fstabEntry struct{ source, point, fstype, opts string }

func fstabEntries(ls []string) []fstabEntry {
	var out []fstabEntry
	for _, l := range ls {
		f := strings.Fields(l)
		if len(f) < 3 || strings.HasPrefix(f[0], "#") {
			continue
		}
		e := fstabEntry{source: f[0], point: path.Clean(f[1]), fstype: f[2]}
		if len(f) > 3 {
			e.opts = f[3]
		}
		out = append(out, e)
	}
	return out
}

// mountOptionsHarm refuses, with StrictScope, a line of /etc/fstab a
// command adds or changes that adds a mount option the rule's check does
// not name (its value checks) and that is neither restricting nor neutral
// (uid=1000, mode=0777, size=, exec, suid, dev, user), or that changes an
// entry's source or file system type.
func mountOptionsHarm(e nightshift.Effects, owned map[string]bool, pol EffectsPolicy) []Refusal {
	if !pol.StrictScope {
		return nil
	}
	named := map[string]bool{}
	for _, vc := range pol.valueChecks {
		for _, v := range vc.Values {
			for _, w := range strings.FieldsFunc(v, func(r rune) bool {
				return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '=' || r == '.')
			}) {
				named[w] = true
			}
		}
	}
	var out []Refusal
	for _, c := range e.Changes {
		if c.Path != "/etc/fstab" || owned[c.Path] || c.After.Kind != nightshift.FileRegular {
			continue
		}
		before := fstabEntries(append(removedLines(c.Diff), contextLines(c.Diff)...))
		for _, a := range fstabEntries(addedLines(c.Diff)) {
			var old *fstabEntry
			for i := range before {
				if before[i].point == a.point {
					old = &before[i]
				}
			}
			var why []string
			if old != nil && (old.source != a.source || old.fstype != a.fstype) {
				why = append(why, "it changes "+a.point+"'s file system from "+old.source+" "+old.fstype+" to "+a.source+" "+a.fstype)
			}
			if old == nil && !virtualMount(a) {
				why = append(why, "it adds "+a.source+" "+a.fstype+", a file system the host's fstab did not mount at "+a.point+" (a hardening rule tightens the mounts the host has; a disk that is missing or slow at boot stops the boot)")
			}
			var had []string
			if old != nil {
				had = strings.Split(old.opts, ",")
			}
			var bad []string
			for _, o := range strings.Split(a.opts, ",") {
				if o == "" || slices.Contains(had, o) || named[o] || neutralMountOption(o) {
					continue
				}
				bad = append(bad, o)
			}
			if len(bad) > 0 {
				why = append(why, "options "+strings.Join(bad, ",")+" are neither the check's nor restricting (nodev, nosuid, noexec, ro) nor neutral (an owner, a mode, a size or a right given)")
			}
			if len(why) > 0 {
				out = append(out, Refusal{Entry: "scope", Reason: "would mount " + a.point + " as " + a.source + " " + a.fstype + " " + a.opts + " (/etc/fstab): " + strings.Join(why, "; ")})
			}
		}
	}
	return out
}

// moduleLoadHarm refuses, with StrictScope, a line of modules-load.d (or
// /etc/modules) that loads at boot a module the rule's check disables
// (its keywords: install or blacklist and the module).
func moduleLoadHarm(e nightshift.Effects, owned map[string]bool, pol EffectsPolicy) []Refusal {
	if !pol.StrictScope || !slices.Contains(pol.Keys, "install") && !slices.Contains(pol.Keys, "blacklist") {
		return nil
	}
	var mods []string
	for _, k := range pol.Keys {
		if !slices.Contains(modprobeCommands, k) && k != "alias" {
			mods = append(mods, strings.ReplaceAll(k, "-", "_"))
		}
	}
	var out []Refusal
	for _, c := range e.Changes {
		d := path.Dir(c.Path)
		if c.After.Kind != nightshift.FileRegular || owned[c.Path] || c.Path != "/etc/modules" && path.Base(d) != "modules-load.d" {
			continue
		}
		for _, l := range addedLines(c.Diff) {
			f := strings.Fields(l)
			if len(f) == 0 || freeLine(l) {
				continue
			}
			if m := strings.ReplaceAll(f[0], "-", "_"); slices.Contains(mods, m) {
				out = append(out, Refusal{Entry: "scope", Reason: "would load " + f[0] + " at every boot (" + c.Path + "): the rule's check disables it"})
			}
		}
	}
	return out
}
