# Nightshift lockout switch: fire. Written into the switch's directory by
# Arm and run by its trigger. Whoever makes the directory "decided" first
# (this script or Disarm) wins; the other does nothing.
#
# It survives a host whose dynamic loader is gone (the path in every
# program's PT_INTERP no longer resolves): the trigger starts this script
# through the loader's real file, recorded at Arm in loader.env, and the
# script uses shell builtins and that loader until the loader's path is
# repaired: a symbolic link to the real loader where the PT_INTERP path now
# leads (for ln -sfn /tmp /lib64: /tmp/ld-linux-x86-64.so.2). That link
# changes no path the commit changed, so the commit's exact undo
# (restore.cmd) still runs; once the undo has brought the path back, the
# link is removed. Where the PT_INTERP path's directory is gone too, the
# host cannot be repaired this way: the log says so.
d=${0%/*}
LD= LIBS= INTERP= SH= LN= MKDIR= MV=
[ ! -r "$d/loader.env" ] || . "$d/loader.env"
x() {
	if [ -n "$LD" ] && [ -x "$LD" ]; then "$LD" --library-path "$LIBS" "$@"; else "$@"; fi
}
# state STATE replaces the state file by a rename, never in place: a
# reader (State, Disarm) that read "fired\n" and then, after an in-place
# rewrite, the rest of "restored\n" would see "fired\ned".
state() {
	echo "$1" >"$d/state.new" && x "${MV:-mv}" -f "$d/state.new" "$d/state" 2>/dev/null || echo "$1" >"$d/state"
}
x "${MKDIR:-mkdir}" "$d/decided" 2>/dev/null || exit 0
state fired
exec >>"$d/fire.log" 2>&1
echo "fired at $(date +%s 2>/dev/null)"
shim= dir=${INTERP%/*}
if [ -n "$SH" ] && ! "$SH" -c : 2>/dev/null; then
	echo "programs do not start: the dynamic loader's path $INTERP does not lead to the loader"
	if phys=$(cd "$dir" 2>/dev/null && pwd -P); then
		s=$phys/${INTERP##*/}
		if [ -e "$s" ] || [ -L "$s" ]; then
			echo "FAIL loader: $s exists and is not the loader; only a person can restore this host"
		elif x "$LN" -s "$LD" "$s"; then
			shim=$s
			echo "loader: linked $s to $LD until the restore is done"
		else
			echo "FAIL loader: cannot link $s to $LD; only a person can restore this host"
		fi
	else
		echo "FAIL loader: the loader's directory $dir is gone; only a person can restore this host"
	fi
fi
if [ -s "$d/restore.cmd" ]; then
	sh "$d/restore.cmd" || echo "FAIL restore command exit $?"
fi
snap=$(cat "$d/snap")
sh "$d/restore.sh" "$snap" || echo "FAIL restore $snap"
if [ "$(id -u)" = 0 ]; then sh "$d/sshd.sh" || echo "FAIL sshd"; fi
if [ -n "$shim" ]; then
	if [ -L "$shim" ] && phys=$(cd "$dir" 2>/dev/null && pwd -P) && [ "$phys/${INTERP##*/}" != "$shim" ]; then
		rm -f "$shim" && echo "loader: removed $shim (the restore brought $dir back)"
	else
		echo "FAIL loader: the restore did not bring $dir back; $shim stays so that programs start"
	fi
fi
echo "restored at $(date +%s)"
state restored
