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
	mkdir "$o/decided" 2>/dev/null && echo lost >"$o/state"
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
if [ -d /run/systemd/system ] && command -v systemd-run >/dev/null 2>&1; then
	systemd-run --quiet --unit="nightshift-lockout-$id" --description="Nightshift lockout switch $id" \
		--on-active="${ms}ms" --timer-property=AccuracySec=100ms /bin/sh "$d/fire.sh" >/dev/null
	echo systemd >"$d/how"
else
	setsid nohup sh -c "sleep $((ms / 1000)).$(printf '%03d' $((ms % 1000))); exec sh '$d/fire.sh'" </dev/null >/dev/null 2>&1 &
	echo $! >"$d/pid"
	echo detached >"$d/how"
fi
touch "$d/armed"
echo "ARMED $(cat "$d/how")"
