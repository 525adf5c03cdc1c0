package safety

import (
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/nightshift-dev/nightshift"
)

// The sshd settings below lock the worker out only when sshd next reloads
// or restarts (the running daemon keeps its old configuration, so the
// lockout net's fresh login after the commit still works): they are
// judged from sshd -T's view of the configuration the command left
// (nightshift.SSHDCheck.Effective, evaluated for the worker's login and
// address) against what the worker's SSH client offers. The client's
// lists come from the library the worker dials with
// (golang.org/x/crypto/ssh), never from a copy.

// clientAlgorithms are the algorithms the worker's SSH client offers by
// default: ssh.Config's defaults (what sshexec's ClientConfig leaves
// unset) for ciphers, key exchanges and MACs; the library's supported
// host key and public key signature algorithms.
func clientAlgorithms() ssh.Algorithms {
	var c ssh.Config
	c.SetDefaults()
	sup := ssh.SupportedAlgorithms()
	return ssh.Algorithms{Ciphers: c.Ciphers, KeyExchanges: c.KeyExchanges, MACs: c.MACs, HostKeys: sup.HostKeys, PublicKeyAuths: sup.PublicKeyAuths}
}

// keyTypeAlgorithms maps a key type to the signature algorithms that use
// it: the types a worker's key or a host key may have on a Debian host
// (ssh-keygen -A makes the three host keys).
var keyTypeAlgorithms = map[string][]string{
	"ed25519": {ssh.KeyAlgoED25519},
	"ecdsa":   {ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521},
	"rsa":     {ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA},
}

// keyTypeOf names the key type of a signature algorithm (certificates
// count as their key's type), or "".
func keyTypeOf(alg string) string {
	for t, algs := range keyTypeAlgorithms {
		for _, a := range algs {
			if alg == a || strings.TrimSuffix(alg, "-cert-v01@openssh.com") == a {
				return t
			}
		}
	}
	return ""
}

// hostKeyFileType guesses a host key file's type from its name (sshd's
// default names ssh_host_TYPE_key); "" when the name does not say.
func hostKeyFileType(p string) string {
	b := path.Base(p)
	switch {
	case strings.Contains(b, "ed25519"):
		return "ed25519"
	case strings.Contains(b, "ecdsa"):
		return "ecdsa"
	case strings.Contains(b, "rsa"):
		return "rsa"
	case strings.Contains(b, "dsa"):
		return "dsa"
	}
	return ""
}

func commaList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// dangerousEnv says whether a session environment variable set by sshd
// (SetEnv, ~/.ssh/environment) changes what the worker's commands run:
// the command search path, the loader's preloads and paths, the shell's
// start-up files and options.
func dangerousEnv(name string) bool {
	switch name {
	case "PATH", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "IFS", "PS4", "PROMPT_COMMAND", "GCONV_PATH", "HOME", "SHELL":
		return true
	}
	return strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "BASH_FUNC_")
}

// userEnvAllows says whether a PermitUserEnvironment value lets users set
// the variable name: yes, or a pattern list naming it.
func userEnvAllows(v, name string) bool {
	switch v {
	case "", "no":
		return false
	case "yes":
		return true
	}
	for _, pat := range commaList(v) {
		if ok, _ := path.Match(pat, name); ok {
			return true
		}
	}
	return false
}

// newWayInKeywords are sshd settings that let someone other than the
// login's authorized_keys in: certificates signed by a CA, principals
// lists, keys from a program.
var newWayInKeywords = []string{"trustedusercakeys", "authorizedprincipalsfile", "authorizedprincipalscommand", "authorizedkeyscommand"}

// sshdKeywordLines returns the added lines of changed files (any file: an
// Include may name one outside /etc/ssh) that set the sshd keyword kw.
func sshdKeywordLines(e nightshift.Effects, kw string) []string {
	var out []string
	for _, c := range e.Changes {
		if c.Change == nightshift.ChangeDeleted || c.After.Kind != nightshift.FileRegular {
			continue
		}
		for _, l := range addedLines(c.Diff) {
			f := strings.Fields(l)
			if len(f) >= 2 && strings.EqualFold(strings.TrimSuffix(f[0], "="), kw) {
				out = append(out, strings.TrimSpace(l)+" ("+c.Path+")")
			}
		}
	}
	return out
}

// sshdTouched says whether the command changed one of the sshd keywords
// kws: a changed file (any: an Include may name one outside /etc/ssh)
// adds or removes a line setting one, or a file of sshd's configuration
// is deleted or changed without a text diff (what it held is not known).
// Settings the command did not touch are the host's own, which the worker
// reached sshd with; those are judged only where the policy names the
// worker's keys.
func sshdTouched(e nightshift.Effects, kws ...string) bool {
	for _, c := range e.Changes {
		conf := c.Path == "/etc/ssh/sshd_config" || under(c.Path, "/etc/ssh/sshd_config.d")
		if conf && (c.Change == nightshift.ChangeDeleted || c.Diff == "" && c.After.Kind != nightshift.FileDir) {
			return true
		}
		for _, l := range append(addedLines(c.Diff), removedLines(c.Diff)...) {
			f := strings.Fields(l)
			if len(f) == 0 {
				continue
			}
			for _, kw := range kws {
				if strings.EqualFold(strings.TrimSuffix(f[0], "="), kw) {
					return true
				}
			}
		}
	}
	return false
}

// listenAddr is one of sshd -T's listenaddress values.
type listenAddr struct {
	addr     netip.Addr // invalid for a host name
	host     string
	port     int
	wildcard bool
}

func parseListen(s string) (listenAddr, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return listenAddr{}, false
	}
	host, port := strings.Trim(s[:i], "[]"), atoi(s[i+1:])
	l := listenAddr{host: host, port: port}
	if a, err := netip.ParseAddr(host); err == nil {
		l.addr = a.Unmap()
		l.wildcard = a.IsUnspecified()
	}
	return l, port > 0
}

// sshdEffectiveHarm judges sshd -T's view after the command for what
// locks the worker out at sshd's next reload or restart, or lets someone
// else in: the address family or listen addresses without the worker's
// connection, no cipher, MAC, key exchange, host key or public key
// algorithm in common with the worker's client, MaxSessions 0, a banner
// that is not a regular file, session environments that change the
// worker's PATH or loader, and new ways in (a trusted user CA, principals,
// keys from a command).
func sshdEffectiveHarm(e nightshift.Effects, pol EffectsPolicy) []Refusal {
	s := e.SSHD
	if s == nil || !s.TestOK || len(s.Effective) == 0 {
		return sshdListenFallback(e, pol)
	}
	login := s.Login
	if login == "" {
		login = pol.Login
	}
	eff := s.Effective
	var out []Refusal
	lock := func(reason string) {
		out = append(out, Refusal{Entry: "lockout", Reason: "would lock out " + login + "'s SSH login at the next sshd reload or restart: " + reason})
	}
	origin, originErr := netip.ParseAddr(e.Origin)
	origin = origin.Unmap()
	family := func(a netip.Addr) string {
		if a.Is4() {
			return "IPv4"
		}
		return "IPv6"
	}
	// dialled is the address the worker reaches sshd at, when known and
	// the connection is not translated on the way (sshd saw it come from
	// the worker's own end); where is the address whose family must stay:
	// dialled, else the worker's own as sshd saw it (a TCP connection's
	// two ends share a family).
	dialled := pol.SSHAddr.Unmap()
	translated := ""
	if from := pol.SSHFrom.Unmap(); dialled.IsValid() && from.IsValid() && (originErr != nil || origin != from) {
		translated = " (the worker's connection leaves it from " + from.String() + " and reaches sshd from " + orUnknown(e.Origin) +
			": translated on the way, so " + dialled.String() + ", the address it dialled, may not be the host's)"
		dialled = netip.Addr{}
	}
	where, whereText := dialled, "reaches sshd at "+dialled.String()
	if !dialled.IsValid() {
		where, whereText = origin, "connects from "+e.Origin
	}

	listenTouched := sshdTouched(e, "AddressFamily", "ListenAddress", "Port", "Include")
	switch af := eff["addressfamily"]; {
	case af == "" || af == "any" || !listenTouched:
	case !where.IsValid():
		lock("AddressFamily " + af + " and the worker's address is not known (the judge cannot tell its family)")
	case af == "inet" && !where.Is4(), af == "inet6" && !where.Is6():
		lock("AddressFamily " + af + " and the worker connects over " + family(where) + " (it " + whereText + ")")
	}
	if las := strings.Fields(eff["listenaddress"]); len(las) > 0 && listenTouched {
		ports := strings.Fields(eff["port"])
		covered := false
		var seen []string
		for _, x := range las {
			l, ok := parseListen(x)
			if !ok {
				continue
			}
			seen = append(seen, x)
			if !slices.Contains(ports, strconv.Itoa(l.port)) && l.port != pol.SSHPort {
				continue
			}
			switch {
			case l.wildcard && where.IsValid():
				covered = covered || l.addr.Is4() == where.Is4()
			case l.wildcard:
				covered = true
			case l.addr.IsValid() && dialled.IsValid():
				// The address the worker dialled. Behind a destination NAT
				// or a forwarder it is not the host's; the lockout net's
				// latent check reads the host's own (SSH_CONNECTION).
				covered = covered || l.addr == dialled
			case l.addr.IsValid() && originErr == nil && origin.IsLoopback():
				covered = covered || l.addr == origin
			}
		}
		if !covered {
			conn := "from " + orUnknown(e.Origin)
			fix := "listen on 0.0.0.0 or :: of the worker's family, or leave ListenAddress out"
			if dialled.IsValid() {
				conn += " to " + dialled.String()
				fix = "listen on " + dialled.String() + " too, on 0.0.0.0 or :: of its family, or leave ListenAddress out"
			}
			lock("sshd would listen only on " + strings.Join(seen, " ") + ", which does not cover the worker's connection (" + conn +
				", port " + strings.Join(ports, " ") + ")" + translated + ": " + fix)
		}
	}

	cl := clientAlgorithms()
	for _, k := range []struct {
		kw, name string
		client   []string
	}{
		{"ciphers", "Ciphers", cl.Ciphers},
		{"macs", "MACs", cl.MACs},
		{"kexalgorithms", "KexAlgorithms", cl.KeyExchanges},
	} {
		v, ok := eff[k.kw]
		if !ok {
			continue
		}
		if len(intersect(commaList(v), k.client)) == 0 {
			lock(k.name + " " + v + " has nothing in common with what the worker's SSH client offers (" + strings.Join(k.client, ",") + ")")
		}
	}

	// Host keys: the server must still present a key of a type the
	// worker's known_hosts pins (unknown: any of the three a Debian host
	// has, so none may go), with an algorithm the client speaks.
	hostKeysJudged := len(pol.HostKeyAlgorithms) > 0 || sshdTouched(e, "HostKey", "HostKeyAlgorithms", "Include")
	if v, ok := eff["hostkeyalgorithms"]; hostKeysJudged && (ok || eff["hostkey"] != "") {
		offered := intersect(commaList(v), cl.HostKeys)
		if !ok {
			offered = cl.HostKeys
		}
		files := map[string]bool{}
		for _, f := range strings.Fields(eff["hostkey"]) {
			files[hostKeyFileType(f)] = true
		}
		hasType := func(t string) bool { return len(files) == 0 || files[t] || files[""] }
		var serves []string
		for _, a := range offered {
			if t := keyTypeOf(a); t != "" && hasType(t) {
				serves = append(serves, a)
			}
		}
		if len(pol.HostKeyAlgorithms) > 0 {
			if len(intersect(serves, pol.HostKeyAlgorithms)) == 0 {
				lock("sshd would present no host key the worker's known_hosts accepts (" + strings.Join(pol.HostKeyAlgorithms, ",") + "): HostKeyAlgorithms " + orUnknown(v) + ", HostKey " + eff["hostkey"])
			}
		} else {
			for _, t := range []string{"ed25519", "ecdsa", "rsa"} {
				if !slices.ContainsFunc(serves, func(a string) bool { return keyTypeOf(a) == t }) {
					lock("sshd would no longer present its " + t + " host key (HostKeyAlgorithms " + orUnknown(v) + ", HostKey " + eff["hostkey"] +
						"), which the worker's known_hosts may pin; keep every host key type the host has")
				}
			}
		}
	}
	keysJudged := len(pol.KeyAlgorithms) > 0 || sshdTouched(e, "PubkeyAcceptedAlgorithms", "PubkeyAcceptedKeyTypes", "Include", "Match")
	if v, ok := eff["pubkeyacceptedalgorithms"]; ok && keysJudged {
		acc := intersect(commaList(v), cl.PublicKeyAuths)
		want := pol.KeyAlgorithms
		if len(want) == 0 {
			// The worker's key type is not known: every common type
			// stays accepted.
			for _, t := range []string{"ed25519", "ecdsa", "rsa"} {
				if !slices.ContainsFunc(acc, func(a string) bool { return keyTypeOf(a) == t }) {
					lock("PubkeyAcceptedAlgorithms " + v + " no longer accepts " + t + " keys, which the worker's key may be")
				}
			}
		} else if len(intersect(commaList(v), want)) == 0 {
			// want is what the worker's client logs in with (certificate
			// forms included, which cl.PublicKeyAuths does not list).
			lock("PubkeyAcceptedAlgorithms " + v + " does not accept the worker's key (" + strings.Join(want, ",") + ")")
		}
	}

	if eff["maxsessions"] == "0" {
		lock("MaxSessions 0 refuses every session (every command the worker runs)")
	}
	if strings.HasPrefix(eff["persourcemaxstartups"], "0") && eff["persourcemaxstartups"] != "none" {
		lock("PerSourceMaxStartups " + eff["persourcemaxstartups"])
	}
	if b := eff["banner"]; b != "" && b != "none" {
		if _, dev := underAny(b, []string{"/dev", "/proc", "/sys"}); dev {
			lock("Banner " + b + " is not a regular file (reading it can hang or flood the login before authentication)")
		}
		for _, c := range e.Changes {
			if c.Path == b && c.Change != nightshift.ChangeDeleted && c.After.Kind != nightshift.FileRegular {
				lock("Banner " + b + " would not be a regular file (" + c.After.Kind.String() + ") (reading it can hang the login before authentication)")
			}
		}
	}

	// Session environments: SetEnv, or users' ~/.ssh/environment under
	// PermitUserEnvironment.
	for _, kv := range strings.Fields(eff["setenv"]) {
		if k, _, _ := strings.Cut(kv, "="); dangerousEnv(k) {
			lock("SetEnv " + kv + " would change what every SSH command the worker runs finds and loads")
		}
	}
	if pue := eff["permituserenvironment"]; pue != "" && pue != "no" {
		for _, l := range sshdKeywordLines(e, "PermitUserEnvironment") {
			out = append(out, Refusal{Entry: "lockout", Reason: "would add " + l + ": every user's ~/.ssh/environment (and authorized_keys environment= options) would then set PATH or LD_PRELOAD for their SSH sessions, root's too; the judge cannot see those files (SSG's sshd_do_not_permit_user_env wants no)"})
			break
		}
		for _, c := range e.Changes {
			for _, name := range userEnvNames(c) {
				if userEnvAllows(pue, name) {
					lock("PermitUserEnvironment " + pue + " with " + name + " set in " + c.Path)
				}
			}
		}
	}

	// New ways in for someone else.
	for _, kw := range newWayInKeywords {
		v := eff[kw]
		if v == "" || v == "none" {
			continue
		}
		lines := sshdKeywordLines(e, kw)
		target := ""
		for _, f := range strings.Fields(v) {
			for _, c := range e.Changes {
				if c.Path == f && c.Change != nightshift.ChangeDeleted {
					target = f
				}
			}
		}
		if len(lines) > 0 || target != "" {
			what := strings.Join(lines, "; ")
			if what == "" {
				what = "a change of " + target
			}
			out = append(out, Refusal{Entry: "privilege", Reason: "would let others log in over SSH without a key in authorized_keys: " + what +
				" (" + kw + " " + v + "); a new way in is a decision for the host's owners"})
		}
	}
	for _, f := range strings.Fields(eff["authorizedkeysfile"]) {
		if _, tmp := underAny(f, []string{"/tmp", "/var/tmp", "/dev/shm", "/run/user"}); tmp {
			out = append(out, Refusal{Entry: "privilege", Reason: "would read authorized keys from " + f + " (AuthorizedKeysFile), a directory anyone can write: any local user could log in as anyone"})
		}
	}
	return out
}

// userEnvNames are the variables a changed file sets for SSH sessions
// that dangerousEnv names: a ~/.ssh/environment's NAME=value lines, an
// authorized_keys line's environment="NAME=value" options.
func userEnvNames(c nightshift.FileChange) []string {
	if c.Change == nightshift.ChangeDeleted || c.After.Kind != nightshift.FileRegular {
		return nil
	}
	base := path.Base(c.Path)
	if path.Base(path.Dir(c.Path)) != ".ssh" || (base != "environment" && base != "authorized_keys" && base != "authorized_keys2") {
		return nil
	}
	var out []string
	for _, l := range addedLines(c.Diff) {
		l = strings.TrimSpace(l)
		if base == "environment" {
			if k, _, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(k, "#") && dangerousEnv(strings.TrimSpace(k)) {
				out = append(out, strings.TrimSpace(k))
			}
			continue
		}
		for rest := l; ; {
			i := strings.Index(rest, `environment="`)
			if i < 0 {
				break
			}
			rest = rest[i+len(`environment="`):]
			if k, _, ok := strings.Cut(rest, "="); ok && dangerousEnv(k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// sshEnvHarm refuses a session environment file written for the worker's
// login or root that sets what dangerousEnv names, whatever sshd's
// PermitUserEnvironment is now: it bites the day that is turned on.
func sshEnvHarm(c nightshift.FileChange, pol EffectsPolicy) []Refusal {
	if path.Base(c.Path) != "environment" {
		return nil
	}
	dir := path.Dir(c.Path)
	if dir != path.Join(pol.LoginHome, ".ssh") && dir != "/root/.ssh" {
		return nil
	}
	var out []Refusal
	for _, name := range userEnvNames(c) {
		out = append(out, Refusal{Entry: "lockout", Reason: "would set " + name + " in " + c.Path + ": sshd applies it to every SSH session of that login (the worker's commands) when PermitUserEnvironment allows it"})
	}
	return out
}

// defaultHostKeys are the host key files sshd loads when its
// configuration names none (ssh-keygen -A makes them).
var defaultHostKeys = []string{"/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key", "/etc/ssh/ssh_host_ed25519_key"}

// hostKeyHarm refuses replacing or deleting a host key file sshd loads
// whose type the worker's known_hosts pins (EffectsPolicy.HostKeyAlgorithms;
// not known: any type): from sshd's next restart the host presents another
// key, or none of that type, and the worker's client refuses it as a
// changed host key, as OpenSSH does. A mode or owner change is not a
// replacement.
func hostKeyHarm(e nightshift.Effects, pol EffectsPolicy) []Refusal {
	files := slices.Clone(defaultHostKeys)
	if e.SSHD != nil {
		files = append(files, strings.Fields(e.SSHD.Effective["hostkey"])...)
	}
	pinned := map[string]bool{}
	for _, a := range pol.HostKeyAlgorithms {
		pinned[keyTypeOf(a)] = true
	}
	known := len(pinned) > 0 && !pinned[""]
	var out []Refusal
	for _, c := range e.Changes {
		if !slices.Contains(files, c.Path) || c.Before.Kind != nightshift.FileRegular {
			continue
		}
		verb := "replace"
		switch {
		case c.Change == nightshift.ChangeDeleted || c.After.Kind == nightshift.FileNone:
			verb = "delete"
		case c.Change == nightshift.ChangeModified:
			if c.After.Kind == nightshift.FileRegular && c.Before.SHA256 != "" && c.Before.SHA256 == c.After.SHA256 {
				continue
			}
		default:
			continue
		}
		t := hostKeyFileType(c.Path)
		why := "which the worker's known_hosts may pin (the judge was not told which types it does)"
		if known {
			if t != "" && !pinned[t] {
				continue
			}
			why = "which the worker's known_hosts pins (" + strings.Join(pol.HostKeyAlgorithms, ",") + ")"
		}
		out = append(out, Refusal{Entry: "lockout", Reason: "would " + verb + " the host key " + c.Path + ", " + why +
			": from sshd's next restart the worker's SSH client would refuse the host as one whose key changed; leave the host keys the worker pins, or update its known_hosts first"})
	}
	return out
}

// sshdListenFallback: without sshd -T's view (no sshd, or it could not
// run), a ListenAddress added to sshd's configuration cannot be judged
// against the worker's connection and is refused.
func sshdListenFallback(e nightshift.Effects, pol EffectsPolicy) []Refusal {
	if e.SSHD != nil && !e.SSHD.TestOK {
		return nil // sshdLockout refuses a configuration sshd -t rejects
	}
	var out []Refusal
	for _, c := range e.Changes {
		if c.Path != "/etc/ssh/sshd_config" && path.Dir(c.Path) != "/etc/ssh/sshd_config.d" || c.Change == nightshift.ChangeDeleted {
			continue
		}
		for _, l := range addedLines(c.Diff) {
			if f := strings.Fields(l); len(f) >= 2 && strings.EqualFold(f[0], "listenaddress") {
				out = append(out, Refusal{Entry: "lockout", Reason: "would make sshd listen only on " + f[1] + " at its next restart (sshd's effective configuration could not be read to check it covers the worker's connection)"})
			}
		}
	}
	return out
}
