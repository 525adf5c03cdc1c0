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
	if [ ! -x "$sshd" ]; then
		lock "would lock out $who: no sshd binary ($sshd)"
	elif ! out=$("$sshd" -t 2>&1); then
		lock "would lock out $who at the next sshd restart: sshd -t fails: $(one "$out")"
	else
		spec="user=$u"
		[ -n "$NS_HOST" ] && spec="$spec,host=$NS_HOST"
		[ -n "$NS_ADDR" ] && spec="$spec,addr=$NS_ADDR"
		[ -n "$NS_LADDR" ] && spec="$spec,laddr=$NS_LADDR"
		[ -n "$NS_LPORT" ] && spec="$spec,lport=$NS_LPORT"
		if ! T=$("$sshd" -T -C "$spec" 2>&1); then
			lock "would lock out $who at the next sshd restart: sshd -T fails: $(one "$T")"
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
			p=$found
			while :; do
				st=$(stat -c '%u %a' "$p" 2>/dev/null) || break
				o=${st% *}; m=${st#* }
				if [ "$o" != 0 ] && [ "$o" != "$uid" ]; then
					lock "would lock out $who: StrictModes refuses the keys: $p is owned by uid $o"
				elif [ $((0$m & 022)) != 0 ]; then
					lock "would lock out $who: StrictModes refuses the keys: $p is group or world writable (mode $m)"
				fi
				[ "$p" = "$home" ] || [ "$p" = / ] && break
				p=$(dirname "$p")
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

# PAM: the account and session stacks of sshd, includes flattened, run as
# Linux-PAM runs them with each module's result for this login.
if [ "$usepam" = yes ]; then
	mods=" "
	set +f
	for d in /lib/security /lib64/security /usr/lib/security /lib/*/security /usr/lib/*/security; do
		[ -d "$d" ] && mods="$mods$(cd "$d" && ls | tr '\n' ' ')"
	done
	set -f
	pamflat() { # service type depth: the lines of that type, includes followed
		local _dep _ty _f _l
		_dep=$3 _ty=$2 _f=/etc/pam.d/$1
		[ "$_dep" -gt 8 ] && return
		if [ ! -f "$_f" ]; then printf 'MISSING %s\n' "$_f"; return; fi
		sed -e 's/#.*//' -e 's/[[:space:]]\{1,\}/ /g' -e 's/^ //' "$_f" | while IFS= read -r _l; do
			[ -n "$_l" ] || continue
			set -- $_l
			if [ "$1" = @include ]; then pamflat "$2" "$_ty" $((_dep + 1)); continue; fi
			[ "${1#-}" = "$_ty" ] || continue
			case $2 in include | substack) pamflat "$3" "$_ty" $((_dep + 1)); continue ;; esac
			printf '%s %s\n' "$_f" "$_l"
		done
	}
	svc=sshd
	[ -f /etc/pam.d/sshd ] || svc=other
	for t in account session auth; do
		pamflat "$svc" "$t" 0 | awk -v t="$t" -v u="$u" -v groups="$groups" -v addr="$NS_ADDR" -v host="$NS_HOST" -v nologin="$nologin" -v mods="$mods" -v who="$who" '
		function ctl_action(ctl, r,   n, i, kv, a, d) {
			if (ctl == "required") return (r == "success" ? "ok" : r == "ignore" ? "ignore" : "bad")
			if (ctl == "requisite") return (r == "success" ? "ok" : r == "ignore" ? "ignore" : "die")
			if (ctl == "sufficient") return (r == "success" ? "done" : "ignore")
			if (ctl == "optional") return (r == "success" ? "ok" : "ignore")
			gsub(/[\[\]]/, "", ctl); n = split(ctl, kv, " "); d = "bad"
			for (i = 1; i <= n; i++) { split(kv[i], a, "="); if (a[1] == r) return a[2]; if (a[1] == "default") d = a[2] }
			return d
		}
		function accessdeny(args,   file, line, f, n, i, us, os, m, mu, mo, perm, ex, tok) {
			file = "/etc/security/access.conf"
			if (match(args, /accessfile=[^ ]+/)) file = substr(args, RSTART + 11, RLENGTH - 11)
			while ((getline line < file) > 0) {
				sub(/#.*/, "", line); if (line !~ /:/) continue
				n = split(line, f, ":"); if (n < 3) continue
				perm = f[1]; gsub(/ /, "", perm)
				m = listmatch(f[2], 1) && listmatch(f[3], 0)
				if (m) { close(file); return perm == "-" ? line : "" }
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
		$1 == "MISSING" { printf "L\twould lock out %s: PAM file %s is missing\n", who, $2; exit }
		{
			file = $1; line = $0; sub(/^[^ ]+ [^ ]+ /, "", line)
			if (line ~ /^\[/) { ctl = substr(line, 1, index(line, "]")); line = substr(line, length(ctl) + 2) } else { ctl = $3; line = substr(line, length(ctl) + 2) }
			n = split(line, w, " "); mod = w[1]; args = substr(line, length(mod) + 2)
			opt = ($2 ~ /^-/)
			name = mod; sub(/.*\//, "", name)
			S[++ns] = name; C[ns] = ctl; A[ns] = args; F[ns] = file; O[ns] = opt
		}
		END {
			if (ns == 0) exit
			failed = 0; okd = 0; why = ""
			for (i = 1; i <= ns; i++) {
				name = S[i]; r = "success"; d = ""
				if (index(mods, " " name " ") == 0 && S[i] ~ /^pam_/) r = O[i] ? "ignore" : "module_unknown"
				else if (name == "pam_deny.so") r = "perm_denied"
				else if (name == "pam_nologin.so" && nologin) { r = "auth_err"; d = "/etc/nologin exists" }
				else if (name == "pam_access.so") { d = accessdeny(A[i]); if (d != "") r = "perm_denied" }
				a = ctl_action(C[i], r)
				if (r != "success" && r != "ignore" && (a == "bad" || a == "die") && !failed) why = name (d != "" ? " (" d ")" : "") " in " F[i]
				if (a == "bad") failed = 1
				else if (a == "die") { failed = 1; break }
				else if (a == "ok") okd = 1
				else if (a == "done") { okd = 1; if (!failed) break }
				else if (a ~ /^[0-9]+$/) { if (r == "success") okd = 1; i += a }
			}
			if (!failed && okd) exit
			if (why == "") why = "no module allows the login"
			if (t == "auth") printf "W\tPAM auth stack of sshd denies password logins (%s); key logins do not use it\n", why
			else printf "L\twould lock out %s: PAM %s stack of sshd denies it: %s\n", who, t, why
		}'
	done
fi
echo E
