# Nightshift lockout canary: the latent-lockout check, one round trip.
# Reads NS_USER (the worker's login), NS_HOST, NS_ADDR, NS_LADDR, NS_LPORT
# (how sshd sees the worker's connection; empty: taken from SSH_CONNECTION
# where set) and NS_KEY (the base64 blob of the worker's public key, or empty).
# Prints one line per finding, tab-separated:
#   L <reason>   the login would be locked out (now or at sshd's next restart)
#   W <reason>   a risk that does not lock this login out
#   S <reason>   a check that could not run
# and "E" last. It changes nothing except creating sshd's privilege
# separation directory /run/sshd when it is missing (as sshd's own init
# script does), without which sshd -t fails on every host.
set -u
set -f
u=${NS_USER:-}
lock() { printf 'L\t%s\n' "$*"; }
warn() { printf 'W\t%s\n' "$*"; }
skip() { printf 'S\t%s\n' "$*"; }
one() { printf '%s' "$*" | tr '\r\n\t' '   ' | tr -s ' ' | sed 's/ $//' | cut -c1-300; }
if [ -z "$u" ]; then skip "no login user given"; echo E; exit 0; fi
# How sshd sees the worker: SSH_CONNECTION of this session, or of the
# nearest ancestor that has it (sudo removes it from the environment).
conn=${SSH_CONNECTION:-}
p=$PPID
while [ -z "$conn" ] && [ "${p:-0}" -gt 1 ] && [ -r "/proc/$p/environ" ]; do
	conn=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^SSH_CONNECTION=//p')
	p=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f2)
done
set -- $conn
[ -n "${NS_ADDR:-}" ] || NS_ADDR=${1:-}
[ -n "${NS_LADDR:-}" ] || NS_LADDR=${3:-}
[ -n "${NS_LPORT:-}" ] || NS_LPORT=${4:-}
[ -n "${NS_HOST:-}" ] || NS_HOST=$NS_ADDR
[ -n "$NS_LPORT" ] || skip "the port sshd sees the worker on is unknown (no SSH_CONNECTION): a change of sshd's ports is not checked"
[ -n "$NS_ADDR" ] || skip "the worker's address is unknown (no SSH_CONNECTION): Match Address blocks are not applied"

pw=$(getent passwd "$u") || { lock "account $u does not exist"; echo E; exit 0; }
IFS=: read -r _ _ uid gid _ home shell <<EOF
$pw
EOF
[ -n "$shell" ] || shell=/bin/sh
root=0; [ "$(id -u)" = 0 ] && root=1
groups=" $(id -Gn "$u" 2>/dev/null) "
who="$u's SSH login"

# The account's shell: sshd refuses a shell that is not executable, and
# nologin or false end every command at once.
if [ ! -x "$shell" ]; then
	lock "would lock out $who: login shell $shell does not exist or is not executable"
fi
case $shell in
*/nologin | */false) lock "would lock out $who: login shell is $shell" ;;
esac
[ -d "$home" ] || lock "would lock out $who: home directory $home does not exist"

if [ $root = 0 ]; then
	skip "not root: sshd configuration, shadow and PAM checks need root (give the login sudo)"
fi

usepam=yes strict=yes akc=none akf=".ssh/authorized_keys .ssh/authorized_keys2"
if [ $root = 1 ]; then
	sshd=$(command -v sshd 2>/dev/null || echo /usr/sbin/sshd)
	[ -d /run/sshd ] || mkdir -p -m 0755 /run/sshd 2>/dev/null
	spec="user=$u"
	[ -n "$NS_HOST" ] && spec="$spec,host=$NS_HOST"
	[ -n "$NS_ADDR" ] && spec="$spec,addr=$NS_ADDR"
	[ -n "$NS_LADDR" ] && spec="$spec,laddr=$NS_LADDR"
	[ -n "$NS_LPORT" ] && spec="$spec,lport=$NS_LPORT"
	# sshd -T checks the configuration as sshd -t does (and loads the host
	# keys), then prints the effective configuration for this login.
	if [ ! -x "$sshd" ]; then
		lock "would lock out $who: no sshd binary ($sshd)"
	else
		# Bounded: a FIFO sshd reads (an Include of one) blocks it.
		to=
		command -v timeout >/dev/null 2>&1 && to="timeout -k 1 10"
		if ! T=$($to "$sshd" -T -C "$spec" </dev/null 2>&1); then
			lock "would lock out $who at the next sshd restart: sshd -t fails: $(one "$T")"
		else
			R=$(printf '%s\n' "$T" | awk -v u="$u" -v uid="$uid" -v groups="$groups" -v addr="$NS_ADDR" -v host="$NS_HOST" -v lport="$NS_LPORT" -v who="$who" '
			function glob(p, s,   r) {
				r = p; gsub(/[.+^$(){}|\\]/, "\\\\&", r); gsub(/\*/, ".*", r); gsub(/\?/, ".", r)
				return s ~ ("^" r "$")
			}
			function usermatch(p,   up, hp, i) {
				i = index(p, "@")
				if (i == 0) return glob(p, u)
				up = substr(p, 1, i - 1); hp = substr(p, i + 1)
				return glob(up, u) && (glob(hp, addr) || glob(hp, host))
			}
			function groupmatch(p,   n, i, g) {
				n = split(groups, g, " ")
				for (i = 1; i <= n; i++) if (glob(p, g[i])) return 1
				return 0
			}
			function bad(r) { printf "L\twould lock out %s at the next sshd restart: %s\n", who, r }
			{ k = $1; v = substr($0, length($1) + 2) }
			k == "permitrootlogin" { prl = v }
			k == "pubkeyauthentication" { pka = v }
			k == "authenticationmethods" { am[++nam] = v }
			k == "denyusers" && usermatch(v) { du = du " " v }
			k == "allowusers" { nau++; if (usermatch(v)) au = 1 }
			k == "denygroups" && groupmatch(v) { dg = dg " " v }
			k == "allowgroups" { nag++; if (groupmatch(v)) ag = 1 }
			k == "listenaddress" { sub(/.*:/, "", v); if (index(ports " ", " " v " ") == 0) ports = ports " " v }
			k == "usepam" { print "V\tusepam\t" v }
			k == "strictmodes" { print "V\tstrictmodes\t" v }
			k == "authorizedkeysfile" { print "V\takf\t" v }
			k == "authorizedkeyscommand" { print "V\takc\t" v }
			END {
				if (uid == 0 && prl == "no") bad("PermitRootLogin no")
				if (uid == 0 && prl == "forced-commands-only") bad("PermitRootLogin forced-commands-only")
				if (pka == "no") bad("PubkeyAuthentication no")
				if (nam > 0) {
					ok = 0
					for (i = 1; i <= nam; i++) { n = split(am[i], l, " "); for (j = 1; j <= n; j++) if (l[j] == "any" || l[j] == "publickey") ok = 1 }
					if (!ok) { s = am[1]; for (i = 2; i <= nam; i++) s = s " " am[i]; bad("AuthenticationMethods " s " (a key alone is not enough)") }
				}
				if (du != "") bad("DenyUsers" du)
				if (nau > 0 && !au) bad("AllowUsers does not list " u)
				if (dg != "") bad("DenyGroups" dg)
				if (nag > 0 && !ag) bad("AllowGroups lists none of " u "'"'"'s groups")
				if (lport != "" && ports != "" && index(ports " ", " " lport " ") == 0) bad("sshd would no longer listen on port " lport " (listens on" ports ")")
			}')
			while IFS='	' read -r tag a b; do
				case $tag in
				V) case $a in
					usepam) usepam=$b ;; strictmodes) strict=$b ;; akf) akf=$b ;; akc) akc=$b ;;
					esac ;;
				*) printf '%s\t%s\n' "$tag" "$a" ;;
				esac
			done <<EOF
$R
EOF
		fi
	fi
fi

# authorized_keys: the worker's key in one of the files, readable by the
# login, and (StrictModes) every path from the file up to the home directory
# owned by the user or root and not group or world writable.
if [ "$akc" != none ]; then
	skip "AuthorizedKeysCommand $akc: keys from the command are not checked"
elif [ -d "$home" ]; then
	found=
	for f in $akf; do
		f=$(printf '%s' "$f" | sed -e "s|%h|$home|g" -e "s|%u|$u|g" -e "s|%U|$uid|g" -e 's|%%|%|g')
		case $f in /*) ;; *) f=$home/$f ;; esac
		[ -f "$f" ] || continue
		if [ -n "${NS_KEY:-}" ]; then
			grep -qF -- "$NS_KEY" "$f" 2>/dev/null && found=$f && break
		elif [ -s "$f" ]; then
			found=$f && break
		fi
	done
	if [ -z "$found" ]; then
		if [ -n "${NS_KEY:-}" ]; then
			lock "would lock out $who: the worker's key is in no AuthorizedKeysFile ($akf under $home)"
		else
			lock "would lock out $who: no AuthorizedKeysFile with keys ($akf under $home)"
		fi
	else
		if [ "$uid" != 0 ] && [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
			setpriv --reuid="$uid" --regid="$gid" --init-groups test -r "$found" 2>/dev/null ||
				lock "would lock out $who: $found is not readable by $u"
		fi
		if [ "$strict" = yes ]; then
			# The file and every directory up to the home directory (or /).
			p=$found
			set -- "$p"
			while [ "$p" != "$home" ] && [ "$p" != / ] && [ -n "$p" ]; do
				p=${p%/*}
				[ -n "$p" ] || p=/
				set -- "$@" "$p"
			done
			stat -c '%u %a %n' "$@" 2>/dev/null | while read -r o m p; do
				if [ "$o" != 0 ] && [ "$o" != "$uid" ]; then
					lock "would lock out $who: StrictModes refuses the keys: $p is owned by uid $o"
				elif [ $((0$m & 022)) != 0 ]; then
					lock "would lock out $who: StrictModes refuses the keys: $p is group or world writable (mode $m)"
				fi
			done
		fi
	fi
fi

[ $root = 1 ] || { echo E; exit 0; }

# The account in shadow: expired, forced password change, expired password,
# or locked where sshd checks the lock (UsePAM no).
if sh=$(getent shadow "$u"); then
	IFS=: read -r _ spw last _ max _ inact exp _ <<EOF
$sh
EOF
	today=$(($(date +%s) / 86400))
	if [ -n "$exp" ] && [ "$exp" -ge 0 ] 2>/dev/null && [ "$today" -ge "$exp" ]; then
		lock "would lock out $who: the account expired (shadow expire day $exp)"
	fi
	if [ "$last" = 0 ]; then
		lock "would lock out $who: a password change is forced at the next login (shadow last change 0)"
	elif [ -n "$last" ] && [ -n "$max" ] && [ "$max" -ge 0 ] 2>/dev/null && [ "$max" -lt 99999 ] && [ $((last + max)) -lt "$today" ]; then
		lock "would lock out $who: the password expired (last change day $last + max $max days)"
	fi
	case $spw in
	'!'*) [ "$usepam" = no ] && lock "would lock out $who: the account is locked (password starts with !) and UsePAM is no" ;;
	esac
else
	skip "no shadow entry for $u"
fi

nologin=0
[ "$uid" != 0 ] && [ -e /etc/nologin ] && nologin=1
if [ $nologin = 1 ] && [ "$usepam" = no ]; then
	lock "would lock out $who: /etc/nologin exists"
fi

# PAM: the account, session and auth stacks of sshd, includes followed,
# run as Linux-PAM runs them with each module's result for this login (one
# awk: no fork per line or file).
if [ "$usepam" = yes ]; then
	set +f
	dirs=
	for d in /lib/security /lib64/security /usr/lib/security /lib/*/security /usr/lib/*/security; do
		[ -d "$d" ] && dirs="$dirs $d"
	done
	set -f
	svc=sshd
	[ -f /etc/pam.d/sshd ] || svc=other
	awk -v svc="$svc" -v u="$u" -v groups="$groups" -v addr="$NS_ADDR" -v host="$NS_HOST" -v nologin="$nologin" -v dirs="$dirs" -v who="$who" '
	function readfile(f,   line, buf, r) {
		buf = ""
		while ((r = (getline line < f)) > 0) buf = buf line "\n"
		close(f)
		return r < 0 ? "\001" : buf
	}
	# flat appends the lines of service s (of type want, or all when "")
	# to the stacks, following @include, include and substack.
	function flat(s, want, depth,   f, buf, n, L, i, line, w, m, t, ctl, rest, opt) {
		if (depth > 8) return
		f = "/etc/pam.d/" s
		buf = readfile(f)
		if (buf == "\001") { missing = missing " " f; return }
		n = split(buf, L, "\n")
		for (i = 1; i <= n; i++) {
			line = L[i]; sub(/#.*/, "", line); gsub(/[ \t]+/, " ", line); sub(/^ /, "", line); sub(/ $/, "", line)
			if (line == "") continue
			m = split(line, w, " ")
			if (w[1] == "@include") { flat(w[2], want, depth + 1); continue }
			t = w[1]; opt = 0
			if (substr(t, 1, 1) == "-") { t = substr(t, 2); opt = 1 }
			if (want != "" && t != want) continue
			rest = substr(line, length(w[1]) + 2)
			if (substr(rest, 1, 1) == "[") { ctl = substr(rest, 1, index(rest, "]")); rest = substr(rest, length(ctl) + 2) }
			else { ctl = w[2]; rest = substr(rest, length(ctl) + 2) }
			if (ctl == "include" || ctl == "substack") { split(rest, w, " "); flat(w[1], t, depth + 1); continue }
			k = ++N[t]; split(rest, w, " ")
			M[t, k] = w[1]; C[t, k] = ctl; A[t, k] = substr(rest, length(w[1]) + 2); F[t, k] = f; O[t, k] = opt
		}
	}
	function exists(mod,   n, d, i, f) {
		if (substr(mod, 1, 1) == "/") { if ((getline junk < mod) < 0) return 0; close(mod); return 1 }
		n = split(dirs, d, " ")
		for (i = 1; i <= n; i++) { f = d[i] "/" mod; if ((getline junk < f) >= 0) { close(f); return 1 } }
		return 0
	}
	function action(ctl, r,   n, i, kv, a, d) {
		if (ctl == "required") return (r == "success" ? "ok" : r == "ignore" ? "ignore" : "bad")
		if (ctl == "requisite") return (r == "success" ? "ok" : r == "ignore" ? "ignore" : "die")
		if (ctl == "sufficient") return (r == "success" ? "done" : "ignore")
		if (ctl == "optional") return (r == "success" ? "ok" : "ignore")
		gsub(/[\[\]]/, "", ctl); n = split(ctl, kv, " "); d = "bad"
		for (i = 1; i <= n; i++) { split(kv[i], a, "="); if (a[1] == r) return a[2]; if (a[1] == "default") d = a[2] }
		return d
	}
	function accessdeny(args,   file, line, f, n, perm) {
		file = "/etc/security/access.conf"
		if (match(args, /accessfile=[^ ]+/)) file = substr(args, RSTART + 11, RLENGTH - 11)
		while ((getline line < file) > 0) {
			sub(/#.*/, "", line); if (line !~ /:/) continue
			n = split(line, f, ":"); if (n < 3) continue
			perm = f[1]; gsub(/ /, "", perm)
			if (listmatch(f[2], 1) && listmatch(f[3], 0)) { close(file); return perm == "-" ? line : "" }
		}
		close(file); return ""
	}
	function listmatch(s, users,   n, i, w, ex, hit) {
		gsub(/,/, " ", s); n = split(s, w, " "); ex = 0; hit = 0
		for (i = 1; i <= n; i++) {
			if (w[i] == "EXCEPT") { if (!hit) return 0; ex = 1; continue }
			if (itemmatch(w[i], users)) { if (ex) return 0; hit = 1 }
		}
		return hit
	}
	function itemmatch(x, users) {
		if (x == "ALL") return 1
		if (users) {
			if (x ~ /^\(.*\)$/) return index(groups, " " substr(x, 2, length(x) - 2) " ") > 0
			sub(/@.*/, "", x); return x == u
		}
		if (x == "LOCAL") return host !~ /\./
		if (x ~ /\.$/) return index(addr, x) == 1
		if (x ~ /^\./) return length(host) >= length(x) && substr(host, length(host) - length(x) + 1) == x
		return x == addr || x == host
	}
	# run evaluates stack t; prints a lockout (account, session) or a
	# warning (auth: key logins do not use it) when it denies.
	function run(t,   i, name, r, d, a, failed, okd, why) {
		if (N[t] == 0) return
		failed = 0; okd = 0; why = ""
		for (i = 1; i <= N[t]; i++) {
			name = M[t, i]; sub(/.*\//, "", name); r = "success"; d = ""
			if (!exists(M[t, i])) r = O[t, i] ? "ignore" : "module_unknown"
			else if (name == "pam_deny.so") r = "perm_denied"
			else if (name == "pam_nologin.so" && nologin) { r = "auth_err"; d = "/etc/nologin exists" }
			else if (name == "pam_access.so") { d = accessdeny(A[t, i]); if (d != "") r = "perm_denied" }
			a = action(C[t, i], r)
			if (r != "success" && r != "ignore" && (a == "bad" || a == "die") && !failed) why = name (d != "" ? " (" d ")" : "") (r == "module_unknown" ? " (module not found)" : "") " in " F[t, i]
			if (a == "bad") failed = 1
			else if (a == "die") { failed = 1; break }
			else if (a == "ok") okd = 1
			else if (a == "done") { okd = 1; if (!failed) break }
			else if (a ~ /^[0-9]+$/) { if (r == "success") okd = 1; i += a }
		}
		if (!failed && okd) return
		if (why == "") why = "no module allows the login"
		if (t == "auth") printf "W\tPAM auth stack of sshd denies password logins (%s); key logins do not use it\n", why
		else printf "L\twould lock out %s: PAM %s stack of sshd denies it: %s\n", who, t, why
	}
	BEGIN {
		flat(svc, "", 0)
		if (missing != "") printf "L\twould lock out %s: PAM file(s)%s missing\n", who, missing
		run("account"); run("session"); run("auth")
	}'
fi
echo E
