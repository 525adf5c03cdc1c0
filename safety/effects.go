package safety

import (
	"fmt"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// Defaults of EffectsPolicy.
const (
	DefaultMaxDeleted = 20
	DefaultMaxMeta    = 100
	DefaultMaxOutside = 200
)

// EffectsPolicy configures JudgeEffects. The zero value of every field
// selects its default.
type EffectsPolicy struct {
	// Login is the user the worker logs in as ("root" when empty): changes
	// that would lock it out are refused.
	Login string
	// LoginHome is its home directory ("/root" for root, "/home/LOGIN"
	// otherwise, when empty).
	LoginHome string
	// SSHPort is the port the worker reaches sshd on (22 when zero).
	SSHPort int
	// SSHAddr is the address the worker reaches sshd at (the address its
	// SSH connection dialled, nightshift.SSHFacts.Server): sshd's listen
	// addresses must keep covering it and AddressFamily its family. The
	// zero value: not known, and the judge goes by the worker's own
	// address as sshd saw it (Effects.Origin), against which a specific
	// ListenAddress covers only a loopback worker's connection.
	SSHAddr netip.Addr
	// SSHFrom is the worker's own end of that connection (its local
	// address, nightshift.SSHFacts.Local). When it is given, SSHAddr is
	// used only if sshd saw the connection come from it (Effects.Origin):
	// otherwise something translates the connection on the way (a NAT, a
	// forwarder) and the address dialled may not be the host's. The zero
	// value: SSHAddr is used as given.
	SSHFrom netip.Addr
	// HostKeyAlgorithms are the host key algorithms the worker's
	// known_hosts accepts for the host: sshd must keep presenting one.
	// Empty: not known, and a command that changes HostKey or
	// HostKeyAlgorithms must leave sshd presenting every key type a Debian
	// host has (ed25519, ECDSA, RSA).
	HostKeyAlgorithms []string
	// KeyAlgorithms are the public key algorithms the worker's own key
	// logs in with (certificate forms for a certificate): sshd's
	// PubkeyAcceptedAlgorithms must keep one. Empty: not known, and a
	// command that changes PubkeyAcceptedAlgorithms must leave ed25519,
	// ECDSA and RSA keys accepted.
	KeyAlgorithms []string
	// Scope lists the paths (files or directory trees) the rule declares it
	// touches. Changes outside them, beyond scratch and package-manager
	// bookkeeping, count against MaxOutside. A path may be a pattern whose
	// components after the first are path.Match patterns (/home/*/.*:
	// every home's dotfiles and what is under them; ValidScopePath).
	Scope []string
	// Rule is the id of the rule the command is a proposal for, named in
	// the scope's refusals ("rule my_rule declares no paths"). Empty: "the
	// rule".
	Rule string
	// ScopeNote says, in a refusal of a change outside an empty Scope, why
	// the rule has no paths and what its author can do ("declares no
	// paths (add paths: to the rule)": package rules, for a YAML rule
	// without paths; package scap for an SCAP rule without an OVAL
	// check). Empty: the rule's check reads no files.
	ScopeNote string
	// MaxDeleted bounds the entries a command may delete under the system
	// trees (/etc, /usr, /boot, /var/lib, …). Default DefaultMaxDeleted.
	MaxDeleted int
	// MaxMeta bounds the mode and owner changes under the system trees.
	// Default DefaultMaxMeta.
	MaxMeta int
	// MaxOutside bounds the changes outside Scope. Default
	// DefaultMaxOutside; with a declared Scope, a tenth of it.
	MaxOutside int
	// StrictScope makes Scope default-deny everywhere but the scratch
	// places (/tmp, /var/tmp, /var/cache, /dev/shm): every change outside
	// Scope, not made by the package manager, is refused ("scope"),
	// whatever it is, and the recorded actions and the lines changed
	// inside Scope are judged by what the rule's check reads (Units,
	// Sysctl, Keys). An empty Scope then allows no such change. Off: only
	// the MaxOutside bound applies outside Scope, and the actions face the
	// verb allow-list alone (the zero value, for judging effects without
	// a rule: measurements, check-command). The worker, worker run, the
	// fleet and the demo turn it on for every rule, with whatever scope
	// the rule has, empty included; see effects_scope.go and
	// effects_rulescope.go.
	StrictScope bool
	// Units, Sysctl and Keys are what the rule's check reads besides
	// files: the systemd units it names (auditd.service), the kernel
	// parameters (kernel.kptr_restrict) and the configuration keywords of
	// its patterns (PermitRootLogin). With StrictScope they scope the
	// recorded actions and the changes inside Scope (effects_rulescope.go):
	// a unit verb only for these units (and sshd's reload), sysctl only
	// for these keys, auditctl, nft and iptables, mount, modprobe and
	// timedatectl only for rules whose paths or units are about them; in
	// sshd's configuration, the sysctl files, the units and the key-value
	// files of Scope (login.defs, sudoers, modprobe.d, fstab…: kvFile),
	// only lines of these keywords may change. Empty Keys (or Sysctl) with StrictScope:
	// the lines of those files are not limited by keyword; empty Units: no
	// unit of the rule's own.
	//
	// Keys may also hold the check's own line patterns, each as
	// LinePatternPrefix followed by the regular expression (package scap
	// derives them from the check's text patterns): with StrictScope they
	// judge the lines of the scope's files that no keyword names (PAM
	// stacks, audit rules, profile scripts, cron, apt's lists; a key-value
	// file of a rule without keywords): every line a command adds must
	// match one of them (effects_lines.go). And it may hold the mode bits
	// and owners the check's file states name, each as FileStatePrefix
	// followed by the OVAL entity (owrite, user_id): with StrictScope a
	// mode or owner change in Scope changes only those (modeScopeHarm).
	Units  []string
	Sysctl []string
	Keys   []string

	// linePatterns are Keys' line patterns (withDefaults moves them out of
	// Keys).
	linePatterns []string
	// fileStates are Keys' file state entities (suid … oexec, user_id,
	// group_id).
	fileStates []string
	// valueChecks are Keys' ValueChecks.
	valueChecks []ValueCheck
	// kernelArgs are Keys' kernel arguments (KernelArgPrefix).
	kernelArgs []string
	// siblings are the "all"/"default" siblings of the rule's kernel
	// parameters, with the value check each must satisfy (withSiblings).
	siblings map[string]ValueCheck
	// dropins are the drop-in files JudgeEffects added to Scope
	// (dropinScope).
	dropins []string
	// configured are the units whose own configuration files the judged
	// command changed inside Scope (configuredUnits), set by
	// scopedActions.
	configured map[string]bool
}

// WithSSH returns p with what the worker's SSH connection to the host
// tells (sshexec's Client.SSHFacts): HostKeyAlgorithms from the host key
// algorithms its known_hosts accepts, KeyAlgorithms from the algorithm its
// key logged in with, SSHAddr (and a zero SSHPort) from the address it
// dialled and SSHFrom from its own end of the connection. Facts not known
// leave their fields as they are.
//
// KeyAlgorithms is the algorithm used, not every one the key could sign
// with: OpenSSH's server-sig-algs does not follow PubkeyAcceptedAlgorithms,
// so golang.org/x/crypto/ssh keeps signing an RSA key with the form it
// chose (rsa-sha2-256) and does not try another when sshd refuses it.
func (p EffectsPolicy) WithSSH(f nightshift.SSHFacts) EffectsPolicy {
	if len(f.HostKeyAlgorithms) > 0 {
		p.HostKeyAlgorithms = slices.Clone(f.HostKeyAlgorithms)
	}
	if f.KeyAlgorithm != "" {
		p.KeyAlgorithms = []string{f.KeyAlgorithm}
	}
	if f.Server.IsValid() {
		p.SSHAddr = f.Server.Addr().Unmap()
		if p.SSHPort == 0 {
			p.SSHPort = int(f.Server.Port())
		}
	}
	if f.Local.IsValid() {
		p.SSHFrom = f.Local.Addr().Unmap()
	}
	return p
}

func (p EffectsPolicy) withDefaults() EffectsPolicy {
	if p.Login == "" {
		p.Login = "root"
	}
	if p.LoginHome == "" {
		if p.Login == "root" {
			p.LoginHome = "/root"
		} else {
			p.LoginHome = "/home/" + p.Login
		}
	}
	if p.SSHPort == 0 {
		p.SSHPort = 22
	}
	if slices.ContainsFunc(p.Keys, func(k string) bool {
		return isLinePattern(k) || strings.HasPrefix(k, FileStatePrefix) || strings.HasPrefix(k, ValueKeyPrefix) || strings.HasPrefix(k, KernelArgPrefix)
	}) {
		var values []string
		var keys []string
		for _, k := range p.Keys {
			if re, ok := strings.CutPrefix(k, LinePatternPrefix); ok {
				p.linePatterns = append(p.linePatterns, re)
			} else if st, ok := strings.CutPrefix(k, FileStatePrefix); ok {
				p.fileStates = append(p.fileStates, st)
			} else if v, ok := strings.CutPrefix(k, ValueKeyPrefix); ok {
				values = append(values, v)
			} else if a, ok := strings.CutPrefix(k, KernelArgPrefix); ok {
				p.kernelArgs = append(p.kernelArgs, a)
			} else {
				keys = append(keys, k)
			}
		}
		p.Keys = keys
		p.valueChecks = valueChecks(values)
	}
	if p.MaxDeleted <= 0 {
		p.MaxDeleted = DefaultMaxDeleted
	}
	if p.MaxMeta <= 0 {
		p.MaxMeta = DefaultMaxMeta
	}
	if p.MaxOutside <= 0 {
		p.MaxOutside = DefaultMaxOutside
		if len(p.Scope) > 0 {
			p.MaxOutside = DefaultMaxOutside / 10
		}
	}
	return p
}

// Refusal is one reason JudgeEffects refused a command's effects.
type Refusal struct {
	// Entry names the rule of the judge that refused: "delete-system",
	// "perms-system", "password", "device", "lockout", "action", "scope".
	Entry string
	// Reason says what the command would have done, for the model and the
	// report: "would delete 1,532 files under /usr/lib".
	Reason string
}

func (r Refusal) String() string { return r.Reason + " (" + r.Entry + ")" }

// systemTrees are where deletions, mode and owner changes are bounded.
var systemTrees = strings.Fields("/bin /boot /etc /lib /lib32 /lib64 /libx32 /opt /sbin /srv /usr /var/lib /var/spool /root/.ssh")

// scratch is never counted against the scope: temporary files, caches,
// logs and the package managers' own bookkeeping.
var scratch = strings.Fields("/tmp /var/tmp /var/cache /var/log /var/lib/apt /var/lib/dpkg /var/lib/ucf /var/lib/systemd/deb-systemd-helper-enabled /var/lib/systemd/deb-systemd-user-helper-enabled /var/backups /var/lib/nightshift")

// critical files and directories: deleting one (or an ancestor) breaks the
// system or the worker's login.
var critical = strings.Fields(`/etc/passwd /etc/shadow /etc/group /etc/gshadow /etc/sudoers /etc/fstab /etc/nsswitch.conf
	/etc/ssh /etc/ssh/sshd_config /etc/pam.d /etc/security /etc/login.defs /etc/hosts /etc/hostname /etc/resolv.conf /etc/systemd /etc/default/grub
	/boot/grub /boot/grub/grub.cfg /boot/grub2 /usr/sbin/sshd /usr/bin/sudo /bin/sudo /bin/bash /usr/bin/bash /bin/sh /usr/bin/sh
	/usr/bin/dash /bin/dash /sbin/init /usr/sbin/init /lib/systemd/systemd /usr/lib/systemd/systemd /usr/bin/login /bin/login
	/usr/lib/openssh /usr/lib/x86_64-linux-gnu/security /lib/x86_64-linux-gnu/security /usr/lib64/security /lib64/security
	/usr/lib/aarch64-linux-gnu/security /usr/lib/x86_64-linux-gnu/libc.so.6 /lib/x86_64-linux-gnu/libc.so.6 /usr/lib64/ld-linux-x86-64.so.2
	/lib64/ld-linux-x86-64.so.2 /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
	/usr/lib/aarch64-linux-gnu/libc.so.6 /lib/aarch64-linux-gnu/libc.so.6 /lib/ld-linux-aarch64.so.1 /usr/lib/ld-linux-aarch64.so.1 /var/lib/dpkg /var/lib/rpm /etc/apt /usr/bin /usr/sbin /usr/lib /usr/lib64 /lib /lib64 /bin /sbin /usr /etc /boot /var /var/lib`)

func under(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

func underAny(p string, dirs []string) (string, bool) {
	for _, d := range dirs {
		if under(p, d) {
			return d, true
		}
	}
	return "", false
}

// JudgeEffects decides whether a command's effects, as the recording
// sandbox saw them, may be applied to the host. It refuses, listing every
// reason:
//
//   - deletions of critical paths (account files, /etc/ssh, PAM, sshd, sudo,
//     shells, init, the boot loader's configuration, the system trees
//     themselves) or of more than MaxDeleted entries under the system trees;
//   - mode and owner changes under the system trees that make a file
//     world-writable, add setuid or setgid, take a root-owned file from
//     root, make a file unreadable or a directory or program unusable by
//     its owner, or that number more than MaxMeta;
//   - writes to /etc/passwd, /etc/shadow or /etc/gshadow that blank a
//     password, remove or expire the worker's login or root, change root's
//     UID or give either a shell that refuses logins (a change whose diff
//     was not captured cannot be judged and is refused);
//   - device nodes created;
//   - changes that lock the worker's login out: sshd's configuration test
//     failing, its effective configuration for the login refusing it
//     (PermitRootLogin no for root, DenyUsers, AllowUsers, public keys
//     off), /etc/nologin, PAM stacks that deny, the login's
//     authorized_keys deleted or emptied, its home, ~/.ssh or keys made
//     group- or world-writable (StrictModes);
//   - recorded actions outside the allow-list (see judgeAction), but for
//     the classes of legitimate administration judgeActions recognises
//     with the rest of the command's actions;
//   - more than MaxOutside changes outside the rule's Scope, and with
//     StrictScope any change outside it but scratch (scopeHarm), any
//     recorded action about what the rule's check does not read
//     (scopedActions), and lines of sshd's configuration or sysctl files
//     in Scope that set other keywords than the check's (keysHarm);
//     lines of the scope's other files that no pattern of the check
//     matches (linesHarm), values its states reject (valueHarm), values
//     naming secrets or read-whole directories (valuePathHarm), mode and
//     owner changes of what its file states do not state
//     (modeScopeHarm), the slash form of sysctl keys (sysctlSlashHarm);
//   - the classes the package documentation lists under "Judged by
//     meaning": PAM stacks that come to deny (effects_pam.go), limits,
//     login.defs, sysctl files and actions, /etc/hosts, tcp wrappers,
//     files nothing reads in /etc/ssh and /boot, programs that hide the
//     system's in root's PATH (effects_system.go).
//
// It is a pure function of its input.
func JudgeEffects(e nightshift.Effects, pol EffectsPolicy) []Refusal {
	pol = pol.withDefaults()
	if pol.StrictScope {
		pol.dropins = dropinScope(pol.Scope)[len(pol.Scope):]
		pol.Scope = append(slices.Clip(pol.Scope), pol.dropins...)
		pol = pol.withSiblings()
	}
	var out []Refusal
	add := func(entry, format string, a ...any) {
		out = append(out, Refusal{Entry: entry, Reason: fmt.Sprintf(format, a...)})
	}
	owned := dpkgOwned(e)
	// pkgOp: the package manager's database changed, so a package was
	// installed, upgraded or removed by the command.
	pkgOp := false
	for _, c := range e.Changes {
		pkgOp = pkgOp || c.Path == "/var/lib/dpkg/status" || c.Path == "/var/lib/rpm/rpmdb.sqlite" || c.Path == "/var/lib/rpm/Packages"
	}
	changed := map[string]bool{}
	for _, c := range e.Changes {
		changed[c.Path] = true
	}
	deletedUnder := map[string]int{}
	metaUnder := map[string]int{}
	outside := 0
	outsideUnder := map[string]int{}
	for _, c := range e.Changes {
		tree, system := underAny(c.Path, systemTrees)
		switch c.Change {
		case nightshift.ChangeDeleted:
			if crit := criticalHit(c.Path); crit != "" {
				add("delete-system", "would delete %s", describeDelete(c, crit))
			} else if _, prog := underAny(c.Path, loginProgramTrees); prog && !pkgOp {
				add("delete-system", "would delete %s, a system program or library, outside the package manager", describeDelete(c, c.Path))
			} else if system && !owned[c.Path] {
				deletedUnder[tree] += 1 + c.Entries
			}
		case nightshift.ChangeMeta, nightshift.ChangeModified:
			if c.Before.Kind == c.After.Kind && (c.Before.Mode != c.After.Mode || c.Before.UID != c.After.UID || c.Before.GID != c.After.GID) {
				if why := permsHarm(c); why != "" && (system || under(c.Path, pol.LoginHome)) {
					add("perms-system", "would %s", why)
				}
				if system {
					metaUnder[tree]++
				}
			}
		case nightshift.ChangeCreated, nightshift.ChangeNone:
		default:
			// Every Change value is listed above.
		}
		if c.After.Kind == nightshift.FileDevice && c.Change != nightshift.ChangeDeleted {
			add("device", "would create the device node %s", c.Path)
		}
		if c.Change == nightshift.ChangeCreated && c.After.Kind == nightshift.FileRegular && c.After.Mode&0o6000 != 0 && system && !owned[c.Path] {
			add("perms-system", "would create the setuid/setgid program %s (%04o)", c.Path, c.After.Mode)
		}
		if _, ok := underAny(c.Path, scratch); !ok && !owned[c.Path] && !inScope(c.Path, pol.Scope) {
			outside++
			outsideUnder[topDir(c.Path)] += 1 + c.Entries
		}
		out = append(out, passwordHarm(c, pol, changed)...)
		out = append(out, lockoutFile(c, pol)...)
		out = append(out, deferredHarm(c, owned, pol)...)
		out = append(out, bootHarm(c)...)
		out = append(out, programHarm(c, owned)...)
		out = append(out, configHarm(c, pol)...)
		out = append(out, limitsHarm(c, pol)...)
		out = append(out, systemHarm(e, c, pkgOp)...)
		out = append(out, sudoHarm(e, c, pol)...)
		// Account takeover, modes and what runs later (judge19c).
		out = append(out, accountsHarm(c, pol, changed)...)
		out = append(out, sudoersHarm(e, c, owned)...)
		out = append(out, modesHarm(c, owned, system, pol)...)
		out = append(out, packagesHarm(e, c, owned)...)
		out = append(out, hooksHarm(e, c, owned, pol)...)
		// Latent sshd settings and boot-time harm (judge19d).
		out = append(out, sshEnvHarm(c, pol)...)
		out = append(out, sshFilesHarm(c)...)
		out = append(out, laterHarm(c)...)
		if !owned[c.Path] {
			out = append(out, unitHarm(c, e.Origin, pol)...)
		}
	}
	for _, tree := range sortedKeys(deletedUnder) {
		if n := deletedUnder[tree]; n > pol.MaxDeleted {
			add("delete-system", "would delete %s under %s", plural(n, "file"), tree)
		}
	}
	for _, tree := range sortedKeys(metaUnder) {
		if n := metaUnder[tree]; n > pol.MaxMeta {
			add("perms-system", "would change the mode or owner of %s under %s", plural(n, "file"), tree)
		}
	}
	if outside > pol.MaxOutside {
		var where []string
		for _, d := range sortedKeys(outsideUnder) {
			where = append(where, fmt.Sprintf("%d under %s", outsideUnder[d], d))
		}
		scope := "the rule declares no paths"
		if len(pol.Scope) > 0 {
			scope = "outside the rule's paths " + strings.Join(pol.Scope, ", ")
		}
		add("scope", "would change %s (%s), more than the %d allowed: %s", plural(outside, "path"), scope, pol.MaxOutside, strings.Join(where, ", "))
	}
	out = append(out, scopeHarm(e.Changes, owned, pkgOp, pol)...)
	out = append(out, sshdLockout(e.SSHD, pol)...)
	out = append(out, sshdAccessHarm(e.SSHD, pol)...)
	out = append(out, sshdEffectiveHarm(e, pol)...)
	out = append(out, parseHarm(e, pol)...)
	out = append(out, hostKeyHarm(e, pol)...)
	out = append(out, judgeActions(e.Actions, pol)...)
	out = append(out, scopedActions(e, owned, pkgOp, pol)...)
	out = append(out, keysHarm(e, owned, pol)...)
	out = append(out, linesHarm(e, owned, pol)...)
	out = append(out, modeScopeHarm(e, owned, pol)...)
	out = append(out, valuePathHarm(e, owned, pol)...)
	out = append(out, sysctlSlashHarm(e, owned, pol)...)
	out = append(out, bootArgsHarm(e, owned, pol)...)
	out = append(out, mountOptionsHarm(e, owned, pol)...)
	out = append(out, moduleLoadHarm(e, owned, pol)...)
	out = append(out, shellVarsHarm(e, owned, pol)...)
	out = append(out, modesTakenHarm(e, owned, pol)...)
	out = append(out, writablePathHarm(e, owned, pol)...)
	out = append(out, valueHarm(e, owned, pol)...)
	out = append(out, dropinHarm(e, owned, pol)...)
	out = append(out, sharedHarm(e, owned, pol)...)
	out = append(out, sysctlActions(e)...)
	out = append(out, pamHarm(e.PAM, e.Origin, pol)...)
	out = append(out, pamWeakenHarm(e.PAM, e.Origin, pol)...)
	out = append(out, shadowHarm(e)...)
	return out
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func topDir(p string) string {
	parts := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 3)
	if len(parts) >= 2 {
		return "/" + parts[0] + "/" + parts[1]
	}
	return "/" + parts[0]
}

func plural(n int, what string) string {
	s := formatCount(n) + " " + what
	switch {
	case n == 1:
	case strings.HasSuffix(what, "y"):
		s = s[:len(s)-1] + "ies"
	default:
		s += "s"
	}
	return s
}

// formatCount writes n with thousands separators (1,532).
func formatCount(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func inScope(p string, scope []string) bool {
	for _, s := range scope {
		if scopeCovers(s, p) {
			return true
		}
	}
	return false
}

// scopeCovers reports whether the scope path s covers p: p is s or under
// it. A scope path may be a pattern (ScopePattern): each of its
// components after the first may be a path.Match pattern (*, ?, [...]),
// matched against one component of p, never across a "/"; p is covered
// when its leading components match them all (/home/*/.* covers
// /home/ann/.bashrc and /home/ann/.ssh/authorized_keys, not /home/ann or
// /home/ann/notes).
func scopeCovers(s, p string) bool {
	if !ScopePattern(s) {
		return under(p, s)
	}
	sc, pc := pathComponents(s), pathComponents(p)
	if len(pc) < len(sc) {
		return false
	}
	for i, c := range sc {
		if ok, err := path.Match(c, pc[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

// scopeAncestor reports whether dir is a strict ancestor of what the scope
// path s covers (/home/ann of /home/*/.*).
func scopeAncestor(dir, s string) bool {
	if !ScopePattern(s) {
		return s != dir && under(s, dir)
	}
	sc, dc := pathComponents(s), pathComponents(dir)
	if len(dc) >= len(sc) {
		return false
	}
	for i, c := range dc {
		if ok, err := path.Match(sc[i], c); err != nil || !ok {
			return false
		}
	}
	return true
}

func pathComponents(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// ScopePattern reports whether the scope path s is a pattern: one of its
// components holds *, ? or [ (path.Match syntax). ValidScopePath says
// which patterns a scope may hold.
func ScopePattern(s string) bool {
	return strings.ContainsAny(s, "*?[")
}

// ValidScopePath checks a scope path (EffectsPolicy.Scope): absolute,
// clean, below /; a pattern's components must be valid path.Match
// patterns and its first component literal (/home/*/.* is a scope,
// /*/x is not: a pattern never spans the top of the file system).
func ValidScopePath(s string) error {
	if !strings.HasPrefix(s, "/") || path.Clean(s) != s || s == "/" {
		return fmt.Errorf("%q is not a clean absolute path below /", s)
	}
	if !ScopePattern(s) {
		return nil
	}
	cs := pathComponents(s)
	if ScopePattern(cs[0]) {
		return fmt.Errorf("%q: the first component of a pattern must be literal (%s)", s, cs[0])
	}
	for _, c := range cs[1:] {
		if _, err := path.Match(c, ""); err != nil {
			return fmt.Errorf("%q: component %q is not a path.Match pattern: %w", s, c, err)
		}
	}
	return nil
}

// criticalHit returns the critical path that deleting p removes (p itself
// or one under it), or "".
func criticalHit(p string) string {
	for _, c := range critical {
		if under(c, p) {
			return c
		}
	}
	if under(p, "/etc/pam.d") || under(p, "/etc/security") {
		return p
	}
	return ""
}

func describeDelete(c nightshift.FileChange, crit string) string {
	s := c.Path
	if c.Entries > 0 {
		s += fmt.Sprintf(" (%s)", plural(c.Entries, "entry"))
	}
	if crit != c.Path {
		s += ", which holds " + crit
	}
	return s
}

// dpkgOwned is the set of paths the package manager's own lists (new or
// changed /var/lib/dpkg/info/*.list files) say it installed. These records
// are written by the same command: a command that forges them can pass its
// files off as a package's (they are then bounded by the other rules, not
// by the scope and the setuid-creation rule).
func dpkgOwned(e nightshift.Effects) map[string]bool {
	owned := map[string]bool{}
	for _, c := range e.Changes {
		if !strings.HasPrefix(c.Path, "/var/lib/dpkg/info/") {
			continue
		}
		switch {
		case strings.HasSuffix(c.Path, ".list"):
			for _, l := range strings.Split(c.Diff, "\n") {
				if strings.HasPrefix(l, "+/") {
					owned[l[1:]] = true
				}
			}
		case strings.HasSuffix(c.Path, ".md5sums"):
			// "+HASH  usr/sbin/sshd": a package upgrade replaced the file.
			for _, l := range strings.Split(c.Diff, "\n") {
				if _, p, ok := strings.Cut(l, "  "); ok && strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
					owned["/"+strings.TrimPrefix(p, "/")] = true
				}
			}
		}
	}
	return owned
}

// permsHarm says what a mode or owner change breaks, or "".
func permsHarm(c nightshift.FileChange) string {
	b, a := c.Before, c.After
	if c.After.Kind == nightshift.FileSymlink {
		return ""
	}
	ch := fmt.Sprintf("%s (%04o %d:%d -> %04o %d:%d)", c.Path, b.Mode, b.UID, b.GID, a.Mode, a.UID, a.GID)
	switch {
	case a.Mode&0o002 != 0 && b.Mode&0o002 == 0 && !(a.Kind == nightshift.FileDir && a.Mode&0o1000 != 0):
		return "make " + ch + " world-writable"
	case a.Mode&0o6000&^b.Mode != 0 && a.Kind == nightshift.FileRegular:
		return "add setuid/setgid to " + ch
	case b.UID == 0 && a.UID != 0:
		return "take " + ch + " from root"
	case b.Mode&0o400 != 0 && a.Mode&0o400 == 0 && a.Mode&0o044 == 0:
		return "make " + ch + " unreadable"
	case a.Kind == nightshift.FileDir && b.Mode&0o100 != 0 && a.Mode&0o100 == 0:
		return "make the directory " + ch + " unusable"
	case a.Kind == nightshift.FileRegular && b.Mode&0o111 != 0 && a.Mode&0o111 == 0 && !under(c.Path, "/etc/update-motd.d"):
		// run-parts runs only the executable fragments of update-motd.d:
		// taking the bit away disables one, which nothing vital needs.
		return "make the program " + ch + " not executable"
	}
	return ""
}
