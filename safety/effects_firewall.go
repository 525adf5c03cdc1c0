package safety

import (
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// The firewall the host loads at boot (/etc/iptables/rules.v4,
// /etc/nftables.conf) and iptables rules with negations are judged by what
// they do to the worker's next SSH connection: a new TCP connection to the
// SSH port from the worker's address. A rule the judge cannot match for
// sure (an address, an interface, a module it does not read) counts as
// possibly matching: an accept it may not give does not count, a drop it
// may give does.

// tri is a three-valued match.
type tri uint8

const (
	triNo tri = iota
	triMaybe
	triYes
)

func and(a, b tri) tri { return min(a, b) }

func neg(t tri, n bool) tri {
	if !n {
		return t
	}
	switch t {
	case triNo:
		return triYes
	case triYes:
		return triNo
	default:
		return triMaybe
	}
}

// portCovers says whether a port list (22, 20:30, ssh, 22,80) holds port.
func portCovers(list string, port int) bool {
	for _, x := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' }) {
		if x == "ssh" {
			x = "22"
		}
		lo, hi, rng := strings.Cut(x, ":")
		if !rng {
			lo, hi, rng = strings.Cut(x, "-")
		}
		if !rng {
			if atoi(x) == port {
				return true
			}
			continue
		}
		l, h := atoi(lo), atoi(hi)
		if hi == "" {
			h = 65535
		}
		if l <= port && port <= h {
			return true
		}
	}
	return false
}

// iptRule is one iptables rule as it bears on the worker's SSH connection.
type iptRule struct {
	chain, target string
	match         tri
}

// iptablesMatch reads an iptables rule's arguments (after iptablesArgs)
// and says whether it matches a new TCP connection to port from origin.
func iptablesMatch(args []string, port int, origin string) iptRule {
	r := iptRule{match: triYes}
	o, oerr := netip.ParseAddr(origin)
	o = o.Unmap()
	negate := false
	m := func(t tri) { r.match = and(r.match, neg(t, negate)); negate = false }
	for i := 0; i < len(args); i++ {
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		a := args[i]
		switch a {
		case "!":
			negate = true
		case "-A", "--append", "-I", "--insert", "-R", "--replace":
			r.chain = next()
			if i+1 < len(args) && isDigits(args[i+1]) {
				i++
			}
		case "-j", "--jump", "-g", "--goto":
			r.target = next()
		case "-t", "--table":
			next()
		case "-p", "--protocol":
			p := strings.ToLower(next())
			m(map[bool]tri{true: triYes, false: triNo}[p == "tcp" || p == "6" || p == "all" || p == "0"])
		case "--dport", "--destination-port", "--dports", "--destination-ports":
			m(map[bool]tri{true: triYes, false: triNo}[portCovers(next(), port)])
		case "--sport", "--source-port", "--sports", "--source-ports":
			next()
			m(triMaybe)
		case "-i", "--in-interface":
			in := next()
			switch {
			case oerr == nil && o.IsLoopback():
				m(map[bool]tri{true: triYes, false: triNo}[in == "lo" || in == "lo+" || in == "+"])
			case in == "lo":
				m(map[bool]tri{true: triMaybe, false: triNo}[oerr != nil])
			default:
				m(triMaybe)
			}
		case "-s", "--source", "--src":
			s := next()
			t := triMaybe
			if pfx, err := netip.ParsePrefix(s); err == nil && oerr == nil {
				t = map[bool]tri{true: triYes, false: triNo}[pfx.Contains(o)]
			} else if a, err := netip.ParseAddr(s); err == nil && oerr == nil {
				t = map[bool]tri{true: triYes, false: triNo}[a.Unmap() == o]
			}
			m(t)
		case "-m", "--match":
			switch next() {
			case "tcp", "multiport", "state", "conntrack", "comment":
			default:
				m(triMaybe)
			}
		case "--state", "--ctstate":
			st := strings.Split(strings.ToUpper(next()), ",")
			has := false
			for _, x := range st {
				has = has || x == "NEW"
			}
			m(map[bool]tri{true: triYes, false: triNo}[has])
		case "--comment":
			next()
		case "--syn":
			m(triYes)
		case "-f", "--fragment":
			m(triNo)
		case "-o", "--out-interface":
			next()
		default:
			if strings.HasPrefix(a, "-") {
				if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && args[i+1] != "!" {
					i++
				}
				m(triMaybe)
			}
		}
	}
	return r
}

// iptablesNegationCut judges an iptables action whose rule has a
// negation (`! -p udp -j DROP`): iptablesCut reads the options, not what
// "!" makes of them.
func iptablesNegationCut(args []string, port int) string {
	args = iptablesArgs(args)
	negated := false
	for _, a := range args {
		negated = negated || a == "!" || strings.HasPrefix(a, "!")
	}
	if !negated {
		return ""
	}
	r := iptablesMatch(args, port, "")
	switch r.chain {
	case "INPUT", "PREROUTING":
	default:
		return ""
	}
	if (r.target == "DROP" || r.target == "REJECT") && r.match != triNo {
		return "the rule's negation leaves the worker's SSH connections (TCP port " + strconv.Itoa(port) + ") among those it drops"
	}
	return ""
}

// iptablesSaveCut evaluates an iptables-save file (what
// netfilter-persistent loads at boot) for a new SSH connection.
func iptablesSaveCut(text string, port int, origin string) string {
	type chain struct {
		policy string
		rules  []iptRule
		lines  []string
	}
	tables := map[string]map[string]*chain{}
	table := ""
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "*"):
			table = l[1:]
			tables[table] = map[string]*chain{}
		case strings.HasPrefix(l, ":") && table != "":
			f := strings.Fields(l[1:])
			if len(f) >= 2 {
				tables[table][f[0]] = &chain{policy: f[1]}
			}
		case strings.HasPrefix(l, "-A") && table != "":
			args := iptablesArgs(strings.Fields(l))
			r := iptablesMatch(args, port, origin)
			ch := tables[table][r.chain]
			if ch == nil {
				ch = &chain{policy: "-"}
				tables[table][r.chain] = ch
			}
			ch.rules = append(ch.rules, r)
			ch.lines = append(ch.lines, l)
		}
	}
	// run walks a chain: "accept", "drop" (with the deciding line), or
	// "" (falls through).
	var walk func(t map[string]*chain, ch *chain, depth int) (string, string)
	// Each chain is walked once per table (memo); a chain jumping back
	// into one being walked (a loop iptables-restore would refuse) falls
	// through.
	type result struct{ v, line string }
	var memo map[string]*result
	run := func(t map[string]*chain, name string, depth int) (string, string) {
		ch := t[name]
		if ch == nil {
			return "", ""
		}
		if depth > 64 {
			return "drop", "-j " + name + " (chains nested deeper than the judge follows)"
		}
		if r, ok := memo[name]; ok {
			if r == nil {
				return "", "" // on the current path
			}
			return r.v, r.line
		}
		memo[name] = nil
		v, line := walk(t, ch, depth)
		memo[name] = &result{v, line}
		return v, line
	}
	walk = func(t map[string]*chain, ch *chain, depth int) (string, string) {
		unsure := ""
		for i, r := range ch.rules {
			if r.match == triNo {
				continue
			}
			switch r.target {
			case "ACCEPT":
				if r.match == triYes && unsure == "" {
					return "accept", ""
				}
				if unsure == "" {
					unsure = ch.lines[i]
				}
			case "DROP", "REJECT":
				if r.match == triYes && unsure == "" {
					return "drop", ch.lines[i]
				}
				return "drop", ch.lines[i] + " (which the judge cannot tell spares it)"
			case "RETURN":
				if r.match == triYes {
					return "", ""
				}
			case "LOG", "NFLOG", "ULOG", "AUDIT", "MARK", "CONNMARK", "CT", "NOTRACK", "TRACE", "":
			default:
				if v, line := run(t, r.target, depth+1); v == "drop" {
					return v, line
				} else if v == "accept" && r.match == triYes && unsure == "" {
					return v, ""
				}
			}
		}
		return "", ""
	}
	for _, tname := range []string{"raw", "mangle", "filter"} {
		t := tables[tname]
		if t == nil {
			continue
		}
		for _, cname := range []string{"PREROUTING", "INPUT"} {
			ch := t[cname]
			if ch == nil {
				continue
			}
			memo = map[string]*result{}
			v, line := run(t, cname, 0)
			switch {
			case v == "drop":
				return "the rule " + line + " drops the worker's next SSH connection (TCP port " + strconv.Itoa(port) + ")"
			case v == "" && (ch.policy == "DROP" || ch.policy == "REJECT"):
				return "the " + tname + " table's " + cname + " policy " + ch.policy + " drops the worker's next SSH connection: no rule accepts TCP port " + strconv.Itoa(port) + " from " + orUnknown(origin) + " before it"
			}
		}
	}
	return ""
}

var (
	nftDport = regexp.MustCompile(`dport\s+(\{[^}]*\}|\S+)`)
	nftHook  = regexp.MustCompile(`hook\s+(input|prerouting)\b`)
)

// nftConfCut evaluates an nftables file (what nftables.service loads at
// boot) for a new SSH connection: in each chain hooked on input or
// prerouting, in order, a rule accepting the SSH port (or the loopback
// interface, for a loopback worker) saves it; a drop without a
// qualifier that spares it, or the chain's drop policy, cuts it.
func nftConfCut(text string, port int, origin string) string {
	o, oerr := netip.ParseAddr(origin)
	loop := oerr == nil && o.Unmap().IsLoopback()
	type chain struct {
		name  string
		stmts []string
	}
	var chains []*chain
	var stack []*chain
	cur := ""
	flush := func() {
		s := strings.TrimSpace(cur)
		cur = ""
		if s == "" || len(stack) == 0 || stack[len(stack)-1] == nil {
			return
		}
		stack[len(stack)-1].stmts = append(stack[len(stack)-1].stmts, s)
	}
	for _, r := range text {
		switch r {
		case '{':
			head := strings.Fields(cur)
			// A set literal ({ 22, 80 }) is not a block.
			if len(head) >= 2 && head[0] == "chain" {
				ch := &chain{name: head[1]}
				chains = append(chains, ch)
				cur = ""
				stack = append(stack, ch)
				continue
			}
			if len(head) >= 1 && (head[0] == "table" || head[0] == "set" || head[0] == "map") {
				cur = ""
				stack = append(stack, nil)
				continue
			}
			cur += string(r)
			stack = append(stack, &chain{name: "{"})
		case '}':
			if len(stack) > 0 && stack[len(stack)-1] != nil && stack[len(stack)-1].name == "{" {
				stack = stack[:len(stack)-1]
				cur += string(r)
				continue
			}
			flush()
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ';', '\n':
			if len(stack) > 0 && stack[len(stack)-1] != nil && stack[len(stack)-1].name == "{" {
				cur += " "
				continue
			}
			flush()
		default:
			cur += string(r)
		}
	}
	p := strconv.Itoa(port)
	for _, ch := range chains {
		hooked, policy := false, "accept"
		for _, s := range ch.stmts {
			if strings.HasPrefix(s, "type ") && nftHook.MatchString(s) && strings.Contains(s, "filter") {
				hooked = true
			}
			if f := strings.Fields(s); len(f) >= 2 && f[0] == "policy" {
				policy = strings.TrimSuffix(f[1], ";")
			}
		}
		if !hooked {
			continue
		}
		accepted := false
		for _, s := range ch.stmts {
			f := strings.Fields(s)
			if len(f) == 0 || f[0] == "type" || f[0] == "policy" || strings.HasPrefix(f[0], "#") {
				continue
			}
			verdict := f[len(f)-1]
			qualified := strings.Contains(s, "saddr") || strings.Contains(s, "iif") || strings.Contains(s, "ct state") ||
				strings.Contains(s, "icmp") || strings.Contains(s, "udp") || strings.Contains(s, "nexthdr") || strings.Contains(s, "l4proto")
			mentions := false
			if m := nftDport.FindStringSubmatch(s); m != nil {
				mentions = portCovers(strings.NewReplacer("{", "", "}", "", " ", "").Replace(m[1]), port)
			}
			switch verdict {
			case "accept":
				if mentions && !strings.Contains(s, "!=") && !strings.Contains(s, "saddr") && !strings.Contains(s, "iif") && !strings.Contains(s, "ct state") {
					accepted = true
				}
				if loop && (strings.Contains(s, "iif lo") || strings.Contains(s, `iifname "lo"`) || strings.Contains(s, "iifname lo")) && len(f) <= 4 {
					accepted = true
				}
			case "drop", "reject":
				if accepted {
					continue
				}
				if strings.Contains(s, "!=") || mentions || !qualified && !strings.Contains(s, "dport") {
					return "the rule `" + s + "` in chain " + ch.name + " drops the worker's next SSH connection (TCP port " + p + ")"
				}
			}
		}
		if !accepted && (policy == "drop" || policy == "reject") {
			return "chain " + ch.name + "'s policy " + policy + " drops the worker's next SSH connection: no rule accepts TCP port " + p + " before it"
		}
	}
	return ""
}
