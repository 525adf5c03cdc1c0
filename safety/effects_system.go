package safety

import (
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// systemHarm judges changes of system configuration whose harm shows at the
// next boot, login or account creation (login.defs, sysctl files,
// /etc/hosts, tcp wrappers), files created where nothing reads them
// (/etc/ssh, /boot), and programs that hide the system's own in root's
// PATH.
func systemHarm(e nightshift.Effects, c nightshift.FileChange, pkgOp bool) []Refusal {
	if c.Change != nightshift.ChangeModified && c.Change != nightshift.ChangeCreated {
		return nil
	}
	var out []Refusal
	bad := func(entry, reason string) { out = append(out, Refusal{Entry: entry, Reason: reason}) }
	added := addedLines(c.Diff)
	switch {
	case c.Path == "/etc/login.defs":
		for _, l := range added {
			if why := loginDefsHarm(l); why != "" {
				bad("config", "would set "+strings.Join(strings.Fields(l), " ")+" in /etc/login.defs: "+why)
			}
		}
	case isSysctlFile(c.Path):
		for _, l := range added {
			k, v, ok := strings.Cut(l, "=")
			k = strings.TrimPrefix(strings.TrimSpace(k), "-")
			if !ok || k == "" || strings.HasPrefix(k, "#") || strings.HasPrefix(k, ";") {
				continue
			}
			if why := sysctlHarm(k, strings.TrimSpace(v), e.Origin); why != "" {
				bad("config", "would set "+k+" = "+strings.TrimSpace(v)+" at every boot ("+c.Path+"): "+why)
			}
		}
	case c.Path == "/etc/hosts":
		before, after := diffSides(c)
		if c.After.Kind == nightshift.FileRegular && (c.Change == nightshift.ChangeCreated || hasLocalhost(before)) && !hasLocalhost(after) {
			bad("config", "would leave /etc/hosts without localhost (127.0.0.1 or ::1): programs that reach localhost by name would fail")
		}
	case c.Path == "/etc/audit/audit.rules" || path.Dir(c.Path) == "/etc/audit/rules.d" && strings.HasSuffix(c.Path, ".rules"):
		for _, l := range added {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "-f" && f[1] == "2" {
				bad("config", "would add -f 2 to "+c.Path+": the kernel would panic whenever auditing fails (a backlog overflow, a full disk) from the next boot or rules load; a host-wide crash policy is a decision for its owners")
			}
		}
	case c.Path == "/etc/hosts.deny":
		for _, l := range added {
			if tcpdDenies(l, e.Origin) && !tcpdAllowed(e) {
				// Debian's sshd links libwrap (Debian 12:
				// `ldd /usr/sbin/sshd` lists libwrap.so.0; Red Hat's
				// does not), so hosts.deny refuses its connections
				// unless hosts.allow permits them first.
				bad("lockout", "would add "+strings.TrimSpace(l)+" to /etc/hosts.deny: sshd honours tcp wrappers on Debian (it links libwrap) and would refuse the worker's next connection unless /etc/hosts.allow, changed by the same command, permits sshd from the worker's address")
			}
		}
	}
	target := c.After.Target
	if !path.IsAbs(target) {
		target = path.Join(path.Dir(c.Path), target)
	}
	if c.After.Kind == nightshift.FileSymlink && strings.HasPrefix(path.Clean(target), "/dev/") &&
		(slices.Contains(vitalFiles, c.Path) || strings.HasPrefix(c.Path, "/etc/pam.d/") || c.Path == "/etc/ssh/sshd_config") {
		bad("delete-system", "would replace "+c.Path+" with a link to "+c.After.Target+", as good as emptying it")
	}
	if c.Path == "/etc/ssh/sshd_not_to_be_run" && c.Change == nightshift.ChangeCreated {
		// Debian's ssh.service and init script do not start sshd while
		// it exists (ConditionPathExists=!/etc/ssh/sshd_not_to_be_run).
		bad("lockout", "would create /etc/ssh/sshd_not_to_be_run: Debian's ssh.service would not start sshd again")
		return out
	}
	if c.Change == nightshift.ChangeCreated && c.After.Kind != nightshift.FileDir {
		if why := inertSSHFile(c.Path, e.SSHD); why != "" {
			bad("inert", "would create "+c.Path+", which "+why)
		}
		if under(c.Path, "/boot") && !pkgOp && !under(c.Path, "/boot/grub") && !under(c.Path, "/boot/grub2") && !under(c.Path, "/boot/efi") {
			bad("inert", "would create "+c.Path+": only the package manager and the boot loader's tools write /boot (this command changed no package)")
		}
	}
	return out
}

// loginDefsHarm says what a login.defs line breaks, or "".
func loginDefsHarm(l string) string {
	f := strings.Fields(l)
	if len(f) < 2 || strings.HasPrefix(f[0], "#") {
		return ""
	}
	key, val := f[0], f[1]
	n, err := strconv.Atoi(val)
	switch key {
	case "UID_MIN", "GID_MIN":
		if err != nil || n < 100 {
			return "new accounts would get system IDs (UID 0 is root's)"
		}
	case "UID_MAX", "GID_MAX", "SYS_UID_MAX", "SYS_GID_MAX", "SYS_UID_MIN", "SYS_GID_MIN":
		if err != nil || n <= 0 {
			return "account creation would get an ID range that cannot work"
		}
	case "ENCRYPT_METHOD":
		switch strings.ToUpper(val) {
		case "SHA512", "SHA256", "YESCRYPT", "GOST_YESCRYPT", "BCRYPT":
		default:
			return "passwords would be hashed with " + val + ", weaker than the host's (or not at all)"
		}
	case "SHA_CRYPT_MIN_ROUNDS", "SHA_CRYPT_MAX_ROUNDS":
		if err != nil || n < 1000 {
			return "passwords would be hashed with too few rounds"
		}
	}
	return ""
}

func isSysctlFile(p string) bool {
	if p == "/etc/sysctl.conf" {
		return true
	}
	switch path.Dir(p) {
	case "/etc/sysctl.d", "/run/sysctl.d", "/usr/lib/sysctl.d", "/lib/sysctl.d", "/usr/local/lib/sysctl.d":
		return strings.HasSuffix(p, ".conf")
	}
	return false
}

// sysctlHarm says what setting a kernel parameter does to the host, or ""
// when it is not known to harm: parameters that turn a recoverable kernel
// error into a crash, cut the network, stop new processes or connections,
// or reserve the host's memory.
func sysctlHarm(key, val, origin string) string {
	key = strings.ReplaceAll(strings.TrimSpace(key), "/", ".")
	val = strings.Trim(strings.TrimSpace(val), `"'`)
	nums := strings.Fields(val)
	n, numErr := strconv.ParseInt(firstOr(nums, ""), 10, 64)
	isNum := numErr == nil
	parts := strings.Split(key, ".")
	last := parts[len(parts)-1]
	switch {
	// kernel.panic_on_oops=1 is left alone: SSG and the DISA STIG set it
	// (an oops can be an exploit under way, and the host stops rather
	// than run on in a state it cannot trust); the others only trade
	// availability away.
	case key == "vm.panic_on_oom" || key == "kernel.panic_on_warn" ||
		key == "kernel.panic_on_rcu_stall" || key == "kernel.panic_on_unrecovered_nmi" || key == "kernel.panic_on_io_nmi" ||
		key == "kernel.hardlockup_panic" || key == "kernel.softlockup_panic" || key == "kernel.hung_task_panic" ||
		key == "kernel.unknown_nmi_panic" || key == "kernel.panic_on_stackoverflow":
		if !isNum || n != 0 {
			return "a recoverable kernel condition (an out-of-memory, a warning, a stall) would crash the host"
		}
	case key == "kernel.sysrq":
		if !isNum || n == 1 || n&0x80 != 0 {
			return "it enables the magic SysRq key's reboot and crash functions"
		}
	case strings.HasPrefix(key, "net.ipv6.conf.") && last == "disable_ipv6":
		if !isNum || n != 0 {
			if a, err := netip.ParseAddr(origin); err != nil || !a.Unmap().Is4() {
				return "it removes IPv6 from the host, and the worker's session is not known to be IPv4 (its address: " + orUnknown(origin) + ")"
			}
		}
	case key == "net.ipv4.ip_local_port_range":
		if len(nums) != 2 {
			return "the port range " + val + " cannot be judged"
		}
		lo, _ := strconv.Atoi(nums[0])
		hi, _ := strconv.Atoi(nums[1])
		if hi-lo+1 < 1024 || lo < 1024 {
			return "outgoing connections would run out of ports (or take the privileged ones)"
		}
	case strings.HasPrefix(key, "net.ipv4.conf.") && last == "arp_ignore":
		if isNum && n >= 8 {
			return "the host would answer no ARP request and drop off its network"
		}
	case key == "net.ipv4.ip_default_ttl" || strings.HasPrefix(key, "net.ipv6.conf.") && last == "hop_limit":
		if !isNum || n < 32 {
			return "the host's packets would die before reaching the worker"
		}
	case key == "vm.nr_hugepages" || key == "vm.nr_overcommit_hugepages":
		if !isNum || n > 0 {
			return "it reserves memory no ordinary program may use (no hardening rule needs huge pages)"
		}
	case key == "vm.overcommit_memory":
		if !isNum || n == 2 {
			return "strict overcommit makes allocations fail across the host"
		}
	case key == "vm.min_free_kbytes":
		if !isNum || n > 1<<20 {
			return "it keeps more than a gigabyte of memory from every program"
		}
	case key == "kernel.pid_max" || key == "kernel.threads-max":
		if !isNum || n < 4096 {
			return "the host could no longer start processes"
		}
	case key == "fs.file-max" || key == "fs.nr_open":
		if !isNum || n < 8192 {
			return "the host could no longer open files"
		}
	case key == "kernel.core_pattern" || key == "kernel.modprobe" || key == "kernel.hotplug" || key == "kernel.poweroff_cmd":
		prog := val
		if key == "kernel.core_pattern" {
			if !strings.HasPrefix(val, "|") {
				return "" // a file name pattern
			}
			prog = firstOr(strings.Fields(strings.TrimPrefix(val, "|")), "")
		}
		prog = firstOr(strings.Fields(prog), "")
		switch prog {
		case "", "/bin/false", "/usr/bin/false", "/bin/true", "/usr/bin/true", "/sbin/modprobe", "/usr/sbin/modprobe",
			"/lib/systemd/systemd-coredump", "/usr/lib/systemd/systemd-coredump", "/usr/share/apport/apport", "/sbin/poweroff", "/usr/sbin/poweroff":
			return ""
		}
		return "the kernel would run " + prog + " as root later, outside the sandbox"
	case key == "net.core.somaxconn" || key == "net.ipv4.tcp_max_syn_backlog":
		if !isNum || n < 16 {
			return "services could no longer accept connections"
		}
	}
	return ""
}

func firstOr(s []string, d string) string {
	if len(s) == 0 {
		return d
	}
	return s[0]
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// sysctlActions judges the kernel parameters recorded sysctl actions set:
// `sysctl [-w] KEY=VALUE` and `sysctl -p FILE` / `--load=FILE` of a file the
// same command wrote (a file it did not write is the host's own, loaded at
// boot already).
func sysctlActions(e nightshift.Effects) []Refusal {
	var out []Refusal
	for _, a := range e.Actions {
		if len(a.Argv) == 0 || path.Base(a.Argv[0]) != "sysctl" {
			continue
		}
		args := a.Argv[1:]
		for i := 0; i < len(args); i++ {
			x := args[i]
			var file string
			switch {
			case x == "-p" || x == "--load":
				if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
					i++
					file = args[i]
				} else {
					file = "/etc/sysctl.conf"
				}
			case strings.HasPrefix(x, "--load="):
				file = strings.TrimPrefix(x, "--load=")
			case strings.HasPrefix(x, "-p") && len(x) > 2:
				file = x[2:]
			case strings.HasPrefix(x, "-"):
				continue
			default:
				k, v, ok := strings.Cut(x, "=")
				if ok {
					if why := sysctlHarm(k, v, e.Origin); why != "" {
						out = append(out, Refusal{Entry: "action", Reason: "would run " + a.String() + ": " + why})
					}
				}
				continue
			}
			for _, c := range e.Changes {
				if c.Path != file || c.Change == nightshift.ChangeDeleted || isSysctlFile(file) {
					continue // the sysctl files are judged as files
				}
				for _, l := range addedLines(c.Diff) {
					if k, v, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(strings.TrimSpace(k), "#") {
						if why := sysctlHarm(strings.TrimPrefix(strings.TrimSpace(k), "-"), v, e.Origin); why != "" {
							out = append(out, Refusal{Entry: "action", Reason: "would run " + a.String() + ", loading " + strings.TrimSpace(l) + ": " + why})
						}
					}
				}
			}
		}
	}
	return out
}

// diffSides rebuilds a file's lines before and after from its diff (the
// whole file when the diff has every line, as the sandbox gives for the
// small files judged whole).
func diffSides(c nightshift.FileChange) (before, after []string) {
	for _, l := range strings.Split(c.Diff, "\n") {
		switch {
		case strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "@@") || strings.HasPrefix(l, `\`):
		case strings.HasPrefix(l, "-"):
			before = append(before, l[1:])
		case strings.HasPrefix(l, "+"):
			after = append(after, l[1:])
		case strings.HasPrefix(l, " "):
			before = append(before, l[1:])
			after = append(after, l[1:])
		}
	}
	return before, after
}

func hasLocalhost(lines []string) bool {
	for _, l := range lines {
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		f := strings.Fields(l)
		if len(f) >= 2 && (strings.HasPrefix(f[0], "127.") || f[0] == "::1") && slices.Contains(f[1:], "localhost") {
			return true
		}
	}
	return false
}

// tcpdDenies says whether a hosts.deny line refuses sshd's connections from
// origin (a client list it cannot tell counts as refusing).
func tcpdDenies(l, origin string) bool {
	if i := strings.IndexByte(l, '#'); i >= 0 {
		l = l[:i]
	}
	daemons, rest, ok := strings.Cut(l, ":")
	if !ok {
		return false
	}
	clients, _, _ := strings.Cut(rest, ":")
	return tcpdList(daemons, func(d string) bool { return d == "ALL" || d == "sshd" || strings.HasPrefix(d, "sshd@") }) &&
		tcpdList(clients, func(cl string) bool { m, known := tcpdClient(cl, origin); return m || !known })
}

// tcpdList matches a hosts_access list ("A B EXCEPT C").
func tcpdList(list string, match func(string) bool) bool {
	items := strings.FieldsFunc(list, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' })
	i, hit := 0, false
	for ; i < len(items) && items[i] != "EXCEPT"; i++ {
		hit = hit || match(items[i])
	}
	if !hit || i >= len(items) {
		return hit
	}
	return !tcpdList(strings.Join(items[i+1:], " "), match)
}

// tcpdClient matches one client pattern against the worker's address.
func tcpdClient(p, origin string) (match, known bool) {
	if p == "ALL" || p == "UNKNOWN" || p == "PARANOID" {
		return true, true
	}
	if p == "LOCAL" {
		return false, true
	}
	a, err := netip.ParseAddr(origin)
	if err != nil {
		return false, false
	}
	p = strings.Trim(p, "[]")
	if net, mask, ok := strings.Cut(p, "/"); ok {
		if pre, err := netip.ParsePrefix(p); err == nil {
			return pre.Contains(a), true
		}
		n, err1 := netip.ParseAddr(net)
		m, err2 := netip.ParseAddr(mask)
		if err1 == nil && err2 == nil && n.Is4() && m.Is4() && a.Is4() {
			nb, mb, ab := n.As4(), m.As4(), a.As4()
			for i := range 4 {
				if nb[i]&mb[i] != ab[i]&mb[i] {
					return false, true
				}
			}
			return true, true
		}
		return false, false
	}
	if b, err := netip.ParseAddr(p); err == nil {
		return b == a.Unmap(), true
	}
	if strings.HasSuffix(p, ".") && strings.Trim(p, "0123456789.") == "" {
		return strings.HasPrefix(origin, p), true
	}
	return false, false
}

// tcpdAllowed says whether the same command's /etc/hosts.allow (its whole
// contents are in the diff) permits sshd from the worker's address.
func tcpdAllowed(e nightshift.Effects) bool {
	for _, c := range e.Changes {
		if c.Path != "/etc/hosts.allow" || c.Change == nightshift.ChangeDeleted {
			continue
		}
		_, after := diffSides(c)
		for _, l := range after {
			if i := strings.IndexByte(l, '#'); i >= 0 {
				l = l[:i]
			}
			daemons, rest, ok := strings.Cut(l, ":")
			if !ok {
				continue
			}
			clients, _, _ := strings.Cut(rest, ":")
			if tcpdList(daemons, func(d string) bool { return d == "ALL" || d == "sshd" }) &&
				tcpdList(clients, func(cl string) bool { m, _ := tcpdClient(cl, e.Origin); return m }) {
				return true
			}
		}
	}
	return false
}

// sshReads are the names in /etc/ssh that sshd or ssh read.
var sshReads = strings.Fields("sshd_config ssh_config moduli ssh_known_hosts ssh_known_hosts2 shosts.equiv sshrc")

// inertSSHFile says why a file created under /etc/ssh is read by nothing,
// or "": sshd reads sshd_config, sshd_config.d/*.conf, its host keys and
// the files its effective configuration names; a backup copy is kept on
// purpose.
func inertSSHFile(p string, s *nightshift.SSHDCheck) string {
	if !under(p, "/etc/ssh") {
		return ""
	}
	base := path.Base(p)
	lower := strings.ToLower(base)
	for _, b := range []string{".bak", ".orig", ".old", ".save", ".backup", ".dpkg-", ".ucf-", "~", ".nightshift"} {
		if strings.Contains(lower, b) {
			return ""
		}
	}
	dir := path.Dir(p)
	switch {
	case dir == "/etc/ssh/sshd_config.d" || dir == "/etc/ssh/ssh_config.d":
		if strings.HasSuffix(base, ".conf") {
			return ""
		}
		return "sshd and ssh do not read: they include only *.conf from " + dir
	case dir != "/etc/ssh":
		return "" // a directory of the command's own (keys, principals)
	case slices.Contains(sshReads, base) || strings.HasPrefix(base, "ssh_host_") || strings.HasSuffix(base, ".pub"):
		return ""
	}
	if s != nil {
		for _, k := range []string{"banner", "revokedkeys", "trustedusercakeys", "authorizedprincipalsfile", "hostkey", "hostcertificate", "moduli", "authorizedkeysfile"} {
			if slices.Contains(strings.Fields(s.Effective[k]), p) {
				return ""
			}
		}
	}
	return "neither sshd nor ssh reads (sshd's configuration is sshd_config and sshd_config.d/*.conf; a file sshd_config names, like a Banner, is read)"
}

// shadowHarm refuses programs that hide a system program in root's PATH:
// root (and the worker's commands) would run them instead.
func shadowHarm(e nightshift.Effects) []Refusal {
	var out []Refusal
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for k := range e.Shadows {
			if !yield(k) {
				return
			}
		}
	}) {
		out = append(out, Refusal{Entry: "program", Reason: "would create " + p + ", which root's PATH finds before " + e.Shadows[p] + ": every later " + path.Base(p) + " would run it instead"})
	}
	return out
}

// sudoHarm judges, for a login that is not root, the sudoers changes that
// take root from it. The worker runs `sudo -n -- sh -c COMMAND` without a
// terminal, so it needs a grant without a password (NOPASSWD or
// !authenticate), no requiretty, and no noexec (which stops sh from
// starting any program). A sudoers.d file deleted may hold the grant; its
// contents are not in the evidence, so the deletion is refused.
func sudoHarm(e nightshift.Effects, c nightshift.FileChange, pol EffectsPolicy) []Refusal {
	if pol.Login == "root" || c.Path != "/etc/sudoers" && path.Dir(c.Path) != "/etc/sudoers.d" {
		return nil
	}
	if base := path.Base(c.Path); path.Dir(c.Path) == "/etc/sudoers.d" && (strings.Contains(base, ".") || strings.HasSuffix(base, "~")) {
		return nil // sudo's @includedir skips these names
	}
	who := "would take sudo from " + pol.Login + " (the worker runs sudo -n without a terminal)"
	if c.Change == nightshift.ChangeDeleted {
		return []Refusal{{Entry: "lockout", Reason: who + ": it deletes " + c.Path + ", which may hold its grant"}}
	}
	if c.Change != nightshift.ChangeModified && c.Change != nightshift.ChangeCreated {
		return nil
	}
	var groups []string
	known := false
	if e.PAM != nil {
		groups, known = e.PAM.Groups[pol.Login]
	}
	// matches says whether a sudoers user list names the login (an alias
	// or a group whose members are not known counts as naming it).
	matches := func(list string) bool {
		for _, it := range strings.Split(list, ",") {
			it = strings.TrimSpace(it)
			switch {
			case it == "" || strings.HasPrefix(it, "!"):
			case it == "ALL" || it == pol.Login:
				return true
			case strings.HasPrefix(it, "%"):
				g := strings.TrimPrefix(strings.TrimPrefix(it, "%"), ":")
				if !known || slices.Contains(groups, g) || strings.HasPrefix(g, "#") {
					return true
				}
			case strings.HasPrefix(it, "#") || it == strings.ToUpper(it) && strings.ContainsAny(it, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"):
				return true // a UID or a User_Alias
			}
		}
		return false
	}
	grants := func(lines []string) []string {
		var out []string
		for _, l := range lines {
			s := strings.TrimSpace(l)
			f := strings.Fields(s)
			if len(f) < 2 || strings.HasPrefix(s, "#") || strings.Contains(f[0], "_Alias") {
				continue
			}
			if d, ok := strings.CutPrefix(f[0], "Defaults"); ok {
				if strings.Contains(s, "!authenticate") && (d == "" || strings.HasPrefix(d, ":") && matches(d[1:])) {
					out = append(out, s)
				}
				continue
			}
			if matches(f[0]) && (strings.Contains(s, "NOPASSWD:") || strings.Contains(s, "!authenticate")) {
				out = append(out, s)
			}
		}
		return out
	}
	var out []Refusal
	if gone := grants(removedLines(c.Diff)); len(gone) > 0 && len(grants(addedLines(c.Diff))) == 0 {
		out = append(out, Refusal{Entry: "lockout", Reason: who + ": it removes " + gone[0] + " from " + c.Path + ", a grant without a password"})
	}
	for _, l := range addedLines(c.Diff) {
		s := strings.TrimSpace(l)
		f := strings.Fields(s)
		if len(f) < 2 || !strings.HasPrefix(f[0], "Defaults") {
			continue
		}
		d := strings.TrimPrefix(f[0], "Defaults")
		if d != "" && !(strings.HasPrefix(d, ":") && matches(d[1:])) && !strings.HasPrefix(d, ">") && !strings.HasPrefix(d, "@") {
			continue // another user's or a command's defaults
		}
		for _, o := range strings.Split(strings.Join(f[1:], ""), ",") {
			switch strings.TrimSpace(o) {
			case "requiretty":
				out = append(out, Refusal{Entry: "lockout", Reason: who + ": " + s + " in " + c.Path + " makes sudo refuse commands run without a terminal"})
			case "noexec":
				out = append(out, Refusal{Entry: "lockout", Reason: who + ": " + s + " in " + c.Path + " stops what sudo runs from starting any program (the worker's sh -c could run nothing)"})
			}
		}
	}
	return out
}
