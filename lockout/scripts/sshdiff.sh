# Nightshift lockout: did a commit touch what sshd reads at a restart?
# Usage: sh -c SCRIPT sh DIR. Exits 0 when /etc/ssh is as the snapshot in
# DIR holds it (contents, modes, owners, mtimes, symlinks, and no path
# added or removed), 1 otherwise or when it cannot tell. Reads no file
# that is not in the snapshot (a FIFO added since is only listed).
d=$1
cd / || exit 1
if grep -qx etc/ssh "$d/absent" 2>/dev/null; then
	if [ -e /etc/ssh ] || [ -L /etc/ssh ]; then exit 1; fi
	exit 0
fi
[ -f "$d/files.tar" ] || exit 1
tar --numeric-owner -df "$d/files.tar" etc/ssh >/dev/null 2>&1 || exit 1
a=$(tar -tf "$d/files.tar" etc/ssh 2>/dev/null | sed 's,/$,,' | LC_ALL=C sort) || exit 1
b=$(find etc/ssh 2>/dev/null | LC_ALL=C sort) || exit 1
[ -n "$a" ] && [ "$a" = "$b" ]
