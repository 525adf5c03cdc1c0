package safety

import (
	"path"
	"slices"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// judgeActions judges a command's recorded actions in order. Each is
// first judged alone (judgeAction); an action refused alone is still
// allowed when it belongs to one of these classes of legitimate
// administration, judged with the rest of the command's actions:
//
//   - a systemd default target set to multi-user.target or
//     graphical.target (CIS: no graphical login; never rescue, emergency,
//     halt, poweroff or reboot);
//   - `ip [-4|-6] route flush cache`: flushes the routing cache (what
//     SSG's sysctl fixes do with net.ipv4.route.flush), not routes;
//   - `systemctl kill -s HUP` of the SSH daemon: sshd rereads its
//     configuration on SIGHUP (what `systemctl reload ssh` sends). With
//     the default --kill-whom=all the signal also reaches connection
//     processes left in ssh.service's cgroup on a host without
//     pam_systemd, which end: the connections of that moment drop, the
//     listener stays and the next login works (the worker redials and its
//     lockout net checks a fresh login), so it is allowed. Every other
//     signal is refused: TERM, INT, QUIT, KILL and STOP end or freeze the
//     listener, and sshd has no handler for USR1 or USR2, whose default
//     ends it;
//   - an SSH unit stopped, disabled or masked while the same command
//     enables and (after the stop) starts its counterpart, ssh.socket for
//     ssh.service or the reverse: the switch between socket activation and
//     a listening daemon (Ubuntu 22.10 and later);
//   - a firewall rule dropping packets whose source is the loopback
//     network (127.0.0.0/8, ::1) on the input chain, when the same command
//     first accepts everything on the loopback interface (CIS's loopback
//     rules): such packets can only be spoofed, and the worker's session,
//     loopback or not, never matches the drop.
func judgeActions(acts []nightshift.RecordedAction, pol EffectsPolicy) []Refusal {
	var out []Refusal
	for i, a := range acts {
		why := judgeAction(a.Argv, pol)
		if why == "" || actionAllowedInContext(acts, i) {
			continue
		}
		out = append(out, Refusal{Entry: "action", Reason: "would run " + a.String() + ": " + why})
	}
	return out
}

// actionAllowedInContext reports whether acts[i], refused alone, falls in
// one of judgeActions' classes.
func actionAllowedInContext(acts []nightshift.RecordedAction, i int) bool {
	argv := acts[i].Argv
	if len(argv) == 0 {
		return false
	}
	switch path.Base(argv[0]) {
	case "systemctl":
		return systemdDefaultTarget(argv[1:]) || sshdHangup(argv[1:]) || sshUnitSwitch(acts, i)
	case "ip":
		return routeCacheFlush(argv[1:])
	case "iptables", "ip6tables", "iptables-legacy", "ip6tables-legacy", "iptables-nft", "ip6tables-nft":
		return iptablesLoopbackSpoof(acts, i)
	case "nft":
		return nftLoopbackSpoof(acts, i)
	default:
		return false
	}
}

// systemdDefaultTarget: `systemctl set-default multi-user.target` (or
// graphical.target).
func systemdDefaultTarget(args []string) bool {
	ops := operands(args)
	return len(ops) == 2 && ops[0] == "set-default" && (ops[1] == "multi-user.target" || ops[1] == "graphical.target" ||
		ops[1] == "multi-user" || ops[1] == "graphical")
}

// routeCacheFlush: `ip [-4|-6] route flush cache`, nothing else.
func routeCacheFlush(args []string) bool {
	var ops []string
	for _, a := range args {
		switch {
		case a == "-4" || a == "-6":
		case strings.HasPrefix(a, "-"):
			return false
		default:
			ops = append(ops, a)
		}
	}
	return len(ops) == 3 && len(ops[0]) >= 1 && strings.HasPrefix("route", ops[0]) && ops[1] == "flush" && ops[2] == "cache"
}

var sshDaemonUnits = []string{"ssh", "sshd", "ssh.service", "sshd.service", "ssh.socket", "sshd.socket"}

// sshdHangup: `systemctl kill [--kill-whom=WHOM] -s HUP ssh` (the option
// also spelt --kill-who, the signal SIGHUP, HUP or 1), every unit an SSH
// one.
func sshdHangup(args []string) bool {
	var signal, whom string
	var units []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		val := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case a == "-s" || a == "--signal":
			signal = val()
		case strings.HasPrefix(a, "--signal="):
			signal = strings.TrimPrefix(a, "--signal=")
		case strings.HasPrefix(a, "-s") && !strings.HasPrefix(a, "--"):
			signal = a[2:]
		case a == "--kill-whom" || a == "--kill-who":
			whom = val()
		case strings.HasPrefix(a, "--kill-whom=") || strings.HasPrefix(a, "--kill-who="):
			_, whom, _ = strings.Cut(a, "=")
		case strings.HasPrefix(a, "-"):
			return false
		default:
			units = append(units, a)
		}
	}
	if len(units) < 2 || units[0] != "kill" || whom != "" && whom != "main" && whom != "all" && whom != "control" {
		return false
	}
	if s := strings.TrimPrefix(strings.ToUpper(signal), "SIG"); s != "HUP" && s != "1" {
		return false
	}
	for _, u := range units[1:] {
		if !slices.Contains(sshDaemonUnits, u) {
			return false
		}
	}
	return true
}

// unitCall is one systemctl call: its verb, units and whether --now was
// given.
type unitCall struct {
	verb  string
	units []string
	now   bool
}

func parseUnitCall(argv []string) (unitCall, bool) {
	if len(argv) == 0 || path.Base(argv[0]) != "systemctl" {
		return unitCall{}, false
	}
	ops := operands(argv[1:])
	if len(ops) == 0 {
		return unitCall{}, false
	}
	return unitCall{verb: ops[0], units: ops[1:], now: slices.Contains(argv[1:], "--now")}, true
}

// sshCounterpart names the unit that serves SSH when u does not:
// ssh.socket for ssh.service (or ssh) and the reverse.
func sshCounterpart(u string) []string {
	switch u {
	case "ssh.socket":
		return []string{"ssh.service", "ssh"}
	case "sshd.socket":
		return []string{"sshd.service", "sshd"}
	case "ssh", "ssh.service":
		return []string{"ssh.socket"}
	case "sshd", "sshd.service":
		return []string{"sshd.socket"}
	default:
		return nil
	}
}

// sshUnitSwitch: acts[i] stops, disables or masks SSH units only, and for
// each the same command enables its counterpart (when acts[i] changes
// what starts at boot) and starts it after acts[i] (when acts[i] stops it
// now).
func sshUnitSwitch(acts []nightshift.RecordedAction, i int) bool {
	c, ok := parseUnitCall(acts[i].Argv)
	if !ok || len(c.units) == 0 {
		return false
	}
	needNow := c.verb == "stop" || c.now
	needBoot := c.verb == "disable" || c.verb == "mask"
	if !needNow && !needBoot {
		return false
	}
	for _, u := range c.units {
		other := sshCounterpart(u)
		if other == nil {
			return false
		}
		enabled, started := false, false
		for j, a := range acts {
			o, ok := parseUnitCall(a.Argv)
			if !ok || j == i || !slices.ContainsFunc(o.units, func(x string) bool { return slices.Contains(other, x) }) {
				continue
			}
			switch o.verb {
			case "enable", "reenable":
				enabled = true
				started = started || o.now && j > i
			case "start", "restart", "reload-or-restart":
				started = started || j > i
			}
		}
		if needBoot && !enabled || needNow && !started {
			return false
		}
	}
	return true
}

// loopbackSource reports whether a source match names only the loopback
// network.
func loopbackSource(s string) bool {
	switch s {
	case "127.0.0.0/8", "127.0.0.1", "127.0.0.1/32", "::1", "::1/128":
		return true
	default:
		return false
	}
}

// iptablesRule is what iptablesLoopbackSpoof needs of one iptables call.
type iptablesRule struct {
	family          string // "4" or "6"
	insert, appends bool
	chain, target   string
	in, source      string
	negated, other  bool // a "!" anywhere; any match besides -i, -s, -p
}

func parseIptablesRule(argv []string) (iptablesRule, bool) {
	if len(argv) == 0 {
		return iptablesRule{}, false
	}
	name := path.Base(argv[0])
	r := iptablesRule{family: "4"}
	if strings.HasPrefix(name, "ip6") {
		r.family = "6"
	} else if !strings.HasPrefix(name, "iptables") {
		return r, false
	}
	args := argv[1:]
	for i := 0; i < len(args); i++ {
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch args[i] {
		case "-A", "--append":
			r.appends, r.chain = true, next()
		case "-I", "--insert":
			r.insert, r.chain = true, next() // a position after it is "other": not judged
		case "-j", "--jump":
			r.target = next()
		case "-i", "--in-interface":
			r.in = next()
		case "-s", "--source", "--src":
			r.source = next()
		case "-p", "--protocol":
			next()
		case "!":
			r.negated = true
		case "-t", "--table":
			if next() != "filter" {
				r.other = true
			}
		default:
			r.other = true
		}
	}
	return r, r.appends != r.insert
}

// iptablesLoopbackSpoof: acts[i] drops the loopback network's packets on
// INPUT, and the same command accepts everything on lo on INPUT ahead of
// it (appended before it, or inserted at the top after an insert).
func iptablesLoopbackSpoof(acts []nightshift.RecordedAction, i int) bool {
	d, ok := parseIptablesRule(acts[i].Argv)
	if !ok || d.chain != "INPUT" || (d.target != "DROP" && d.target != "REJECT") || !loopbackSource(d.source) || d.negated || d.other {
		return false
	}
	for j, a := range acts {
		r, ok := parseIptablesRule(a.Argv)
		if !ok || j == i || r.family != d.family || r.chain != "INPUT" || r.target != "ACCEPT" || r.in != "lo" ||
			r.source != "" || r.negated || r.other {
			continue
		}
		if d.appends && (r.insert || j < i) || d.insert && r.insert && j > i {
			return true
		}
	}
	return false
}

// nftRule is what nftLoopbackSpoof needs of one `nft add|insert rule`.
type nftRule struct {
	insert bool
	where  string   // "FAMILY TABLE CHAIN"
	expr   []string // the rule's statements
}

func parseNftRule(argv []string) (nftRule, bool) {
	if len(argv) < 6 || path.Base(argv[0]) != "nft" || argv[2] != "rule" || (argv[1] != "add" && argv[1] != "insert") {
		return nftRule{}, false
	}
	// The rule text may come as one argument or many.
	return nftRule{insert: argv[1] == "insert", where: strings.Join(argv[3:6], " "), expr: strings.Fields(strings.Join(argv[6:], " "))}, true
}

// nftLoopbackSpoof is iptablesLoopbackSpoof for nft: acts[i] is
// `nft add rule FAMILY TABLE input ip saddr 127.0.0.0/8 [counter] drop`
// (or ip6 saddr ::1), and the same command accepts `iif lo` in the same
// chain ahead of it.
func nftLoopbackSpoof(acts []nightshift.RecordedAction, i int) bool {
	d, ok := parseNftRule(acts[i].Argv)
	if !ok || !strings.HasSuffix(d.where, " input") {
		return false
	}
	drop := slices.DeleteFunc(slices.Clone(d.expr), func(s string) bool { return s == "counter" })
	if len(drop) != 4 || (drop[0] != "ip" && drop[0] != "ip6") || drop[1] != "saddr" || !loopbackSource(drop[2]) ||
		(drop[3] != "drop" && drop[3] != "reject") {
		return false
	}
	for j, a := range acts {
		r, ok := parseNftRule(a.Argv)
		if !ok || j == i || r.where != d.where {
			continue
		}
		acc := slices.DeleteFunc(slices.Clone(r.expr), func(s string) bool { return s == "counter" })
		if len(acc) != 3 || (acc[0] != "iif" && acc[0] != "iifname") || strings.Trim(acc[1], `"`) != "lo" || acc[2] != "accept" {
			continue
		}
		if !d.insert && (r.insert || j < i) || d.insert && r.insert && j > i {
			return true
		}
	}
	return false
}
