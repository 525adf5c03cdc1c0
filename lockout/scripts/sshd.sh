# Nightshift lockout: bring sshd back after a restore. sshd -t, then a
# restart of ssh.service (or sshd.service) where systemd runs as PID 1;
# elsewhere a stop of the running daemon (/run/sshd.pid) and a start of it
# with /etc/default/ssh's SSHD_OPTS.
# Prints "OK" last, or "FAIL <what>" and exits 1.
sshd=$(command -v sshd 2>/dev/null || echo /usr/sbin/sshd)
[ -d /run/sshd ] || mkdir -p -m 0755 /run/sshd
to=
command -v timeout >/dev/null 2>&1 && to="timeout -k 1 10"
$to "$sshd" -t </dev/null || { echo "FAIL sshd -t after restore"; exit 1; }
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
	for unit in ssh.service sshd.service; do
		if systemctl cat "$unit" >/dev/null 2>&1; then
			systemctl reset-failed "$unit" 2>/dev/null
			systemctl restart "$unit" && { echo OK; exit 0; }
		fi
	done
	echo "FAIL systemctl restart ssh.service and sshd.service"
	exit 1
else
	# A stop and a start, not SIGHUP: the daemon returns once it listens,
	# where a re-executing one refuses connections for a moment. Sessions,
	# the worker's own included, are other processes and stay.
	pid=$(cat /run/sshd.pid 2>/dev/null || :)
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid"
		n=0
		while kill -0 "$pid" 2>/dev/null && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
	fi
	opts=
	[ -r /etc/default/ssh ] && . /etc/default/ssh && opts=${SSHD_OPTS:-}
	"$sshd" $opts || { echo "FAIL start $sshd"; exit 1; }
	# Wait until it listens (it forks before it binds): a LISTEN socket on
	# each of its ports in /proc/net/tcp or tcp6.
	for port in $("$sshd" -T 2>/dev/null | sed -n 's/^port //p'); do
		hex=$(printf '%04X' "$port")
		n=0
		until grep -q "^ *[0-9]*: [0-9A-F]*:$hex [0-9A-F]*:0000 0A" /proc/net/tcp /proc/net/tcp6 2>/dev/null || [ $n -ge 100 ]; do
			sleep 0.05
			n=$((n + 1))
		done
	done
fi
echo OK
