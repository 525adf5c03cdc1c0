package safety

import (
	"regexp"
	"strings"

	"github.com/nightshift-dev/nightshift/shell"
)

var sshUnits = []string{"ssh", "sshd", "ssh.service", "sshd.service", "openssh-server", "openssh"}

// processSamples are process names and command lines a pkill/killall
// pattern must not match.
var processSamples = []string{"sshd", "/usr/sbin/sshd -D", "sshd: root@pts/0", "sshd: root [priv]", "sshd: /usr/sbin/sshd -D [listener] 0 of 10-100 startups",
	"systemd", "/sbin/init", "/lib/systemd/systemd --system --deserialize 31", "init"}

func sshAccess(c *shell.Command) (verdict, bool) {
	name := progName(c)
	args := c.Args[1:]
	switch name {
	case "kill":
		sig, pids := killArgs(args)
		if harmlessSignal(sig) {
			return verdict{}, false
		}
		for _, p := range pids {
			if p.Kind != shell.Literal && !ownPID(p.Value) {
				return maybe(entSSH, "kill only PIDs written literally; reload sshd with systemctl reload ssh")
			}
		}
	case "pkill", "killall", "skill", "slay":
		sig := ""
		exact, regex := name == "killall", name != "killall"
		var pats []shell.Word
		for i := 0; i < len(args); i++ {
			v := args[i].Value
			switch {
			case v == "-s" || v == "--signal" || v == "-SIGNAL":
				if i+1 < len(args) {
					sig = normSignal(args[i+1].Value)
					i++
				}
			case strings.HasPrefix(v, "--signal="):
				sig = normSignal(strings.TrimPrefix(v, "--signal="))
			case v == "-r" || v == "--regexp":
				regex = true
			case v == "-u" || v == "-U" || v == "-g" || v == "-G" || v == "-t" || v == "-P" || v == "-s" || v == "--uid" || v == "--parent" || v == "--terminal" || v == "--session" || v == "--pgroup" || v == "--euid" || v == "--group" || v == "--user" || v == "-o" || v == "-y" || v == "--older-than" || v == "--younger-than" || v == "-n" || v == "--ns" || v == "--nslist" || v == "-F" || v == "--pidfile":
				i++
			case strings.HasPrefix(v, "-") && len(v) > 1 && args[i].Kind == shell.Literal:
				if s := strings.TrimPrefix(v, "-"); strings.ToUpper(s) == s && !strings.ContainsAny(s, "fx") || isNumber(s) {
					sig = normSignal(s)
				}
			default:
				pats = append(pats, args[i])
			}
		}
		if harmlessSignal(sig) {
			return verdict{}, false
		}
		if len(pats) == 0 && name != "killall" {
			// pkill -u root: every process of the selection.
			for i, a := range args {
				switch a.Value {
				case "-u", "-U", "--euid", "--uid", "-g", "-G", "--group", "--pgroup", "-s", "--session", "-t", "--terminal", "-P", "--parent":
					if i+1 < len(args) && (args[i+1].Value == "root" || args[i+1].Value == "0" || args[i+1].Value == "1") && args[i+1].Kind == shell.Literal {
						return hit(entSSH, "kill processes by name, never every process of root or of a session")
					}
					if i+1 < len(args) && args[i+1].Kind != shell.Literal {
						return maybe(entSSH, "kill processes by name, never every process of root or of a session")
					}
				}
			}
		}
		for _, p := range pats {
			if p.Kind != shell.Literal {
				return maybe(entSSH, "name the process literally")
			}
			if exact && !regex {
				for _, s := range processSamples {
					if p.Value == s || p.Value == "sshd" || p.Value == "init" || p.Value == "systemd" {
						return hit(entSSH, "never kill sshd or init; reload sshd with systemctl reload ssh")
					}
				}
				continue
			}
			re, err := regexp.Compile(p.Value)
			if err != nil {
				return maybe(entSSH, "use a simple process name")
			}
			for _, s := range processSamples {
				if re.MatchString(s) {
					return hit(entSSH, "never kill sshd or init; reload sshd with systemctl reload ssh")
				}
			}
		}
	case "fuser":
		kill := false
		for _, a := range args {
			if a.Value == "--kill" || strings.HasPrefix(a.Value, "-") && !strings.HasPrefix(a.Value, "--") && strings.Contains(a.Value, "k") {
				kill = true
			}
		}
		if !kill {
			return verdict{}, false
		}
		for _, a := range args {
			v := a.Value
			if a.Kind != shell.Literal {
				return maybe(entSSH, "never kill what holds port 22, sshd or a mount")
			}
			if v == "22" || strings.HasPrefix(v, "22/") || strings.HasPrefix(v, "ssh") || v == "/" || strings.Contains(v, "sshd") || v == "-m" || v == "--mount" || strings.HasPrefix(v, "-") && strings.Contains(v, "m") && !strings.HasPrefix(v, "--") {
				return hit(entSSH, "never kill what holds port 22, sshd or a mount")
			}
		}
	case "systemctl":
		opts, ops, _ := optsOf("systemctl").Parse(args)
		if len(ops) == 0 {
			return verdict{}, false
		}
		verb, units := ops[0].Value, ops[1:]
		switch verb {
		case "stop", "disable", "mask", "kill", "freeze":
			if verb == "kill" {
				if s, ok := shell.Has(opts, "-s", "--signal"); ok && harmlessSignal(normSignal(s.Value)) {
					return verdict{}, false
				}
			}
			if h, unknown := unitsHit(units, sshUnits); h {
				return verdict{id: entSSH, hint: "never stop, disable or kill SSH; use systemctl reload ssh (or restart)", unknown: unknown}, true
			}
		}
	case "service", "invoke-rc.d":
		if len(args) >= 2 && (args[1].Value == "stop" || args[1].Value == "disable") {
			if h, unknown := unitsHit(args[:1], sshUnits); h {
				return verdict{id: entSSH, hint: "never stop SSH; use service ssh reload", unknown: unknown}, true
			}
		}
	case "ssh", "sshd":
		if len(c.Via) > 0 && strings.HasPrefix(c.Args[0].Value, "/etc/init.d/") && len(args) > 0 && args[0].Value == "stop" {
			return hit(entSSH, "never stop SSH")
		}
	case "update-rc.d", "chkconfig", "rc-update":
		if h, unknown := unitsHit(args, sshUnits); h {
			for _, a := range args {
				if a.Value == "disable" || a.Value == "remove" || a.Value == "off" || a.Value == "del" {
					return verdict{id: entSSH, hint: "never disable SSH", unknown: unknown}, true
				}
			}
		}
	case "apt", "apt-get", "aptitude", "dpkg", "yum", "dnf", "rpm", "zypper", "microdnf":
		removing := false
		for _, a := range args {
			switch a.Value {
			case "remove", "purge", "erase", "autoremove", "-r", "-P", "--remove", "--purge", "-e", "--erase", "rm", "autopurge":
				removing = true
			}
		}
		if !removing && (name == "apt" || name == "apt-get" || name == "aptitude") {
			// apt-get install PKG- removes PKG.
			for _, a := range args {
				if strings.HasPrefix(a.Value, "openssh-server") && strings.HasSuffix(a.Value, "-") || a.Value == "ssh-" {
					return hit(entSSH, "never remove the SSH server")
				}
			}
		}
		if removing {
			for _, a := range args {
				if a.Kind != shell.Literal && a.Kind != shell.Pattern || strings.HasPrefix(a.Value, "-") && a.Kind == shell.Literal {
					continue
				}
				for _, p := range sshPackages {
					if a.Value == p || a.Kind == shell.Pattern && globAny(a.Glob, p) || strings.HasPrefix(a.Value, "openssh-server") {
						return hit(entSSH, "never remove the SSH server")
					}
				}
				if a.Kind == shell.Literal && packagePatternHits(name, a.Value) {
					return hit(entSSH, "never remove the SSH server; name the packages to remove exactly, without patterns")
				}
			}
		}
	}
	if strings.HasPrefix(c.Args[0].Value, "/etc/init.d/ssh") && len(args) > 0 && args[0].Value == "stop" {
		return hit(entSSH, "never stop SSH")
	}
	return verdict{}, false
}

// unitsHit reports whether any unit operand (a name or a glob, which
// systemctl matches against units) names one of units (h), or may
// (unknown: an operand not known before running, and none names one).
func unitsHit(ops []shell.Word, units []string) (h, unknown bool) {
	for _, o := range ops {
		if o.Kind == shell.Unknown {
			unknown = true
			continue
		}
		for _, u := range units {
			if o.Kind == shell.Literal && o.Value == u || o.Kind == shell.Pattern && globAny(o.Glob, u) {
				return true, false
			}
			if o.Kind == shell.Literal && strings.ContainsAny(o.Value, "*?[") && globAny(o.Value, u) {
				return true, false // quoted glob: systemctl matches it itself
			}
		}
	}
	return unknown, unknown
}

var netServices = []string{"networking", "networking.service", "NetworkManager", "NetworkManager.service", "systemd-networkd",
	"systemd-networkd.service", "network", "network.service", "wicked", "netplan"}

func network(c *shell.Command) (verdict, bool) {
	name := progName(c)
	args := c.Args[1:]
	const hint = "never take interfaces, addresses or routes down"
	switch name {
	case "ip":
		for i, a := range args {
			if a.Value == "-b" || a.Value == "-batch" || a.Value == "--batch" || strings.HasPrefix(a.Value, "-ba") {
				if i+1 >= len(args) {
					break
				}
				f := args[i+1].Value
				if (f == "-" || f == "/dev/stdin") && c.StdinKnown {
					for _, line := range strings.Split(c.StdinText, "\n") {
						sub := &shell.Command{Args: []shell.Word{shell.Lit("ip")}, Dir: c.Dir}
						for _, w := range strings.Fields(line) {
							sub.Args = append(sub.Args, shell.Lit(w))
						}
						if v, bad := network(sub); bad {
							return v, true
						}
					}
					break
				}
				return maybe(entNetwork, "run ip commands directly, not from a batch file or input")
			}
		}
		var ws []string
		for _, a := range args {
			if strings.HasPrefix(a.Value, "-") && len(ws) == 0 {
				continue
			}
			ws = append(ws, a.Value)
		}
		if len(ws) < 2 {
			return verdict{}, false
		}
		obj, verb := ws[0], ws[1]
		is := func(w, full string) bool { return w != "" && strings.HasPrefix(full, w) }
		switch {
		case is(obj, "link"):
			if is(verb, "delete") || verb == "del" {
				return hit(entNetwork, hint)
			}
			if is(verb, "set") {
				for _, w := range ws[2:] {
					if w == "down" {
						return hit(entNetwork, hint)
					}
				}
			}
		case is(obj, "address") || obj == "addr":
			if is(verb, "flush") || is(verb, "delete") || verb == "del" {
				return hit(entNetwork, hint)
			}
		case is(obj, "route") && obj != "ro" || obj == "r" || obj == "ro":
			if is(verb, "flush") {
				if len(ws) > 2 && ws[2] == "cache" {
					return verdict{}, false
				}
				return hit(entNetwork, hint)
			}
			if (is(verb, "delete") || verb == "del") && len(ws) > 2 && (ws[2] == "default" || ws[2] == "0.0.0.0/0") {
				return hit(entNetwork, hint)
			}
		}
	case "ifdown", "if-down":
		return hit(entNetwork, hint)
	case "ifconfig":
		for _, a := range args {
			if a.Value == "down" {
				return hit(entNetwork, hint)
			}
		}
	case "nmcli":
		j := " " + strings.Join(values(args), " ") + " "
		for _, p := range []string{" networking off ", " n off ", " radio all off ", " con down ", " connection down ", " c down ", " dev disconnect ",
			" device disconnect ", " d disconnect ", " con delete ", " connection delete ", " device down ", " dev down "} {
			if strings.Contains(j, p) {
				return hit(entNetwork, hint)
			}
		}
	case "dhclient":
		for _, a := range args {
			if a.Value == "-r" || a.Value == "-x" {
				return hit(entNetwork, hint)
			}
		}
	case "systemctl":
		verb, units := systemctlVerb(args)
		switch verb {
		case "stop", "disable", "mask", "kill", "isolate":
			if h, unknown := unitsHit(units, netServices); h {
				return verdict{id: entNetwork, hint: hint, unknown: unknown}, true
			}
		}
	case "service":
		if len(args) >= 2 && args[1].Value == "stop" {
			if h, unknown := unitsHit(args[:1], netServices); h {
				return verdict{id: entNetwork, hint: hint, unknown: unknown}, true
			}
		}
	}
	return verdict{}, false
}

func values(ws []shell.Word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Value
	}
	return out
}

func firewall(c *shell.Command) (verdict, bool) {
	name := progName(c)
	args := c.Args[1:]
	const hint = "add the specific rule the check needs; never flush the firewall or set a drop policy"
	switch {
	case strings.HasPrefix(name, "iptables") && !strings.Contains(name, "save") && !strings.Contains(name, "restore") || strings.HasPrefix(name, "ip6tables") && !strings.Contains(name, "save") && !strings.Contains(name, "restore") || name == "ebtables" || name == "arptables" || name == "xtables-nft-multi" || name == "xtables-legacy-multi":
		longs := []string{"--flush", "--policy", "--append", "--insert", "--delete", "--delete-chain", "--jump", "--list", "--list-rules", "--zero",
			"--new-chain", "--rename-chain", "--table", "--check", "--replace", "--source", "--destination", "--protocol", "--in-interface",
			"--out-interface", "--match", "--dport", "--destination-port", "--goto", "--verbose", "--numeric", "--line-numbers", "--wait", "--exact", "--fragment", "--set-counters"}
		var words []string
		for _, a := range args {
			v := a.Value
			if strings.HasPrefix(v, "--") {
				if full, ok := shell.ResolveLong(v, longs); ok {
					v = full
				}
			}
			words = append(words, v)
		}
		drop := func(s string) bool { s = strings.ToUpper(s); return s == "DROP" || s == "REJECT" }
		hasMatch, target, appending, port22 := false, "", false, false
		for i, w := range words {
			switch {
			case w == "-F" || w == "--flush" || strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w[1:], "F") && len(w) <= 4 && w != "-F" && !strings.ContainsAny(w[1:], "ADIRPNXELZSjgtpsdiomc"):
				return hit(entFirewall, hint)
			case w == "-P" || w == "--policy":
				if i+2 < len(words) && drop(words[i+2]) {
					return hit(entFirewall, hint)
				}
			case strings.HasPrefix(w, "-P") && len(w) > 2:
				if i+1 < len(words) && drop(words[i+1]) {
					return hit(entFirewall, hint)
				}
			case w == "-j" || w == "--jump":
				if i+1 < len(words) {
					target = words[i+1]
				}
			case w == "-A" || w == "-I" || w == "--append" || w == "--insert":
				appending = true
			case w == "-p" || w == "--protocol":
				// -p tcp (or all) alone still takes in SSH's port 22.
				if i+1 < len(words) {
					switch strings.ToLower(words[i+1]) {
					case "tcp", "all", "6", "0":
					default:
						hasMatch = true
					}
				}
			case w == "-s" || w == "-d" || w == "-i" || w == "-o" || w == "-m" || w == "--source" || w == "--destination" || w == "--in-interface" || w == "--out-interface" || w == "--match":
				hasMatch = true
			case w == "--dport" || w == "--destination-port" || w == "--dports":
				if i+1 < len(words) && (words[i+1] == "22" || words[i+1] == "ssh" || strings.Contains(words[i+1], "22")) {
					port22 = true
				}
			}
		}
		if appending && drop(target) && (!hasMatch || port22) {
			return hit(entFirewall, hint)
		}
	case name == "nft":
		j := strings.ToLower(strings.Join(values(args), " "))
		if nftBad(j) {
			return hit(entFirewall, hint)
		}
		for i, a := range args {
			if a.Value == "-f" || a.Value == "--file" {
				if i+1 < len(args) && (args[i+1].Value == "-" || args[i+1].Value == "/dev/stdin") {
					if !c.StdinKnown {
						return maybe(entFirewall, "write nft commands directly, not from a pipe")
					}
					if nftBad(strings.ToLower(c.StdinText)) {
						return hit(entFirewall, hint)
					}
				}
			}
		}
	case name == "ufw":
		for _, a := range args {
			if a.Value == "reset" || a.Value == "disable" {
				return hit(entFirewall, hint)
			}
		}
	case name == "firewall-cmd" || name == "firewall-offline-cmd":
		for _, a := range args {
			if full, ok := shell.ResolveLong(a.Value, []string{"--panic-on", "--panic-off", "--query-panic", "--set-default-zone", "--reload", "--complete-reload", "--state"}); ok {
				if full == "--panic-on" {
					return hit(entFirewall, hint)
				}
				if full == "--set-default-zone" {
					_, z, _ := strings.Cut(a.Value, "=")
					if z == "drop" || z == "block" {
						return hit(entFirewall, hint)
					}
				}
			}
		}
	}
	return verdict{}, false
}

var nftRe = regexp.MustCompile(`\bflush\s+(ruleset|table|chain)\b|\bdelete\s+table\b|\bpolicy\s+(drop|reject)\b|\bdestroy\s+table\b`)

func nftBad(s string) bool { return nftRe.MatchString(s) }

func password(c *shell.Command) (verdict, bool) {
	name := progName(c)
	args := c.Args[1:]
	const hint = "lock or expire passwords (passwd -l, chage); never delete them or edit /etc/shadow directly"
	switch name {
	case "passwd":
		for _, a := range args {
			if a.Value == "-d" || strings.HasPrefix(a.Value, "--del") || strings.HasPrefix(a.Value, "-") && !strings.HasPrefix(a.Value, "--") && strings.Contains(a.Value, "d") {
				return hit(entPassword, hint)
			}
		}
	case "usermod", "useradd":
		for i, a := range args {
			v := a.Value
			if v == "-p" || v == "--password" || v == "--pa" || v == "--pas" || v == "--pass" || strings.HasPrefix("--password", v) && len(v) > 3 {
				if i+1 < len(args) && args[i+1].Kind == shell.Literal && args[i+1].Value == "" {
					return hit(entPassword, hint)
				}
				if i+1 < len(args) && args[i+1].Kind != shell.Literal {
					return maybe(entPassword, hint)
				}
			}
			if strings.HasPrefix(v, "--password=") && v == "--password=" {
				return hit(entPassword, hint)
			}
		}
	case "chpasswd":
		if !c.StdinKnown {
			return maybe(entPassword, "set passwords with passwd or usermod, not chpasswd from input that is not known")
		}
		for _, line := range strings.Split(c.StdinText, "\n") {
			if u, p, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && u != "" && p == "" {
				return hit(entPassword, hint)
			}
		}
	}
	for _, w := range fileWrites(c) {
		if e, bad, unknown := writeBanU(w, c.Dir, name != "tee" && !inPlaceEdit(c) || name == "tee" && !hasAppend(args)); bad && e.id == entries[entPassword].id {
			// An in-place edit's result depends on its script: the
			// sandbox judges the diff.
			return verdict{id: entPassword, hint: hint, unknown: unknown || inPlaceEdit(c)}, true
		}
	}
	return verdict{}, false
}

func hasAppend(args []shell.Word) bool {
	for _, a := range args {
		if a.Value == "-a" || a.Value == "--append" {
			return true
		}
	}
	return false
}

// ownPID: the shell itself or its last background job.
func ownPID(v string) bool {
	switch v {
	case "$$", "${$}", "$BASHPID", "${BASHPID}", "$!", "${!}", "%1", "%%", "%+":
		return true
	}
	return false
}

// inPlaceEdit reports whether c edits files in place (sed -i, perl -i,
// awk -i inplace, ed, ex, vipw, vigr): what it writes depends on its
// script.
func inPlaceEdit(c *shell.Command) bool {
	switch progName(c) {
	case "sed", "perl":
		return inPlace(progName(c), c.Args[1:])
	case "awk", "gawk":
		for i, a := range c.Args[1:] {
			if a.Value == "-i" && i+2 < len(c.Args) && c.Args[i+2].Value == "inplace" {
				return true
			}
		}
	case "ed", "ex", "vipw", "vigr":
		return true
	}
	return false
}

// sshPackages are the package names that carry the SSH server.
var sshPackages = []string{"openssh-server", "openssh-server:amd64", "ssh", "openssh", "openssh-sshd"}

// packagePatternHits reports whether a package argument the package
// manager reads as a pattern could name the SSH server: a glob (dnf, yum,
// zypper and apt match them against package names), a regular expression
// (apt-get and aptitude fall back to one when no package has the name),
// or one of apt's search patterns (~nREGEX, ?name(REGEX), ~i, ?installed,
// …).
func packagePatternHits(manager, v string) bool {
	if v == "" {
		return false
	}
	if strings.HasPrefix(v, "?") || strings.HasPrefix(v, "~") || strings.HasPrefix(v, "!") || strings.HasPrefix(v, "(") {
		return aptPatternHits(v)
	}
	v, _, _ = strings.Cut(v, "=") // apt's PKG=VERSION
	if strings.ContainsAny(v, "*?[") && globAny(v, sshPackages...) {
		return true
	}
	switch manager {
	case "apt", "apt-get", "aptitude":
		if strings.ContainsAny(v, ".*+?[]^$()|{}\\") {
			re, err := regexp.Compile(v)
			if err != nil {
				return true
			}
			for _, p := range sshPackages {
				if re.MatchString(p) {
					return true
				}
			}
		}
	}
	return false
}

// aptTerm matches one term of an apt pattern: ~nREGEX or ?name(REGEX)
// (by name), other ~X and ?word(…) terms, and the operators.
var aptTerm = regexp.MustCompile(`^(\?[a-z-]+(\((?:[^()]|\([^()]*\))*\))?|~[A-Za-z](?:"[^"]*"|[^\s|!()~?]*)|[!|()&,]|\s+)`)

// aptPatternHits evaluates an apt search pattern against the SSH server's
// package as far as it can: name terms are matched; terms for residual
// configuration (~c, ?config-files), obsolete (~o, ?obsolete) and garbage
// (~g, ?garbage) packages are false for an installed, wanted server; any
// other term may be true. A pattern it cannot read may name it.
func aptPatternHits(p string) bool {
	var terms []string
	for rest := p; rest != ""; {
		m := aptTerm.FindString(rest)
		if m == "" {
			return true
		}
		rest = rest[len(m):]
		if strings.TrimSpace(m) != "" {
			terms = append(terms, m)
		}
	}
	// Build a boolean expression over the terms and evaluate it with
	// every undecided term true and false: it may name the server when
	// some assignment makes it true.
	type tv int // 0 false, 1 true, 2 either
	val := func(t string) tv {
		var re string
		switch {
		case strings.HasPrefix(t, "~n"):
			re = strings.Trim(t[2:], `"`)
		case strings.HasPrefix(t, "?name("):
			re = strings.Trim(strings.TrimSuffix(strings.TrimPrefix(t, "?name("), ")"), `"'`)
		case t == "~c" || t == "?config-files" || t == "~o" || t == "?obsolete" || t == "~g" || t == "?garbage" || t == "?false" || t == "~F":
			return 0
		default:
			return 2
		}
		r, err := regexp.Compile(re)
		if err != nil {
			return 2
		}
		for _, pk := range sshPackages {
			if r.MatchString(pk) {
				return 1
			}
		}
		return 0
	}
	// Negations and grouping make a precise evaluation long: a pattern
	// with any of them names the server unless every name term in it is
	// false and it has no undecided term, which a negation would turn true.
	anyTrue, undecided, anyFalse, ors := false, false, false, false
	for _, t := range terms {
		switch t {
		case "!":
			return true
		case "(", ")", "|", ",":
			ors = true
			continue
		case "&":
			continue
		}
		switch val(t) {
		case 1:
			anyTrue = true
		case 2:
			undecided = true
		case 0:
			anyFalse = true
		}
	}
	if !ors {
		// Terms side by side are all required.
		return !anyFalse
	}
	return anyTrue || undecided
}
