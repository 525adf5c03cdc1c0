# Nightshift lockout restore: puts back a snapshot taken by snapshot.sh.
# Usage: sh -c SCRIPT sh DIR. Contents, modes, owners and mtimes come back
# exactly; what did not exist at the snapshot is removed. Every file is
# renamed over its path from a staging directory next to it
# (PARENT/.nightshift-restore.PID, removed at the end), so a directory such
# as /etc/ssh never disappears and a reader (sshd, PAM) sees each file old
# or new, never missing. Needs GNU coreutils (--reference). Prints "OK"
# last, or "FAIL <what>" lines and exits 1 when a step failed (the others
# still run).
set -u
d=$1
[ -f "$d/complete" ] || { echo "FAIL no complete snapshot in $d"; exit 1; }
# One restore of a snapshot at a time (the switch's and the worker's may
# meet); the kernel drops the lock of a restore that was killed.
if command -v flock >/dev/null 2>&1; then
	exec 9>"$d/lock"
	flock 9
fi
rm -f "$d/failed"
fail() { echo "FAIL $*"; : >"$d/failed"; }
home=$(cat "$d/home")
x=
tar --help 2>/dev/null | grep -q -- --xattrs && x=--xattrs
# dirty: a non-directory where a directory must be, or the reverse, goes.
notdir() { [ -L "$1" ] || { [ -e "$1" ] && [ ! -d "$1" ]; }; }
isdir() { [ -d "$1" ] && [ ! -L "$1" ]; }
if [ -f "$d/files.tar" ]; then
	while IFS= read -r p; do
		[ -n "$p" ] || continue
		par=$(dirname "/$p")
		mkdir -p "$par"
		st="$par/.nightshift-restore.$$"
		# What a killed restore left behind, then this one's stage.
		for o in "$par"/.nightshift-restore.*; do [ -e "$o" ] && rm -rf "$o"; done
		mkdir -m 0700 "$st" || { fail "stage in $par"; continue; }
		tar $x --numeric-owner -xpf "$d/files.tar" -C "$st" "$p" || fail "extract $p"
		src="$st/$p" dst="/$p"
		if ! [ -e "$src" ] && ! [ -L "$src" ]; then
			fail "$p missing from the snapshot"
		elif isdir "$src"; then
			notdir "$dst" && rm -f "$dst"
			mkdir -p "$dst"
			(cd "$dst" && find . -mindepth 1 -depth) | while IFS= read -r e; do
				[ -e "$src/$e" ] || [ -L "$src/$e" ] || rm -rf "$dst/$e" || fail "remove $dst/$e"
			done
			(cd "$src" && find . -mindepth 1 -type d) | while IFS= read -r e; do
				notdir "$dst/$e" && rm -f "$dst/$e"
				mkdir -p "$dst/$e" || fail "mkdir $dst/$e"
			done
			(cd "$src" && find . ! -type d) | while IFS= read -r e; do
				isdir "$dst/$e" && rm -rf "$dst/$e"
				mv -f "$src/$e" "$dst/$e" || fail "restore $dst/$e"
			done
			(cd "$src" && find . -depth -type d) | while IFS= read -r e; do
				chown -h --reference="$src/$e" "$dst/$e" && chmod --reference="$src/$e" "$dst/$e" &&
					touch -h -r "$src/$e" "$dst/$e" || fail "mode of $dst/$e"
			done
		else
			isdir "$dst" && rm -rf "$dst"
			mv -f "$src" "$dst" || fail "restore $dst"
		fi
		rm -rf "$st"
	done <"$d/present"
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
[ -e "$d/failed" ] && exit 1
echo OK
