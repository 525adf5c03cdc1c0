# Nightshift lockout switch: fire. Written into the switch's directory by
# Arm and run by its trigger. Whoever makes the directory "decided" first
# (this script or Disarm) wins; the other does nothing.
d=$(dirname "$0")
mkdir "$d/decided" 2>/dev/null || exit 0
echo fired >"$d/state"
exec >>"$d/fire.log" 2>&1
echo "fired at $(date +%s)"
if [ -s "$d/restore.cmd" ]; then
	sh "$d/restore.cmd" || echo "FAIL restore command exit $?"
fi
snap=$(cat "$d/snap")
sh "$d/restore.sh" "$snap" || echo "FAIL restore $snap"
if [ "$(id -u)" = 0 ]; then sh "$d/sshd.sh" || echo "FAIL sshd"; fi
echo "restored at $(date +%s)"
echo restored >"$d/state"
