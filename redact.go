package nightshift

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Redacted returns a copy of e that shows no secret: the form of a
// command's effects that may leave the judge (journal, reports, fleet
// results, logs, the model's next turn and summaries). The judge itself
// must read the raw effects (it reads /etc/shadow's diff to refuse a
// blanked password). Redacted is idempotent, leaves e unchanged and shares
// only what it does not change (SSHD, PAM, Shadows).
//
// What is secret, and what stands in its place:
//
//   - The password fields of shadow-like files (/etc/shadow, /etc/gshadow,
//     their backups: any file in /etc whose name begins with shadow or
//     gshadow) and the old hashes of /etc/security/opasswd. Only the field
//     is masked, so the diff still shows what happened to the account:
//     root:<password hash changed, $y$>:19000:0:99999:7:::. The mask says
//     which of a blank password, a locked one (! or * and whether a hash
//     is behind the lock), a hash (its scheme, $6$ or $y$, and, on an
//     added line, whether it differs from the removed line's) the field
//     held: none of that is secret, and it is what a reviewer needs.
//   - A password hash anywhere else (a crypt(3) hash such as $6$salt$…, a
//     GRUB grub.pbkdf2.… hash): the hash is replaced by <password hash
//     SCHEME>, the rest of the line stays.
//   - The whole contents of private key and credential files, whose diff
//     becomes one line "[secret contents not shown (WHY); sha256 before …,
//     after …]": SSH host private keys (/etc/ssh/ssh_host_*_key), SSH
//     private keys (.ssh/id_*), *.key and *.keytab files, /etc/ssl/private,
//     PPP's chap-, pap- and srp-secrets, /etc/ipsec.secrets, NetworkManager
//     connections, sssd.conf; any diff holding a PEM or OpenSSH PRIVATE
//     KEY block; and any file in /root or /home readable by its owner only
//     (a user's private file: .netrc, .pgpass, shell history), but for
//     authorized_keys, known_hosts and *.pub, which are public.
//
// Files not readable by others elsewhere in /etc are not hidden for their
// mode alone: hardening makes ordinary configuration owner-only
// (sshd_config, crontab, audit rules at 0600), and a reviewer must see
// those diffs. Public keys and certificates are not secret.
func (e Effects) Redacted() Effects {
	out := e
	if e.Changes != nil {
		out.Changes = make([]FileChange, len(e.Changes))
		for i, c := range e.Changes {
			c.Diff = redactDiff(c)
			out.Changes[i] = c
		}
	}
	if e.Actions != nil {
		out.Actions = make([]RecordedAction, len(e.Actions))
		for i, a := range e.Actions {
			a.Argv = slices.Clone(a.Argv)
			for j, s := range a.Argv {
				a.Argv[j] = RedactText(s)
			}
			a.Output = RedactText(a.Output)
			out.Actions[i] = a
		}
	}
	if e.Parses != nil {
		// A parser's message may quote the line it rejects.
		out.Parses = make([]ConfigParse, len(e.Parses))
		for i, p := range e.Parses {
			p.BeforeMessage, p.Message = RedactText(p.BeforeMessage), RedactText(p.Message)
			out.Parses[i] = p
		}
	}
	return out
}

// Redacted returns a copy of ev whose Effects are Effects.Redacted.
func (ev Evidence) Redacted() Evidence {
	ev.Effects = ev.Effects.Redacted()
	ev.Reasons = slices.Clone(ev.Reasons)
	for i, r := range ev.Reasons {
		ev.Reasons[i] = RedactText(r)
	}
	return ev
}

// Redacted returns a copy of ex that shows no secret in its output
// (RedactText of Stdout and Stderr) and whose Evidence is
// Evidence.Redacted: the form of a command's result that may be recorded,
// logged, reported or shown to the model. Idempotent; ex is unchanged.
func (ex Exec) Redacted() Exec {
	ex.Stdout, ex.Stderr = RedactText(ex.Stdout), RedactText(ex.Stderr)
	if ex.Evidence != nil {
		ev := ex.Evidence.Redacted()
		ex.Evidence = &ev
	}
	return ex
}

// RedactText masks the secrets free text may hold, a command's text or
// its output (grep root /etc/shadow, cat of a private key, usermod -p
// '$6$…', echo 'root:$y$…' | chpasswd -e): every crypt(3) or GRUB PBKDF2
// password hash becomes <password hash SCHEME>, and every PEM or OpenSSH
// private key block (-----BEGIN … PRIVATE KEY----- to its END line, or to
// the end of its base64 where the text was cut) becomes
// [KIND private key not shown]. The rest of the text stays, so a reader
// still sees what ran and what it printed. Idempotent.
func RedactText(s string) string {
	return maskKeys(maskHashes(s))
}

// keyRE matches a PEM or OpenSSH private key block: BEGIN to END, or,
// where the text was cut before the END line, BEGIN and the base64 and
// header lines after it (also with the \n of a JSON or shell string).
var keyRE = regexp.MustCompile(`-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----|(?:[A-Za-z0-9+/=:,.\-\s]|\\[nr])*)`)

// maskKeys replaces every private key block in s by [KIND private key not
// shown] (KIND: RSA, EC, OPENSSH, … or none for PKCS#8's).
func maskKeys(s string) string {
	if !strings.Contains(s, "PRIVATE KEY-----") {
		return s
	}
	s = keyRE.ReplaceAllStringFunc(s, func(k string) string {
		kind := strings.TrimSpace(keyRE.FindStringSubmatch(k)[1])
		if kind == "" {
			return "[private key not shown]"
		}
		return "[" + kind + " private key not shown]"
	})
	// What is left is no block (an END line alone, a header of an odd
	// kind): its marker is taken apart all the same.
	return strings.ReplaceAll(s, "PRIVATE KEY-----", "PRIVATE KEY [not shown]")
}

// redactDiff is c's diff with its secrets masked or replaced.
func redactDiff(c FileChange) string {
	if c.Diff == "" {
		return ""
	}
	if why := secretFile(c); why != "" {
		return secretMarker(c, why)
	}
	if strings.Contains(c.Diff, "PRIVATE KEY-----") || strings.Contains(c.Diff, "PuTTY-User-Key-File") {
		return secretMarker(c, "holds a private key")
	}
	field, list := shadowField(c.Path)
	if field < 0 {
		return maskHashes(c.Diff)
	}
	return maskShadowDiff(c.Diff, field, list)
}

// secretMarker is the one line that stands for a secret file's diff.
func secretMarker(c FileChange, why string) string {
	side := func(s FileState) string {
		if s.SHA256 == "" {
			return "none"
		}
		return s.SHA256
	}
	return fmt.Sprintf("[secret contents not shown (%s); sha256 before %s, after %s]", why, side(c.Before), side(c.After))
}

// secretFile says why the whole contents of c's file are secret; "" when
// they are not.
func secretFile(c FileChange) string {
	p := path.Clean(c.Path)
	base := path.Base(p)
	dir := path.Dir(p)
	switch {
	case dir == "/etc/ssh" && strings.HasPrefix(base, "ssh_host_") && strings.HasSuffix(base, "_key"):
		return "SSH host private key"
	case path.Base(dir) == ".ssh" && strings.HasPrefix(base, "id_") && !strings.HasSuffix(base, ".pub"):
		return "SSH private key"
	case strings.HasSuffix(base, ".key"):
		return "private key file"
	case strings.HasSuffix(base, ".keytab"):
		return "Kerberos keytab"
	case strings.HasPrefix(p, "/etc/ssl/private/"):
		return "file in /etc/ssl/private"
	case dir == "/etc/ppp" && strings.HasSuffix(base, "-secrets"),
		p == "/etc/ipsec.secrets", strings.HasPrefix(p, "/etc/ipsec.d/private/"),
		strings.HasPrefix(p, "/etc/NetworkManager/system-connections/"),
		p == "/etc/sssd/sssd.conf":
		return "credential file"
	case strings.HasPrefix(p, "/root/") || strings.HasPrefix(p, "/home/"):
		if base == "authorized_keys" || base == "authorized_keys2" || base == "known_hosts" || strings.HasSuffix(base, ".pub") {
			return ""
		}
		if ownerOnly(c.Before) || ownerOnly(c.After) {
			return "private file in a home"
		}
	}
	return ""
}

// ownerOnly reports whether s is a regular file neither its group nor
// others may read.
func ownerOnly(s FileState) bool { return s.Kind == FileRegular && s.Mode&0o044 == 0 }

// shadowField is the index of the password field of the shadow-like file
// p (list: the field is opasswd's comma-separated list of old hashes), or
// -1 when p is not one.
func shadowField(p string) (field int, list bool) {
	p = path.Clean(p)
	base := path.Base(p)
	switch {
	case p == "/etc/security/opasswd" || strings.HasPrefix(p, "/etc/security/opasswd"):
		return 3, true
	case path.Dir(p) == "/etc" && (strings.HasPrefix(base, "shadow") || strings.HasPrefix(base, "gshadow")):
		return 1, false
	}
	return -1, false
}

// maskShadowDiff masks field of every line of a shadow-like file's diff.
func maskShadowDiff(diff string, field int, list bool) string {
	lines := strings.Split(diff, "\n")
	// The password each name had on a removed line, to tell a changed
	// hash from an unchanged one on the added line.
	old := map[string]string{}
	for _, l := range lines {
		if strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---") {
			if f := strings.Split(l[1:], ":"); len(f) > field {
				old[f[0]] = f[field]
			}
		}
	}
	for i, l := range lines {
		if l == "" || strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "@@") {
			continue
		}
		switch l[0] {
		case ' ', '-', '+':
		default:
			lines[i] = maskHashes(l) // "\ No newline at end of file", a cut
			continue
		}
		f := strings.Split(l[1:], ":")
		if len(f) <= field {
			lines[i] = maskHashes(l)
			continue
		}
		prev, had := old[f[0]]
		if l[0] != '+' {
			had = false
		}
		if list {
			f[field] = maskHashList(f[field], prev, had)
		} else {
			f[field] = maskPassword(f[field], prev, had)
		}
		lines[i] = maskHashes(l[:1] + strings.Join(f, ":"))
	}
	return strings.Join(lines, "\n")
}

// masked reports whether v is already a mask.
func masked(v string) bool { return strings.HasPrefix(v, "<") && strings.HasSuffix(v, ">") }

// maskPassword is the mask of a shadow password field v; prev is the
// field on the removed line of the same name when had.
func maskPassword(v, prev string, had bool) string {
	if masked(v) {
		return v
	}
	if v == "" {
		return "<blank password>"
	}
	hash := strings.TrimLeft(v, "!")
	lock := v[:len(v)-len(hash)]
	if hash == "" || strings.Trim(hash, "*") == "" || hash == "*LK*" {
		return "<locked (" + v + ")>"
	}
	var parts []string
	if lock != "" {
		parts = append(parts, "locked ("+lock+")")
	}
	h := "password hash " + hashScheme(hash)
	if had && !masked(prev) {
		if strings.TrimLeft(prev, "!") == hash {
			h = "password hash unchanged, " + hashScheme(hash)
		} else {
			h = "password hash changed, " + hashScheme(hash)
		}
	}
	parts = append(parts, h)
	return "<" + strings.Join(parts, ", ") + ">"
}

// maskHashList is the mask of opasswd's list of old hashes.
func maskHashList(v, prev string, had bool) string {
	if masked(v) {
		return v
	}
	if v == "" {
		return "<no old password hashes>"
	}
	s := fmt.Sprintf("<%d old password hashes", strings.Count(v, ",")+1)
	if had && !masked(prev) && prev != v {
		s += ", changed"
	}
	return s + ">"
}

// hashScheme names a crypt(3) hash's scheme: its $id$, or DES.
func hashScheme(h string) string {
	if strings.HasPrefix(h, "$") {
		if i := strings.Index(h[1:], "$"); i > 0 && i < 8 {
			return h[:i+2]
		}
	}
	if len(h) == 13 {
		return "DES"
	}
	return "unrecognised scheme"
}

// hashRE matches a crypt(3) hash ($id$…) or a GRUB PBKDF2 hash in text.
var hashRE = regexp.MustCompile(`\$(?:1|2[abxy]?|5|6|7|y|gy|sha1|md5)\$[^\s:,'"]{8,}|grub\.pbkdf2\.[a-z0-9]+\.[0-9]+\.[0-9A-Fa-f]+\.[0-9A-Fa-f]+`)

// maskHashes replaces every password hash in s by <password hash SCHEME>.
func maskHashes(s string) string {
	if !strings.Contains(s, "$") && !strings.Contains(s, "grub.pbkdf2.") {
		return s
	}
	return hashRE.ReplaceAllStringFunc(s, func(h string) string {
		if strings.HasPrefix(h, "grub.") {
			return "<password hash grub.pbkdf2>"
		}
		return "<password hash " + hashScheme(h) + ">"
	})
}

// maskRE matches the masks RedactText and Redacted put in place of a
// password hash or a private key.
var maskRE = regexp.MustCompile(`<password hash [^<>]*>|\[[A-Z0-9 ]*private key not shown\]|PRIVATE KEY \[not shown\]`)

// MaskIn returns the first mask of a secret that s holds ("" when none):
// a command holding one was written from masked text (the model's
// redacted output, a journal's redacted reply) and cannot do what its
// author meant; the worker refuses to run it.
func MaskIn(s string) string {
	return maskRE.FindString(s)
}
