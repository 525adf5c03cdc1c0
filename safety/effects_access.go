package safety

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nightshift-dev/nightshift"
)

// passwordHarm judges a change of the account files.
func passwordHarm(c nightshift.FileChange, pol EffectsPolicy, changed map[string]bool) []Refusal {
	// The backups the shadow tools keep (/etc/shadow-, …) are judged as
	// the files they back up: a tool that restores from them, or an
	// administrator, brings their contents back.
	file := strings.TrimSuffix(c.Path, "-")
	if file != "/etc/shadow" && file != "/etc/passwd" && file != "/etc/gshadow" {
		return nil
	}
	if c.Change != nightshift.ChangeModified && c.Change != nightshift.ChangeCreated {
		return nil
	}
	if c.Diff == "" {
		return []Refusal{{Entry: "password", Reason: "would change " + c.Path + ", whose diff could not be captured to judge"}}
	}
	if strings.HasPrefix(c.Diff, "Binary files") || strings.ContainsRune(c.Diff, 0) {
		return []Refusal{{Entry: "password", Reason: "would change " + c.Path + " into content that is not text (its change is not a text diff that can be judged)"}}
	}
	removed, added := map[string]string{}, map[string]string{}
	for _, l := range strings.Split(c.Diff, "\n") {
		if strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++") || len(l) < 2 {
			continue
		}
		user, _, _ := strings.Cut(l[1:], ":")
		switch l[0] {
		case '-':
			removed[user] = l[1:]
		case '+':
			added[user] = l[1:]
		}
	}
	var out []Refusal
	bad := func(format string, a ...any) {
		out = append(out, Refusal{Entry: "password", Reason: fmt.Sprintf(format, a...)})
	}
	vital := func(u string) bool { return u == "root" || u == pol.Login }
	// A backup the shadow tools rewrote along with its file holds the
	// file's old contents, hashes included: a new hash there is the old
	// password, not a new one.
	toolBackup := c.Path != file && changed[file]
	for u := range removed {
		if _, still := added[u]; !still && vital(u) && file != "/etc/gshadow" {
			bad("would remove %s's entry from %s", u, c.Path)
		}
	}
	today := int(time.Now().Unix() / 86400)
	for u, line := range added {
		f := strings.Split(line, ":")
		switch file {
		case "/etc/shadow":
			if len(f) >= 2 && f[1] == "" {
				bad("would blank %s's password in %s", u, c.Path)
			}
			if old := strings.Split(removed[u], ":"); len(f) >= 2 && len(old) >= 2 && vital(u) && f[1] != old[1] && usableHash(f[1]) && !toolBackup {
				// Locking (a "!" or "*" in front) is hardening; a new
				// usable hash is a password nobody asked for.
				bad("would set %s's password to a new hash in %s (a password login the worker did not ask for); lock it with usermod -L or passwd -l instead", u, c.Path)
			}
			if len(f) >= 3 && vital(u) && f[2] == "0" {
				bad("would force %s to change its password at the next login (last change day 0) in /etc/shadow: non-interactive logins fail", u)
			}
			if len(f) >= 7 && vital(u) && f[4] == "0" && f[6] == "0" {
				bad("would expire %s's password and disable the account at once in /etc/shadow", u)
			}
			if len(f) >= 8 && vital(u) && f[7] != "" {
				if d, err := strconv.Atoi(f[7]); err == nil && d <= today {
					bad("would expire %s's account (expiry day %d) in /etc/shadow", u, d)
				}
			}
			if vital(u) {
				old := strings.Split(removed[u], ":")
				if d, ok := expiresWithin(f, today); ok {
					if _, was := expiresWithin(old, today); !was || removed[u] == "" {
						bad("would make %s's password or account expire on day %d, by %d days from now at the latest (/etc/shadow): from then sshd with UsePAM refuses even its key login until someone changes the password; a latent lockout", u, d, ExpiryBound)
					}
				}
			}
		case "/etc/passwd":
			if len(f) >= 2 && f[1] == "" {
				bad("would blank %s's password in %s", u, c.Path)
			}
			if old := strings.Split(removed[u], ":"); len(f) >= 2 && len(old) >= 2 && vital(u) && f[1] != old[1] && usableHash(f[1]) && f[1] != "x" && !toolBackup {
				bad("would set %s's password to a hash in %s, which takes precedence over /etc/shadow", u, c.Path)
			}
			if u == "root" && len(f) >= 3 && f[2] != "0" {
				bad("would change root's UID to %s", f[2])
			}
			if old := strings.Split(removed[u], ":"); len(f) >= 6 && len(old) >= 6 && vital(u) && path.Clean(f[5]) != path.Clean(old[5]) {
				bad("would move %s's home from %s to %s, away from its SSH keys", u, old[5], f[5])
			}
			if len(f) >= 7 && vital(u) && refusingShell(f[6]) {
				bad("would give %s the shell %s, which refuses logins", u, f[6])
			}
		case "/etc/gshadow":
		}
	}
	return out
}

// ExpiryBound is how many days ahead the judge looks for a password or
// account of the worker's login or root that a command makes expire: one
// that expires within it and did not before is refused (an expiry
// further off is the site's policy, for its administrators to meet).
const ExpiryBound = 30

// expiresWithin returns the first day a shadow entry's password (last
// change + maximum age, unless the maximum is empty or 99999 or more, or
// the last change empty) or account (the expiry day) expires, when it is
// at most ExpiryBound days after today.
func expiresWithin(f []string, today int) (int, bool) {
	day, ok := 0, false
	if len(f) >= 5 {
		last, err1 := strconv.Atoi(f[2])
		max, err2 := strconv.Atoi(f[4])
		if err1 == nil && err2 == nil && max >= 0 && max < 99999 && last > 0 {
			day, ok = last+max, true
		}
	}
	if len(f) >= 8 {
		if d, err := strconv.Atoi(f[7]); err == nil && d >= 0 && (!ok || d < day) {
			day, ok = d, true
		}
	}
	return day, ok && day <= today+ExpiryBound
}

// usableHash says whether a password field lets a password log in: not
// empty (judged apart), not locked ("!" or "*" in front), not a
// placeholder.
func usableHash(h string) bool {
	return h != "" && !strings.HasPrefix(h, "!") && !strings.HasPrefix(h, "*") && h != "x"
}

func refusingShell(sh string) bool {
	b := path.Base(sh)
	return sh == "" || b == "nologin" || b == "false" || b == "true" || b == "sync"
}

// lockoutFile judges a change of a file the worker's login depends on.
func lockoutFile(c nightshift.FileChange, pol EffectsPolicy) []Refusal {
	var out []Refusal
	bad := func(format string, a ...any) {
		out = append(out, Refusal{Entry: "lockout", Reason: fmt.Sprintf(format, a...)})
	}
	keys := path.Join(pol.LoginHome, ".ssh", "authorized_keys")
	switch {
	case (c.Path == "/etc/nologin" || c.Path == "/run/nologin") && c.Change != nightshift.ChangeDeleted:
		// pam_nologin reads both (/var/run/nologin is /run/nologin); the
		// sandbox records /run since issue 19's sbx20.
		bad("would create %s, which refuses every login but root's", c.Path)
	case strings.HasPrefix(c.Path, "/etc/pam.d/") && c.Change != nightshift.ChangeDeleted:
		for _, l := range strings.Split(c.Diff, "\n") {
			if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
				f := strings.Fields(l[1:])
				if len(f) >= 3 && !strings.HasPrefix(f[0], "#") && strings.Contains(l, "pam_deny.so") &&
					(f[0] == "auth" || f[0] == "account" || f[0] == "session" || f[0] == "-auth") {
					// An auth line does not stop a key login (sshd does not
					// run PAM's auth stack for public keys) but denies every
					// password login; account and session lines deny all.
					bad("would deny logins: %q in %s", strings.TrimSpace(l[1:]), c.Path)
				}
			}
		}
	case c.Path == keys && c.Change == nightshift.ChangeModified && len(removedLines(c.Diff)) > 0:
		for _, l := range removedLines(c.Diff) {
			if s := strings.TrimSpace(l); s != "" && !strings.HasPrefix(s, "#") {
				bad("would remove or rewrite a key of the worker's login in %s: %s", keys, textcutHead(s, 60))
				break
			}
		}
	case c.Path == keys && c.Change == nightshift.ChangeDeleted:
		bad("would delete %s, the worker's login keys", keys)
	case c.Path == keys && c.After.Kind == nightshift.FileRegular && c.After.Size == 0:
		bad("would empty %s, the worker's login keys", keys)
	}
	if c.Path == pol.LoginHome || c.Path == path.Join(pol.LoginHome, ".ssh") || c.Path == keys {
		if c.Change != nightshift.ChangeDeleted && c.After.Mode&0o022 != 0 && c.Before.Mode&0o022 == 0 {
			bad("would make %s group- or world-writable (%04o): sshd's StrictModes then refuses the worker's key", c.Path, c.After.Mode)
		}
		if c.Change == nightshift.ChangeDeleted && c.Path != keys {
			bad("would delete %s, which holds the worker's login keys", c.Path)
		}
	}
	return out
}

// sshdLockout judges sshd's view of the configuration a command left.
func sshdLockout(s *nightshift.SSHDCheck, pol EffectsPolicy) []Refusal {
	if s == nil {
		return nil
	}
	login := s.Login
	if login == "" {
		login = pol.Login
	}
	var out []Refusal
	bad := func(format string, a ...any) {
		out = append(out, Refusal{Entry: "lockout", Reason: fmt.Sprintf(format, a...)})
	}
	if !s.TestOK {
		line, _, _ := strings.Cut(s.TestOutput, "\n")
		bad("would leave sshd unable to start (sshd -t: %s)", strings.TrimSpace(line))
		return out
	}
	eff := s.Effective
	if len(eff) == 0 {
		return out
	}
	at := "at the next sshd restart"
	if login == "root" {
		switch eff["permitrootlogin"] {
		case "no":
			bad("would lock out root's SSH login %s: PermitRootLogin no", at)
		case "forced-commands-only":
			bad("would lock out root's SSH commands %s: PermitRootLogin forced-commands-only", at)
		}
	}
	if eff["pubkeyauthentication"] == "no" {
		bad("would lock out %s's key login %s: PubkeyAuthentication no", login, at)
	}
	if m := eff["authenticationmethods"]; m != "" && m != "any" {
		ok := false
		for _, list := range strings.Fields(m) {
			if list == "publickey" {
				ok = true
			}
		}
		if !ok {
			bad("would lock out %s's key login %s: AuthenticationMethods %s", login, at, m)
		}
	}
	for _, pat := range strings.Fields(eff["denyusers"]) {
		if userMatch(pat, login) {
			bad("would lock out %s's SSH login %s: DenyUsers %s", login, at, pat)
		}
	}
	if allow := strings.Fields(eff["allowusers"]); len(allow) > 0 {
		ok := false
		for _, pat := range allow {
			ok = ok || userMatch(pat, login)
		}
		if !ok {
			bad("would lock out %s's SSH login %s: AllowUsers %s does not name it", login, at, eff["allowusers"])
		}
	}
	return out
}

// userMatch matches an sshd user pattern (USER or USER@HOST, with * and ?)
// against a login, ignoring the host part (conservative: it may match).
func userMatch(pat, login string) bool {
	u, _, _ := strings.Cut(pat, "@")
	ok, err := path.Match(u, login)
	return err == nil && ok
}

// accessUnits are the units whose stop, mask or disable cuts the worker's
// access.
var accessUnits = strings.Fields("ssh sshd ssh.service sshd.service ssh.socket sshd.socket networking networking.service NetworkManager NetworkManager.service systemd-networkd systemd-networkd.service network network.service dbus dbus.service systemd-logind systemd-logind.service")

// judgeAction says why a recorded action may not run, or "" when it may.
func judgeAction(argv []string, pol EffectsPolicy) string {
	if len(argv) == 0 {
		return "empty"
	}
	name := path.Base(argv[0])
	args := argv[1:]
	ops := operands(args)
	switch name {
	case "reboot", "shutdown", "poweroff", "halt", "kexec", "telinit", "init":
		return "the worker never reboots or halts a host"
	case "systemctl":
		if why := systemctlOptions(args); why != "" {
			return why
		}
		if len(ops) == 0 {
			return "no verb"
		}
		return unitVerb(ops[0], ops[1:])
	case "service":
		if len(ops) < 2 {
			return ""
		}
		return unitVerb(ops[1], ops[:1])
	case "invoke-rc.d":
		if len(ops) < 2 {
			return ""
		}
		return unitVerb(ops[1], ops[:1])
	case "deb-systemd-invoke":
		if len(ops) == 0 {
			return ""
		}
		return unitVerb(ops[0], ops[1:])
	case "sysctl", "swapon":
		// sysctl's keys are judged with the command's files
		// (sysctlActions).
		return ""
	case "auditctl":
		if why := auditctlHarm(args); why != "" {
			return why
		}
		for i, a := range args {
			if (a == "-f" && i+1 < len(args) && args[i+1] == "2") || a == "-f2" {
				return "auditctl -f 2 makes the kernel panic whenever auditing fails (a backlog overflow, a full disk)"
			}
		}
		return ""
	case "swapoff":
		// One swap area (a swap file the rule removes) is the rule's
		// business; all of them at once leaves a loaded host to the OOM
		// killer, unless the rule is about swap.
		for _, a := range args {
			if a == "--all" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "a") {
				for _, sc := range pol.Scope {
					if strings.Contains(strings.ToLower(sc), "swap") {
						return ""
					}
				}
				return "swapoff -a takes every swap area away from the running host (a rule that is about swap declares it in its paths)"
			}
		}
		return ""
	case "modprobe", "rmmod", "insmod":
		remove := name == "rmmod"
		for _, a := range args {
			if a == "-r" || a == "--remove" || strings.HasPrefix(a, "-r") && !strings.HasPrefix(a, "--") {
				remove = true
			}
		}
		if !remove {
			return "the worker does not load kernel modules (blacklist or install them in /etc/modprobe.d instead)"
		}
		for _, m := range ops {
			if strings.Contains(m, "net") || strings.Contains(m, "virtio") || strings.Contains(m, "e1000") || strings.Contains(m, "ixgbe") ||
				strings.Contains(m, "nvme") || strings.Contains(m, "ext4") || strings.Contains(m, "xfs") || strings.Contains(m, "overlay") {
				return "removing the module " + m + " can cut the network or the disks"
			}
		}
		return ""
	case "mount":
		return mountHarm(args)
	case "umount":
		return "the worker does not unmount file systems"
	case "ip":
		return "the worker does not change network interfaces, addresses or routes"
	case "iptables", "ip6tables", "iptables-legacy", "ip6tables-legacy", "iptables-nft", "ip6tables-nft":
		if why := iptablesCut(args, pol.SSHPort); why != "" {
			return why
		}
		return iptablesNegationCut(args, pol.SSHPort)
	case "nft":
		return nftCut(args, pol.SSHPort)
	case "timedatectl":
		if len(ops) > 0 && (ops[0] == "set-ntp" || ops[0] == "set-timezone" || ops[0] == "status" || ops[0] == "show") {
			return ""
		}
		return "only timedatectl set-ntp and set-timezone are run"
	default:
		return "the worker cannot judge what " + name + " would do to the running system"
	}
}

// operands drops options (words starting with -) and the values of the
// few options that take one.
func operands(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(out, args[i+1:]...)
		case a == "-t" || a == "--type" || a == "-p" || a == "--property" || a == "-H" || a == "--host" || a == "-M" || a == "--machine" || a == "-o" || a == "--output" || a == "-n" || a == "--lines" || a == "--root":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			out = append(out, a)
		}
	}
	return out
}

// unitVerb judges a service manager verb on units.
func unitVerb(verb string, units []string) string {
	switch verb {
	case "daemon-reload", "reload", "restart", "try-restart", "reload-or-restart", "try-reload-or-restart", "condrestart",
		"condreload", "force-reload", "start", "enable", "unmask", "reset-failed", "preset", "revert", "is-active",
		"is-enabled", "is-failed", "status", "show", "cat", "daemon-reexec", "--full-restart":
		for _, u := range units {
			if stopUnit(u) && verb != "status" && verb != "show" && verb != "cat" && !strings.HasPrefix(verb, "is-") {
				return verb + " " + u + " would stop the host or its services"
			}
		}
		return ""
	case "stop", "mask", "disable", "kill", "freeze":
		for _, u := range units {
			if why := protectedUnitStop(verb, u); why != "" {
				return why
			}
			for _, a := range accessUnits {
				if u == a || unitGlobMatch(u, a) {
					return verb + " would cut the worker's access (" + a + ")"
				}
			}
		}
		return ""
	default:
		return "the verb " + verb + " is not run by the worker"
	}
}

// iptablesCut judges an iptables invocation against the SSH port.
func iptablesCut(args []string, port int) string {
	args = iptablesArgs(args)
	var chain, target, dport, sport, proto string
	policy := false
	for i := 0; i < len(args); i++ {
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch args[i] {
		case "-F", "--flush", "-D", "--delete":
			// The live policy is not known: under a DROP policy, the
			// accept rule the worker's session relies on may be the one
			// flushed or deleted.
			if c := strings.TrimPrefix(next(), "!"); c == "" || strings.HasPrefix(c, "-") || c == "INPUT" || c == "OUTPUT" || c == "PREROUTING" || c == "POSTROUTING" {
				return "flushing or deleting rules of " + map[bool]string{true: "every chain", false: c}[c == "" || strings.HasPrefix(c, "-")] + " can remove the rule that accepts the worker's SSH session under a DROP policy"
			}
		case "-P", "--policy":
			policy = true
			chain, target = next(), next()
		case "-A", "--append", "-I", "--insert", "-R", "--replace":
			chain = next()
		case "-j", "--jump":
			target = next()
		case "--dport", "--destination-port", "--dports":
			dport = next()
		case "--sport", "--source-port", "--sports":
			sport = next()
		case "-p", "--protocol":
			proto = next()
		}
	}
	// PREROUTING and POSTROUTING (raw, mangle, nat) see the same packets
	// as INPUT and OUTPUT; a jump to a chain of the command's own may drop
	// them there.
	switch chain {
	case "INPUT", "PREROUTING":
		chain = "INPUT"
	case "OUTPUT", "POSTROUTING":
		chain = "OUTPUT"
	default:
		return ""
	}
	switch target {
	case "ACCEPT", "RETURN", "LOG", "NFLOG", "ULOG", "CT", "NOTRACK", "MARK", "CONNMARK", "TCPMSS", "TRACE", "AUDIT", "NFQUEUE_BYPASS", "":
		return ""
	case "DROP", "REJECT":
	default:
		if policy {
			return ""
		}
	}
	if policy {
		return "a default policy of " + target + " on " + chain + " cuts the worker's SSH session unless a rule accepts it; add the accept rule and the policy in a script the rule's check can see, or ask for the change"
	}
	p := strconv.Itoa(port)
	ports := dport
	if chain == "OUTPUT" {
		ports = sport
	}
	if ports == "" && (proto == "" || proto == "tcp" || proto == "all") {
		return "a " + target + " rule on " + chain + " without a port also drops the worker's SSH session"
	}
	for _, x := range strings.FieldsFunc(ports, func(r rune) bool { return r == ',' }) {
		if x == "ssh" {
			x = "22"
		}
		lo, hi, _ := strings.Cut(x, ":")
		if lo == "" {
			lo = "0"
		}
		if hi == "" && strings.Contains(x, ":") {
			hi = "65535"
		}
		if x == p || lo == p || (hi != "" && atoi(lo) <= port && port <= atoi(hi)) {
			return "it drops the worker's SSH port " + p
		}
	}
	return ""
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// nftCut judges an nft invocation against the SSH port.
func nftCut(args []string, port int) string {
	s := " " + strings.Join(args, " ") + " "
	for _, a := range args {
		if a == "-f" || a == "--file" {
			return "a ruleset loaded from a file cannot be judged; add rules with nft add rule"
		}
	}
	if strings.Contains(s, " flush ") || strings.Contains(s, " delete rule ") || strings.Contains(s, " delete chain ") || strings.Contains(s, " delete table ") {
		return "flushing or deleting rules can remove the rule that accepts the worker's SSH session under a drop policy"
	}
	drops := strings.Contains(s, " drop") || strings.Contains(s, " reject")
	if !drops {
		return ""
	}
	if strings.Contains(s, "policy drop") || strings.Contains(s, "policy reject") {
		return "a default policy of drop cuts the worker's SSH session unless a rule accepts it"
	}
	// A chain's name says nothing of its hook (a chain "c" may hook input):
	// only a rule naming the forward hook or chain alone is left alone.
	if strings.Contains(s, " forward ") && !strings.Contains(s, "input") && !strings.Contains(s, "output") && !strings.Contains(s, "routing") {
		return ""
	}
	p := strconv.Itoa(port)
	if !strings.Contains(s, "dport") && !strings.Contains(s, "sport") {
		return "a drop rule without a port also drops the worker's SSH session"
	}
	if strings.Contains(s, "dport "+p+" ") || strings.Contains(s, "dport "+p+"}") || strings.Contains(s, "dport { "+p) || strings.Contains(s, " "+p+",") || strings.Contains(s, "dport ssh ") {
		return "it drops the worker's SSH port " + p
	}
	return ""
}

// systemMounts are the mount points whose remount read-only or noexec
// leaves the host unable to run programs or write its state.
var systemMounts = strings.Fields("/ /usr /bin /sbin /lib /lib64 /etc /var /var/lib /boot /opt /root /usr/local")

// mountArgs splits mount's argv into its options (-o lists, -r as ro)
// and its mount points or sources (operands, --target).
func mountArgs(args []string) (opts, ops []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-o" || a == "--options":
			if i+1 < len(args) {
				i++
				opts = append(opts, strings.Split(args[i], ",")...)
			}
		case strings.HasPrefix(a, "--options="):
			opts = append(opts, strings.Split(strings.TrimPrefix(a, "--options="), ",")...)
		case strings.HasPrefix(a, "-o") && len(a) > 2:
			opts = append(opts, strings.Split(a[2:], ",")...)
		case a == "-r" || a == "--read-only":
			opts = append(opts, "ro")
		case a == "-t" || a == "--types" || a == "-O" || a == "--test-opts" || a == "-L" || a == "-U" || a == "--source" || a == "--target":
			if i+1 < len(args) {
				i++
				if a == "--target" {
					ops = append(ops, args[i])
				}
			}
		case strings.HasPrefix(a, "-"):
		default:
			ops = append(ops, a)
		}
	}
	return opts, ops
}

// remountOptions are the options a hardening remount sets (SSG's
// mount_option_* rules: nodev, nosuid, noexec, /proc's hidepid and gid)
// or keeps; any other (errors=panic, a superblock's commit interval, a
// size or mode) is not a hardening change and is refused.
var remountOptions = strings.Fields("remount bind rw nodev nosuid noexec relatime noatime nodiratime strictatime defaults")

// mountHarm judges a recorded mount: only remounts are run, only with the
// options hardening sets, and not those that make a file system read-only,
// the system's programs not executable, or /dev's devices unusable.
func mountHarm(args []string) string {
	opts, ops := mountArgs(args)
	if !slices.Contains(opts, "remount") {
		return "only remounts (mount -o remount,…) are run; a new mount can hide system files"
	}
	if slices.Contains(opts, "nodev") || slices.Contains(opts, "noexec") {
		for _, m := range ops {
			if c := path.Clean(m); c == "/dev" || c == "/dev/pts" {
				return "nodev or noexec on " + m + " takes /dev/null and the terminals away from sshd and every login"
			}
		}
	}
	for _, o := range opts {
		if o == "ro" {
			return "remounting read-only stops the host from writing its state"
		}
	}
	if slices.Contains(opts, "nosuid") {
		for _, m := range ops {
			if c := path.Clean(m); c == "/" || c == "/usr" || c == "/bin" || c == "/sbin" || c == "/usr/bin" {
				return "nosuid on " + m + " stops sudo and su (setuid programs) from giving root"
			}
		}
		if len(ops) == 0 {
			return "nosuid without a mount point cannot be judged"
		}
	}
	if slices.Contains(opts, "noexec") {
		for _, m := range ops {
			if slices.Contains(systemMounts, path.Clean(m)) {
				return "noexec on " + m + " stops the host from running its programs"
			}
		}
		if len(ops) == 0 {
			return "noexec without a mount point cannot be judged"
		}
	}
	for _, o := range opts {
		k, _, _ := strings.Cut(o, "=")
		if o != "" && !slices.Contains(remountOptions, o) && k != "hidepid" && k != "gid" {
			return "the remount option " + o + " is not one hardening sets (nodev, nosuid, noexec, hidepid=, gid=)"
		}
	}
	return ""
}

// iptablesLong are the long options iptablesCut reads, in the order
// getopt_long would try an abbreviation against them.
var iptablesLong = strings.Fields("--append --delete --insert --replace --flush --policy --jump --dport --destination-port --dports --sport --source-port --sports --protocol --table")

// iptablesArgs rewrites iptables' argv the way its option parser reads it:
// long options abbreviated to a unique prefix (--pol, --fl) spelled out,
// short options clustered (-vF) or with their argument attached (-PINPUT)
// split into words.
func iptablesArgs(args []string) []string {
	var out []string
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "--") && len(a) > 2:
			name, val, hasVal := strings.Cut(a, "=")
			var hit []string
			for _, l := range iptablesLong {
				if l == name {
					hit = []string{l}
					break
				}
				if strings.HasPrefix(l, name) {
					hit = append(hit, l)
				}
			}
			if len(hit) == 1 {
				name = hit[0]
			}
			out = append(out, name)
			if hasVal {
				out = append(out, val)
			}
		case strings.HasPrefix(a, "-") && len(a) > 2 && a[1] != '-' && a[1] != '!':
			for i := 1; i < len(a); i++ {
				out = append(out, "-"+string(a[i]))
				if strings.ContainsRune("ADIRPNXEjpsdiotmgw", rune(a[i])) && i+1 < len(a) {
					if a[i] != 'w' {
						out = append(out, a[i+1:])
					}
					break
				}
			}
		default:
			out = append(out, a)
		}
	}
	return out
}

func textcutHead(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
