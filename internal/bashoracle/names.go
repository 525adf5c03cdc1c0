package bashoracle

import "strings"

// realShells are the names that run real bash in the sandbox instead of a
// stub, so that nested shells (`bash -c '…'`, `… | sh`) really run.
var realShells = []string{"sh", "bash", "dash", "rbash"}

// StubNames returns the program names that always get a stub, in addition
// to the programs found in the host's program directories: everything the
// safety corpus uses, so that the sandbox does not depend on what the
// machine running the tests has installed. The result is a fresh slice.
func StubNames() []string { return strings.Fields(stubNames) }

const stubNames = `
arch b2sum base32 base64 basename basenc cat chcon chgrp chmod chown chroot cksum comm cp csplit cut date dd df dir
dircolors dirname du echo env expand expr factor false fmt fold groups head hostid id install join link ln logname ls
md5sum mkdir mkfifo mknod mktemp mv nice nl nohup nproc numfmt od paste pathchk pinky pr printenv printf ptx pwd
readlink realpath rm rmdir runcon seq sha1sum sha224sum sha256sum sha384sum sha512sum shred shuf sleep sort split stat
stdbuf stty sum sync tac tail tee test timeout touch tr true truncate tsort tty uname unexpand uniq unlink users vdir
wc who whoami yes
agetty blkdiscard blkid blockdev cfdisk chcpu chrt chsh ctrlaltdel dmesg eject fallocate fdisk findfs findmnt flock
fsck fsfreeze fstrim fuser getopt hwclock ionice ipcrm ipcs kill last lastb logger login losetup lsblk lscpu lsns
mkswap more mount mountpoint namei nsenter partx pivot_root prlimit rename renice rfkill runuser script scriptreplay
setarch setpriv setsid sfdisk su sulogin swaplabel swapoff swapon switch_root taskset umount unshare utmpdump uuidgen
wall wdctl whereis wipefs zramctl
systemctl systemd-run systemd-analyze systemd-cat systemd-escape systemd-notify systemd-tmpfiles systemd-sysusers
journalctl loginctl hostnamectl timedatectl localectl machinectl networkctl resolvectl busctl coredumpctl
shutdown reboot halt poweroff init telinit runlevel service update-rc.d invoke-rc.d chkconfig
iptables iptables-save iptables-restore iptables-legacy iptables-nft ip6tables ip6tables-save ip6tables-restore
ebtables arptables nft ufw firewall-cmd firewall-offline-cmd ipset conntrack
ip ifconfig ifup ifdown ifquery route nmcli nmtui netplan dhclient iw iwconfig ethtool brctl bridge tc ss netstat
ping ping6 traceroute arp hostname dnsdomainname sysctl modprobe insmod rmmod lsmod depmod
mkfs mkfs.ext2 mkfs.ext3 mkfs.ext4 mkfs.xfs mkfs.btrfs mkfs.vfat mkfs.fat mkfs.msdos mkfs.ntfs mkfs.exfat mkfs.f2fs
mkfs.minix mkfs.cramfs mkfs.bfs mkfs.jfs mkfs.reiserfs mkreiserfs mke2fs mkdosfs mkntfs mkexfatfs mkfs.nilfs2
e2fsck tune2fs resize2fs debugfs dumpe2fs xfs_repair xfs_admin btrfs zpool zfs
parted sgdisk gdisk partprobe kpartx mdadm cryptsetup dmsetup lvm lvremove vgremove pvremove lvcreate vgcreate
pvcreate lvextend lvreduce vgchange hdparm sdparm nvme badblocks zerofree
pkill pgrep killall killall5 pidof pkexec ps top htop skill snice
passwd usermod useradd userdel groupadd groupdel groupmod chpasswd chage chfn gpasswd newusers pwck grpck vipw
vigr visudo sudo sudoedit doas pwconv grpconv
sed awk gawk mawk nawk busybox find xargs tar gzip gunzip zcat bzip2 xz zstd unzip zip cpio rsync scp sftp ssh
sshd ssh-keygen ssh-keyscan ssh-agent ssh-add sftp-server curl wget nc ncat netcat socat telnet ftp
parallel watch at batch atq atrm crontab cron anacron tmux screen nohup time
python python2 python3 perl ruby node nodejs php lua lua5.1 lua5.3 lua5.4 tclsh wish expect gdb
grep egrep fgrep less vi vim nano ed ex diff patch cmp file which mail sendmail
apt apt-get apt-cache apt-mark dpkg dpkg-reconfigure dpkg-query aptitude yum dnf rpm snap pip pip3 npm
chattr lsattr setfacl getfacl setcap getcap auditctl augenrules ausearch aureport sestatus setenforce getenforce
aa-status apparmor_parser aa-enforce aa-complain update-grub grub-mkconfig grub2-mkconfig update-initramfs
dracut authselect pam-auth-update update-alternatives ldconfig openssl gpg oscap
chmod chown ln install mkdir touch truncate tee
`
