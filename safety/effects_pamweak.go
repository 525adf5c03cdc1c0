package safety

import (
	"path"
	"slices"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// The opposite of a lockout: a PAM stack that lets in whom it refused.
// pamWeakenHarm runs the same evaluator as pamHarm (pamTrace), on the
// host's PAM files before the command and the trial's after it, and
// refuses:
//
//   - an auth stack (sshd's for the worker's login, sudo's, the
//     console's and su's for root) that denied a wrong password before and
//     lets it through after (a sufficient pam_faillock authsucc first,
//     pam_unix replaced by a module that does not check the password, a
//     jump past pam_deny): the modules that check a password
//     (pamPasswordModules) fail, pam_rootok fails (the caller is not
//     root), pam_faillock authfail fails, the others run as pamHarm runs
//     them;
//   - an account stack that reached pam_unix before (its checks of expiry
//     and locked accounts) and ends before it after (an account
//     sufficient module at the top);
//   - the password stack of passwd that reached pam_unix before (the step
//     that stores the new hash) and does not after (a sufficient
//     pam_pwquality before it), or whose pam_unix hashes with a weaker
//     method than before (md5, bigcrypt, descrypt after yescrypt or
//     sha512).
//
// A stack whose before already let these through (a host already weak)
// is not the command's doing.

// pamPasswordModules check the password a user gives.
var pamPasswordModules = strings.Fields("pam_unix.so pam_unix2.so pam_sss.so pam_ldap.so pam_krb5.so pam_winbind.so pam_pwdb.so pam_userdb.so pam_radius_auth.so pam_tacplus.so")

// hashStrength ranks pam_unix's hash methods; an absent one is login.defs'
// ENCRYPT_METHOD, ranked as the strongest (Debian's yescrypt) since the
// line does not weaken it.
func hashStrength(args []string) (string, int) {
	for _, a := range args {
		switch a {
		case "yescrypt", "gost_yescrypt", "sha512", "blowfish":
			return a, 3
		case "sha256":
			return a, 2
		case "md5":
			return a, 1
		case "bigcrypt", "descrypt":
			return a, 0
		}
	}
	return "", 3
}

// firstUnix is the first pam_unix line a stack ran, or nil.
func firstUnix(ran []pamLine) *pamLine {
	for i := range ran {
		if path.Base(ran[i].module) == "pam_unix.so" {
			return &ran[i]
		}
	}
	return nil
}

func pamWeakenHarm(v *nightshift.PAMView, origin string, pol EffectsPolicy) []Refusal {
	if v == nil || len(v.After.Files) == 0 || len(v.Before.Files) == 0 {
		return nil
	}
	login := pol.Login
	var out []Refusal
	seen := map[string]bool{}
	add := func(r string) {
		if !seen[r] {
			seen[r] = true
			out = append(out, Refusal{Entry: "lockout", Reason: r})
		}
	}
	auth := []pamStack{
		{service: "sshd", typ: "auth", user: login, tty: "ssh", remote: true, what: "SSH password logins as " + login},
		{service: "sudo", typ: "auth", user: login, tty: "pts/0", remote: true, what: "sudo as " + login},
		{service: "login", typ: "auth", user: "root", tty: "tty1", what: "root's console login"},
		{service: "su", typ: "auth", user: "root", tty: "pts/0", what: "su to root"},
	}
	for _, st := range auth {
		st.wrongPassword = true
		before, _, _ := pamTrace(v.Before, v, origin, st)
		after, _, ran := pamTrace(v.After, v, origin, st)
		if before && !after {
			lets := "its last module"
			if len(ran) > 0 {
				l := ran[len(ran)-1]
				lets = path.Base(l.module) + " (" + l.control + ") in " + l.file
			}
			add("would accept a wrong password for " + st.what + ": PAM auth stack of " + st.service + " no longer denies it (" + lets + " lets it through)")
		}
	}
	for _, st := range []pamStack{
		{service: "sshd", typ: "account", user: login, tty: "ssh", remote: true, what: login + "'s SSH login"},
		{service: "login", typ: "account", user: "root", tty: "tty1", what: "root's console login"},
		{service: "su", typ: "account", user: "root", tty: "pts/0", what: "su to root"},
	} {
		_, _, ranBefore := pamTrace(v.Before, v, origin, st)
		_, _, ranAfter := pamTrace(v.After, v, origin, st)
		if firstUnix(ranBefore) != nil && firstUnix(ranAfter) == nil {
			add("would skip pam_unix's account checks (expired and locked accounts) for " + st.what + ": PAM account stack of " + st.service + " ends before it")
		}
	}
	pw := pamStack{service: "passwd", typ: "password", user: "root", tty: "pts/0", what: "password changes"}
	_, _, ranBefore := pamTrace(v.Before, v, origin, pw)
	_, _, ranAfter := pamTrace(v.After, v, origin, pw)
	if b := firstUnix(ranBefore); b != nil {
		a := firstUnix(ranAfter)
		if a == nil {
			add("would end the PAM password stack of passwd before pam_unix stores the new password")
		} else {
			bm, bs := hashStrength(b.args)
			if am, as := hashStrength(a.args); as < bs {
				add("would hash new passwords with " + am + " instead of " + methodName(bm) + " (pam_unix in " + a.file + ")")
			}
		}
	}
	return out
}

func methodName(m string) string {
	if m == "" {
		return "login.defs' method"
	}
	return m
}

// wheelResult is pam_wheel's answer for the stack's user: success when
// the user is in the group (group=NAME, else wheel), or root.
func wheelResult(v *nightshift.PAMView, st pamStack, args []string) (string, string) {
	if st.user == "root" || slices.Contains(args, "trust") || slices.Contains(args, "deny") {
		return "success", ""
	}
	g, ok := pamArg(args, "group")
	if !ok {
		g = "wheel"
	}
	groups, known := pamGroups(v, st.user)
	if !known || slices.Contains(groups, g) {
		return "success", ""
	}
	return "perm_denied", st.user + " is not in group " + g
}
