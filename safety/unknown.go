package safety

import (
	"strings"

	"github.com/nightshift-dev/nightshift/shell"
)

// unknownWords judges programs whose harm lies in a verb or an option:
// a word not known before running (a variable from the environment, a
// command's output, ${x:-stop} where x may be set outside the command)
// where a verb or an option stands may be the harmful one. Such commands
// are refused as uncertain (Ban.Certain unset) when what they name is
// protected.
func unknownWords(c *shell.Command) (verdict, bool) {
	name := progName(c)
	args := c.Args[1:]
	unknownAt := -1
	for i, a := range args {
		if a.Kind == shell.Unknown {
			unknownAt = i
			break
		}
	}
	if unknownAt < 0 {
		return verdict{}, false
	}
	switch name {
	case "rm":
		// rm $opts /etc: the options may hold -r.
		_, ops, _ := optsOf("rm").Parse(args)
		for _, o := range ops {
			if h, _ := pathHit(o, c.Dir, deleteProtected); h {
				return maybe(entDelete, "write rm's options literally")
			}
		}
	case "chmod", "chown", "chgrp", "chcon", "setfacl", "chattr":
		for _, o := range args {
			if o.Kind == shell.Unknown {
				continue
			}
			if h, _ := pathHit(o, c.Dir, permsProtected); h {
				return maybe(entPerms, "write the options literally")
			}
		}
	case "systemctl":
		_, ops, _ := optsOf("systemctl").Parse(args)
		if len(ops) == 0 || ops[0].Kind != shell.Unknown {
			return verdict{}, false
		}
		units := ops[1:]
		if len(units) == 0 {
			return maybe(entPower, "write systemctl's verb literally")
		}
		if h, _ := unitsHit(units, sshUnits); h {
			return maybe(entSSH, "write systemctl's verb literally")
		}
		if h, _ := unitsHit(units, netServices); h {
			return maybe(entNetwork, "write systemctl's verb literally")
		}
		for _, u := range units {
			if powerTargets.MatchString(u.Value) {
				return maybe(entPower, "write systemctl's verb literally")
			}
		}
	case "service", "invoke-rc.d", "update-rc.d", "chkconfig", "rc-update":
		if h, _ := unitsHit(args, sshUnits); h {
			return maybe(entSSH, "write the service's verb literally")
		}
		if h, _ := unitsHit(args, netServices); h {
			return maybe(entNetwork, "write the service's verb literally")
		}
	case "init", "telinit":
		return maybe(entPower, "never change the runlevel")
	case "passwd":
		// passwd -l "$user" locks whoever it is; an unknown word where
		// the option stands may be -d.
		if unknownAt == 0 || !strings.HasPrefix(args[0].Value, "-") {
			return maybe(entPassword, "write passwd's options and user literally")
		}
	case "dd":
		for _, a := range args {
			if a.Kind == shell.Unknown && !strings.Contains(a.Value, "=") {
				return maybe(entWriteDevice, "write dd's operands as KEY=VALUE literally")
			}
		}
	case "ip":
		var ws []shell.Word
		for _, a := range args {
			if strings.HasPrefix(a.Value, "-") && len(ws) == 0 && a.Kind == shell.Literal {
				continue
			}
			ws = append(ws, a)
		}
		for i, w := range ws {
			if w.Kind == shell.Unknown && (i < 2 || ws[1].Value == "set") {
				return maybe(entNetwork, "write ip's object and verb literally")
			}
		}
	case "nft":
		// nft joins its arguments into one script: an unknown word may
		// hold "; flush ruleset".
		return maybe(entFirewall, "write the firewall command literally")
	case "ufw":
		// ufw VERB …: the verb, or what "default" sets, decides.
		if args[0].Kind == shell.Unknown || args[0].Value == "default" {
			return maybe(entFirewall, "write the firewall command literally")
		}
	case "firewall-cmd", "firewall-offline-cmd":
		// Options only: --zone=$z and --add-service=$s add or name; an
		// unknown option, or the default zone or a zone's target, may
		// drop everything.
		for _, a := range args {
			if a.Kind != shell.Unknown {
				continue
			}
			name, _, ok := strings.Cut(a.Value, "=")
			if !ok || !strings.HasPrefix(name, "--") || strings.ContainsAny(name, "$`") ||
				strings.HasPrefix(name, "--set-") || strings.HasPrefix(name, "--panic") || strings.Contains(name, "policy") || strings.Contains(name, "rule") {
				return maybe(entFirewall, "write the firewall command literally")
			}
		}
	case "apt", "apt-get", "aptitude", "dpkg", "yum", "dnf", "rpm", "zypper", "microdnf":
		for _, a := range args {
			for _, p := range sshPackages {
				if a.Kind == shell.Literal && a.Value == p {
					return maybe(entSSH, "write the package manager's verb literally")
				}
			}
		}
		for _, a := range args {
			switch a.Value {
			case "remove", "purge", "erase", "autoremove", "-r", "-P", "--remove", "--purge", "-e", "--erase", "rm", "autopurge":
				return maybe(entSSH, "name the packages to remove literally")
			}
		}
	}
	if strings.HasPrefix(name, "iptables") || strings.HasPrefix(name, "ip6tables") || name == "ebtables" || name == "arptables" {
		for i, a := range args {
			if a.Kind != shell.Unknown {
				continue
			}
			if i > 0 && iptablesValueOpts[args[i-1].Value] {
				continue
			}
			return maybe(entFirewall, "write the firewall rule's options and target literally")
		}
	}
	return verdict{}, false
}

// iptablesValueOpts take a value that cannot turn a rule into a flush or
// a drop policy.
var iptablesValueOpts = map[string]bool{"-s": true, "-d": true, "-i": true, "-o": true, "-p": true, "--source": true,
	"--destination": true, "--in-interface": true, "--out-interface": true, "--protocol": true, "--dport": true, "--sport": true,
	"--dports": true, "--sports": true, "--state": true, "--ctstate": true, "--comment": true, "--to-destination": true,
	"--to-source": true, "--to-ports": true, "--log-prefix": true, "--uid-owner": true, "--set-mark": true, "--mark": true,
	"-m": true, "--match": true, "-t": true, "--table": true, "-w": true, "--wait": true}

// allEntries: a program that deletes or changes the mode or owner of
// each of its operands, given every entry of a protected directory
// (chmod 000 /etc/*, rm -f /usr/bin/*, a loop over them, xargs fed by a
// listing), breaks the system like its recursive form.
func allEntries(c *shell.Command) (verdict, bool) {
	name := progName(c)
	var ops []shell.Word
	var protected []string
	id := entPerms
	switch name {
	case "rm", "unlink", "shred":
		_, ops, _ = optsOf("rm").Parse(c.Args[1:])
		protected, id = deleteProtected, entDelete
	case "chmod", "chown", "chgrp":
		opts, o, _ := optsOf(name).Parse(c.Args[1:])
		if _, ref := shell.Has(opts, "--reference"); !ref && len(o) > 0 {
			o = o[1:]
		}
		ops, protected = o, permsProtected
	default:
		return verdict{}, false
	}
	for _, o := range ops {
		w := shell.Abs(o, c.Dir)
		if w.Kind != shell.Pattern {
			continue
		}
		for _, p := range protected {
			if !strings.HasSuffix(p, "/"+anyEntry) && p != "/" {
				p += "/" + anyEntry
			}
			if strings.HasSuffix(p, "/"+anyEntry) && globMatches(w.Glob, p) {
				return hit(id, "name the files the rule needs, not every entry of a system directory")
			}
		}
	}
	return verdict{}, false
}
