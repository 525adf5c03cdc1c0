package safety

// The ban table. Each entry names a kind of harm; the checks in
// programs.go decide which simple commands (after every wrapper is peeled)
// and which writes belong to it. Entries cannot be removed through any
// API. The text of each entry is shown to the model in its instruction.

type entryID int

const (
	entDelete entryID = iota
	entPerms
	entFormat
	entWriteDevice
	entPower
	entFirewall
	entPassword
	entSSH
	entNetwork
	entForkBomb
	entUnanalysable
	entInterpreter
	entDeferred
	entPattern
)

type entry struct {
	id     string
	covers string // what the entry covers, for docs and ban reports
	reason string // what such a command would do
}

// briefs are the entries as the model reads them in its instruction: short,
// since every prompt carries them.
var briefs = [...]string{
	entDelete:       "rm -r, mv or find -delete of /, a system directory (/etc, /usr, /var, /boot, /root, …) or all its entries",
	entPerms:        "recursive chmod, chown, chgrp, chattr or setfacl of / or a system directory",
	entFormat:       "mkfs, mkswap of a device, wipefs, partitioning tools, mdadm --create/--zero-superblock",
	entWriteDevice:  "writing to a disk device under /dev (redirection, dd of=, tee, cp)",
	entPower:        "reboot, shutdown, halt, poweroff, init 0/6, systemctl reboot|isolate|rescue, signals to PID 1, /proc/sysrq-trigger",
	entFirewall:     "flushing the firewall or a DROP policy (iptables -F/-P, nft flush ruleset, ufw reset)",
	entPassword:     "deleting passwords (passwd -d, usermod -p '') or editing /etc/shadow directly",
	entSSH:          "stopping, disabling or killing sshd (a reload is fine), removing openssh-server",
	entNetwork:      "taking interfaces, addresses or routes down (ip link set down, ip addr flush, ifdown)",
	entForkBomb:     "fork bombs",
	entUnanalysable: "anything that cannot be checked before it runs: program names from variables or substitutions, piping into a shell, eval or sh -c of non-literal text",
	entInterpreter:  "inline interpreter code (python -c, perl -e, …), awk system(), sed's e command",
	entDeferred:     "deferred commands: at, batch, crontab, tmux, screen; cron entries are checked like commands",
}

var entries = [...]entry{
	entDelete: {"delete-system", "rm -r, mv, rsync --delete, or find -delete/-exec rm of /, a top-level system directory (/etc, /usr, /var, /boot, /root, …), all entries of one (/etc/*), or a critical path (/etc/ssh, /etc/pam.d, /usr/lib, /var/lib/dpkg, /root/.ssh, …); also when the path is a glob matching one, a relative path after cd, or not known before running",
		"deletes the operating system"},
	entPerms: {"recursive-perms", "recursive chmod, chown, chgrp, chattr, setfacl or chcon of / or of a top-level system directory (/etc, /usr, /var, …) or all its entries, or of a path not known before running",
		"breaks the permissions of the whole system"},
	entFormat: {"format-disk", "mkfs and mkfs.*, mke2fs, mkreiserfs, mkdosfs, mkntfs, mkswap of a device, wipefs, blkdiscard, partitioning tools (fdisk, sfdisk, sgdisk, gdisk, cfdisk, parted) other than listing, mdadm --create/--build/--zero-superblock, cryptsetup luksFormat/erase, pvcreate/pvremove/vgremove/lvremove, nvme format/sanitize, hdparm --security-erase, badblocks -w",
		"wipes or reformats disks"},
	entWriteDevice: {"write-device", "writing to a device under /dev (except /dev/null, /dev/tty, /dev/stdout, /dev/fd/…) by redirection, dd of=, tee, cp, install, truncate, shred, ddrescue or script's log",
		"overwrites a disk"},
	entPower: {"power", "reboot, shutdown, halt, poweroff, kexec, init/telinit 0|1|6|s, systemctl reboot|poweroff|halt|kexec|soft-reboot|rescue|emergency|isolate|suspend|hibernate or starting their targets, loginctl and D-Bus (login1) power calls, signals to PID 1 or to every process (kill -1, killall5), writing to /proc/sysrq-trigger or /sys/power/state",
		"takes the host down"},
	entFirewall: {"firewall", "iptables/ip6tables/ebtables -F (--flush), a DROP/REJECT default policy (-P, also attached as -PINPUT), a DROP/REJECT rule with no match or on port 22; nft flush ruleset|table|chain, delete table, a drop policy, nft -f from a pipe or standard input; ufw reset|disable; firewall-cmd --panic-on or a drop/block default zone",
		"flushes the firewall or locks SSH out"},
	entPassword: {"password", "passwd -d, usermod -p '' (empty password), chpasswd or chpasswd -e with an empty password or unknown input, writing /etc/shadow or /etc/gshadow (redirection, tee, cp, dd, sed -i, perl -i, awk -i inplace), truncating /etc/passwd",
		"deletes or corrupts passwords"},
	entSSH: {"ssh-access", "killing sshd (kill with a PID not known before running, pkill/killall/skill whose pattern matches sshd or init, fuser -k on port 22 or a mount), systemctl stop|kill|disable|mask of ssh or sshd (a reload with -s HUP is allowed), service ssh stop, update-rc.d ssh disable|remove, removing openssh-server",
		"cuts off SSH access to the host"},
	entNetwork: {"network", "ip link set … down, ip link delete, ip address flush|delete, ip route flush (other than the route cache) or delete of the default route, ifdown, ifconfig … down, nmcli networking off / connection down / device disconnect, dhclient -r, stopping or disabling networking, NetworkManager or systemd-networkd",
		"cuts off network access to the host"},
	entForkBomb: {"fork-bomb", "a shell function that calls itself in a pipe or in the background (:(){ :|:& };:)",
		"exhausts the process table"},
	entUnanalysable: {"unanalysable", "commands the analysis cannot resolve before running: a program name produced by an expansion, a shell reading its script from a pipe or here-document, eval or sh -c of text that is not literal, a script written and run by the same command, control characters, text bash would not parse",
		"cannot be checked before it runs"},
	entInterpreter: {"inline-code", "inline code of interpreters (python -c, perl -e, ruby -e, node -e, php -r, lua -e, tclsh, gdb -ex, expect -c …) or an interpreter reading its program from a pipe or here-document; awk programs that call system(), pipe to a command or write to a device; GNU sed's e command or s///e flag, or sed writing to a device",
		"runs code that cannot be checked"},
	entDeferred: {"deferred", "commands deferred past the check: at, batch, crontab from a file or standard input, tmux and screen sessions; cron files (/etc/crontab, /etc/cron.d, /etc/cron.{hourly,daily,weekly,monthly}, /var/spool/cron) written with content not known before running, or with an entry whose command is banned; systemd unit files written with content not known, or whose Exec lines are banned",
		"runs commands later, where they cannot be checked"},
	entPattern: {"pattern", "an added ban pattern", "matches an added ban pattern"},
}

func (e entry) ban(construct string) Ban {
	return Ban{Entry: e.id, Pattern: e.covers, Reason: e.reason, Construct: construct}
}

// Entries lists the built-in entries as "ID: what it covers", for
// documentation and prompts.
func Entries() []string {
	var out []string
	for _, e := range entries[:entPattern] {
		out = append(out, e.id+": "+e.covers)
	}
	return out
}

// idOf returns the entry's index in the table.
func (e entry) idOf() entryID {
	for i, x := range entries {
		if x.id == e.id {
			return entryID(i)
		}
	}
	return entUnanalysable
}
