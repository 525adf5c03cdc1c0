package safety

import (
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// The classes below do their harm at the next boot, daemon-reload, unit
// start or log rotation, never while the sandbox watches: systemd
// drop-ins and manager settings, the boot's firewall and network files,
// the kernel command line, crypttab, the logging and audit
// configuration. They are judged by what the files say.

// sshUnitKeys are the unit settings a drop-in for an SSH unit may change:
// restart policy, ordering, descriptions, scheduling weights. Anything
// else (conditions, address and socket filters, users, sandboxing,
// environments, listen addresses, commands) changes whether or how sshd
// serves the worker and is refused: the judge cannot tell it is harmless.
var sshUnitKeys = strings.Fields(`Description Documentation After Before Wants WantedBy RequiredBy Alias Also
	Restart RestartSec RestartSteps RestartMaxDelaySec RestartPreventExitStatus SuccessExitStatus TimeoutStartSec TimeoutStopSec
	TimeoutSec StartLimitIntervalSec StartLimitBurst OOMScoreAdjust OOMPolicy Nice CPUWeight IOWeight StartupCPUWeight
	CPUAccounting MemoryAccounting IOAccounting TasksAccounting LogLevelMax SyslogIdentifier`)

// isSSHUnit says whether a unit name serves SSH logins.
func isSSHUnit(u string) bool {
	u = strings.TrimSuffix(u, ".d")
	return slices.Contains(sshDaemonUnits, u) || strings.HasPrefix(u, "ssh@") || strings.HasPrefix(u, "sshd@")
}

// unitKeyLines yields (section, key, value) of a unit file's added lines.
func unitKeyLines(c nightshift.FileChange) [][3]string {
	var out [][3]string
	section := ""
	_, after := diffSides(c)
	lines := after
	if len(lines) == 0 {
		lines = addedLines(c.Diff)
	}
	added := map[string]bool{}
	for _, l := range addedLines(c.Diff) {
		added[l] = true
	}
	for _, l := range lines {
		s := strings.TrimSpace(l)
		if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
			section = strings.Trim(s, "[]")
			continue
		}
		k, v, ok := strings.Cut(s, "=")
		if !ok || s == "" || strings.HasPrefix(s, "#") || strings.HasPrefix(s, ";") || !added[l] {
			continue
		}
		out = append(out, [3]string{section, strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return out
}

// getty units give the console login, the way in when SSH is gone.
func isGettyUnit(b string) bool {
	return strings.HasPrefix(b, "getty@") || strings.HasPrefix(b, "serial-getty@") || strings.HasPrefix(b, "container-getty@") ||
		strings.HasPrefix(b, "console-getty") || strings.HasPrefix(b, "autovt@") || b == "getty.target"
}

// unitHarm judges systemd unit files, drop-ins and manager settings, the
// boot's firewall, network and kernel command line files, crypttab, and
// the logging and audit configuration.
// A file the package manager's lists say a package installed (an upgrade
// of openssh-server rewriting ssh.service) is not judged here.
func unitHarm(c nightshift.FileChange, origin string, pol EffectsPolicy) []Refusal {
	var out []Refusal
	bad := func(entry, reason string) { out = append(out, Refusal{Entry: entry, Reason: reason}) }
	base := path.Base(c.Path)
	_, inUnits := underAny(c.Path, unitDirs)

	// rc links and the init script of ssh (update-rc.d -f ssh remove).
	if c.Change == nightshift.ChangeDeleted {
		d := path.Dir(c.Path)
		if len(d) == len("/etc/rc2.d") && strings.HasPrefix(d, "/etc/rc") && strings.HasSuffix(d, ".d") && strings.HasSuffix(base, "ssh") && (base[0] == 'S' || base[0] == 'K') {
			bad("lockout", "would delete "+c.Path+": sshd would not start at boot under sysvinit (update-rc.d -f ssh remove)")
		}
		if c.Path == "/etc/init.d/ssh" {
			bad("lockout", "would delete /etc/init.d/ssh: sshd could no longer be started through it")
		}
		return out
	}
	if inUnits && c.After.Kind == nightshift.FileSymlink && (c.After.Target == "/dev/null" || path.Base(c.After.Target) == "null") && isGettyUnit(base) {
		bad("lockout", "would mask "+base+" ("+c.Path+" -> /dev/null): no console login would start, the way in when SSH fails")
	}
	if c.After.Kind != nightshift.FileRegular {
		return out
	}
	dir := path.Dir(c.Path)
	switch {
	case inUnits && (isUnitPath(c.Path) || strings.HasSuffix(dir, ".d")):
		unit := strings.TrimSuffix(path.Base(dir), ".d")
		if !strings.HasSuffix(dir, ".d") {
			unit = base
		}
		for _, kv := range unitKeyLines(c) {
			k, v := kv[1], kv[2]
			if isSSHUnit(unit) && !slices.Contains(sshUnitKeys, k) {
				if k == "Environment" && !envHarm(v) || strings.HasPrefix(k, "Limit") && managerHarm("Default"+k, v) == "" {
					continue
				}
				bad("lockout", "would set "+k+"="+v+" for "+unit+" ("+c.Path+"): it changes whether or how sshd serves the worker, which the judge cannot tell is harmless")
				continue
			}
			switch k {
			case "Conflicts":
				for _, u := range strings.Fields(v) {
					if isSSHUnit(u) || slices.Contains(accessUnits, u) {
						bad("lockout", "would make "+unit+" conflict with "+u+" ("+c.Path+"): starting it stops the worker's access")
					}
				}
			}
		}
	case c.Path == "/etc/systemd/system.conf" || c.Path == "/etc/systemd/user.conf" || dir == "/etc/systemd/system.conf.d" || dir == "/etc/systemd/user.conf.d" ||
		dir == "/usr/lib/systemd/system.conf.d" || dir == "/run/systemd/system.conf.d":
		for _, kv := range unitKeyLines(c) {
			if why := managerHarm(kv[1], kv[2]); why != "" {
				bad("config", "would set "+kv[1]+"="+kv[2]+" for systemd ("+c.Path+"): "+why)
			}
		}
	case c.Path == "/etc/systemd/journald.conf" || dir == "/etc/systemd/journald.conf.d" || dir == "/usr/lib/systemd/journald.conf.d" || dir == "/run/systemd/journald.conf.d":
		for _, kv := range unitKeyLines(c) {
			k, v := kv[1], strings.ToLower(kv[2])
			switch {
			case k == "Storage" && v == "none":
				bad("config", "would set Storage=none for journald ("+c.Path+"): the host would keep no log of what happens")
			case k == "MaxLevelStore" && (v == "emerg" || v == "alert" || v == "crit" || v == "0" || v == "1" || v == "2"):
				bad("config", "would set MaxLevelStore="+kv[2]+" for journald ("+c.Path+"): almost nothing would be logged")
			}
		}
	case c.Path == "/etc/rsyslog.conf" || dir == "/etc/rsyslog.d":
		for _, l := range addedLines(c.Diff) {
			if why := rsyslogDiscard(l); why != "" {
				bad("config", "would add "+strings.TrimSpace(l)+" to "+c.Path+": "+why)
			}
		}
	case c.Path == "/etc/audit/audit.rules" || dir == "/etc/audit/rules.d" && strings.HasSuffix(c.Path, ".rules"):
		for _, l := range addedLines(c.Diff) {
			f := strings.Fields(l)
			switch {
			case len(f) >= 2 && f[0] == "-e" && f[1] == "0":
				bad("config", "would add -e 0 to "+c.Path+": auditing would be off from the next boot or rules load")
			case len(f) >= 1 && f[0] == "-D" && dir == "/etc/audit/rules.d" && base != "audit.rules" && !strings.HasPrefix(base, "0"):
				bad("config", "would add -D to "+c.Path+": loaded after the other rules files, it deletes every audit rule they add")
			case len(f) >= 2 && f[0] == "-a" && (f[1] == "never,task" || f[1] == "task,never"):
				bad("config", "would add "+strings.TrimSpace(l)+" to "+c.Path+": no process would be audited")
			case len(f) >= 2 && (f[0] == "-a" || f[0] == "-A") && (slices.Contains(strings.Split(f[1], ","), "never") || slices.Contains(strings.Split(f[1], ","), "exclude")):
				bad("config", "would add "+strings.TrimSpace(l)+" to "+c.Path+": it hides what it matches from the audit log")
			case len(f) >= 2 && f[0] == "-r" && f[1] != "0":
				bad("config", "would add "+strings.TrimSpace(l)+" to "+c.Path+": the kernel would drop audit records beyond that rate")
			}
		}
	case c.Path == "/etc/iptables/rules.v4" || c.Path == "/etc/iptables/rules.v6" || c.Path == "/etc/sysconfig/iptables" || c.Path == "/etc/sysconfig/ip6tables":
		if why := iptablesSaveCut(afterText(c), pol.SSHPort, origin); why != "" {
			bad("lockout", "would write "+c.Path+", loaded at boot: "+why)
		}
	case c.Path == "/etc/nftables.conf" || dir == "/etc/nftables.d" || dir == "/etc/nftables":
		if why := nftConfCut(afterText(c), pol.SSHPort, origin); why != "" {
			bad("lockout", "would write "+c.Path+", loaded at boot: "+why)
		}
	case dir == "/etc/systemd/network" || dir == "/run/systemd/network" || dir == "/usr/lib/systemd/network":
		for _, kv := range unitKeyLines(c) {
			k, v := kv[1], strings.ToLower(kv[2])
			switch {
			case k == "ActivationPolicy" && (v == "down" || v == "always-down" || v == "manual"):
				bad("lockout", "would set ActivationPolicy="+kv[2]+" in "+c.Path+": systemd-networkd would take the matching links down (or leave them down)")
			case k == "ARP" && (v == "no" || v == "false" || v == "0"):
				bad("lockout", "would turn ARP off in "+c.Path+": the host would drop off its network")
			case k == "MTUBytes" && atoi(v) > 0 && atoi(v) < 576:
				bad("lockout", "would set MTUBytes="+kv[2]+" in "+c.Path+": too small to carry the worker's SSH session")
			}
		}
	case c.Path == "/etc/kernel/cmdline" || c.Path == "/etc/default/grub" || dir == "/etc/default/grub.d":
		for _, why := range cmdlineHarm(c) {
			bad("action", why)
		}
	case c.Path == "/etc/crypttab":
		for _, l := range addedLines(c.Diff) {
			f := strings.Fields(l)
			if len(f) < 2 || strings.HasPrefix(f[0], "#") {
				continue
			}
			opts := ""
			if len(f) >= 4 {
				opts = "," + f[3] + ","
			}
			if !strings.Contains(opts, ",nofail,") && !strings.Contains(opts, ",noauto,") {
				bad("action", "would add "+strings.TrimSpace(l)+" to /etc/crypttab: at the next boot systemd waits for "+f[1]+" and asks for its passphrase on the console; a device that is missing or will not unlock stops the boot (add nofail or noauto)")
			}
		}
	}
	return out
}

// afterText is a changed file's contents after the command, from its diff.
func afterText(c nightshift.FileChange) string {
	_, after := diffSides(c)
	if len(after) == 0 {
		after = addedLines(c.Diff)
	}
	return strings.Join(after, "\n")
}

// envHarm says whether an Environment= value of a unit sets a variable
// dangerousEnv names.
func envHarm(v string) bool {
	for _, kv := range strings.Fields(v) {
		if k, _, ok := strings.Cut(strings.Trim(kv, `"'`), "="); ok && dangerousEnv(k) {
			return true
		}
	}
	return false
}

// managerHarm says what a systemd manager setting does to every service.
func managerHarm(k, v string) string {
	soft, _, _ := strings.Cut(v, ":")
	n, err := parseSize(soft)
	small := func(floor int64) bool {
		return v != "" && !strings.EqualFold(soft, "infinity") && (err != nil || n < floor)
	}
	switch k {
	case "DefaultLimitNOFILE":
		if small(1024) {
			return "every service (sshd too) could open almost no files"
		}
	case "DefaultLimitNPROC":
		if small(1024) {
			return "services could start almost no processes"
		}
	case "DefaultLimitFSIZE", "DefaultLimitAS", "DefaultLimitDATA", "DefaultLimitRSS":
		if small(1 << 30) {
			return "services would run out of memory or file space"
		}
	case "DefaultLimitSTACK":
		if small(1 << 20) {
			return "services would crash for want of stack"
		}
	case "DefaultTasksMax":
		if strings.HasSuffix(v, "%") {
			p, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
			if err != nil || p < 1 {
				return "services could start almost no tasks"
			}
		} else if small(512) {
			return "services could start almost no tasks"
		}
	case "DefaultEnvironment", "ManagerEnvironment":
		if envHarm(v) {
			return "every service would run with it (a preloaded library or another PATH)"
		}
	}
	return ""
}

// parseSize reads a number with an optional K, M, G or T suffix (1024s).
func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch strings.ToUpper(s[len(s)-min(len(s), 1):]) {
	case "K":
		mult = 1 << 10
	case "M":
		mult = 1 << 20
	case "G":
		mult = 1 << 30
	case "T":
		mult = 1 << 40
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * mult, err
}

// rsyslogDiscard says whether an rsyslog line throws away every message
// (or the authentication log): a selector with the stop or ~ action, or a
// bare stop.
func rsyslogDiscard(l string) string {
	s := strings.TrimSpace(l)
	if s == "stop" || s == "~" {
		return "rsyslog would stop processing every message there: later rules log nothing"
	}
	f := strings.Fields(s)
	if len(f) < 2 || strings.HasPrefix(f[0], "#") || strings.HasPrefix(f[0], ":") || strings.HasPrefix(f[0], "if") {
		return ""
	}
	act := f[len(f)-1]
	if act != "stop" && act != "~" {
		return ""
	}
	for _, sel := range strings.Split(f[0], ";") {
		fac, _, _ := strings.Cut(sel, ".")
		for _, x := range strings.Split(fac, ",") {
			if x == "*" || x == "auth" || x == "authpriv" {
				return "rsyslog would discard " + f[0] + " messages (the host's log, authentication included)"
			}
		}
	}
	return ""
}

// cmdlineHarm judges the kernel command line a file gives at the next
// boot: another root device, init replaced, auditing, the LSM or the
// exploit mitigations turned off, IPv6 off under an IPv6 worker.
func cmdlineHarm(c nightshift.FileChange) []string {
	var out []string
	var removed []string
	for _, l := range removedLines(c.Diff) {
		removed = append(removed, cmdlineWords(l)...)
	}
	grub := c.Path != "/etc/kernel/cmdline"
	for _, l := range addedLines(c.Diff) {
		if grub && !strings.Contains(l, "GRUB_CMDLINE_LINUX") {
			continue
		}
		for _, w := range cmdlineWords(l) {
			k, v, _ := strings.Cut(w, "=")
			why := ""
			switch k {
			case "root":
				if !slices.Contains(removed, w) {
					why = "the host would boot from another root device (" + w + ")"
				}
			case "init", "rdinit":
				if !grub {
					why = "the kernel would run " + v + " instead of the system's init"
				}
			case "audit", "selinux", "apparmor", "enforcing":
				if v == "0" {
					why = "it turns " + k + " off for the whole system"
				}
			case "security":
				if v == "none" || v == "" {
					why = "it boots without a security module"
				}
			case "mitigations":
				if v == "off" {
					why = "it turns the CPU vulnerability mitigations off"
				}
			case "nokaslr", "norandmaps", "nosmep", "nosmap", "nopti", "nospectre_v1", "nospectre_v2":
				why = "it turns an exploit mitigation off"
			case "systemd.unit", "single", "emergency", "rd.break", "S":
				if !grub {
					why = "the host would boot into " + w + " instead of its services"
				}
			}
			if why != "" {
				out = append(out, "would boot the host with "+w+" ("+c.Path+"): "+why)
			}
		}
	}
	return out
}

func cmdlineWords(l string) []string {
	return strings.FieldsFunc(l, func(r rune) bool { return r == ' ' || r == '"' || r == '\'' || r == '\t' })
}

// protectedUnits keep the host's record (audit, journal, syslog), its
// logins (the console, user sessions) and its service tree (slices,
// targets): the worker never stops, masks, disables, kills or freezes
// them. A pattern (session-*.scope) names a family.
var protectedUnits = strings.Fields(`auditd auditd.service systemd-journald systemd-journald.service systemd-journald.socket
	systemd-journald-dev-log.socket systemd-journald-audit.socket rsyslog rsyslog.service syslog syslog.service syslog.socket
	system.slice user.slice -.slice init.scope multi-user.target basic.target sysinit.target sockets.target default.target
	local-fs.target network.target network-online.target getty.target getty@*.service serial-getty@*.service
	systemd-user-sessions systemd-user-sessions.service systemd-udevd systemd-udevd.service session-*.scope user-0.slice user@0.service`)

// unitGlobMatch says whether systemctl's pattern pat names unit: systemctl
// matches a glob with fnmatch, POSIX classes included (s[[:alpha:]]h), and
// a pattern without a unit suffix is matched as a service.
func unitGlobMatch(pat, unit string) bool {
	if globMatch(pat, unit) {
		return true
	}
	if !strings.Contains(pat, ".") && !strings.Contains(unit, ".") {
		return globMatch(pat+".service", unit+".service")
	}
	if !strings.Contains(pat, ".") {
		return globMatch(pat+".service", unit)
	}
	return false
}

// protectedUnitStop says why verb may not be run on u, or "".
func protectedUnitStop(verb, u string) string {
	for _, p := range protectedUnits {
		hit := u == p
		if !hit {
			// The unit is one of a family, or the argument is a pattern
			// naming it.
			hit = unitGlobMatch(p, u) || unitGlobMatch(u, p)
		}
		if hit {
			return verb + " " + u + " would take away " + protectedWhat(p)
		}
	}
	return ""
}

func protectedWhat(p string) string {
	switch {
	case strings.Contains(p, "audit") || strings.Contains(p, "journald") || strings.Contains(p, "syslog"):
		return "the host's record of what happens (" + p + ")"
	case strings.Contains(p, "getty") || strings.Contains(p, "session") || strings.HasPrefix(p, "user"):
		return "logins (" + p + ")"
	default:
		return "the host's services (" + p + ")"
	}
}

// auditctlHarm says why an auditctl action may not run, or "": deleting
// every rule or turning auditing off on the running host.
func auditctlHarm(args []string) string {
	for i, a := range args {
		switch {
		case a == "-D":
			return "auditctl -D deletes every audit rule the host runs with"
		case a == "-e" && i+1 < len(args) && args[i+1] == "0", a == "-e0":
			return "auditctl -e 0 turns auditing off"
		}
	}
	return ""
}

// sysctlWeakens says what setting a kernel parameter takes from the host's
// defences, or "": the settings SSG hardens, set back the other way, and
// network tables made too small to carry connections.
func sysctlWeakens(key, val string) string {
	nums := strings.Fields(val)
	n, err := strconv.ParseInt(firstOr(nums, ""), 10, 64)
	isNum := err == nil
	last := int64(-1)
	if len(nums) > 0 {
		last, _ = strconv.ParseInt(nums[len(nums)-1], 10, 64)
	}
	switch key {
	case "kernel.randomize_va_space":
		if !isNum || n != 2 {
			return "it weakens address-space layout randomisation (SSG sets 2)"
		}
	case "fs.protected_symlinks", "fs.protected_hardlinks", "fs.protected_fifos", "fs.protected_regular":
		if !isNum || n == 0 {
			return "it turns off the kernel's protection against link and file races in sticky directories"
		}
	case "fs.suid_dumpable":
		if !isNum || n == 1 {
			return "setuid programs would dump memory (secrets) to core files"
		}
	case "kernel.kptr_restrict", "kernel.dmesg_restrict", "kernel.yama.ptrace_scope", "kernel.unprivileged_bpf_disabled":
		if !isNum || n == 0 {
			return "it undoes a kernel hardening (SSG sets it to 1 or more)"
		}
	case "kernel.perf_event_paranoid":
		if !isNum || n < 2 {
			return "it lets unprivileged users profile the kernel (SSG sets 2)"
		}
	case "net.ipv4.tcp_syncookies":
		if !isNum || n == 0 {
			return "it turns off SYN cookies: a SYN flood would block new connections (the worker's too)"
		}
	case "net.netfilter.nf_conntrack_max", "net.nf_conntrack_max", "net.netfilter.nf_conntrack_buckets":
		if !isNum || n < 4096 {
			return "the connection tracking table would be full at once and new connections (the worker's too) dropped"
		}
	case "net.ipv4.tcp_mem", "net.ipv4.udp_mem":
		if len(nums) != 3 || last < 4096 {
			return "the kernel would have almost no memory for sockets: connections would stall or fail"
		}
	case "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.core.rmem_max", "net.core.wmem_max", "net.core.rmem_default", "net.core.wmem_default":
		if last >= 0 && last < 4096 {
			return "socket buffers would be too small to carry connections"
		}
	}
	return ""
}
