package safety

import (
	"path"
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// configHarm judges the contents of system configuration files whose
// damage shows only later (at the next login, mount, boot or sshd
// restart): a vital file emptied, the root file system's fstab entry
// changed or a system tree mounted over, user lookups without the local
// files, a kernel command line that replaces init, sudo granted without a
// password or to everyone, PAM letting anyone in, and sshd moved off the
// worker's port or address.
func configHarm(c nightshift.FileChange, pol EffectsPolicy) []Refusal {
	if c.Change != nightshift.ChangeModified && c.Change != nightshift.ChangeCreated {
		return nil
	}
	var out []Refusal
	bad := func(entry, reason string) { out = append(out, Refusal{Entry: entry, Reason: reason}) }
	if c.Change == nightshift.ChangeModified && c.After.Kind == nightshift.FileRegular && c.After.Size <= 1 && c.Before.Size > c.After.Size {
		for _, p := range vitalFiles {
			if c.Path == p || (strings.HasPrefix(c.Path, "/etc/pam.d/") && p == "/etc/pam.d") {
				bad("delete-system", "would empty "+c.Path)
			}
		}
	}
	if c.After.Kind != nightshift.FileRegular {
		return out
	}
	added := addedLines(c.Diff)
	if c.Change == nightshift.ChangeCreated && c.Path != "/etc/shadow" && c.Path != "/etc/shadow-" && c.Path != "/etc/gshadow" && c.Path != "/etc/gshadow-" {
		for _, l := range added {
			if f := strings.Split(l, ":"); len(f) == 9 && f[0] != "" && (f[1] != "" && f[1] != "*" && f[1] != "!" || f[0] == "root") && (f[2] == "" || isDigits(f[2])) {
				bad("password", "would copy password-file entries ("+f[0]+") to "+c.Path)
				break
			}
		}
	}
	removed := removedLines(c.Diff)
	dir := path.Dir(c.Path)
	switch {
	case c.Path == "/etc/fstab":
		for _, l := range added {
			f := strings.Fields(l)
			if len(f) < 3 || strings.HasPrefix(f[0], "#") {
				continue
			}
			mp := path.Clean(f[1])
			if mp == "/" {
				// The root entry may change its options, not its
				// device or type; and none may appear where the host
				// had none (the boot then mounts / by its kernel
				// command line, and an entry naming another device can
				// stop it).
				before, _ := diffSides(c)
				var olds []string
				same := false
				for _, r := range before {
					g := strings.Fields(r)
					if len(g) >= 3 && !strings.HasPrefix(g[0], "#") && path.Clean(g[1]) == "/" {
						olds = append(olds, g[0]+" ("+g[2]+")")
						same = same || g[0] == f[0] && g[2] == f[2]
					}
				}
				opts := ""
				if len(f) >= 4 {
					opts = "," + f[3] + ","
				}
				switch {
				case strings.Contains(opts, ",ro,") || strings.Contains(opts, ",noexec,") || strings.Contains(opts, ",nosuid,"):
					bad("mount", "would mount the root file system "+strings.Trim(opts, ",")+" at boot (/etc/fstab): the host could not write its state, run its programs or give root through sudo")
				case same:
				case len(olds) > 0:
					bad("mount", "would change the root file system's fstab entry from "+strings.Join(olds, ", ")+" to "+f[0]+" ("+f[2]+")")
				default:
					bad("mount", "would add a root file system entry "+f[0]+" ("+f[2]+") to /etc/fstab, which had none: the boot would mount / from it")
				}
				continue
			}
			for _, m := range systemMounts {
				if mp == m && m != "/" && !fstabHas(removed, mp) {
					bad("mount", "would mount "+f[0]+" over "+mp+" at boot (/etc/fstab), hiding the system's files")
				}
			}
			if len(f) >= 4 && (mp == "/usr" || mp == "/bin" || mp == "/sbin") {
				for _, o := range strings.Split(f[3], ",") {
					if o == "noexec" || o == "nosuid" || o == "ro" && mp != "/usr" {
						bad("mount", "would mount "+mp+" with "+o+" at boot (/etc/fstab): the host could not run its programs or give root through sudo")
					}
				}
			}
		}
		for _, r := range removed {
			g := strings.Fields(r)
			if len(g) >= 3 && !strings.HasPrefix(g[0], "#") && path.Clean(g[1]) == "/" && !fstabHas(added, "/") {
				bad("mount", "would remove the root file system's entry from /etc/fstab")
			}
		}
	case c.Path == "/etc/nsswitch.conf":
		for _, l := range added {
			k, v, ok := strings.Cut(l, ":")
			k = strings.TrimSpace(k)
			if ok && (k == "passwd" || k == "group" || k == "shadow") && !slicesContainsWord(v, "files") && !slicesContainsWord(v, "compat") {
				bad("lockout", "would look "+k+" up without the local files ("+strings.TrimSpace(l)+"): logins would fail")
			}
		}
	case c.Path == "/etc/default/grub" || dir == "/etc/default/grub.d":
		for _, l := range added {
			if strings.Contains(l, "GRUB_CMDLINE_LINUX") {
				for _, w := range strings.FieldsFunc(l, func(r rune) bool { return r == ' ' || r == '"' || r == '\'' }) {
					if strings.HasPrefix(w, "init=") || strings.HasPrefix(w, "rdinit=") || strings.HasPrefix(w, "systemd.unit=") || w == "single" || w == "emergency" || w == "rd.break" || w == "S" {
						bad("action", "would boot the host with "+w+" ("+c.Path+")")
					}
				}
			}
		}
	case isSudoersFile(c.Path):
		for _, l := range added {
			s := strings.TrimSpace(l)
			if s == "" || strings.HasPrefix(s, "#") || strings.HasPrefix(s, "@") || strings.HasPrefix(s, "Defaults") || strings.Contains(strings.Fields(s)[0], "_Alias") {
				continue
			}
			f := strings.Fields(s)
			if strings.Contains(s, "NOPASSWD") || strings.Contains(s, "!authenticate") {
				bad("privilege", "would let "+f[0]+" run commands as root without a password ("+s+")")
			} else if f[0] == "ALL" || f[0] == "%users" {
				bad("privilege", "would let every user run commands through sudo ("+s+")")
			}
		}
	case strings.HasPrefix(c.Path, "/etc/pam.d/"):
		for _, l := range added {
			f := strings.Fields(l)
			if len(f) >= 3 && strings.TrimPrefix(f[0], "-") == "auth" && strings.Contains(l, "pam_permit.so") && (f[1] == "sufficient" || strings.Contains(f[1], "success=done") || strings.Contains(f[1], "success=ok")) {
				bad("privilege", "would let anyone log in with any password: "+strings.TrimSpace(l)+" in "+c.Path)
			}
		}
	case c.Path == "/etc/ssh/sshd_config" || dir == "/etc/ssh/sshd_config.d":
		for _, l := range added {
			f := strings.Fields(l)
			if len(f) < 2 || strings.HasPrefix(f[0], "#") {
				continue
			}
			switch strings.ToLower(f[0]) {
			case "port":
				if f[1] != strconv.Itoa(pol.SSHPort) {
					bad("lockout", "would move sshd to port "+f[1]+" at its next restart; the worker reaches it on "+strconv.Itoa(pol.SSHPort))
				}
			}
		}
	}
	return out
}

// vitalFiles are files whose emptying is as harmful as their deletion.
var vitalFiles = strings.Fields(`/etc/passwd /etc/shadow /etc/group /etc/gshadow /etc/sudoers /etc/fstab /etc/nsswitch.conf
	/etc/ssh/sshd_config /etc/hosts /etc/resolv.conf /etc/login.defs /etc/pam.d /etc/hostname /etc/os-release /etc/ld.so.conf`)

func removedLines(diff string) []string {
	var out []string
	for _, l := range strings.Split(diff, "\n") {
		if strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---") {
			out = append(out, l[1:])
		}
	}
	return out
}

func fstabHas(lines []string, mp string) bool {
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) >= 3 && !strings.HasPrefix(f[0], "#") && path.Clean(f[1]) == mp {
			return true
		}
	}
	return false
}

func slicesContainsWord(s, w string) bool {
	for _, x := range strings.Fields(s) {
		if x == w {
			return true
		}
	}
	return false
}

// sshdAccessHarm judges sshd -T's view beyond the keywords sshdLockout
// covers: the login's keys no longer read or revoked, its sessions forced
// into a command or a chroot, its group denied, no authentication attempt
// allowed, no usable key algorithm.
func sshdAccessHarm(s *nightshift.SSHDCheck, pol EffectsPolicy) []Refusal {
	if s == nil || !s.TestOK || len(s.Effective) == 0 {
		return nil
	}
	login := s.Login
	if login == "" {
		login = pol.Login
	}
	eff := s.Effective
	var out []Refusal
	bad := func(reason string) {
		out = append(out, Refusal{Entry: "lockout", Reason: "would lock out " + login + "'s SSH login at the next sshd restart: " + reason})
	}
	if v, ok := eff["authorizedkeysfile"]; ok && !strings.Contains(v, ".ssh/authorized_keys") {
		bad("AuthorizedKeysFile " + v + " no longer reads ~/.ssh/authorized_keys")
	}
	if v := eff["revokedkeys"]; v != "" && v != "none" && strings.Contains(v, "authorized_keys") {
		bad("RevokedKeys " + v + " revokes the login's own keys")
	}
	if v := eff["forcecommand"]; v != "" && v != "none" {
		bad("ForceCommand " + v)
	}
	if v := eff["chrootdirectory"]; v != "" && v != "none" {
		bad("ChrootDirectory " + v)
	}
	if v := eff["maxauthtries"]; v == "0" {
		bad("MaxAuthTries 0")
	}
	for _, pat := range strings.Fields(eff["denygroups"]) {
		if userMatch(pat, login) {
			bad("DenyGroups " + pat)
		}
	}
	if allow := strings.Fields(eff["allowgroups"]); len(allow) > 0 {
		ok := false
		for _, pat := range allow {
			ok = ok || userMatch(pat, login)
		}
		if !ok {
			bad("AllowGroups " + eff["allowgroups"] + " does not name the login's own group")
		}
	}
	if v, ok := eff["pubkeyacceptedalgorithms"]; ok && !strings.Contains(v, "ed25519") && !strings.Contains(v, "rsa-sha2") && !strings.Contains(v, "ecdsa") {
		bad("PubkeyAcceptedAlgorithms " + v + " accepts no current key type")
	}
	return out
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
