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
