package safety

import (
	"path"
	"slices"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// The recorded actions, scoped by the rule (StrictScope). A recorded
// action changes the running system beyond files, so a file scope cannot
// see it: with StrictScope it is allowed only when it concerns what the
// rule's check reads (EffectsPolicy.Units, Sysctl, Scope), on top of the
// verb allow-list (judgeAction), which still applies. Families:
//
//   - unit verbs (systemctl, service, invoke-rc.d, deb-systemd-invoke):
//     queries (status, show, cat, is-*, list-*), daemon-reload and
//     reset-failed always; any other verb only on the rule's units (Units,
//     or a unit whose file or drop-in directory is in Scope), on the units
//     a package the same command installed ships (its maintainer scripts
//     start them), and reload or restart of sshd (and systemctl kill -s
//     HUP of it) for every rule; set-default only when the rule reads
//     default.target;
//   - sysctl: reads always; -w (or KEY=VALUE) only for the rule's kernel
//     parameters (Sysctl or Keys; the route cache flush of SSG's network
//     fixes always), -p, --load and --system only for a rule whose check
//     reads kernel parameters or sysctl files, -p only of a file in Scope
//     (never its standard input);
//   - auditctl: reads (-l, -s, -v) always; anything else only for a rule
//     whose paths or units are the audit system's, and never -D, -d, -W,
//     -e 0, -e 2 (immutable until reboot: only the rules files, which
//     auditd loads at boot, may lock the rules), a never or exclude rule,
//     a rate limit (-r), or -R of a file outside the rule's paths;
//   - nft, iptables, ip6tables and their -restore forms: reads always;
//     changes only for a rule whose paths or units are a firewall's;
//   - mount, swapon, swapoff: only for a rule whose paths hold /etc/fstab
//     (and never /, /usr, /etc, /var or the program trees read-only or
//     noexec);
//   - modprobe, rmmod, insmod: only for a rule whose paths hold
//     /etc/modprobe.d (modprobe.conf, modules-load.d), never with -C
//     (its commands from another file);
//   - timedatectl: set-ntp and set-timezone only for a rule whose paths or
//     units are time synchronisation's.
//
// Without StrictScope (a rule whose scope is not known) only the verb
// allow-list applies.
func scopedActions(e nightshift.Effects, owned map[string]bool, pkgOp bool, pol EffectsPolicy) []Refusal {
	if !pol.StrictScope {
		return nil
	}
	pol.configured = configuredUnits(e, owned, pol)
	var out []Refusal
	for i, a := range e.Actions {
		if why := scopedAction(e.Actions, i, owned, pkgOp, pol); why != "" {
			out = append(out, Refusal{Entry: "scope", Reason: "would run " + a.String() + ": " + why})
		}
	}
	return out
}

func scopedAction(acts []nightshift.RecordedAction, i int, owned map[string]bool, pkgOp bool, pol EffectsPolicy) string {
	argv := acts[i].Argv
	if len(argv) == 0 {
		return ""
	}
	name := path.Base(argv[0])
	args := argv[1:]
	ops := operands(args)
	switch name {
	case "systemctl":
		if len(ops) == 0 {
			return "" // judgeAction refuses it
		}
		if sshdHangup(args) {
			return ""
		}
		if sshUnitSwitch(acts, i) && scopeUnder(pol.Scope, "/etc/ssh") {
			return ""
		}
		return unitScope(ops[0], ops[1:], owned, pkgOp, pol)
	case "service", "invoke-rc.d":
		if len(ops) < 2 {
			return ""
		}
		return unitScope(ops[1], ops[:1], owned, pkgOp, pol)
	case "deb-systemd-invoke":
		if len(ops) == 0 {
			return ""
		}
		return unitScope(ops[0], ops[1:], owned, pkgOp, pol)
	case "sysctl":
		return sysctlScope(args, pol)
	case "auditctl":
		return auditScope(args, pol)
	case "iptables", "ip6tables", "iptables-legacy", "ip6tables-legacy", "iptables-nft", "ip6tables-nft", "nft",
		"iptables-restore", "ip6tables-restore", "iptables-legacy-restore", "ip6tables-legacy-restore", "iptables-nft-restore", "ip6tables-nft-restore",
		"ebtables", "arptables", "ufw", "firewall-cmd":
		if firewallRead(name, args) || ruleFamily(pol, "firewall") {
			return ""
		}
		return "the rule's check reads no firewall (its paths: " + scopeList(pol.Scope) + ")"
	case "mount", "swapon", "swapoff", "umount":
		if name == "mount" && len(ops) == 0 && !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "-o") || a == "-a" || a == "--all" }) {
			return "" // lists the mounts
		}
		if name == "mount" {
			if why := remountHarm(args); why != "" {
				return why
			}
		}
		if ruleFamily(pol, "mount") {
			return ""
		}
		return "only a mount-option rule (its paths hold /etc/fstab) mounts or swaps (the rule's paths: " + scopeList(pol.Scope) + ")"
	case "modprobe", "rmmod", "insmod":
		for _, a := range args {
			if a == "-C" || strings.HasPrefix(a, "--config") || strings.HasPrefix(a, "-C") {
				// modprobe -C FILE reads FILE instead of modprobe.d: its
				// install and remove commands are not the judged files'.
				return "modprobe " + a + " reads its commands from a file other than the system's configuration (/etc/modprobe.d), which the judge does not read"
			}
		}
		for _, a := range args {
			if a == "-n" || a == "--dry-run" || a == "--show-depends" || a == "-D" || a == "-c" || a == "--showconfig" {
				return ""
			}
		}
		if ruleFamily(pol, "module") {
			return ""
		}
		return "only a kernel-module rule (its paths hold /etc/modprobe.d) loads or removes modules (the rule's paths: " + scopeList(pol.Scope) + ")"
	case "timedatectl":
		if len(ops) == 0 || ops[0] == "status" || ops[0] == "show" || ops[0] == "timesync-status" || ops[0] == "show-timesync" || strings.HasPrefix(ops[0], "list-") {
			return ""
		}
		if ruleFamily(pol, "time") {
			return ""
		}
		return "only a time-synchronisation rule changes the clock's settings"
	default:
		// Every other program is judged by judgeAction alone (reboot and
		// the like are refused there, ip but for the route cache).
		return ""
	}
}

// unitScope judges a unit verb under the rule's scope.
func unitScope(verb string, units []string, owned map[string]bool, pkgOp bool, pol EffectsPolicy) string {
	switch {
	case verb == "status" || verb == "show" || verb == "cat" || strings.HasPrefix(verb, "is-") || strings.HasPrefix(verb, "list-") ||
		verb == "daemon-reload" || verb == "reset-failed" || verb == "help" || verb == "--status-all" || verb == "show-environment":
		return ""
	case verb == "set-default":
		for _, u := range units {
			if !ruleUnit(u, pol) && !inScope("/etc/systemd/system/default.target", pol.Scope) {
				return "the rule's check does not read the default target"
			}
		}
		return ""
	}
	sshVerb := slices.Contains([]string{"reload", "restart", "try-restart", "reload-or-restart", "try-reload-or-restart", "condrestart", "condreload", "force-reload", "start"}, verb)
	var other []string
	for _, u := range units {
		switch {
		case ruleUnit(u, pol):
		case sshVerb && slices.Contains(sshDaemonUnits, u):
		case applyVerb(verb) && pol.configured[unitName(u)]:
		case pkgOp && packageUnit(u, owned):
		default:
			other = append(other, u)
		}
	}
	if len(other) == 0 {
		return ""
	}
	if len(pol.Units) == 0 {
		return verb + " " + strings.Join(other, " ") + ": the rule's check reads no unit (only sshd's reload and the units of packages it installs are run for it)"
	}
	return verb + " " + strings.Join(other, " ") + ": not among the units the rule's check reads (" + strings.Join(pol.Units, ", ") + ")"
}

// applyVerb reports whether verb makes a running unit read its
// configuration again (a restart or reload, never a stop).
func applyVerb(verb string) bool {
	switch verb {
	case "reload", "restart", "try-restart", "reload-or-restart", "try-reload-or-restart", "condrestart", "condreload", "force-reload":
		return true
	}
	return false
}

// configuredUnits are the units whose own configuration a command changed
// inside the rule's scope: a restart or reload of one applies the rule's
// change (systemctl restart systemd-logind after logind.conf), so it is
// the rule's. A file's unit is derived from its path (unitsOfConfig).
func configuredUnits(e nightshift.Effects, owned map[string]bool, pol EffectsPolicy) map[string]bool {
	out := map[string]bool{}
	for _, c := range e.Changes {
		if c.Change == nightshift.ChangeDeleted || owned[c.Path] || !inScope(c.Path, pol.Scope) {
			continue
		}
		for _, u := range unitsOfConfig(c.Path) {
			out[u] = true
		}
	}
	return out
}

// unitsOfConfig are the services that read p as their own configuration,
// by the conventions of systemd's daemons and Debian's packages:
// /etc/systemd/NAME.conf and NAME.conf.d/* are systemd-NAME's
// (logind.conf: systemd-logind.service); /etc/NAME.conf, /etc/NAME.d/*
// and /etc/NAME/* are NAME's, also with a trailing "d" added for a
// daemon named after its tool (/etc/audit/auditd.conf: auditd, the file's
// own name). A unit protected against stopping stays so: only restart and
// reload are allowed for it (applyVerb), and sshd's units are judged as
// sshd's.
func unitsOfConfig(p string) []string {
	rest, ok := strings.CutPrefix(p, "/etc/")
	if !ok || rest == "" {
		return nil
	}
	first, _, nested := strings.Cut(rest, "/")
	var names []string
	if first == "systemd" && nested {
		f := strings.TrimPrefix(rest, "systemd/")
		d, _, _ := strings.Cut(f, "/")
		if n, ok := strings.CutSuffix(strings.TrimSuffix(d, ".d"), ".conf"); ok && n != "system" && n != "user" {
			names = append(names, "systemd-"+n)
		}
	} else {
		names = append(names, strings.TrimSuffix(strings.TrimSuffix(first, ".d"), ".conf"))
		if nested {
			names = append(names, strings.TrimSuffix(path.Base(p), ".conf"))
		}
	}
	var out []string
	for _, n := range names {
		if n == "" || n == "ssh" || n == "default" || n == "security" || n == "pam.d" || n == "pam" {
			continue
		}
		out = append(out, unitName(n))
	}
	return out
}

// unitName is u as systemd names it: a name without a type suffix is a
// service.
func unitName(u string) string {
	u = strings.TrimSuffix(path.Base(u), "/")
	if i := strings.LastIndexByte(u, '.'); i >= 0 {
		switch u[i+1:] {
		case "service", "socket", "timer", "target", "mount", "automount", "swap", "path", "slice", "scope", "device":
			return u
		}
	}
	return u + ".service"
}

// ruleUnit reports whether u is one of the rule's units: named by Units,
// or with its unit file or drop-in directory in Scope. A pattern is
// never one.
func ruleUnit(u string, pol EffectsPolicy) bool {
	if strings.ContainsAny(u, "*?[") {
		return false
	}
	n := unitName(u)
	for _, r := range pol.Units {
		if unitName(r) == n {
			return true
		}
	}
	for _, s := range pol.Scope {
		if (path.Base(s) == n || path.Base(s) == n+".d") && isUnitDir(path.Dir(s)) {
			return true
		}
	}
	return false
}

func isUnitDir(d string) bool {
	switch d {
	case "/etc/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system", "/run/systemd/system":
		return true
	}
	return false
}

// packageUnit reports whether the package operation of the same command
// installed u (its unit file or init script is in a package's list).
func packageUnit(u string, owned map[string]bool) bool {
	if strings.ContainsAny(u, "*?[") {
		return false
	}
	n := unitName(u)
	for _, d := range []string{"/lib/systemd/system/", "/usr/lib/systemd/system/"} {
		if owned[d+n] {
			return true
		}
	}
	return strings.HasSuffix(n, ".service") && owned["/etc/init.d/"+strings.TrimSuffix(n, ".service")]
}

// sysctlScope judges a sysctl call under the rule's scope.
func sysctlScope(args []string, pol EffectsPolicy) string {
	keys := sysctlKeys(pol)
	family := ruleFamily(pol, "sysctl")
	write := false
	for _, a := range args {
		write = write || a == "-w" || a == "--write"
	}
	for i := 0; i < len(args); i++ {
		x := args[i]
		switch {
		case x == "--system":
			if !family {
				return "only a rule whose check reads kernel parameters loads the sysctl files"
			}
		case x == "-p" || x == "-f" || x == "--load" || strings.HasPrefix(x, "--load=") || (strings.HasPrefix(x, "-p") || strings.HasPrefix(x, "-f")) && len(x) > 2 && !strings.HasPrefix(x, "--"):
			file := "/etc/sysctl.conf"
			switch {
			case strings.HasPrefix(x, "--load="):
				file = strings.TrimPrefix(x, "--load=")
			case len(x) > 2 && !strings.HasPrefix(x, "--"):
				file = x[2:]
			case i+1 < len(args) && (args[i+1] == "-" || !strings.HasPrefix(args[i+1], "-")):
				i++
				file = args[i]
			}
			if file == "-" {
				return "it loads kernel parameters from its standard input, which the record does not show"
			}
			if !family || !inScope(file, pol.Scope) {
				return "only a rule whose check reads " + file + " loads it"
			}
		case strings.HasPrefix(x, "-"):
		default:
			k, v, isSet := strings.Cut(x, "=")
			if !isSet && !write {
				continue // a read
			}
			k = sysctlKey(k)
			if why, sib := siblingValue(pol, k, v, isSet); sib {
				if why != "" {
					return why
				}
				continue
			}
			if k == "net.ipv4.route.flush" || k == "net.ipv6.route.flush" {
				continue
			}
			if !keys[k] {
				if len(keys) == 0 {
					return "the rule's check reads no kernel parameter"
				}
				return k + " is not among the kernel parameters the rule's check reads (" + strings.Join(slices.Sorted(mapKeys(keys)), ", ") + ")"
			}
		}
	}
	return ""
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// sysctlKeys are the kernel parameters the rule's check reads: Sysctl,
// and the Keys that are parameters' names (a sysctl file's pattern).
func sysctlKeys(pol EffectsPolicy) map[string]bool {
	keys := map[string]bool{}
	for _, k := range pol.Sysctl {
		keys[sysctlKey(k)] = true
	}
	for _, k := range pol.Keys {
		if strings.Contains(k, ".") && strings.ToLower(k) == k {
			keys[sysctlKey(k)] = true
		}
	}
	return keys
}

// sysctlKey is a kernel parameter's name with dots (net/ipv4/ip_forward is
// net.ipv4.ip_forward), without the "-" prefix of sysctl.d lines.
func sysctlKey(k string) string {
	k = strings.TrimPrefix(strings.TrimSpace(k), "-")
	return strings.ReplaceAll(k, "/", ".")
}

// auditScope judges an auditctl call under the rule's scope.
func auditScope(args []string, pol EffectsPolicy) string {
	change := false
	for i, a := range args {
		switch {
		case a == "-l" || a == "-s" || a == "-v" || a == "--signal" || a == "-k" || a == "-i" || a == "-m":
		case a == "-D" || a == "-d" || a == "-W" || strings.HasPrefix(a, "-d") && len(a) > 2:
			return "it deletes audit rules"
		case (a == "-e" && i+1 < len(args) && args[i+1] == "2") || a == "-e2":
			return "auditctl -e 2 locks the audit rules until reboot (only the rules files, which auditd loads at boot, may make them immutable)"
		case (a == "-a" || a == "-A") && i+1 < len(args) && slices.Contains(strings.Split(args[i+1], ","), "never"):
			return "a never rule hides what it matches from the audit log"
		case (a == "-a" || a == "-A") && i+1 < len(args) && slices.Contains(strings.Split(args[i+1], ","), "exclude"):
			return "an exclude rule drops the records it matches from the audit log"
		case a == "-r" && i+1 < len(args) && args[i+1] != "0":
			return "auditctl -r limits the audit records per second: the kernel drops the rest"
		case a == "-R" && (i+1 >= len(args) || !inScope(args[i+1], pol.Scope)):
			return "auditctl -R loads rules from a file outside the rule's paths, which the record does not show"
		case strings.HasPrefix(a, "-"):
			change = true
		}
	}
	if !change || ruleFamily(pol, "audit") {
		return ""
	}
	return "only an audit rule (its paths or units are the audit system's) changes the kernel's audit rules"
}

// firewallRead reports whether a firewall program call only reads.
func firewallRead(name string, args []string) bool {
	if strings.HasSuffix(name, "-restore") {
		return false
	}
	switch name {
	case "nft":
		ops := operands(args)
		for _, a := range args {
			if a == "-c" || a == "--check" {
				return true
			}
		}
		return len(ops) > 0 && ops[0] == "list"
	case "ufw":
		ops := operands(args)
		return len(ops) > 0 && (ops[0] == "status" || ops[0] == "show" || ops[0] == "version")
	case "firewall-cmd":
		for _, a := range args {
			if !strings.HasPrefix(a, "--list") && !strings.HasPrefix(a, "--get") && !strings.HasPrefix(a, "--query") && a != "--state" && !strings.HasPrefix(a, "--zone") {
				return false
			}
		}
		return true
	}
	read := false
	for _, a := range args {
		switch a {
		case "-L", "--list", "-S", "--list-rules", "-C", "--check", "-n", "--numeric", "-v", "--verbose", "-x", "--exact", "--line-numbers":
			read = read || a == "-L" || a == "--list" || a == "-S" || a == "--list-rules" || a == "-C" || a == "--check"
		case "-t", "--table":
		default:
			if strings.HasPrefix(a, "-") && len(a) > 2 && !strings.HasPrefix(a, "--") && strings.Trim(a[1:], "LSnvx") == "" {
				read = true
				continue
			}
			if strings.HasPrefix(a, "-") {
				return false
			}
		}
	}
	return read
}

// remountHarm says what a mount call breaks: / or the system trees
// (/usr, /etc, /bin, /sbin, /lib, /lib64) made read-only or noexec; "".
func remountHarm(args []string) string {
	opts, ops := mountArgs(args)
	for _, o := range []string{"ro", "noexec"} {
		if !slices.Contains(opts, o) {
			continue
		}
		if len(ops) == 0 {
			return "it mounts with " + o + " without naming a mount point (mount -a: every file system of fstab)"
		}
		for _, m := range ops {
			switch path.Clean(m) {
			case "/", "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/var":
				return "it remounts " + m + " " + o + ": the system's programs or configuration would not run or change"
			}
		}
	}
	return ""
}

// ruleFamily reports whether the rule (its paths, units and kernel
// parameters) is about a family of recorded actions.
func ruleFamily(pol EffectsPolicy, family string) bool {
	anyUnit := func(names ...string) bool {
		for _, u := range pol.Units {
			for _, n := range names {
				if strings.HasPrefix(unitName(u), n) {
					return true
				}
			}
		}
		return false
	}
	anyPath := func(pred func(string) bool) bool { return slices.ContainsFunc(pol.Scope, pred) }
	switch family {
	case "sysctl":
		return len(pol.Sysctl) > 0 || anyPath(func(s string) bool { return isSysctlFile(s) || strings.HasSuffix(s, "/sysctl.d") })
	case "audit":
		return anyUnit("auditd.") || anyPath(func(s string) bool { return under(s, "/etc/audit") })
	case "firewall":
		return anyUnit("nftables.", "iptables.", "ip6tables.", "netfilter-persistent.", "ufw.", "firewalld.") ||
			anyPath(func(s string) bool {
				_, ok := underAny(s, []string{"/etc/nftables.conf", "/etc/nftables", "/etc/iptables", "/etc/ufw", "/etc/default/ufw", "/etc/sysconfig/iptables", "/etc/sysconfig/ip6tables", "/etc/firewalld"})
				return ok
			})
	case "mount":
		return anyPath(func(s string) bool { return s == "/etc/fstab" })
	case "module":
		return anyPath(func(s string) bool {
			_, ok := underAny(s, []string{"/etc/modprobe.d", "/etc/modprobe.conf", "/etc/modules-load.d", "/etc/modules"})
			return ok
		})
	case "time":
		return anyUnit("systemd-timesyncd.", "chrony.", "chronyd.", "ntp.", "ntpd.", "ntpsec.") ||
			anyPath(func(s string) bool {
				return strings.Contains(s, "timesyncd") || strings.Contains(s, "chrony") || strings.Contains(s, "/ntp")
			})
	}
	return false
}

func scopeUnder(scope []string, dir string) bool {
	return slices.ContainsFunc(scope, func(s string) bool { return under(s, dir) })
}

func scopeList(scope []string) string {
	if len(scope) == 0 {
		return "none"
	}
	return strings.Join(scope, ", ")
}
