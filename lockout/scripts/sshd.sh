# Nightshift lockout: bring sshd back after a restore. sshd -t, then a
# restart of ssh.service (or sshd.service) where systemd runs as PID 1;
# elsewhere SIGHUP to the running daemon (/run/sshd.pid: it re-executes
# with the restored configuration, sessions stay) or a start of it.
# Prints "OK" last, or "FAIL <what>" and exits 1.
sshd=$(command -v sshd 2>/dev/null || echo /usr/sbin/sshd)
[ -d /run/sshd ] || mkdir -p -m 0755 /run/sshd
"$sshd" -t || { echo "FAIL sshd -t after restore"; exit 1; }
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
	pid=$(cat /run/sshd.pid 2>/dev/null || :)
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -HUP "$pid" || { echo "FAIL kill -HUP $pid"; exit 1; }
	else
		opts=
		[ -r /etc/default/ssh ] && . /etc/default/ssh && opts=${SSHD_OPTS:-}
		"$sshd" $opts || { echo "FAIL start $sshd"; exit 1; }
	fi
fi
echo OK
