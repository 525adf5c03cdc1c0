#!/bin/bash
# Nightshift's sandbox helper, shipped to the host by package sandbox and run
# there as root. It gathers facts; the worker decides. Subcommands:
#
#   helper.sh probe                 print "ok" or the missing pieces, one a line
#   helper.sh try ID SECONDS        run the base64 command read on stdin in a
#                                   throwaway sandbox; print the report
#   helper.sh commit ID             apply the ops read on stdin; keep pre-images
#   helper.sh undo ID               restore ID's pre-images (ops on stdin say
#                                   what each path must hold now)
#   helper.sh discard ID            drop a trial's layers
#
# The report is a sequence of sections "NAME LENGTH\n" + LENGTH bytes + "\n".
# Paths in listings are NUL-terminated; nothing here interprets the command.
set -u
umask 077
export LC_ALL=C PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

RUNBASE=/run/nightshift/sandbox
UNDOBASE=/var/lib/nightshift/undo
OUTCAP=${NIGHTSHIFT_OUTCAP:-1048576}
DIFFCAP=${NIGHTSHIFT_DIFFCAP:-262144}
TMPFS_SIZE=${NIGHTSHIFT_TMPFS_SIZE:-50%}
# SSHD_SECS bounds each sshd -t and -T run on the trial's configuration.
SSHD_SECS=10
# PARSE_SECS bounds each configuration parser's run (parse_checks).
PARSE_SECS=10
# PROGRAM_PATHS are where sshd, the parsers and what they load live: a
# trial that changed any of them gets none of its programs run outside the
# sandbox (sshd_checks, parse_checks), where they would run as root beside
# the host.
PROGRAM_PATHS="/bin /sbin /lib /lib32 /lib64 /libx32 /usr/bin /usr/sbin /usr/lib /usr/lib32 /usr/lib64 /usr/libx32
/usr/libexec /usr/local/lib /etc/ld.so.preload /etc/ld.so.cache /etc/ld.so.conf /etc/ld.so.conf.d"

# Programs that change the running system beyond files: in the sandbox they
# are replaced by a recorder (see stub below).
RECORDED="systemctl service deb-systemd-invoke invoke-rc.d sysctl modprobe rmmod insmod
nft iptables ip6tables iptables-restore ip6tables-restore iptables-legacy ip6tables-legacy
iptables-nft ip6tables-nft iptables-legacy-restore ip6tables-legacy-restore
iptables-nft-restore ip6tables-nft-restore ebtables arptables ip auditctl mount umount
swapoff swapon reboot shutdown poweroff halt kexec telinit init busctl dbus-send gdbus
qdbus dbus-monitor hostnamectl timedatectl localectl loginctl machinectl networkctl
resolvectl nmcli systemd-run"

# Capabilities the command never has.
DROPCAPS=-dac_read_search,-checkpoint_restore,-sys_boot,-sys_module,-mknod,-sys_admin,-sys_ptrace,-net_admin,-sys_rawio,-sys_time,-sys_chroot,-mac_admin,-mac_override,-audit_control,-syslog,-sys_pacct,-wake_alarm,-block_suspend,-bpf,-perfmon,-linux_immutable,-sys_resource,-lease,-sys_tty_config

die() {
	echo "nightshift-sandbox: $*" >&2
	exit 97
}

# fstab_line SOURCE TARGET TYPE OPTIONS prints an fstab(5) line, with the
# octal escapes of its fields (for mount -a -T).
fstab_line() {
	local f out=()
	for f in "$@"; do
		f=${f//\\/\\134}
		f=${f// /\\040}
		f=${f//$'\t'/\\011}
		f=${f//$'\n'/\\012}
		out+=("$f")
	done
	printf '%s %s %s %s 0 0\n' "${out[@]}"
}

# mounted PATH reports whether PATH is a mount point in this mount
# namespace (read from /proc/self/mountinfo, without a process).
mounted() {
	local _a _b _c _d mp _rest
	while read -r _a _b _c _d mp _rest; do
		printf -v mp '%b' "$mp"
		[ "$mp" != "$1" ] || return 0
	done </proc/self/mountinfo
	return 1
}

# rbind_ro SRC DST binds SRC read-only at DST: one mount process
# (util-linux 2.27 and later remount the bind read-only themselves), or,
# where that fails, a bind and a read-only remount.
rbind_ro() {
	mount -o bind,ro -- "$1" "$2" 2>/dev/null || { mount --bind -- "$1" "$2" && mount -o remount,bind,ro -- "$2"; }
}

# sections DIR NAME FILE [NAME FILE]... prints the files as sections with
# one stat and one cat (their headers are written to DIR first).
sections() {
	local dir=$1 i h
	shift
	local -a names=() files=() sizes=() parts=()
	while [ $# -ge 2 ]; do
		names+=("$1")
		files+=("$2")
		shift 2
	done
	mapfile -t sizes < <(stat -c %s -- "${files[@]}")
	[ ${#sizes[@]} -eq ${#files[@]} ] || die "stat the report's sections"
	printf '\n' >"$dir/.nl"
	for i in "${!files[@]}"; do
		h=$dir/.h$i
		printf '%s %d\n' "${names[i]}" "${sizes[i]}" >"$h"
		parts+=("$h" "${files[i]}" "$dir/.nl")
	done
	cat -- "${parts[@]}"
}

probe() {
	local missing=()
	[ "$(uname -s)" = Linux ] || missing+=("not Linux: $(uname -s)")
	[ "$(id -u)" = 0 ] || missing+=("not root: uid $(id -u)")
	for p in unshare setpriv pivot_root mount umount find stat sha256sum diff base64 timeout; do
		command -v "$p" >/dev/null 2>&1 || missing+=("no $p")
	done
	grep -qw overlay /proc/filesystems 2>/dev/null || modprobe -n overlay 2>/dev/null ||
		missing+=("no overlayfs in the kernel")
	if [ ${#missing[@]} -eq 0 ]; then
		# The real test: a mount namespace with an overlay over /.
		local d
		d=$(mktemp -d /run/nightshift-probe.XXXXXX 2>/dev/null) || d=$(mktemp -d)
		if ! unshare --mount --propagation private -- sh -c '
			mount -t tmpfs -o size=1m tmpfs "$1" &&
			mkdir "$1/u" "$1/w" "$1/m" &&
			mount -t overlay overlay -o "lowerdir=/,upperdir=$1/u,workdir=$1/w" "$1/m"' sh "$d" 2>"$d.err"; then
			missing+=("cannot create a mount namespace with an overlay over /: $(head -c 300 "$d.err" | tr '\n' ' ')")
		fi
		rm -rf "$d" "$d.err"
	fi
	if [ ${#missing[@]} -eq 0 ]; then
		echo ok
	else
		printf '%s\n' "${missing[@]}"
	fi
}

# plan_mounts writes T/mounts: "INDEX KIND MOUNTPOINT" per line, KIND overlay
# or ro; the root file system is index 0. /proc, /sys and /dev are built
# afresh and are not listed; /run is the last line, KIND run: an overlay
# whose lower layer is the copy of the host's /run taken at the start
# (T/runlow), so its changes are recorded and committed like any other.
plan_mounts() {
	local T=$1 n=1 mp fstype opts rest
	echo "0 overlay /" >"$T/mounts"
	while read -r _ _ _ _ mp opts rest; do
		fstype=${rest#*- }
		fstype=${fstype%% *}
		printf -v mp '%b' "$mp" # mountinfo's octal escapes (\040 for a space)
		case "$mp" in
		/ | /proc | /proc/* | /sys | /sys/* | /dev | /dev/* | /run | /run/*) continue ;;
		esac
		case "$mp" in
		*$'\n'* | *,* | *:* | *\\*) echo "$n ro $mp" >>"$T/mounts" ;;
		*)
			case "$fstype" in
			proc | sysfs | devtmpfs | devpts | cgroup | cgroup2 | mqueue | debugfs | tracefs | securityfs | pstore | bpf | configfs | fusectl | hugetlbfs | autofs | binfmt_misc | efivarfs | nsfs | rpc_pipefs | nfsd | fuse*)
				echo "$n ro $mp" >>"$T/mounts" ;;
			*)
				case ",$opts," in
				*,ro,*) echo "$n ro $mp" >>"$T/mounts" ;;
				*) echo "$n overlay $mp" >>"$T/mounts" ;;
				esac
				;;
			esac
			;;
		esac
		n=$((n + 1))
	done </proc/self/mountinfo
	echo "$n run /run" >>"$T/mounts"
}

# stub is the recorder bound over every program in RECORDED. Read-only forms
# run the real program (kept under /run/nightshift-real); the rest append
# their argv to /run/nightshift-actions and succeed.
write_stub() {
	cat >"$1" <<'STUB'
#!/bin/bash
n=${0##*/}
real=/run/nightshift-real/$n
pass() { if [ -x "$real" ]; then exec -a "$n" "$real" "$@"; fi; echo "$n: not available in the sandbox" >&2; exit 1; }
verb=
for a in "$@"; do case "$a" in -*) ;; *) verb=$a; break ;; esac; done
case "$n" in
systemctl)
	case "$verb" in
	is-active | is-enabled | is-failed | status | show | cat | list-units | list-unit-files | list-timers | list-sockets | list-dependencies | get-default | help | "") pass "$@" ;;
	esac ;;
sysctl)
	rec=0
	for a in "$@"; do case "$a" in -w | --write | -p* | --load* | --system | *=*) rec=1 ;; esac; done
	[ $rec = 1 ] || pass "$@" ;;
ip)
	obj= act=
	for a in "$@"; do case "$a" in -*) ;; *) if [ -z "$obj" ]; then obj=$a; elif [ -z "$act" ]; then act=$a; fi ;; esac; done
	case "$act" in "" | show | list | ls | lst | get | sh | s) pass "$@" ;; esac ;;
mount)
	case "$*" in "" | -l | "-t "* | "-l -t "*) pass "$@" ;; esac ;;
iptables | ip6tables | iptables-legacy | ip6tables-legacy | iptables-nft | ip6tables-nft)
	for a in "$@"; do case "$a" in -L | --list | -S | --list-rules | -C | --check | --version | -V) pass "$@" ;; esac; done ;;
nft)
	case "$verb" in list | -v | --version) pass "$@" ;; esac ;;
auditctl)
	case "$*" in -l | -s | -v | --version) pass "$@" ;; esac ;;
modprobe)
	for a in "$@"; do case "$a" in -n | --dry-run | -c | --showconfig | --show-depends | -D | --version | -V) pass "$@" ;; esac; done ;;
esac
{ printf '%d\0' $(($# + 1)); printf '%s\0' "$n" "$@"; } >>/run/nightshift-actions
exit 0
STUB
	chmod 0755 "$1"
}

# inner runs in the new mount namespace: builds the sandbox's root at T/root,
# runs the command there, and gathers the facts.
inner() {
	local T=$1 secs=$2 n kind mp m u w
	mount --make-rprivate / || die "make mounts private"
	# Every directory the mounts need, in one mkdir.
	local -a dirs=("$T/root" "$T/real" "$T/out")
	local runn=
	while read -r n kind mp; do
		[ "$kind" = ro ] || dirs+=("$T/u/$n" "$T/w/$n")
		[ "$kind" != run ] || runn=$n
	done <"$T/mounts"
	[ -n "$runn" ] || die "no /run in the trial's mounts"
	dirs+=("$T/runlow")
	mkdir -p -- "${dirs[@]}" || die "mkdir in $T"
	# In a user namespace (a uid_map other than the whole identity) the
	# overlays keep their own marks in user.* xattrs: trusted.* is this
	# machine's root's alone, and without marks a deleted directory fails.
	local ox= um
	um=$(</proc/self/uid_map)
	[ "$(echo $um)" = "0 0 4294967295" ] || ox=,userxattr
	while read -r n kind mp; do
		[ "$kind" != run ] || continue # mounted below, after the snapshot
		if [ "$n" = 0 ]; then m=$T/root; else m=$T/root$mp; fi
		[ -d "$m" ] || continue # under a directory the command cannot reach
		if [ "$kind" = overlay ]; then
			u=$T/u/$n w=$T/w/$n
			# Once in several hundred trials on a busy 6.18 kernel the
			# first mount fails ("missing 'lowerdir'"); a second try is
			# harmless.
			mount -t overlay overlay -o "lowerdir=$mp,upperdir=$u,workdir=$w$ox" "$m" 2>/dev/null ||
				mount -t overlay overlay -o "lowerdir=$mp,upperdir=$u,workdir=$w$ox" "$m" ||
				die "overlay $mp"
		else
			rbind_ro "$mp" "$m" || die "read-only bind $mp"
		fi
	done <"$T/mounts"
	# /dev: a minimal tmpfs. /sys read-only. /run: an overlay over a copy of
	# the host's /run without sockets or FIFOs (systemd, D-Bus and init are
	# reached through them), taken now: the command's changes there are
	# its upper layer, compared with this copy, not with the live /run.
	# Left out of the copy, and so of the trial and of its effects:
	# /run/nightshift (the trials' layers, the recorder's cache),
	# /run/user (the logins' runtime directories) and the helper's own
	# /run/nightshift-* (gather_overlay skips them in the upper layer).
	# Its skeleton comes from the cache try made, in one cp: the fd links,
	# pts, shm and device nodes of their own (mknod'ed in the cache, copied
	# as new inodes — never bind mounts of the host's: a bind mount shares
	# the inode, and a chmod or chown in the sandbox would reach the
	# host's /dev/null).
	# The three file systems are mounted by one mount process (mount -a
	# over a table of them); any it did not mount is mounted on its own,
	# as before.
	fstab_line tmpfs "$T/root/dev" tmpfs mode=755,nosuid >"$T/fstab.base"
	fstab_line sysfs "$T/root/sys" sysfs ro,nosuid,nodev,noexec >>"$T/fstab.base"
	mount -a -T "$T/fstab.base" 2>/dev/null
	if ! mounted "$T/root/dev"; then
		mount -t tmpfs -o mode=755,nosuid tmpfs "$T/root/dev" || die "tmpfs /dev"
	fi
	if ! mounted "$T/root/sys"; then
		mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$T/root/sys" 2>/dev/null ||
			{ mount --rbind /sys "$T/root/sys" && mount -o remount,bind,ro "$T/root/sys"; } || die "read-only /sys"
	fi
	cp -a -- "$STUBS/dev/." "$T/root/dev/" || die "copy the /dev skeleton"
	# Where mknod was refused (a user namespace) the cache holds empty
	# files: the host's nodes are bound over them read-only (usable, but a
	# chmod or chown of them fails).
	for d in null zero full random urandom tty; do
		[ -c "$T/root/dev/$d" ] || { rbind_ro "/dev/$d" "$T/root/dev/$d" && [ -c "$T/root/dev/$d" ]; } ||
			die "/dev/$d is not a device node"
	done
	tar -C /run --exclude=./nightshift --exclude=./user --exclude='./nightshift-*' -cf - . 2>/dev/null |
		tar -C "$T/runlow" -xf - 2>/dev/null
	find "$T/runlow" \( -type p -o -type s \) -delete 2>/dev/null
	chmod --reference=/run -- "$T/runlow" && chown --reference=/run -- "$T/runlow" || die "the mode of /run's copy"
	mount -t overlay overlay -o "nosuid,nodev,lowerdir=$T/runlow,upperdir=$T/u/$runn,workdir=$T/w/$runn$ox" "$T/root/run" 2>/dev/null ||
		mount -t overlay overlay -o "nosuid,nodev,lowerdir=$T/runlow,upperdir=$T/u/$runn,workdir=$T/w/$runn$ox" "$T/root/run" ||
		die "overlay /run"
	# The recorder and its links, one a recorded name, the empty action
	# log (0666) and the directory for the real programs, from the cache
	# try made (one cp instead of a process per name).
	cp -a -- "$STUBS/nightshift-stub" "$STUBS/nightshift-stubs" "$STUBS/nightshift-actions" "$STUBS/nightshift-real" "$T/root/run/" ||
		die "copy the recorders"
	# Each recorded program found is kept (its first occurrence in PATH
	# order) for the read-only forms, all in one cp, then the recorder is
	# bound over every path that reaches it (a path that already leads to
	# the recorder, through a merged-/usr link, is not bound twice).
	local name dir p stub=$T/root/run/nightshift-stub
	local -A kept=([mount]=1 [umount]=1)
	local -a reals=(/bin/mount /bin/umount) binds=()
	for name in $RECORDED; do
		for dir in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
			p=$T/root$dir/$name
			[ -e "$p" ] || continue
			if [ -z "${kept[$name]+x}" ]; then
				kept[$name]=1
				reals+=("$p")
			fi
			binds+=("$p")
		done
	done
	cp -L -- "${reals[@]}" "$T/root/run/nightshift-real/" 2>/dev/null
	# /dev/pts, /dev/shm and the recorder's binds, all by one mount
	# process (mount -a over a table of them, in order; one that fails
	# does not stop the others, and none stops the trial, as before).
	{
		fstab_line devpts "$T/root/dev/pts" devpts newinstance,ptmxmode=0666,mode=620
		fstab_line tmpfs "$T/root/dev/shm" tmpfs mode=1777,nosuid,nodev
		local -a bound=()
		local b same
		for p in "${binds[@]}"; do
			same=0
			for b in "${bound[@]}"; do
				if [ "$p" -ef "$b" ]; then
					same=1
					break
				fi
			done
			[ $same = 1 ] || {
				bound+=("$p")
				fstab_line "$stub" "$p" none bind
			}
		done
	} >"$T/fstab.stubs"
	if ! mount -a -T "$T/fstab.stubs" 2>/dev/null; then
		# A mount without -T, or an entry that failed: each bind on its
		# own where it is missing.
		for p in "${bound[@]}"; do
			mounted "$p" || mount --bind "$stub" "$p" 2>/dev/null
		done
	fi
	# The table of the read-only binds under the command's /proc (those its
	# kernel has), for the command's own mount namespace.
	for p in /proc/sys /proc/sysrq-trigger /proc/irq /proc/bus /proc/fs /proc/acpi; do
		[ ! -e "$p" ] || fstab_line "$p" "$p" none bind,ro,nosuid,nodev,noexec
	done >"$T/root/run/nightshift-fstab"
	# The command: its own PID namespace (everything it starts ends with it),
	# its own mount namespace whose root is the sandbox (pivot_root, the old
	# root detached), a fresh /proc with /proc/sys read-only, and a bounding
	# set without the capabilities that reach past the file systems.
	local cmd start=$SECONDS
	cmd=$(<"$T/cmd") || die "read the command"
	timeout --kill-after=5 "$secs" unshare --pid --fork --kill-child --mount --propagation private -- \
		bash -c '
		M=/run/nightshift-real/mount U=/run/nightshift-real/umount
		# Any step that fails stops here: the command never runs outside
		# the pivoted root or with a writable /proc/sys.
		# Where a fresh proc is refused (a user namespace whose /proc has
		# locked read-only parts), the host'"'"'s /proc is bound instead.
		mkdir "$1/run/nightshift-old" && cd "$1" && pivot_root . run/nightshift-old && cd / &&
			{ $M -t proc -o nosuid,nodev,noexec proc /proc 2>/dev/null || $M --rbind /run/nightshift-old/proc /proc; } &&
			$U -l /run/nightshift-old && rmdir /run/nightshift-old || exit 96
		if ! $M -a -T /run/nightshift-fstab 2>/dev/null; then
			for p in /proc/sys /proc/sysrq-trigger /proc/irq /proc/bus /proc/fs /proc/acpi; do
				[ ! -e "$p" ] || $M -o bind,ro "$p" "$p" || { $M --bind "$p" "$p" && $M -o remount,bind,ro "$p"; } || exit 96
			done
		fi
		: >/run/nightshift-actions
		cmd=$3
		cd /root 2>/dev/null || cd /
		umask 022
		exec setpriv --bounding-set "$2" --inh-caps=-all -- env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash \
			PATH=/run/nightshift-stubs:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 TERM=dumb \
			DEBIAN_FRONTEND=noninteractive bash -c "$cmd"' bash "$T/root" "$DROPCAPS" "$cmd" \
		</dev/null >"$T/out/stdout" 2>"$T/out/stderr"
	local rc=$?
	if { [ $rc = 124 ] || [ $rc = 137 ]; } && [ $((SECONDS - start)) -ge "$secs" ]; then
		echo timeout >"$T/out/exit"
	else
		echo $rc >"$T/out/exit"
	fi
	: >"$T/out/actions"
	[ ! -s "$T/root/run/nightshift-actions" ] || cp "$T/root/run/nightshift-actions" "$T/out/actions" 2>/dev/null
	# The facts for the judge read the trial's files (sshd's configuration,
	# the PAM stacks): bounded like the command, in a process of their own,
	# so that a file that blocks its reader (a FIFO the command made where
	# sshd or PAM reads) cannot hold the trial past its timeout. A fact
	# step that did not finish is reported as a failed sshd -t.
	timeout --kill-after=2 "$secs" bash "$0" judgefacts "$T" </dev/null
	rc=$?
	if [ $rc != 0 ]; then
		printf 'nightshift-sandbox: reading the configuration the command left did not finish within %ss (exit %s): a file sshd or PAM reads blocks its reader (a FIFO?)\nexit %s\n' "$secs" "$rc" "$rc" >"$T/out/sshd_t"
		[ -e "$T/out/sshd_T" ] || : >"$T/out/sshd_T"
		for f in parse pam shadows origin; do [ -e "$T/out/$f" ] || : >"$T/out/$f"; done
	fi
	# Gathering is bounded too: a command that touched more than can be
	# listed and hashed in the command's own time is reported as timed out
	# (and so discarded), never left running on the host.
	timeout --kill-after=5 "$secs" bash "$0" gather "$T"
	rc=$?
	case $rc in 0 | 124 | 137) ;; *) die "gathering the effects failed (exit $rc)" ;; esac
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		echo timeout >"$T/out/exit"
		: >"$T/out/upper"
		: >"$T/out/lower"
		: >"$T/out/deleted"
		: >"$T/out/diffs"
		if [ -e "$T/out/stdout.full" ]; then
			head -c "$OUTCAP" "$T/out/stdout.full" >"$T/out/stdout"
			head -c "$OUTCAP" "$T/out/stderr.full" >"$T/out/stderr"
			echo 0 >"$T/out/stdout_cut"
			echo 0 >"$T/out/stderr_cut"
			rm -f "$T/out/stdout.full" "$T/out/stderr.full"
		fi
		echo "the sandbox could not gather the command's effects within ${secs}s; nothing was applied" >>"$T/out/stderr"
	fi
	# Every step above ran: try reports the trial only with this mark (an
	# inner that stopped half-way would report a command without its
	# effects).
	: >"$T/out/done"
}

# judge_facts writes what the judge reads besides the file changes: sshd's
# view, the PAM facts, the shadowing programs and the worker's address.
judge_facts() {
	sshd_checks "$1"
	parse_checks "$1"
	pam_facts "$1"
	shadow_facts "$1"
	origin_fact "$1"
}

# client_addr sets ADDR to the worker's client address as sshd saw it:
# SSH_CLIENT's first field, or, under sudo (whose env_reset drops it), that
# of the nearest ancestor process that has it (the login's own shell);
# empty when none does.
client_addr() {
	local pid=$$ i kv st
	ADDR=${SSH_CLIENT:-}
	for ((i = 0; i < 16; i++)); do
		[ -z "$ADDR" ] || break
		IFS= read -r st </proc/$pid/stat 2>/dev/null || break
		st=${st##*) } # "STATE PPID …" after the command's name
		st=${st#* }
		pid=${st%% *}
		case "$pid" in '' | *[!0-9]* | 0 | 1) break ;; esac
		while IFS= read -r -d '' kv; do
			case "$kv" in SSH_CLIENT=*) ADDR=${kv#SSH_CLIENT=} && break ;; esac
		done </proc/$pid/environ 2>/dev/null
	done
	ADDR=${ADDR%% *}
}

# sshd_checks evaluates, in the sandbox's root after the command, sshd's
# configuration test and its effective configuration for the worker's own
# login (user, client address), when the command touched /etc/ssh.
sshd_checks() {
	local T=$1 user addr
	: >"$T/out/sshd_t"
	: >"$T/out/sshd_T"
	[ -d "$T/u/0/etc/ssh" ] || [ -e "$T/u/0/etc/ssh" ] || return 0
	[ -x "$T/root/usr/sbin/sshd" ] || return 0
	user=${NIGHTSHIFT_LOGIN:-${SUDO_USER:-$(id -un)}}
	client_addr
	addr=${ADDR:-127.0.0.1}
	# A file in /etc/ssh that is not a regular file, a directory or a
	# symbolic link (a FIFO, a socket, a device) is never opened here: sshd
	# would block on it or fail, at the next restart as here.
	local odd
	odd=$(find "$T/root/etc/ssh" -xdev ! -type f ! -type d ! -type l -printf '%y /etc/ssh/%P\n' 2>/dev/null | head -n 5 |
		sed -e 's/^p /a FIFO /;t' -e 's/^s /a socket /;t' -e 's/^[cb] /a device /;t' -e 's/^[^ ]* /a special file /' | tr '\n' ',')
	if [ -n "$odd" ]; then
		odd=${odd%,}
		printf 'nightshift-sandbox: /etc/ssh holds what is not a regular file (%s): sshd would block or fail reading it\nexit 1\n' "${odd//,/, }" >"$T/out/sshd_t"
		printf 'login %s\n' "$user" >>"$T/out/sshd_T"
		return 0
	fi
	# The trial's sshd runs chrooted but as root beside the host: not when
	# the command changed programs, libraries or the loader's
	# configuration (it could have replaced sshd or what sshd loads).
	# Failed closed: without sshd's view the change to /etc/ssh cannot be
	# judged.
	if parse_touched "$T" $PROGRAM_PATHS; then
		printf 'nightshift-sandbox: sshd -t was not run: the command changed /etc/ssh and also programs, libraries or the loader'"'"'s configuration, and the trial'"'"'s programs run only inside the sandbox (change /etc/ssh in a command of its own)\nexit 1\n' >"$T/out/sshd_t"
		printf 'login %s\n' "$user" >>"$T/out/sshd_T"
		return 0
	fi
	# sshd wants its privilege-separation directory; one made here (the
	# trial's /run is recorded) is removed again before the gathering.
	local madesshd=0
	[ -d "$T/root/run/sshd" ] || { mkdir "$T/root/run/sshd" && madesshd=1; }
	# Bounded anyway: an Include can name a FIFO outside /etc/ssh.
	timeout --kill-after=1 "$SSHD_SECS" chroot "$T/root" /usr/sbin/sshd -t </dev/null >"$T/out/sshd_t" 2>&1
	local rc=$?
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		echo "nightshift-sandbox: sshd -t did not finish within ${SSHD_SECS}s: it reads a file that blocks its reader (a FIFO?)" >>"$T/out/sshd_t"
	fi
	echo "exit $rc" >>"$T/out/sshd_t"
	timeout --kill-after=1 "$SSHD_SECS" chroot "$T/root" /usr/sbin/sshd -T -C "user=$user,host=$addr,addr=$addr" </dev/null >"$T/out/sshd_T" 2>/dev/null || : >"$T/out/sshd_T"
	printf 'login %s\n' "$user" >>"$T/out/sshd_T"
	[ $madesshd = 0 ] || rmdir -- "$T/root/run/sshd" 2>/dev/null
}

# parse_checks writes T/out/parse: for each configuration the command
# changed whose own program has an offline syntax check, that check run on
# the host's view (before) and on the trial's (after), when the program is
# there. Records of six NUL-terminated fields: PROGRAM FILE BEFORE AFTER
# BEFORE_MESSAGE AFTER_MESSAGE, BEFORE and AFTER "1" (parsed, or nothing
# to parse) or "0", AFTER "-" when the trial's side was not checked (its
# message says why), a message only for a side that failed.
#   visudo -c                      /etc/sudoers with its includes
#   apt-config dump                /etc/apt/apt.conf and apt.conf.d
#   apt-get ... indextargets       sources.list and sources.list.d (parsed
#                                  without network, lock or cache writes)
parse_checks() {
	local T=$1
	: >"$T/out/parse"
	if parse_touched "$T" /etc/sudoers /etc/sudoers.d; then
		parse_one "$T" /usr/sbin/visudo /etc/sudoers "/etc/sudoers /etc/sudoers.d" visudo -c
	fi
	if parse_touched "$T" /etc/apt/apt.conf /etc/apt/apt.conf.d; then
		parse_one "$T" /usr/bin/apt-config /etc/apt/apt.conf.d "/etc/apt/apt.conf /etc/apt/apt.conf.d" apt-config dump
	fi
	if parse_touched "$T" /etc/apt/sources.list /etc/apt/sources.list.d; then
		parse_one "$T" /usr/bin/apt-get /etc/apt/sources.list.d "/etc/apt/sources.list /etc/apt/sources.list.d" \
			apt-get -o Debug::NoLocking=1 -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= indextargets
	fi
}

# parse_touched T PATH... says whether the command changed (made, changed,
# deleted) any of PATH or what is under them: the root overlay's upper
# layer holds it.
parse_touched() {
	local T=$1 p
	shift
	for p in "$@"; do
		if [ -e "$T/u/0$p" ] || [ -L "$T/u/0$p" ]; then return 0; fi
	done
	return 1
}

# parse_one T BIN FILE WATCHED ARGV... runs ARGV (BIN is its program) on
# the host's view and, chrooted, on the trial's, each under PARSE_SECS,
# and appends the record; none when the trial has no BIN. A host without
# BIN parsed (nothing there read FILE). In the trial, a WATCHED path that holds what is not a regular
# file, a directory or a symbolic link (a FIFO blocks its reader) fails
# without running the program. Only a failure's output is kept (its first
# lines: apt-config dump prints the whole configuration when it parses,
# proxy passwords included).
parse_one() {
	local T=$1 bin=$2 file=$3 watched=$4 before=1 after=1 bmsg= amsg= odd w
	shift 4
	# No program in the trial: nothing there reads FILE, no record.
	[ -x "$T/root$bin" ] || return 0
	if [ -x "$bin" ]; then
		parse_run "" "$bin" "${@:2}" && before=1 || { before=0 && bmsg=$MSG; }
	fi
	if parse_touched "$T" $PROGRAM_PATHS; then
		# The trial's programs are not run outside the sandbox: a command
		# that changed them (or the loader's configuration) could run
		# its own code here, as root beside the host.
		after=- amsg="not checked: the command changed programs, libraries or the loader's configuration, which are run only inside the sandbox"
	else
		odd=
		for w in $watched; do
			[ -e "$T/root$w" ] || continue
			odd=$odd$(find "$T/root$w" -xdev ! -type f ! -type d ! -type l -printf "%y $w/%P\n" 2>/dev/null | head -n 3 |
				sed -e 's/^p /a FIFO /;t' -e 's/^s /a socket /;t' -e 's/^[cb] /a device /;t' -e 's/^[^ ]* /a special file /' -e 's,/$,,' | tr '\n' ',')
		done
		if [ -n "$odd" ]; then
			odd=${odd%,}
			after=0 amsg="nightshift-sandbox: what $1 reads holds what is not a regular file (${odd//,/, }): it would block or fail reading it"
		else
			parse_run "$T/root" "$bin" "${@:2}" && after=1 || { after=0 && amsg=$MSG; }
		fi
	fi
	printf '%s\0%s\0%s\0%s\0%s\0%s\0' "$*" "$file" "$before" "$after" "$bmsg" "$amsg" >>"$T/out/parse"
}

# parse_run ROOT ARGV... runs ARGV (chrooted in ROOT unless it is empty)
# under PARSE_SECS; on failure MSG is its first lines (NULs dropped).
parse_run() {
	local root=$1 rc
	shift
	MSG=
	if [ -n "$root" ]; then
		timeout --kill-after=1 "$PARSE_SECS" chroot "$root" "$@" </dev/null >"$T/out/parse.run" 2>&1
	else
		timeout --kill-after=1 "$PARSE_SECS" "$@" </dev/null >"$T/out/parse.run" 2>&1
	fi
	rc=$?
	[ $rc != 0 ] || { rm -f "$T/out/parse.run"; return 0; }
	MSG=$(head -n 8 "$T/out/parse.run" | head -c 2000 | tr -d '\000')
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		MSG="$MSG${MSG:+$'\n'}nightshift-sandbox: ${1##*/} did not finish within ${PARSE_SECS}s: it reads a file that blocks its reader (a FIFO?)"
	fi
	[ -n "$MSG" ] || MSG="${1##*/} exited $rc"
	rm -f "$T/out/parse.run"
	return 1
}

# pam_touched says whether the command changed what Linux-PAM reads:
# /etc/pam.d, /etc/security, /etc/securetty, /etc/nologin, a module
# directory, or a file a PAM line names with file=, accessfile= or
# conffile= (one grep; most commands change none, and skip the rest).
pam_touched() {
	local T=$1 f
	for f in "$T"/u/0/etc/pam.d "$T"/u/0/etc/security "$T"/u/0/etc/securetty "$T"/u/0/etc/nologin \
		"$T"/u/0/lib/security "$T"/u/0/lib64/security "$T"/u/0/usr/lib/security "$T"/u/0/usr/lib64/security \
		"$T"/u/0/lib/*/security "$T"/u/0/usr/lib/*/security; do
		if [ -e "$f" ] || [ -L "$f" ]; then return 0; fi
	done
	while IFS= read -r f; do
		if [ -e "$T/u/0$f" ] || [ -L "$T/u/0$f" ]; then return 0; fi
	done < <(grep -D skip -hoE '(file|accessfile|conffile)=/[^[:space:]]+' "$T"/root/etc/pam.d/* 2>/dev/null | sed 's/^[a-z]*=//')
	return 1
}

# pam_facts writes T/out/pam when the command changed what Linux-PAM
# reads (pam_touched): what Linux-PAM reads for a login, in the host's view
# (before) and the trial's (after), for the worker to evaluate the login's
# PAM stacks on both, and who the login is. Lines:
#   file VIEW PATH        then the file's lines, each after "|"
#   module VIEW NAME 0|1  whether a module a PAM line names exists
#   login USER / groups USER GROUP...
pam_facts() {
	local T=$1 user
	: >"$T/out/pam"
	pam_touched "$T" || return 0
	{
		pam_view "" before
		pam_view "$T/root" after
		user=${NIGHTSHIFT_LOGIN:-${SUDO_USER:-$(id -un)}}
		printf 'login %s\n' "$user"
		printf 'groups %s %s\n' "$user" "$(id -Gn -- "$user" 2>/dev/null)"
		printf 'groups root %s\n' "$(id -Gn root 2>/dev/null)"
	} >"$T/out/pam" 2>/dev/null
}

# origin_fact writes T/out/origin: the worker's address as sshd sees it,
# from this session's SSH_CONNECTION or the nearest ancestor's (sudo drops
# it from the environment); empty when unknown.
origin_fact() {
	client_addr
	printf '%s' "$ADDR" >"$1/out/origin"
}

# pam_view ROOT VIEW prints the PAM files and modules of the tree at ROOT
# ("" for the host's own) as pam_facts describes; one awk for everything.
pam_view() {
	local root=$1 view=$2 f d dirs= extra=
	local -a files=()
	for f in "$root"/etc/pam.d/*; do
		[ -f "$f" ] && files+=("$f")
	done
	for f in "$root"/etc/security/limits.d/*.conf; do
		[ -f "$f" ] && extra="$extra:${f#"$root"}"
	done
	for d in "$root"/lib/security "$root"/lib64/security "$root"/usr/lib/security "$root"/usr/lib64/security "$root"/lib/*/security "$root"/usr/lib/*/security; do
		[ -d "$d" ] && dirs="$dirs:${d#"$root"}"
	done
	[ ${#files[@]} -gt 0 ] || files=(/dev/null)
	# The files named below that exist but are not regular files (a FIFO
	# blocks its reader): never opened, as if absent.
	local special=
	while IFS= read -r f; do
		if { [ -e "$root$f" ] || [ -L "$root$f" ]; } && [ ! -f "$root$f" ]; then special="$special$f"$'\n'; fi
	done < <(printf '%s\n' /etc/security/access.conf /etc/security/time.conf /etc/security/limits.conf /etc/security/group.conf /etc/securetty /etc/nologin
		printf '%s\n' "${extra//:/$'\n'}"
		grep -D skip -hoE '(file|accessfile|conffile)=/[^[:space:]]+' "${files[@]}" 2>/dev/null | sed 's/^[a-z]*=//')
	NS_SPECIAL=$special awk -v root="$root" -v view="$view" -v dirs="$dirs" -v extra="$extra" '
	BEGIN { ns = split(ENVIRON["NS_SPECIAL"], sp, "\n"); for (k = 1; k <= ns; k++) if (sp[k] != "") special[sp[k]] = 1 }
	function emit(p,   f, line, r, n) {
		if (p == "" || p in seen || p in special) return
		seen[p] = 1
		f = root p
		if ((r = (getline line < f)) < 0) return
		printf "file %s %s\n", view, p
		n = 0
		while (r > 0) { if (n++ < 4000) print "|" line; r = (getline line < f) }
		close(f)
	}
	function exists(m,   n, d, i, f, junk) {
		if (substr(m, 1, 1) == "/") { f = root m; if ((getline junk < f) < 0) return 0; close(f); return 1 }
		n = split(dirs, d, ":")
		for (i = 1; i <= n; i++) {
			if (d[i] == "") continue
			f = root d[i] "/" m
			if ((getline junk < f) >= 0) { close(f); return 1 }
		}
		return 0
	}
	FILENAME == "/dev/null" { next }
	FNR == 1 { p = substr(FILENAME, length(root) + 1); seen[p] = 1; printf "file %s %s\n", view, p }
	{
		print "|" $0
		line = $0; sub(/#.*/, "", line)
		n = split(line, w, " ")
		if (n < 2 || w[1] ~ /^@/) next
		i = 2
		if (substr(w[2], 1, 1) == "[") { while (i < n && w[i] !~ /\]$/) i++ }
		i++
		if (i > n || w[i - 1] == "include" || w[i - 1] == "substack") next
		mods[w[i]] = 1
		for (j = i + 1; j <= n; j++) if (w[j] ~ /^(file|accessfile|conffile)=\//) { sub(/^[a-z]*=/, "", w[j]); refs[w[j]] = 1 }
	}
	END {
		for (k = 1; k < ARGC; k++) {
			p = substr(ARGV[k], length(root) + 1)
			if (ARGV[k] != "/dev/null" && !(p in seen)) { seen[p] = 1; printf "file %s %s\n", view, p }
		}
		n = split("/etc/security/access.conf /etc/security/time.conf /etc/security/limits.conf /etc/security/group.conf /etc/securetty /etc/nologin", fixed, " ")
		for (k = 1; k <= n; k++) emit(fixed[k])
		n = split(extra, fixed, ":")
		for (k = 1; k <= n; k++) emit(fixed[k])
		for (p in refs) emit(p)
		for (m in mods) printf "module %s %s %d\n", view, m, exists(m)
	}' "${files[@]}"
}

# shadow_facts writes T/out/shadows: for each program the command created
# or changed in /usr/local/sbin or /usr/local/bin, "PATH\0SYSTEM\0" when a
# system program of the same name (in /usr/sbin, /usr/bin, /sbin or /bin)
# is further down root's PATH.
shadow_facts() {
	local T=$1 d f name s
	: >"$T/out/shadows"
	for d in usr/local/sbin usr/local/bin; do
		[ -d "$T/u/0/$d" ] || continue
		for f in "$T/u/0/$d"/* "$T/u/0/$d"/.[!.]*; do
			{ [ -e "$f" ] || [ -L "$f" ]; } || continue
			[ ! -c "$f" ] || continue # a whiteout: deleted
			name=${f##*/}
			for s in /usr/sbin /usr/bin /sbin /bin; do
				if [ -e "$s/$name" ] || [ -L "$s/$name" ]; then
					printf '/%s/%s\0%s/%s\0' "$d" "$name" "$s" "$name"
					break
				fi
			done
		done
	done >>"$T/out/shadows"
}

# gather lists, for every overlay, its upper layer with metadata and hashes,
# the lower side of the same paths, the deleted trees and the diffs.
gather() {
	local T=$1 n kind mp u lower m
	: >"$T/out/upper"
	: >"$T/out/lower"
	: >"$T/out/deleted"
	: >"$T/out/diffs"
	while read -r n kind mp; do
		u=$T/u/$n
		[ -d "$u" ] || continue
		if [ "$n" = 0 ]; then m=$T/root; else m=$T/root$mp; fi
		case "$kind" in
		overlay) (gather_overlay "$T" "$n" "$mp" "$u" "$m") ;;
		run) (gather_overlay "$T" "$n" "$T/runlow" "$u" "$m" /run) ;;
		esac
	done <"$T/mounts"
	# Output past OUTCAP is cut (the bytes cut are counted).
	local -a sz=()
	local s k=0
	mapfile -t sz < <(stat -c %s -- "$T/out/stdout" "$T/out/stderr")
	for s in stdout stderr; do
		if [ "${sz[k]:-0}" -gt "$OUTCAP" ]; then
			head -c "$OUTCAP" "$T/out/$s" >"$T/out/$s.cut" && mv -f -- "$T/out/$s.cut" "$T/out/$s"
			echo $((sz[k] - OUTCAP)) >"$T/out/${s}_cut"
		else
			echo 0 >"$T/out/${s}_cut"
		fi
		k=$((k + 1))
	done
}

# facts reads find's -printf '%y|%m|%U|%G|%s\0%l\0' records on stdin into
# FACTS (stat -c '%F|%a|%u|%g|%s' forms) and TARGETS (link targets): the
# same facts as stat and readlink, one process in all. With the argument
# "paths", each record starts with its path ('%p\0'), read into PATHS.
# (Plain arrays and read -d, not namerefs or mapfile -d: bash 4.2 has
# neither.)
facts() {
	FACTS=()
	TARGETS=()
	PATHS=()
	local y rest t p
	while { [ "${1-}" != paths ] || { IFS= read -r -d '' p && PATHS+=("$p"); }; } && IFS= read -r -d '' y && IFS= read -r -d '' t; do
		rest=${y#?|}
		case "${y:0:1}" in
		f) if [ "${rest##*|}" = 0 ]; then y="regular empty file|$rest"; else y="regular file|$rest"; fi ;;
		d) y="directory|$rest" ;;
		l) y="symbolic link|$rest" ;;
		c) y="character special file|$rest" ;;
		b) y="block special file|$rest" ;;
		p) y="fifo|$rest" ;;
		s) y="socket|$rest" ;;
		*) y="unknown|$rest" ;;
		esac
		FACTS+=("$y")
		TARGETS+=("$t")
	done
}

# MANY is how many paths go to one find or sha256sum directly; past it
# they go through xargs (the argument list's limit).
MANY=512

# lstat_facts PATH... prints find's facts records of the paths (absolute:
# never taken for find's options).
lstat_facts() {
	if [ $# -le $MANY ]; then
		find "$@" -maxdepth 0 -printf '%y|%m|%U|%G|%s\0%l\0'
	else
		printf '%s\0' "$@" | xargs -0 sh -c 'exec find "$@" -maxdepth 0 -printf "%y|%m|%U|%G|%s\0%l\0"' sh
	fi
}

# hashes FILE... sets HASHES to the files' sha256 sums, in order (one
# sha256sum for a batch; a name with a newline or a backslash gets a
# leading backslash on its line, dropped here).
hashes() {
	HASHES=()
	[ $# -gt 0 ] || return 0
	local l
	while IFS= read -r l; do
		l=${l#\\}
		HASHES+=("${l:0:64}")
	done < <(if [ $# -le $MANY ]; then sha256sum -- "$@"; else printf '%s\0' "$@" | xargs -0 sha256sum --; fi)
	[ ${#HASHES[@]} -eq $# ] || die "hash $# files: ${#HASHES[@]} sums"
}

# gather_overlay T N LOWER UPPER MERGED [MOUNTPOINT] appends overlay N's
# records to T/out/{upper,lower,deleted,diffs}; LOWER is the mount point
# itself but for /run, whose lower layer is the copy taken at the start
# (MOUNTPOINT /run names it in the diffs; the helper's own top-level
# entries there, nightshift, nightshift-* and user, are not listed). Facts are gathered in batches (one
# find and one sha256sum for each side, one stat for whiteouts), so the
# cost grows with the number of paths, not of processes; only changed
# text files each take a diff.
gather_overlay() {
	local T=$1 n=$2 lower=$3 u=$4 m=$5 label=${6:-$3} i k p q c cnt h
	cd "$u" || return 0
	local -a P=() UT=() US=() UH=() UR=() PF=() PFI=() CD=() CDI=() skip=()
	[ "$label" != /run ] || skip=(\( -path ./nightshift -o -path './nightshift-*' -o -path ./user \) -prune -o)
	# The upper layer's paths and their facts in one walk.
	facts paths < <(find . -mindepth 1 ${skip[@]+"${skip[@]}"} -printf '%p\0%y|%m|%U|%G|%s\0%l\0')
	[ ${#PATHS[@]} -gt 0 ] || return 0
	P=("${PATHS[@]}")
	US=("${FACTS[@]}")
	UT=("${TARGETS[@]}")
	[ ${#US[@]} -eq ${#P[@]} ] || die "list the upper layer of $lower: ${#US[@]} of ${#P[@]} paths"
	for i in "${!P[@]}"; do
		UR[i]='- -'
		UH[i]=-
		case "${US[i]}" in
		"regular file|"* | "regular empty file|"*) PF+=("${P[i]}") PFI+=("$i") ;;
		"character special file|"*) CD+=("${P[i]}") CDI+=("$i") ;;
		esac
	done
	hashes "${PF[@]}"
	for k in "${!PFI[@]}"; do UH[${PFI[k]}]=${HASHES[k]}; done
	if [ ${#CD[@]} -gt 0 ]; then
		local -a rd=()
		while IFS= read -r -d '' p; do rd+=("$p"); done < <(printf '%s\0' "${CD[@]}" | xargs -0 stat --printf '%t %T\0' --)
		[ ${#rd[@]} -eq ${#CD[@]} ] || die "stat the whiteouts of $lower"
		for k in "${!CDI[@]}"; do UR[${CDI[k]}]=${rd[k]}; done
	fi
	for i in "${!P[@]}"; do
		printf '%s\0%s %s\0%s\0%s\0%s\0' "$n" "${US[i]}" "${UR[i]}" "${UH[i]}" "${UT[i]}" "${P[i]#./}"
	done >>"$T/out/upper"

	# The lower side of the same paths.
	local -a LI=() LQ=() LS=() LT=() LH=() LF=() LFI=()
	for i in "${!P[@]}"; do
		q=$lower/${P[i]#./}
		[ "$lower" = / ] && q=/${P[i]#./}
		if [ -e "$q" ] || [ -L "$q" ]; then
			LI+=("$i")
			LQ+=("$q")
		fi
	done
	if [ ${#LQ[@]} -gt 0 ]; then
		facts < <(lstat_facts "${LQ[@]}")
		LS=("${FACTS[@]}")
		LT=("${TARGETS[@]}")
		[ ${#LS[@]} -eq ${#LQ[@]} ] || die "list the lower side of $lower: ${#LS[@]} of ${#LQ[@]} paths"
		for k in "${!LQ[@]}"; do
			LH[k]=-
			case "${LS[k]}" in
			"regular file|"* | "regular empty file|"*) LF+=("${LQ[k]}") LFI+=("$k") ;;
			esac
		done
		hashes "${LF[@]}"
		for k in "${!LFI[@]}"; do LH[${LFI[k]}]=${HASHES[k]}; done
	fi
	shopt -s nullglob dotglob
	local -A lowerKind=()
	for k in "${!LQ[@]}"; do
		i=${LI[k]} q=${LQ[k]} p=${P[i]}
		lowerKind[$i]=${LS[k]%%|*}
		c=-
		if [ "${LS[k]%%|*}" = directory ] && [ "${US[i]%%|*}" = "character special file" ]; then
			c=$(find "$q" -xdev -mindepth 1 | wc -l)
		fi
		printf '%s\0%s\0%s\0%s\0%s\0%s\0' "$n" "${LS[k]}" "${LH[k]}" "${LT[k]}" "$c" "${p#./}" >>"$T/out/lower"
		# A directory replaced or emptied: its lower entries the merged
		# view no longer has are deleted.
		if [ "${LS[k]%%|*}" = directory ] && [ -d "$p" ]; then
			local e base
			for e in "$q"/*; do
				base=${e##*/}
				if [ ! -e "$m/${p#./}/$base" ] && [ ! -L "$m/${p#./}/$base" ]; then
					cnt=-
					if [ -d "$e" ] && [ ! -L "$e" ]; then cnt=$(find "$e" -xdev -mindepth 1 | wc -l); fi
					printf '%s\0%s\0%s\0%s\0' "$n" "${p#./}/$base" "$(hashof "$e")" "$cnt" >>"$T/out/deleted"
				fi
			done
		fi
	done
	shopt -u nullglob dotglob

	# Diffs of the regular files that are text-sized on both sides.
	local -A lowerSize=()
	for k in "${!LQ[@]}"; do
		case "${LS[k]}" in
		"regular file|"* | "regular empty file|"*) lowerSize[${LI[k]}]=${LS[k]##*|} ;;
		esac
	done
	local old size ctx
	for k in "${!PFI[@]}"; do
		i=${PFI[k]} p=${P[i]}
		q=$lower/${p#./}
		[ "$lower" = / ] && q=/${p#./}
		[ "${lowerKind[$i]-}" != "symbolic link" ] || continue
		size=${US[i]##*|}
		[ "$size" -le "$DIFFCAP" ] || continue
		[ -z "${lowerKind[$i]-}" ] || [ -z "${lowerSize[$i]-}" ] || [ "${lowerSize[$i]}" -le "$DIFFCAP" ] || continue
		old=$q
		[ -n "${lowerSize[$i]-}" ] || old=/dev/null
		printf '%s\0%s\0' "$n" "${p#./}"
		# Small files judged by their whole contents (a line that must
		# stay, like localhost in /etc/hosts) get a diff with every line.
		ctx=3
		case "$lower$p" in
		/./etc/hosts | /./etc/hosts.allow | /./etc/hosts.deny | /./etc/hostname | /./etc/fstab) ctx=100000 ;;
		# The alternatives database: the judge checks a link against the
		# choices registered for it.
		/./var/lib/dpkg/alternatives/*) ctx=100000 ;;
		esac
		diff -U "$ctx" --label "a${label%/}/${p#./}" --label "b${label%/}/${p#./}" -- "$old" "$p" 2>&1 | head -c "$DIFFCAP"
		printf '\0'
	done >>"$T/out/diffs"
}

try() {
	local id=$1 secs=$2 T
	T=$RUNBASE/$id
	gc
	stubs_cache
	mkdir -p "$T" || die "mkdir $T"
	mounted "$T" || mount -t tmpfs -o "size=$TMPFS_SIZE,mode=700" nightshift-sandbox "$T" || die "tmpfs $T"
	base64 -d >"$T/cmd" 2>/dev/null || die "decode the command"
	plan_mounts "$T"
	# The whole trial is bounded too: the command, the facts and the
	# gathering each get SECONDS, the mounts the rest.
	timeout --kill-after=5 $((3 * secs + 30)) unshare --mount --uts --ipc --propagation private -- bash "$0" inner "$T" "$secs" </dev/null >"$T/inner.log" 2>&1
	local rc=$?
	[ -d "$T/out" ] || mkdir -p "$T/out"
	if [ $rc -ne 0 ] || [ ! -e "$T/out/done" ]; then
		echo "$rc" >"$T/out/failed"
		{ echo "nightshift-sandbox: the sandbox stopped before it had gathered the command's effects (exit $rc)"; cat "$T/inner.log"; } >&2
	fi
	local -a secs=()
	for s in exit stdout stderr stdout_cut stderr_cut actions upper lower deleted diffs sshd_t sshd_T parse pam shadows origin; do
		[ -e "$T/out/$s" ] || : >"$T/out/$s"
		secs+=("$s" "$T/out/$s")
	done
	sections "$T" "${secs[@]}" mounts "$T/mounts" log "$T/inner.log" >"$T/report"
	cat "$T/report"
	[ ! -e "$T/out/failed" ] || exit 97
}

# STUBS is where try keeps the recorder and its links for every trial of
# this helper (the helper's file name is its content's hash).
STUBS=/run/nightshift/stubs-${0##*/}

# stubs_cache makes STUBS once: nightshift-stub (the recorder),
# nightshift-stubs/NAME -> /run/nightshift-stub for each recorded name, an
# empty nightshift-actions (0666) and nightshift-real directory, and dev/,
# the sandbox's /dev skeleton.
stubs_cache() {
	local tmp name
	[ -x "$STUBS/nightshift-stub" ] && [ -d "$STUBS/nightshift-stubs" ] && [ -L "$STUBS/dev/stderr" ] && return 0
	mkdir -p /run/nightshift || die "mkdir /run/nightshift"
	tmp=$(mktemp -d /run/nightshift/stubs.XXXXXX) || die "mktemp in /run/nightshift"
	write_stub "$tmp/nightshift-stub"
	mkdir "$tmp/nightshift-stubs" "$tmp/nightshift-real" "$tmp/dev" "$tmp/dev/pts" "$tmp/dev/shm" || die "mkdir in $tmp"
	: >"$tmp/nightshift-actions"
	chmod 0666 "$tmp/nightshift-actions"
	chmod 0755 "$tmp/dev"
	for d in "null 1 3" "zero 1 5" "full 1 7" "random 1 8" "urandom 1 9" "tty 5 0"; do
		set -- $d
		mknod -m 666 "$tmp/dev/$1" c "$2" "$3" 2>/dev/null || : >"$tmp/dev/$1" || die "mknod /dev/$1"
	done
	ln -s pts/ptmx "$tmp/dev/ptmx"
	ln -s /proc/self/fd "$tmp/dev/fd"
	ln -s /proc/self/fd/0 "$tmp/dev/stdin"
	ln -s /proc/self/fd/1 "$tmp/dev/stdout"
	ln -s /proc/self/fd/2 "$tmp/dev/stderr"
	for name in $RECORDED; do
		ln -s /run/nightshift-stub "$tmp/nightshift-stubs/$name" || die "link the recorder as $name"
	done
	# Another try may have made it meanwhile: then keep theirs.
	mv -T -- "$tmp" "$STUBS" 2>/dev/null || rm -rf -- "$tmp"
	[ -x "$STUBS/nightshift-stub" ] || die "no recorder in $STUBS"
}

# gc drops trials left for more than six hours (a worker that died). It
# looks at most every ten minutes (RUNBASE/.gc holds when it last did), not
# at every try.
gc() {
	local d now last=0
	[ -d "$RUNBASE" ] || return 0
	printf -v now '%(%s)T' -1
	[ ! -r "$RUNBASE/.gc" ] || read -r last <"$RUNBASE/.gc" || last=0
	case "$last" in '' | *[!0-9]*) last=0 ;; esac
	[ $((now - last)) -ge 600 ] || return 0
	echo "$now" >"$RUNBASE/.gc"
	find "$RUNBASE" -mindepth 1 -maxdepth 1 -type d -mmin +360 -print0 2>/dev/null |
		while IFS= read -r -d '' d; do discard_dir "$d"; done
}

discard_dir() {
	umount -l "$1" 2>/dev/null
	rm -rf "$1"
}

# hashof prints a path's state as the ops name it: "-" when absent, "d" for
# a directory, "l:TARGET" for a symlink, the sha256 of a regular file, "o"
# for anything else.
hashof() {
	state_of "$1"
	printf '%s' "$STATE"
}

# state_of PATH sets STATE to what hashof prints, without a subshell of
# its own (commit and undo take one per path).
state_of() {
	if [ -L "$1" ]; then
		STATE=l:$(readlink -- "$1")
	elif [ ! -e "$1" ]; then
		STATE=-
	elif [ -d "$1" ]; then
		STATE=d
	elif [ -f "$1" ]; then
		STATE=$(sha256sum <"$1")
		STATE=${STATE%% *}
	else
		STATE=o
	fi
}

# load_mounts fills MP: overlay index -> mount point, from T/mounts.
declare -A MP=()
load_mounts() {
	local n kind mp
	while read -r n kind mp; do MP[$n]=$mp; done <"$T/mounts"
}

# realpath_of N PATH sets R to the path on the host of PATH in overlay N
# (no subshell: a commit takes one per op).
realpath_of() {
	local mp=${MP[$1]-}
	[ -n "$mp" ] || die "overlay $1 is not in the trial's mounts"
	if [ "$mp" = / ]; then R=/$2; else R=$mp/$2; fi
}

# put SRC DST PRE writes DST as the trial left SRC: a symlink as it is; a
# regular file with SRC's content, mode, owner and times, but with the
# extended attributes of PRE (the host's file before the commit, when there
# was one) and no others. The trial's layer holds the overlay's own marks
# (trusted.overlay.*, user.overlay.* in a user namespace) and whatever
# xattrs the command set, which the effects do not show and the judge never
# saw (a POSIX ACL that lets a user read /etc/shadow, a file capability):
# none of them reaches the host. A regular file the host did not have gets
# no xattrs, so no ACL (the directory's default ACL still applies).
put() {
	local src=$1 dst=$2 pre=$3 m u g
	rm -f -- "$dst" || return
	if [ -L "$src" ]; then
		cp -P --preserve=ownership,timestamps -- "$src" "$dst"
		return
	fi
	if [ ! -f "$src" ]; then
		cp -a --no-preserve=xattr -- "$src" "$dst"
		return
	fi
	if [ -f "$pre" ] && [ ! -L "$pre" ]; then
		cp -a -- "$pre" "$dst" && cat -- "$src" >"$dst" || return
	else
		cp -- "$src" "$dst" || return
	fi
	read -r m u g < <(stat -c '%a %u %g' -- "$src")
	# chown drops a file capability and the set-ID bits: only when the
	# owner changes, and before chmod.
	if [ "$(stat -c '%u %g' -- "$dst")" != "$u $g" ]; then chown -- "$u:$g" "$dst" || return; fi
	chmod -- "$m" "$dst" && touch -r "$src" -- "$dst"
}

# commit reads ops (NUL-separated fields, 5 per op): OP N PATH EXPECT META
#   W  write the upper file/symlink at PATH (EXPECT: the host's state now)
#   K  make directory PATH with META "mode uid gid"
#   A  set META on directory PATH
#   D  delete PATH (a file or a whole tree)
# Every EXPECT is checked before anything changes. Pre-images go to
# UNDOBASE/ID/pre; UNDOBASE/ID/log lists what was done, for undo.
commit() {
	local id=$1 op n p expect meta r now U
	T=$RUNBASE/$id
	U=$UNDOBASE/$id
	[ -d "$T/u" ] || die "no trial $id on this host"
	[ ! -e "$U/log" ] || die "trial $id was already committed"
	mkdir -p "$U/pre" || die "mkdir $U"
	cat >"$U/ops" || die "read the ops"
	load_mounts
	local bad=0
	while IFS= read -r -d '' op && IFS= read -r -d '' n && IFS= read -r -d '' p && IFS= read -r -d '' expect && IFS= read -r -d '' meta; do
		realpath_of "$n" "$p"
		r=$R
		[ "$expect" != "*" ] || continue
		state_of "$r"
		now=$STATE
		# A tree of /run deleted in the trial was a copy without its
		# sockets and FIFOs: one that holds any on the host is not what
		# the trial deleted.
		if [ "$now" = d ] && [ "$op" = D ] && [ "${MP[$n]}" = /run ] &&
			[ -n "$(find "$r" -xdev \( -type s -o -type p \) -print -quit 2>/dev/null)" ]; then
			now=sockets
		fi
		if [ "$now" != "$expect" ]; then
			printf 'conflict\0%s\0%s\0%s\0' "$r" "$expect" "$now"
			bad=1
		fi
	done <"$U/ops"
	if [ $bad = 1 ]; then
		rm -rf "$U"
		exit 3
	fi
	: >"$U/log"
	local i=0
	# What the commit wrote, flushed to disk at the end (the files and the
	# directories whose entries changed), not every file system.
	local -a flush=("$U" "$U/pre")
	local alltoo=0
	while IFS= read -r -d '' op && IFS= read -r -d '' n && IFS= read -r -d '' p && IFS= read -r -d '' expect && IFS= read -r -d '' meta; do
		realpath_of "$n" "$p"
		r=$R
		i=$((i + 1))
		case "$op" in
		W)
			if [ "$expect" != - ] && [ "$expect" != "*" ]; then
				mkdir -p "$U/pre/$i" && cp -a -- "$r" "$U/pre/$i/x" || die "keep the pre-image of $r"
				flush+=("$U/pre/$i/x" "$U/pre/$i")
			fi
			# The state it leaves, read from the layer before the rename: a
			# change that breaks the host's programs (ln -sfn /tmp /lib64
			# takes the dynamic loader away) must still be logged exactly,
			# or its undo would see a conflict.
			state_of "$T/u/$n/$p"
			put "$T/u/$n/$p" "$r.nightshift-new" "$U/pre/$i/x" && mv -Tf -- "$r.nightshift-new" "$r" || die "write $r"
			[ -L "$r" ] || flush+=("$r")
			flush+=("${r%/*}/")
			printf 'W\0%s\0%s\0%s\0%s\0' "$i" "$r" "$expect" "$STATE" >>"$U/log"
			;;
		K)
			set -- $meta
			mkdir -- "$r" && chmod "$1" -- "$r" && chown "$2:$3" -- "$r" || die "mkdir $r"
			flush+=("$r" "${r%/*}/")
			printf 'K\0%s\0%s\0-\0d\0' "$i" "$r" >>"$U/log"
			;;
		A)
			local old
			old=$(stat -c '%a %u %g' -- "$r")
			set -- $meta
			chmod "$1" -- "$r" && chown "$2:$3" -- "$r" || die "set mode and owner of $r"
			printf 'A\0%s\0%s\0%s\0d\0' "$i" "$r" "$old" >>"$U/log"
			;;
		D)
			mkdir -p "$U/pre/$i" && cp -a -- "$r" "$U/pre/$i/x" && rm -rf -- "$r" || die "delete $r"
			flush+=("${r%/*}/")
			alltoo=1 # a tree's pre-image: flush everything
			printf 'D\0%s\0%s\0%s\0-\0' "$i" "$r" "$expect" >>"$U/log"
			;;
		*) die "unknown op $op" ;;
		esac
	done <"$U/ops"
	# The pre-images and the log first, then what they undo: sync with
	# operands (coreutils 8.24 and later) flushes just those, in order, in
	# one process; older ones flush everything, and a failure falls back
	# to that too.
	if [ $alltoo = 1 ]; then
		sync
	else
		sync -- "$U/log" "$U/ops" "${flush[@]}" 2>/dev/null || sync
	fi
	discard_dir "$T"
	echo committed
}

# undo restores a commit's pre-images, last op first, after checking that
# every path still holds what the commit left there.
undo() {
	local id=$1 U=$UNDOBASE/$1 op i r before after now bad=0
	[ -s "$U/log" ] || die "no committed trial $id on this host"
	if [ -e "$U/undone" ]; then
		echo "nightshift-sandbox: trial $id was already undone" >&2
		exit 4
	fi
	# What each path must hold now: the state its last op left.
	local -A last=()
	local -a order=()
	while IFS= read -r -d '' op && IFS= read -r -d '' i && IFS= read -r -d '' r && IFS= read -r -d '' before && IFS= read -r -d '' after; do
		[ -n "${last[$r]+x}" ] || order+=("$r")
		last[$r]=$after
	done <"$U/log"
	for r in "${order[@]}"; do
		state_of "$r"
		now=$STATE
		if [ "$now" != "${last[$r]}" ]; then
			printf 'conflict\0%s\0%s\0%s\0' "$r" "${last[$r]}" "$now"
			bad=1
		fi
	done
	[ $bad = 0 ] || exit 3
	# Reverse the log: five fields an op.
	local -a ops=()
	while IFS= read -r -d '' op && IFS= read -r -d '' i && IFS= read -r -d '' r && IFS= read -r -d '' before && IFS= read -r -d '' after; do
		ops+=("$op" "$i" "$r" "$before")
	done <"$U/log"
	local k
	for ((k = ${#ops[@]} - 4; k >= 0; k -= 4)); do
		op=${ops[k]} i=${ops[k + 1]} r=${ops[k + 2]} before=${ops[k + 3]}
		case "$op" in
		W)
			if [ "$before" = - ] || [ "$before" = "*" ]; then
				rm -f -- "$r" || die "remove $r"
			else
				cp -a -- "$U/pre/$i/x" "$r.nightshift-old" && mv -Tf -- "$r.nightshift-old" "$r" || die "restore $r"
			fi
			;;
		K) rmdir -- "$r" || die "remove directory $r" ;;
		A)
			set -- $before
			chmod "$1" -- "$r" && chown "$2:$3" -- "$r" || die "restore mode and owner of $r"
			;;
		D) cp -a -- "$U/pre/$i/x" "$r" || die "restore $r" ;;
		esac
	done
	sync
	: >"$U/undone"
	echo undone
}

case "${1:-}" in
probe) probe ;;
try) [ $# -eq 3 ] || die "usage: try ID SECONDS"; try "$2" "$3" ;;
inner) inner "$2" "$3" ;;
gather) gather "$2" ;;
judgefacts) judge_facts "$2" ;;
commit) [ $# -eq 2 ] || die "usage: commit ID"; commit "$2" ;;
undo) [ $# -eq 2 ] || die "usage: undo ID"; undo "$2" ;;
discard) [ $# -eq 2 ] || die "usage: discard ID"; discard_dir "$RUNBASE/$2"; echo discarded ;;
*) die "usage: helper.sh probe|try|commit|undo|discard" ;;
esac
