# Nightshift lockout switch: arm. Usage: sh -c SCRIPT sh BASE ID USER MS SNAP
# BASE/switch/ID gets: restore.cmd (written by the caller's command before
# this script), snapshot.sh, restore.sh and fire.sh (written by the caller
# too), a snapshot of the protected files and firewall rulesets taken now
# (unless SNAP names a snapshot directory taken before),
# and the trigger: a transient systemd timer where systemd runs as PID 1,
# else a detached sleeper in its own session. Prints "ARMED <how>", or
# "BUSY <id>" when another switch is still armed, or "EXISTS".
set -eu
base=$1 id=$2 u=$3 ms=$4 snap=$5
d=$base/switch/$id
now=$(date +%s)
for o in "$base"/switch/*/; do
	[ -d "$o" ] || continue
	o=${o%/}
	[ "$o" = "$d" ] && continue
	[ -d "$o/decided" ] && continue
	[ -f "$o/armed" ] || continue
	dl=$(cat "$o/deadline" 2>/dev/null || echo 0)
	if [ "$now" -le $((dl + 30)) ]; then echo "BUSY ${o##*/}"; exit 0; fi
	# Its trigger is gone (a reboot): it can never fire.
	mkdir "$o/decided" 2>/dev/null && echo lost >"$o/state.new" && mv -f "$o/state.new" "$o/state"
done
[ -f "$d/armed" ] && { echo EXISTS; exit 0; }
if [ -n "$snap" ]; then
	[ -f "$snap/complete" ] || { echo "no snapshot in $snap" >&2; exit 2; }
	printf '%s\n' "$snap" >"$d/snap"
else
	sh "$d/snapshot.sh" "$d/pre" "$u" >/dev/null
	printf '%s\n' "$d/pre" >"$d/snap"
fi
echo $((now + (ms + 999) / 1000)) >"$d/deadline"
echo armed >"$d/state"
# The dynamic loader, for a host whose programs no longer start when the
# switch fires (a change took the loader's path away: ln -sfn /tmp /lib64).
# The trigger starts fire.sh through the loader's real file (resolved now,
# by its path in this shell's memory map), which needs no PT_INTERP path;
# fire.sh then repairs that path before anything else (see fire.sh).
plain() { case $1 in /*) case $1 in *[!A-Za-z0-9/._+-]*) return 1 ;; esac ;; *) return 1 ;; esac; }
ld=$(sed -n 's,^.* \(/[^ ]*/ld-[^ /]*\.so[.0-9]*\)$,\1,p' /proc/$$/maps 2>/dev/null | head -n 1)
libs=$(sed -n 's,^.* \(/[^ ]*\)/libc\.so[.0-9]*$,\1,p' /proc/$$/maps 2>/dev/null | head -n 1)
interp=$(grep -a -o -m 1 '/[[:alnum:]_./-]*/ld-[[:alnum:]_.-]*\.so[.0-9]*' /bin/sh 2>/dev/null | head -n 1)
shr=$(readlink -f /bin/sh 2>/dev/null) || shr=
lnr=$(readlink -f "$(command -v ln)" 2>/dev/null) || lnr=
mkr=$(readlink -f "$(command -v mkdir)" 2>/dev/null) || mkr=
mvr=$(readlink -f "$(command -v mv)" 2>/dev/null) || mvr=
run="/bin/sh"
if plain "$ld" && plain "$libs" && plain "$interp" && plain "$shr" && plain "$lnr" && plain "$mkr" && plain "$mvr" && [ -x "$ld" ] &&
	"$ld" --library-path "$libs" "$shr" -c : 2>/dev/null; then
	printf "LD='%s' LIBS='%s' INTERP='%s' SH='%s' LN='%s' MKDIR='%s' MV='%s'\n" "$ld" "$libs" "$interp" "$shr" "$lnr" "$mkr" "$mvr" >"$d/loader.env"
	run="$ld --library-path $libs $shr"
else
	: >"$d/loader.env"
fi
if [ -d /run/systemd/system ] && command -v systemd-run >/dev/null 2>&1; then
	systemd-run --quiet --unit="nightshift-lockout-$id" --description="Nightshift lockout switch $id" \
		--on-active="${ms}ms" --timer-property=AccuracySec=100ms $run "$d/fire.sh" >/dev/null
	echo systemd >"$d/how"
else
	setsid nohup sh -c "sleep $((ms / 1000)).$(printf '%03d' $((ms % 1000))); exec $run '$d/fire.sh'" </dev/null >/dev/null 2>&1 &
	echo $! >"$d/pid"
	echo detached >"$d/how"
fi
touch "$d/armed"
echo "ARMED $(cat "$d/how")"
