# Nightshift lockout switch: disarm. Usage: sh -c SCRIPT sh BASE ID.
# Prints "DISARMED" (now or before), "FIRED <state>" when the switch fired
# first, or "UNKNOWN".
d=$1/switch/$2
[ -f "$d/armed" ] || { echo UNKNOWN; exit 0; }
if mkdir "$d/decided" 2>/dev/null; then
	# Replaced by a rename (see fire.sh's state): never rewritten in place.
	echo disarmed >"$d/state.new" && mv -f "$d/state.new" "$d/state"
	case $(cat "$d/how") in
	systemd) systemctl stop "nightshift-lockout-$2.timer" >/dev/null 2>&1 ;;
	*) pid=$(cat "$d/pid" 2>/dev/null) && kill -- "-$pid" 2>/dev/null ;;
	esac
	rm -rf "$d/pre"
	echo DISARMED
	exit 0
fi
s=$(cat "$d/state" 2>/dev/null || echo unknown)
case $s in
disarmed) echo DISARMED ;;
*) echo "FIRED $s" ;;
esac
