package safety

import (
	"fmt"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// controlSurfaces are the host's control surfaces: the trees whose content
// decides who can log in, what runs as root and when, how the host boots,
// and which packages and trust it takes. With EffectsPolicy.StrictScope, a
// change to any path outside the rule's Scope and the scratch places
// (created, modified, deleted, mode, owner, link target), under these
// trees or not, that is not the package manager's is refused ("scope"):
// the judge does not have to recognise the harm, only that the rule had
// no business there. The table names the trees for reports.
var controlSurfaces = []struct{ path, what string }{
	{"/etc", "system configuration: accounts, PAM, sshd, sudo, units and drop-ins, cron, apt sources and hooks, trust stores"},
	{"/usr", "programs, libraries, unit files, generators, templates (/usr/share/openssh), /usr/local"},
	{"/bin", "programs (usrmerge link or tree)"},
	{"/sbin", "programs"},
	{"/lib", "libraries, modules, unit files, PAM modules"},
	{"/lib32", "libraries"},
	{"/lib64", "the dynamic loader"},
	{"/libx32", "libraries"},
	{"/boot", "kernel, initramfs, boot loader configuration"},
	{"/opt", "programs run by units and cron"},
	{"/var/lib/dpkg", "the package database, maintainer scripts, diversions"},
	{"/var/lib/apt", "the package lists apt trusts"},
	{"/var/lib/systemd/linger", "users whose units start at boot"},
	{"/var/spool/cron", "crontabs"},
	{"/var/spool/at", "queued at jobs"},
	{"/root", "root's home: its shell start-up files, ~/.ssh"},
}

// homeControl reports whether p is a dotfile or dot-directory of a home
// under /home (shell start-up files, ~/.ssh, ~/.config/systemd/user…):
// what runs as, or logs in as, that user.
func homeControl(p string) bool {
	rest, ok := strings.CutPrefix(p, "/home/")
	if !ok {
		return false
	}
	_, sub, ok := strings.Cut(rest, "/")
	return ok && strings.HasPrefix(sub, ".")
}

// ControlSurface returns the control surface p is on (the tree of the
// table, or "/home/*/.*"), or "" when p is on none.
func ControlSurface(p string) string {
	for _, s := range controlSurfaces {
		if under(p, s.path) {
			return s.path
		}
	}
	if homeControl(p) {
		return "/home/*/.*"
	}
	return ""
}

// pkgScriptPaths are written by package operations beyond the files the
// packages list (maintainer scripts, triggers): accepted from a command
// that ran the package manager (the account files among them are still
// judged by passwordHarm, the links by the other rules).
var pkgScriptPaths = strings.Fields(`/var/lib/dpkg /var/lib/apt /etc/alternatives /etc/ld.so.cache
	/etc/passwd /etc/passwd- /etc/group /etc/group- /etc/shadow /etc/shadow- /etc/gshadow /etc/gshadow- /etc/subuid /etc/subuid- /etc/subgid /etc/subgid-
	/etc/systemd/system/multi-user.target.wants /etc/systemd/system/sockets.target.wants /etc/systemd/system/timers.target.wants
	/etc/systemd/system/sysinit.target.wants /etc/rc0.d /etc/rc1.d /etc/rc2.d /etc/rc3.d /etc/rc4.d /etc/rc5.d /etc/rc6.d /etc/rcS.d
	/usr/share/info/dir /etc/ssl/certs /etc/ca-certificates.conf /etc/shells /etc/init.d /etc/default /usr/lib/python3/dist-packages
	/etc/pam.d/common-auth /etc/pam.d/common-account /etc/pam.d/common-password /etc/pam.d/common-session /etc/pam.d/common-session-noninteractive`)

// scratchPlaces are where, with StrictScope, a command may change files
// outside the rule's paths: temporary files and caches, which nothing
// reads to decide what runs or who logs in. Everything else is a control
// surface under StrictScope: besides the trees of controlSurfaces, the
// logs (/var/log: the journal, wtmp, btmp, lastlog, dpkg.log, which the
// host's auditing and the package manager read), /var/lib (service
// state), /var/spool, /var/mail, /srv, /run (runtime units, sysctl.d,
// user units in /run/user), homes and the rest. /var/cache/debconf is not
// scratch: it holds the answers maintainer scripts configure packages
// with.
var scratchPlaces = strings.Fields("/tmp /var/tmp /var/cache /dev/shm /var/lib/nightshift")

// scratchPlace reports whether p is in a scratch place.
func scratchPlace(p string) bool {
	if under(p, "/var/cache/debconf") {
		return false
	}
	_, ok := underAny(p, scratchPlaces)
	return ok
}

// pkgStatePaths are the package manager's own records and logs beyond
// pkgScriptPaths, accepted as regular files and directories (never links)
// from a command that ran a package operation.
var pkgStatePaths = strings.Fields(`/var/log/apt /var/log/dpkg.log /var/log/alternatives.log /var/cache/debconf /var/lib/ucf
	/var/lib/systemd/deb-systemd-helper-enabled /var/lib/systemd/deb-systemd-user-helper-enabled /var/lib/systemd/deb-systemd-helper-masked
	/var/lib/dpkg /var/lib/apt /var/backups /var/lib/pam`)

// usrAlias is p's other name on a merged-/usr system, where the package
// lists may name /lib/x for the /usr/lib/x the sandbox sees (and the
// other way round); "" when p has none.
func usrAlias(p string) string {
	for _, d := range []string{"/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/", "/libx32/"} {
		if rest, ok := strings.CutPrefix(p, "/usr"+d); ok {
			return d + rest
		}
		if rest, ok := strings.CutPrefix(p, d); ok {
			return "/usr" + d + rest
		}
	}
	return ""
}

// scopeHarm refuses, under StrictScope, the changes to control surfaces
// outside the rule's Scope. Exempt: paths the package manager's lists say
// it installed (owned), the bookkeeping and maintainer-script outputs of a
// package operation (pkgOp, pkgScriptPaths), and directories the command
// created on the way to a scope path (mkdir -p /etc/audit/rules.d).
func scopeHarm(changes []nightshift.FileChange, owned map[string]bool, pkgOp bool, pol EffectsPolicy) []Refusal {
	if !pol.StrictScope {
		return nil
	}
	var outside []string
	for _, c := range changes {
		if c.Change == nightshift.ChangeNone || scratchPlace(c.Path) || inScope(c.Path, pol.Scope) || owned[c.Path] || owned[usrAlias(c.Path)] {
			continue
		}
		if _, ok := underAny(c.Path, pkgScriptPaths); ok && pkgOp {
			continue
		}
		if _, ok := underAny(c.Path, pkgStatePaths); ok && pkgOp && (c.After.Kind == nightshift.FileRegular || c.After.Kind == nightshift.FileDir || c.Change == nightshift.ChangeDeleted) {
			continue
		}
		if c.Change == nightshift.ChangeCreated && c.After.Kind == nightshift.FileDir && ancestorOfScope(c.Path, pol.Scope) {
			continue
		}
		outside = append(outside, c.Path)
	}
	if len(outside) == 0 {
		return nil
	}
	what := outside[0]
	switch n := len(outside); {
	case n == 2:
		what += " and " + outside[1]
	case n > 2:
		what += ", " + outside[1] + " and " + plural(n-2, "other path")
	}
	// Off the trees of controlSurfaces: say why it still counts.
	free := ""
	if ControlSurface(outside[0]) == "" {
		free = " (with a strict scope only scratch places are free: " + strings.Join(scratchPlaces[:4], ", ") + ")"
	}
	// The rule's own paths are named, not the drop-ins JudgeEffects added
	// to them (dropinScope).
	own := pol.Scope[:len(pol.Scope)-len(pol.dropins)]
	if len(own) == 0 {
		return []Refusal{{Entry: "scope", Reason: fmt.Sprintf("would change %s: %s %s%s", what, ruleName(pol), emptyScopeNote(pol), free)}}
	}
	return []Refusal{{Entry: "scope", Reason: fmt.Sprintf("would change %s, outside the rule's paths %s%s", what, strings.Join(own, ", "), free)}}
}

// ruleName is "rule ID", or "the rule" when the policy does not name it.
func ruleName(pol EffectsPolicy) string {
	if pol.Rule == "" {
		return "the rule"
	}
	return "rule " + pol.Rule
}

// emptyScopeNote says why the rule has no paths: its ScopeNote, or that
// its check reads no files.
func emptyScopeNote(pol EffectsPolicy) string {
	if pol.ScopeNote != "" {
		return pol.ScopeNote
	}
	return "has no paths: its check reads no files, so only the package manager and recorded actions may change the system"
}

// ancestorOfScope reports whether dir is a strict ancestor of a scope path.
func ancestorOfScope(dir string, scope []string) bool {
	for _, s := range scope {
		if scopeAncestor(dir, s) {
			return true
		}
	}
	return false
}
