package safety

import (
	"path"
	"regexp"
	"strings"

	shpattern "mvdan.cc/sh/v3/pattern"

	"github.com/nightshift-dev/nightshift/shell"
)

// anyEntry stands for "every entry" of a directory: a glob that matches it
// matches any name (*, ?*, [a-z]*), not a chosen few (*.bak).
const anyEntry = "nightshift-any-entry"

var topDirs = strings.Fields("bin boot dev etc home lib lib32 lib64 libx32 opt proc root run sbin srv sys usr var")

// deleteProtected: deleting or moving any of these (or all entries of one)
// breaks the system or locks root out.
var deleteProtected = func() []string {
	out := []string{"/"}
	for _, d := range topDirs {
		out = append(out, "/"+d, "/"+d+"/"+anyEntry)
	}
	return append(out, strings.Fields(`/boot/vmlinuz /boot/initrd.img /boot/grub/grub.cfg /etc/ssh /etc/pam.d /etc/passwd /etc/shadow /etc/group /etc/gshadow /etc/sudoers
		/etc/fstab /etc/systemd /etc/default /etc/apt /etc/security /usr/bin /usr/sbin /usr/lib /usr/lib64 /usr/libexec
		/usr/share /usr/local /var/lib /var/lib/dpkg /var/lib/rpm /var/lib/apt /var/log /boot/grub /boot/grub2
		/root/.ssh /lib/systemd /usr/lib/systemd /etc/init.d /etc/sysctl.d /etc/modprobe.d`)...)
}()

// permsProtected: changing permissions or owners recursively under these
// breaks setuid programs, SSH's StrictModes and system services. Root's
// home is not among them: tightening it (chmod -R go-rwx /root) is a
// common remediation.
var permsProtected = func() []string {
	out := []string{"/"}
	for _, d := range topDirs {
		if d == "root" {
			continue
		}
		out = append(out, "/"+d, "/"+d+"/"+anyEntry)
	}
	return append(out, "/usr/bin", "/usr/sbin", "/usr/lib", "/var/lib")
}()

// pathHit reports whether w, a path operand placed against dir, names a
// protected path, an ancestor of one, or a pattern that matches one.
// Unknown words (and relative ones in an unknown directory) hit: the
// caller decides whether unknown is refused.
func pathHit(w shell.Word, dir string, protected []string) (hit, unknown bool) {
	w = procAlias(shell.Abs(w, dir))
	switch w.Kind {
	case shell.Unknown:
		return false, unknownMayHit(w.Value, protected)
	case shell.Pattern:
		m := newGlob(path.Clean(w.Glob))
		for _, p := range protected {
			if m.ancestorMatches(p) {
				return true, false
			}
		}
		return false, false
	default:
		// shell.Literal: compared below
	}
	p := path.Clean(w.Value)
	for _, q := range protected {
		if p == q || p == "/" || strings.HasPrefix(q, p+"/") && !strings.HasSuffix(q, anyEntry) {
			return true, false
		}
	}
	return false, false
}

// globMatches matches a pattern against a path or any of its ancestors (a
// pattern naming /e* matches /etc/passwd's ancestor /etc).
func globMatches(glob, p string) bool { return newGlob(glob).ancestorMatches(p) }

// glob is a shell pattern compiled the way bash matches it against file
// names: [!…] and [^…] negate, POSIX classes ([[:alpha:]]), extended
// operators (@(…), !(…), …, under shopt -s extglob), * and ? not crossing
// a slash. Wildcards also match a leading dot, which bash does only with
// dotglob: matching more is the safe side. A pattern bash would not read
// as one falls back to path.Match.
type glob struct {
	src string
	re  *regexp.Regexp
}

func newGlob(src string) glob {
	g := glob{src: src}
	expr, err := shpattern.Regexp(src, shpattern.Filenames|shpattern.EntireString|shpattern.ExtendedOperators|shpattern.GlobLeadingDot)
	if err == nil {
		g.re, _ = regexp.Compile(expr)
	}
	return g
}

func (g glob) matches(name string) bool {
	if g.re != nil {
		return g.re.MatchString(name)
	}
	ok, err := path.Match(g.src, name)
	return err == nil && ok
}

func (g glob) ancestorMatches(p string) bool {
	for q := p; ; q = path.Dir(q) {
		if g.matches(q) {
			return true
		}
		if q == "/" || q == "." {
			return false
		}
	}
}

// globMatch matches one shell pattern against one name.
func globMatch(pat, name string) bool { return newGlob(pat).matches(name) }

// deviceAllowed are the paths under /dev that are safe to write.
func deviceAllowed(p string) bool {
	switch p {
	case "/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/console",
		"/dev/full", "/dev/random", "/dev/urandom", "/dev/log", "/dev/ptmx":
		return true
	}
	for _, pre := range []string{"/dev/fd/", "/dev/pts/", "/dev/shm/", "/dev/mqueue/", "/dev/hugepages/"} {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return false
}

// writeBan judges one file opened for writing. Unknown targets pass (a
// file named by a variable is the common case of every script); patterns
// are matched against devices and the protected files.
func writeBan(w shell.Word, dir string, truncates bool) (entry, bool) {
	e, bad, _ := writeBanU(w, dir, truncates)
	return e, bad
}

// writeBanU is writeBan that also reports whether the verdict rests on a
// working directory not known before running.
func writeBanU(w shell.Word, dir string, truncates bool) (e entry, bad, unknown bool) {
	if dir == "" && w.Kind != shell.Unknown && !strings.HasPrefix(w.Value, "/") {
		// A relative file in a directory not known before running: it is
		// banned if it would be in /dev, /proc or /etc.
		for _, d := range []string{"/dev", "/proc", "/etc", "/sys/power"} {
			if e, bad := writeBan(w, d, truncates); bad {
				return e, true, true
			}
		}
		return entry{}, false, false
	}
	e, bad = writeBanAbs(w, dir, truncates)
	return e, bad, false
}

func writeBanAbs(w shell.Word, dir string, truncates bool) (entry, bool) {
	w = procAlias(shell.Abs(w, dir))
	if w.Kind == shell.Unknown {
		return entry{}, false
	}
	candidates := []string{w.Value}
	if w.Kind == shell.Pattern {
		candidates = nil
		for _, c := range append(strings.Fields("/dev/sda /dev/sdb /dev/vda /dev/xvda /dev/nvme0n1 /dev/nvme0n1p1 /dev/sda1 /dev/mmcblk0 /dev/md0 /dev/dm-0 /dev/mem /dev/kmem /dev/port /dev/hda /dev/loop0 /dev/mapper/root /dev/disk/by-uuid/x"),
			"/proc/sysrq-trigger", "/sys/power/state", "/etc/shadow", "/etc/gshadow", "/etc/passwd") {
			if globMatch(path.Clean(w.Glob), c) {
				candidates = append(candidates, c)
			}
		}
	}
	for _, p := range candidates {
		p = path.Clean(p)
		switch {
		case p == "/proc/sysrq-trigger" || p == "/sys/power/state" || strings.HasPrefix(p, "/proc/") && strings.HasSuffix(p, "/sysrq-trigger"):
			return entries[entPower], true
		case strings.HasPrefix(p, "/dev/") && !deviceAllowed(p):
			return entries[entWriteDevice], true
		case p == "/etc/shadow" || p == "/etc/gshadow" || p == "/etc/shadow-" || p == "/etc/gshadow-":
			return entries[entPassword], true
		case p == "/etc/passwd" && truncates:
			return entries[entPassword], true
		}
	}
	return entry{}, false
}

// WriteBanned reports whether opening path (absolute) for writing is
// banned: a device, /proc/sysrq-trigger, /sys/power/state, the shadow
// files.
func WriteBanned(p string) (Ban, bool) {
	e, hit := writeBan(shell.Lit(p), "/", false)
	if !hit {
		return Ban{}, false
	}
	return e.ban("write to " + p), true
}

// unknownMayHit reports whether a path with unknown parts could name a
// protected path: its last component is unknown, ".", "..", empty (a
// trailing slash), a glob matching any entry, or the last component of a
// protected path ("$DIR/etc"). "$TMPDIR/work" cannot.
func unknownMayHit(v string, protected []string) bool {
	if strings.Contains(v, "$(") || strings.Contains(v, "`") || strings.Contains(v, "(") || strings.HasPrefix(v, "~") && !strings.Contains(v, "/") {
		return true // a substitution can produce any path
	}
	last := v
	if i := strings.LastIndex(v, "/"); i >= 0 {
		last = v[i+1:]
	}
	if last == "" || last == "." || last == ".." || strings.ContainsAny(last, "$`{}(") {
		return true
	}
	if globMatch(last, anyEntry) {
		return true
	}
	for _, p := range protected {
		if path.Base(p) == last {
			return true
		}
	}
	return false
}

// procAlias resolves the /proc aliases of the root directory:
// /proc/PID/root/etc (and self, thread-self, PID patterns) is /etc; a path
// under /proc/PID/cwd is in a directory not known before running.
func procAlias(w shell.Word) shell.Word {
	for {
		v := w.Value
		if w.Kind == shell.Pattern {
			v = w.Glob
		}
		parts := strings.SplitN(strings.TrimPrefix(path.Clean(v), "/"), "/", 4)
		if len(parts) < 3 || parts[0] != "proc" || w.Kind == shell.Unknown {
			return w
		}
		if parts[2] == "task" && len(parts) == 4 {
			// /proc/PID/task/TID/root is the same root as /proc/PID/root.
			rest := strings.SplitN(parts[3], "/", 2)
			if len(rest) == 2 {
				parts = append(parts[:2], strings.SplitN(rest[1], "/", 2)...)
			}
		}
		if len(parts) < 3 {
			return w
		}
		switch parts[2] {
		case "root":
			rest := "/"
			if len(parts) == 4 {
				rest += parts[3]
			}
			if w.Kind == shell.Pattern {
				w.Glob = rest
				w.Value = rest
			} else {
				w.Value = rest
			}
		case "cwd", "fd":
			return shell.Word{Kind: shell.Unknown, Value: w.Value, Expanded: true}
		default:
			return w
		}
	}
}

// criticalNames are base names a find filter must not match for a find
// -delete (or -exec rm, chmod, …) over a system tree to count as selective.
var criticalNames = strings.Fields(`vmlinuz vmlinuz-6.1.0-13-amd64 initrd.img initrd.img-6.1.0-13-amd64 grub.cfg passwd shadow
	group gshadow sudoers fstab sshd sshd_config authorized_keys ssh_host_ed25519_key libc.so.6 ld-linux-x86-64.so.2 bash sh
	systemd init sudo su login pam_unix.so nsswitch.conf resolv.conf hosts ` + anyEntry)

func matchesCritical(pattern string) bool {
	for _, n := range criticalNames {
		if globMatch(pattern, n) {
			return true
		}
	}
	return false
}
