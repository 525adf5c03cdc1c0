# Nightshift lockout restore: puts back a snapshot taken by snapshot.sh.
# Usage: sh -c SCRIPT sh DIR. Contents, modes, owners and mtimes come back
# exactly; what did not exist at the snapshot is removed. Each directory is
# swapped in whole (rename), each file renamed over. Prints "OK" last, or
# "FAIL <what>" lines and exits 1 when a step failed (the others still run).
set -u
d=$1
[ -f "$d/complete" ] || { echo "FAIL no complete snapshot in $d"; exit 1; }
rc=0
fail() { echo "FAIL $*"; rc=1; }
home=$(cat "$d/home")
if [ -f "$d/files.tar" ]; then
	s="$d/stage"
	rm -rf "$s" && mkdir -p "$s"
	x=
	tar --help 2>/dev/null | grep -q -- --xattrs && x=--xattrs
	tar $x --numeric-owner -xpf "$d/files.tar" -C "$s" || fail "extract $d/files.tar"
	while IFS= read -r p; do
		[ -n "$p" ] || continue
		if [ ! -e "$s/$p" ] && [ ! -L "$s/$p" ]; then fail "$p missing from the snapshot"; continue; fi
		mkdir -p "$(dirname "/$p")"
		if [ -d "$s/$p" ] && [ ! -L "$s/$p" ]; then
			old="/$p.nightshift-old.$$"
			rm -rf "$old"
			if [ -e "/$p" ] || [ -L "/$p" ]; then mv "/$p" "$old" || fail "move /$p aside"; fi
			mv "$s/$p" "/$p" || fail "restore /$p"
			rm -rf "$old"
		else
			if [ -d "/$p" ] && [ ! -L "/$p" ]; then rm -rf "/$p"; fi
			mv -f "$s/$p" "/$p" || fail "restore /$p"
		fi
	done <"$d/present"
	rm -rf "$s"
fi
while IFS= read -r p; do
	[ -n "$p" ] || continue
	if [ -e "/$p" ] || [ -L "/$p" ]; then rm -rf "/$p" || fail "remove /$p"; fi
done <"$d/absent"
if [ -s "$d/home.stat" ]; then
	read -r m o g <"$d/home.stat"
	mkdir -p "$home"
	chown "$o:$g" "$home" 2>/dev/null || [ "$(id -u)" != 0 ] || fail "chown $home"
	chmod "$m" "$home" || fail "chmod $home"
fi
if [ -f "$d/nft.rules" ]; then
	{ echo 'flush ruleset'; cat "$d/nft.rules"; } | nft -f - || fail "nft restore"
fi
if [ -f "$d/iptables.rules" ] && ! iptables -V 2>/dev/null | grep -q nf_tables; then
	iptables-restore <"$d/iptables.rules" || fail "iptables-restore"
fi
if [ -f "$d/ip6tables.rules" ] && ! ip6tables -V 2>/dev/null | grep -q nf_tables; then
	ip6tables-restore <"$d/ip6tables.rules" || fail "ip6tables-restore"
fi
[ $rc = 0 ] && echo OK
exit $rc
