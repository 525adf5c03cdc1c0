package safety

import (
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/nightshift-dev/nightshift"
)

// A PAM stack can refuse a login without pam_deny: pam_access with a table
// that denies the login's origin, pam_time outside the allowed hours,
// pam_listfile, pam_securetty with an empty /etc/securetty, a required
// module that does not exist. pamHarm runs the stacks a login goes
// through, as Linux-PAM runs them (control values, jumps, includes), on
// the host's PAM configuration before the command and on the trial's after
// it (nightshift.PAMView, gathered by the sandbox), and refuses the
// denials the command brings: a stack that denied before (a host already
// broken, or a module this model does not evaluate) is not the command's
// doing.
//
// The stacks, and why each is the worker's concern:
//   - sshd's account and session stacks for the worker's login, from its
//     address (a key login runs no auth stack, but these always run), and
//     its auth stack (password logins: the way in when keys fail);
//   - for a login that is not root, sudo's account stack for the login and
//     its session stack for root (the worker's way to root);
//   - login's (the console's) auth, account and session stacks for root on
//     tty1, and su's auth and account stacks for root: the way back in when
//     SSH is broken, which a hardening night must not remove.
//
// Modules evaluated: a module the host does not have (module_unknown; "-"
// lines are skipped as Linux-PAM skips them), pam_deny, pam_nologin (with
// /etc/nologin), pam_access, pam_time, pam_listfile, pam_securetty; every
// other module is taken to succeed (pam_succeed_if's conditions, for one,
// are not evaluated).

// pamStack is one stack to run: a service's module type for a user.
type pamStack struct {
	service, typ, user, tty string
	remote                  bool // the user comes from the worker's address, not a local tty
	what                    string
	// wrongPassword runs an auth stack for someone who gives a wrong
	// password (and is not root: pam_rootok fails): the modules that
	// check a password fail (pamPasswordModules).
	wrongPassword bool
}

func pamStacks(login string) []pamStack {
	s := []pamStack{
		{"sshd", "account", login, "ssh", true, "would lock out " + login + "'s SSH login", false},
		{"sshd", "session", login, "ssh", true, "would lock out " + login + "'s SSH login", false},
		{"sshd", "auth", login, "ssh", true, "would refuse " + login + "'s SSH password logins (a key login does not run this stack; the password is the way in when keys fail)", false},
	}
	if login != "root" {
		s = append(s,
			pamStack{"sudo", "account", login, "pts/0", true, "would take sudo from " + login, false},
			pamStack{"sudo", "session", "root", "pts/0", true, "would take sudo from " + login, false},
			pamStack{"sudo", "auth", login, "pts/0", true, "would take sudo from " + login + " where sudo asks for its password", false})
	}
	return append(s,
		pamStack{"login", "auth", "root", "tty1", false, "would refuse root's console login (the way back in when SSH fails)", false},
		pamStack{"login", "account", "root", "tty1", false, "would refuse root's console login (the way back in when SSH fails)", false},
		pamStack{"login", "session", "root", "tty1", false, "would refuse root's console login (the way back in when SSH fails)", false},
		pamStack{"su", "auth", "root", "pts/0", false, "would refuse su to root", false},
		pamStack{"su", "account", "root", "pts/0", false, "would refuse su to root", false},
		// The password stack: passwd (and chpasswd, chage's expiry
		// prompt at login) runs it; a required module the host lacks
		// fails every password change, so an expired password can no
		// longer be renewed.
		pamStack{"passwd", "password", "root", "pts/0", false, "would make every password change of root fail (passwd)", false},
		pamStack{"passwd", "password", login, "pts/0", false, "would make every password change of " + login + " fail (passwd)", false},
	)
}

// pamHarm judges a command's effect on the login's PAM stacks.
func pamHarm(v *nightshift.PAMView, origin string, pol EffectsPolicy) []Refusal {
	if v == nil || len(v.After.Files) == 0 {
		return nil
	}
	var out []Refusal
	seen := map[string]bool{}
	for _, st := range pamStacks(pol.Login) {
		after, why := pamRun(v.After, v, origin, st)
		if !after {
			continue
		}
		if before, _ := pamRun(v.Before, v, origin, st); before {
			continue
		}
		r := st.what + ": PAM " + st.typ + " stack of " + st.service + " would deny it: " + why
		if !seen[r] {
			seen[r] = true
			out = append(out, Refusal{Entry: "lockout", Reason: r})
		}
	}
	return out
}

// pamLine is one module line of a flattened stack.
type pamLine struct {
	control  string
	module   string
	args     []string
	file     string
	optional bool // the type was written with a leading "-"
}

// pamFlatten returns service's lines of type typ, includes and substacks
// followed; a missing service file falls back to "other" as Linux-PAM
// does.
func pamFlatten(s nightshift.PAMState, service, typ string) []pamLine {
	var out []pamLine
	var flat func(svc string, depth int)
	flat = func(svc string, depth int) {
		if depth > 8 {
			return
		}
		f := "/etc/pam.d/" + svc
		text, ok := s.Files[f]
		if !ok {
			return
		}
		for _, l := range strings.Split(text, "\n") {
			if i := strings.IndexByte(l, '#'); i >= 0 {
				l = l[:i]
			}
			w := strings.Fields(l)
			if len(w) == 0 {
				continue
			}
			if w[0] == "@include" {
				if len(w) > 1 {
					flat(w[1], depth+1)
				}
				continue
			}
			t, opt := strings.CutPrefix(w[0], "-")
			if !strings.EqualFold(t, typ) || len(w) < 3 {
				continue
			}
			ctl, rest := w[1], w[2:]
			if strings.HasPrefix(ctl, "[") {
				for len(rest) > 0 && !strings.HasSuffix(ctl, "]") {
					ctl += " " + rest[0]
					rest = rest[1:]
				}
				if len(rest) == 0 {
					continue
				}
			}
			if ctl == "include" || ctl == "substack" {
				flat(rest[0], depth+1)
				continue
			}
			out = append(out, pamLine{control: ctl, module: rest[0], args: rest[1:], file: f, optional: opt})
		}
	}
	if _, ok := s.Files["/etc/pam.d/"+service]; ok {
		flat(service, 0)
	} else {
		flat("other", 0)
	}
	return out
}

// pamAction is what Linux-PAM does with a module's result under a control.
func pamAction(ctl, r string) string {
	switch ctl {
	case "required", "requisite":
		switch r {
		case "success":
			return "ok"
		case "ignore":
			return "ignore"
		}
		if ctl == "required" {
			return "bad"
		}
		return "die"
	case "sufficient":
		if r == "success" {
			return "done"
		}
		return "ignore"
	case "optional":
		if r == "success" {
			return "ok"
		}
		return "ignore"
	}
	d := "bad"
	for _, kv := range strings.Fields(strings.Trim(ctl, "[]")) {
		k, val, _ := strings.Cut(kv, "=")
		if k == r {
			return val
		}
		if k == "default" {
			d = val
		}
	}
	return d
}

// pamRun runs one stack and reports whether it denies, and why.
func pamRun(s nightshift.PAMState, v *nightshift.PAMView, origin string, st pamStack) (bool, string) {
	denied, why, _ := pamTrace(s, v, origin, st)
	return denied, why
}

// pamTrace runs one stack and reports whether it denies, why, and the
// lines it ran, in order.
func pamTrace(s nightshift.PAMState, v *nightshift.PAMView, origin string, st pamStack) (bool, string, []pamLine) {
	lines := pamFlatten(s, st.service, st.typ)
	if len(lines) == 0 {
		return true, "no " + st.typ + " module in /etc/pam.d/" + st.service + " or /etc/pam.d/other", nil
	}
	failed, okd := false, false
	why := ""
	var ran []pamLine
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		ran = append(ran, l)
		r, detail := pamModule(s, v, origin, st, l)
		a := pamAction(l.control, r)
		if r != "success" && r != "ignore" && (a == "bad" || a == "die") && !failed {
			why = path.Base(l.module)
			if detail != "" {
				why += " (" + detail + ")"
			}
			why += " in " + l.file
		}
		switch a {
		case "bad":
			failed = true
		case "die":
			failed = true
			i = len(lines)
		case "ok":
			okd = true
		case "done":
			okd = true
			if !failed {
				i = len(lines)
			}
		case "ignore", "reset":
		default:
			if n, err := strconv.Atoi(a); err == nil && n > 0 {
				if r == "success" {
					okd = true
				}
				i += n
			}
		}
	}
	if !failed && okd {
		return false, "", ran
	}
	if why == "" {
		why = "no module allows the login"
	}
	return true, why, ran
}

// pamArg returns the value of NAME= among a module's arguments.
func pamArg(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// pamModule evaluates one module line for the stack's user: a Linux-PAM
// result name and a detail for the reason.
func pamModule(s nightshift.PAMState, v *nightshift.PAMView, origin string, st pamStack, l pamLine) (string, string) {
	if have, known := s.Modules[l.module]; known && !have {
		if l.optional {
			return "ignore", ""
		}
		return "module_unknown", "the module does not exist"
	}
	if st.wrongPassword {
		switch m := path.Base(l.module); {
		case slices.Contains(pamPasswordModules, m):
			return "auth_err", "a wrong password"
		case m == "pam_rootok.so":
			return "auth_err", "not root"
		case m == "pam_faillock.so" && slices.Contains(l.args, "authfail"):
			return "auth_err", "a wrong password"
		}
	}
	switch path.Base(l.module) {
	case "pam_deny.so":
		return "perm_denied", ""
	case "pam_wheel.so":
		return wheelResult(v, st, l.args)
	case "pam_nologin.so":
		f, ok := pamArg(l.args, "file")
		if !ok {
			f = "/etc/nologin"
		}
		if _, exists := s.Files[f]; exists && st.user != "root" {
			return "auth_err", f + " exists"
		}
	case "pam_access.so":
		f, ok := pamArg(l.args, "accessfile")
		if !ok {
			f = "/etc/security/access.conf"
		}
		if line := accessDenies(s.Files[f], v, origin, st); line != "" {
			return "perm_denied", line
		}
	case "pam_time.so":
		f, ok := pamArg(l.args, "conffile")
		if !ok {
			f = "/etc/security/time.conf"
		}
		if line := timeDenies(s.Files[f], st); line != "" {
			return "perm_denied", line
		}
	case "pam_listfile.so":
		return listfileResult(s, v, origin, st, l.args)
	case "pam_securetty.so":
		text, ok := s.Files["/etc/securetty"]
		if st.user != "root" || !ok {
			return "success", ""
		}
		for _, t := range strings.Fields(text) {
			if strings.TrimPrefix(t, "/dev/") == st.tty {
				return "success", ""
			}
		}
		return "auth_err", st.tty + " is not in /etc/securetty"
	}
	return "success", ""
}

func pamGroups(v *nightshift.PAMView, user string) ([]string, bool) {
	g, ok := v.Groups[user]
	return g, ok && len(g) > 0
}

// accessList is pam_access's list_match: the items up to EXCEPT, minus
// the list after it. unknown is what an item whose match cannot be told
// (a netgroup, a host name) counts as; the exceptions count it the other
// way, so the answer errs the same way.
func accessList(items []string, match func(string) (bool, bool), unknown bool) bool {
	i, hit := 0, false
	for ; i < len(items); i++ {
		if strings.EqualFold(items[i], "EXCEPT") {
			break
		}
		if m, known := match(items[i]); m || !known && unknown {
			hit = true
			break
		}
	}
	if !hit {
		return false
	}
	for i++; i < len(items) && !strings.EqualFold(items[i], "EXCEPT"); i++ {
	}
	if i >= len(items) {
		return true
	}
	return !accessList(items[i+1:], match, !unknown)
}

// accessDenies runs access.conf's first matching line for the stack's user
// and origin, and returns it when it denies ("" when it permits or no line
// matches). Items it cannot tell count against the login: a deny line
// matches, a permit line does not.
func accessDenies(text string, v *nightshift.PAMView, origin string, st pamStack) string {
	groups, knownGroups := pamGroups(v, st.user)
	userMatch := func(it string) (bool, bool) {
		switch {
		case it == "ALL":
			return true, true
		case strings.HasPrefix(it, "@"):
			return false, false
		case strings.HasPrefix(it, "(") && strings.HasSuffix(it, ")"):
			g := it[1 : len(it)-1]
			for _, x := range groups {
				if x == g {
					return true, true
				}
			}
			return false, knownGroups
		}
		name, _, _ := strings.Cut(it, "@")
		if name == st.user {
			return true, true
		}
		for _, x := range groups {
			if x == name {
				return true, true
			}
		}
		return false, knownGroups
	}
	originMatch := func(it string) (bool, bool) {
		return originMatches(it, origin, st)
	}
	sep := func(r rune) bool { return r == ' ' || r == '\t' || r == ',' }
	for _, l := range strings.Split(text, "\n") {
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		f := strings.SplitN(l, ":", 3)
		if len(f) < 3 {
			continue
		}
		perm := strings.TrimSpace(f[0])
		deny := perm == "-"
		if !deny && perm != "+" {
			continue
		}
		if accessList(strings.FieldsFunc(f[1], sep), userMatch, deny) && accessList(strings.FieldsFunc(f[2], sep), originMatch, deny) {
			if deny {
				return strings.TrimSpace(l)
			}
			return ""
		}
	}
	return ""
}

// originMatches matches one access.conf origin item against the stack's
// origin: the worker's address for a remote stack, the tty for a local one.
func originMatches(it, addr string, st pamStack) (bool, bool) {
	switch {
	case it == "ALL":
		return true, true
	case it == "LOCAL":
		return !st.remote, true
	case strings.HasPrefix(it, "tty") || strings.HasPrefix(it, "/dev/") || strings.HasPrefix(it, ":") || it == "cron" || it == "crond":
		return strings.TrimPrefix(it, "/dev/") == st.tty, true
	case !st.remote:
		return false, true // a network origin; the console has none
	}
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return false, false // the worker's address is unknown
	}
	if p, err := netip.ParsePrefix(it); err == nil {
		return p.Contains(a), true
	}
	if b, err := netip.ParseAddr(it); err == nil {
		return b == a, true
	}
	if strings.HasSuffix(it, ".") && strings.Trim(it, "0123456789.") == "" {
		return strings.HasPrefix(addr, it), true
	}
	return false, false // a host or domain name
}

// timeDenies returns the first time.conf rule that applies to the stack's
// service, tty and user and does not allow every hour of every day ("" when
// none): a login refused at some hours is refused during the night the
// worker works in.
func timeDenies(text string, st pamStack) string {
	field := func(f, name string) bool {
		for _, t := range strings.FieldsFunc(f, func(r rune) bool { return r == '|' || r == '&' }) {
			t = strings.TrimSpace(t)
			neg := strings.HasPrefix(t, "!")
			ok, _ := path.Match(strings.TrimPrefix(t, "!"), name)
			if ok != neg {
				return true
			}
		}
		return false
	}
	for _, l := range strings.Split(text, "\n") {
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		f := strings.Split(l, ";")
		if len(f) != 4 {
			continue
		}
		if !field(f[0], st.service) || !field(f[1], st.tty) || !field(f[2], st.user) {
			continue
		}
		switch strings.ReplaceAll(strings.TrimSpace(f[3]), " ", "") {
		case "Al0000-2400", "Al":
			continue
		}
		return strings.TrimSpace(l)
	}
	return ""
}

// listfileResult evaluates pam_listfile: the item of the login listed or
// not in the file, by sense; onerr when the file is absent. Items it cannot
// tell (shell, ruser) are taken to succeed.
func listfileResult(s nightshift.PAMState, v *nightshift.PAMView, origin string, st pamStack, args []string) (string, string) {
	item, _ := pamArg(args, "item")
	sense, _ := pamArg(args, "sense")
	file, _ := pamArg(args, "file")
	onerr, _ := pamArg(args, "onerr")
	if apply, ok := pamArg(args, "apply"); ok {
		if g, isGroup := strings.CutPrefix(apply, "@"); isGroup {
			groups, _ := pamGroups(v, st.user)
			in := false
			for _, x := range groups {
				in = in || x == g
			}
			if !in {
				return "ignore", ""
			}
		} else if apply != st.user {
			return "ignore", ""
		}
	}
	var values []string
	switch item {
	case "user":
		values = []string{st.user}
	case "group":
		values, _ = pamGroups(v, st.user)
	case "tty":
		values = []string{st.tty}
	case "rhost":
		if !st.remote {
			return "success", ""
		}
		if origin == "" {
			return "service_err", "the worker's address is unknown"
		}
		values = []string{origin}
	default:
		return "success", ""
	}
	text, ok := s.Files[file]
	if !ok {
		if onerr == "succeed" {
			return "success", ""
		}
		return "service_err", file + " does not exist"
	}
	listed := false
	for _, l := range strings.Split(text, "\n") {
		for _, x := range values {
			listed = listed || strings.TrimSpace(l) == x && x != ""
		}
	}
	switch {
	case sense == "deny" && listed:
		return "auth_err", strings.Join(values, " ") + " is listed in " + file
	case sense == "allow" && !listed:
		return "auth_err", strings.Join(values, " ") + " is not listed in " + file
	}
	return "success", ""
}

// limitsHarm judges lines added to pam_limits' files (limits.conf,
// limits.d/*.conf): no login allowed (maxlogins or maxsyslogins 0) for
// root, the login, everyone or a group, or limits that leave a session
// unable to run (too few files; too few processes or too little memory for
// a user that is not root: the kernel does not hold root to RLIMIT_NPROC).
// pam_limits sets them for every session; sshd's stack runs it on Debian
// and Red Hat alike, and the rule stands where it does not, as a line that
// waits for it.
func limitsHarm(c nightshift.FileChange, pol EffectsPolicy) []Refusal {
	if c.Path != "/etc/security/limits.conf" && !(path.Dir(c.Path) == "/etc/security/limits.d" && strings.HasSuffix(c.Path, ".conf")) {
		return nil
	}
	var out []Refusal
	for _, l := range addedLines(c.Diff) {
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		f := strings.Fields(l)
		if len(f) < 4 {
			continue
		}
		domain, item, value := f[0], strings.ToLower(f[2]), strings.ToLower(f[3])
		if f[1] == "soft" && item != "maxlogins" && item != "maxsyslogins" {
			continue // a soft limit the session may raise
		}
		// The wildcard and group limits are not applied to root
		// (limits.conf(5)); a UID range may hold it.
		lo, hi, isRange := strings.Cut(domain, ":")
		forRoot := domain == "root" || isRange && (lo == "" || lo == "0")
		forOthers := domain == "*" || strings.HasPrefix(domain, "@") || strings.HasPrefix(domain, "%") || isRange && (hi == "" || hi != "0") ||
			domain == pol.Login && pol.Login != "root"
		if !forRoot && !forOthers {
			continue // a named account's limit
		}
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil {
			continue // unlimited, infinity, -1
		}
		bad := ""
		switch item {
		case "maxlogins", "maxsyslogins":
			if n == 0 {
				bad = "no login would be allowed"
			}
		case "nofile":
			if n < 64 {
				bad = "sessions could not open the files they need"
			}
		case "nproc":
			if n < 16 && forOthers {
				bad = "sessions could not start processes"
			}
		case "as", "data", "stack":
			if n < 64*1024 {
				bad = "sessions would run out of memory (KB)"
			}
		case "cpu":
			if n == 0 {
				bad = "sessions would be killed at once (0 minutes of CPU)"
			}
		case "fsize":
			if n < 1024 {
				bad = "sessions could not write files (KB)"
			}
		}
		if bad != "" {
			out = append(out, Refusal{Entry: "lockout", Reason: "would add " + strings.Join(f, " ") + " to " + c.Path + ": " + bad})
		}
	}
	return out
}
