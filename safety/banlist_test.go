package safety

import (
	"errors"
	"github.com/nightshift-dev/nightshift/shell"
	"strings"
	"testing"
)

// mustBan are real-world commands the built-in list must refuse.
var mustBan = []string{
	`find -L /etc -exec chown nobody {} +`,
	`find -O3 / -delete`,
	`sudo FOO=1 rm -rf /etc`,
	`sudo PS4='$(reboot)' bash -xc :`,
	// Differences with bash found by the oracle (issue-11o) and the corpus (issue-11c).
	`PS4='$(rm -rf /)'; set -x; :`,
	`export PROMPT_COMMAND='reboot'`,
	`env 'BASH_FUNC_ls%%=() { rm -rf /; }' bash -c ls`,
	`sh -c '"$@"' sh /bin/r[m] -rf /`,
	`sh -c '"$@"' sh sh -c '"$@"' sh rm -rf /usr/*`,
	`false || cd /dev && dd if=/dev/zero of=sda`,
	`for f in /*; do rm -rf "$f"; done`,
	`usermod -p "$EMPTY" root`,
	`find /boot -iname 'vmlinuz*' -delete`,
	`apt-get install -y openssh-server-`,
	`zpool destroy -f tank`,
	`pkill -u root`,
	`find /etc -type f -exec chown nobody {} \;`,
	`find / -exec chmod 777 {} +`,
	`ip netns exec ns1 rm -rf /`,
	`prlimit --nofile=1024 rm -rf /`,
	`capsh -- -c 'rm -rf /'`,
	`sg root -c 'rm -rf /'`,
	`strace -f -o /dev/null rm -rf /`,
	`strace -o '|reboot' true`,
	`fakeroot rm -rf /`,
	`firejail --noprofile rm -rf /`,
	"echo 'BEGIN{system(\"reboot\")}' > /tmp/p.awk; awk -f /tmp/p.awk",
	"echo '1e reboot' > /tmp/s.sed; sed -f /tmp/s.sed /etc/hosts",
	"echo 'flush ruleset' > /tmp/r.nft; nft -f /tmp/r.nft",
	// /proc aliases of the root directory.
	`rm -rf /proc/self/root/etc`,
	`rm -rf /proc/1/root/usr`,
	`chmod -R 000 /proc/thread-self/root/`,
	`echo x > /proc/self/root/dev/sda`,
	`rm -rf /proc/*/root/etc`,
	// Deferred to cron: the entries are checked now.
	`echo '* * * * * root rm -rf /etc' >> /etc/crontab`,
	"cat > /etc/cron.d/x <<'EOF'\n@reboot root reboot\nEOF",
	`echo "$LINE" >> /etc/crontab`,
	`printf '0 * * * * reboot\n' | crontab -`,
	`echo reboot | tee -a /etc/cron.daily/x`,
	// issue 11: resolved the way bash resolves them.
	`rm -rf ~bin`,
	`rm -rf ~alice`,
	"cat > /tmp/x.py <<EOF\nimport os\nEOF\npython3 /tmp/x.py",
	`echo reboot > /tmp/r; chmod +x /tmp/r; /tmp/r`,
	`ls | xargs shred`,
	`command -p rm -rf /`,
	`exec -a foo rm -rf /`,
	`builtin eval 'rm -rf /'`,
	`time -p rm -rf /`,
	`coproc { rm -rf /; }`,
	`select x in a; do rm -rf /; done`,
	`$'\x72\x6d' -rf /`,
	`rm -rf /e\tc`,
	`IFS=x; y=xetc; rm -rf /$y`,
	`a=(rm -rf /); "${a[@]}"`,
	`printf -v x rm; $x -rf /`,
	`read x <<< rm; $x -rf /`,
	`find / -exec sh -c 'rm -rf /' \;`,
	`ls / | xargs -I{} rm -rf /{}`,
	`ls | parallel rm -rf`,
	`systemd-run --on-active=60 rm -rf /`,
	`cat /dev/zero | tee /dev/sda`,
	`> /dev/sda`,
	`echo x 1<>/dev/sda`,
	`. <(echo reboot)`,
	`bash <(echo reboot)`,
	`python3 <<< 'import os; os.system("reboot")'`,
	`perl <<'EOF'
fork while fork
EOF`,
	// Inline interpreter code cannot be checked (fail closed).
	`python3 -c "print('hello')"`,
	`find / -name '*' -delete`,
	`find / -xdev -name '*' -o -name x -delete`,
	`rm -rf "$DIR"/etc`,
	`rm -rf "$X"`,
	// deleting the system
	`rm -rf /`,
	`rm -rf /*`,
	`rm -fr --no-preserve-root /`,
	`rm -r -f /`,
	`rm --recursive --force /`,
	`rm -rf -- /`,
	`rm -Rf //`,
	`rm -rf /./`,
	`rm -rf /tmp/../`,
	`rm -rf /etc`,
	`rm -rf /usr/`,
	`rm -rf /etc/*`,
	`rm -rf ~`,
	`rm -rf "$STEAMROOT"/*`,
	`rm -rf ${DIR}/`,
	`cd / && rm -rf *`,
	`cd /; rm -rf -- *`,
	`find / -delete`,
	`find / -exec rm -rf {} +`,
	`\rm -rf /`,
	`"rm" -rf /`,
	`r''m -rf /`,
	`/bin/rm -rf /`,
	// permissions
	`chmod -R 777 /`,
	`chmod -R 000 /*`,
	`chmod -R 000 /etc`,
	`chown -R nobody /usr`,
	`chmod -R a-x /bin/*`,
	`chown -R x /`,
	`chown -R nobody:nogroup /`,
	`chgrp -R users /`,
	`chmod --recursive 777 /`,
	`setfacl -R -m u:x:rwx /`,
	`chattr -R +i /`,
	// disks
	`mkfs.ext4 /dev/sda1`,
	`mkfs -t xfs /dev/vdb`,
	`mke2fs /dev/sdb1`,
	`mkswap /dev/sda2`,
	`wipefs -a /dev/sda`,
	`wipefs --all /dev/nvme0n1`,
	`blkdiscard /dev/sda`,
	`dd if=/dev/zero of=/dev/sda`,
	`dd if=/dev/urandom of=/dev/nvme0n1 bs=1M`,
	`dd of=/dev/vda if=/dev/zero`,
	`shred /dev/sda`,
	`shred -n 3 -z /dev/sdb`,
	`cat /dev/zero > /dev/sda`,
	`echo garbage > /dev/sda`,
	`head -c 1M /dev/zero | tee /dev/sda`,
	`cp /dev/zero /dev/sda`,
	`sgdisk --zap-all /dev/sda`,
	`sfdisk /dev/sda < layout`,
	`parted /dev/sda mklabel gpt`,
	`parted -s /dev/sda rm 1`,
	`fdisk /dev/sda`,
	`cryptsetup luksFormat /dev/sda2`,
	// power
	`reboot`,
	`/sbin/reboot`,
	`reboot -f`,
	`shutdown -r now`,
	`shutdown -h +1`,
	`halt`,
	`poweroff`,
	`/usr/sbin/poweroff --force`,
	`init 0`,
	`init 6`,
	`telinit 6`,
	`telinit 1`,
	`systemctl reboot`,
	`/usr/bin/systemctl poweroff`,
	`systemctl halt`,
	`systemctl -i reboot`,
	`systemctl --no-wall reboot`,
	`systemctl kexec`,
	`systemctl isolate rescue.target`,
	`systemctl rescue`,
	`systemctl start reboot.target`,
	`systemctl suspend`,
	`echo b > /proc/sysrq-trigger`,
	`echo o | tee /proc/sysrq-trigger`,
	`kexec -e`,
	`dbus-send --system --print-reply --dest=org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager.Reboot boolean:true`,
	`busctl call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager PowerOff b false`,
	// firewall
	`iptables -F`,
	`iptables -P INPUT DROP`,
	`ip6tables --policy OUTPUT REJECT`,
	`iptables --flush`,
	`iptables -t nat -F`,
	`ip6tables -F INPUT`,
	`iptables-legacy -F`,
	`/usr/sbin/iptables -F`,
	`nft flush ruleset`,
	`nft 'flush ruleset'`,
	`nft flush table inet filter`,
	`nft delete table inet filter`,
	`ufw reset`,
	`ufw --force reset`,
	`firewall-cmd --panic-on`,
	// passwords
	`passwd -d root`,
	`passwd --delete root`,
	`passwd -d`,
	`usermod -p '' root`,
	`usermod --password "" root`,
	`echo 'root:' | chpasswd`,
	`chpasswd <<< 'root:'`,
	`sed -i 's/^root:[^:]*:/root::/' /etc/shadow`,
	// fork bombs
	`:(){ :|:& };:`,
	`:(){ :|: & };:`,
	`bomb() { bomb | bomb & }; bomb`,
	`function f { f | f & }; f`,
	`perl -e "fork while fork"`,
	// sshd
	`pkill sshd`,
	`pkill -9 sshd`,
	`pkill -f /usr/sbin/sshd`,
	`killall sshd`,
	`killall -9 sshd`,
	`kill -9 $(pidof sshd)`,
	`kill $(pgrep -f sshd)`,
	"kill -9 `pidof sshd`",
	`kill -TERM $(cat /run/sshd.pid)`,
	`pgrep sshd | xargs kill -9`,
	`pidof sshd | xargs kill`,
	`kill -9 -1`,
	`kill -- -1`,
	`systemctl stop ssh`,
	`systemctl stop sshd`,
	`systemctl stop sshd.service`,
	`systemctl kill sshd`,
	`systemctl disable --now ssh`,
	`systemctl mask sshd`,
	`service ssh stop`,
	`service sshd stop`,
	`/etc/init.d/ssh stop`,
	`invoke-rc.d ssh stop`,
	`update-rc.d ssh disable`,
	`chkconfig sshd off`,
	`apt-get remove -y openssh-server`,
	`apt purge openssh-server`,
	`yum remove openssh-server`,
	`dnf -y erase openssh-server`,
	`dpkg -P openssh-server`,
	`rpm -e openssh-server`,
	// network
	`ip link set eth0 down`,
	`ip link set dev ens3 down`,
	`ip l s eth0 down`,
	`ip addr flush dev eth0`,
	`ip route flush all`,
	`ifdown eth0`,
	`ifconfig eth0 down`,
	`nmcli networking off`,
	`nmcli connection down 'Wired connection 1'`,
	`systemctl stop networking`,
	`systemctl stop NetworkManager`,
	// wrappers and evasions
	`sudo reboot`,
	`sudo -u root reboot`,
	`sudo -E -H /sbin/reboot`,
	`sudo -- reboot`,
	`doas reboot`,
	`env reboot`,
	`env -i PATH=/usr/sbin reboot`,
	`env FOO=bar systemctl reboot`,
	`FOO=bar reboot`,
	`nohup reboot &`,
	`timeout 5 reboot`,
	`timeout -s KILL 10s reboot`,
	`nice -n 10 reboot`,
	`nice reboot`,
	`ionice -c3 reboot`,
	`stdbuf -oL reboot`,
	`setsid reboot`,
	`command reboot`,
	`exec reboot`,
	`busybox reboot`,
	`chroot / reboot`,
	`systemd-run --on-active=30 reboot`,
	`echo now | xargs shutdown -h`,
	`echo / | xargs rm -rf`,
	`bash -c 'reboot'`,
	`sh -c "reboot"`,
	`bash -lc 'systemctl stop ssh'`,
	`bash -x -c reboot`,
	`/bin/bash -c 'sudo reboot'`,
	`eval reboot`,
	`eval "rm -rf /"`,
	`su -c reboot`,
	`su - root -c 'shutdown -h now'`,
	`ssh localhost reboot`,
	`flock /tmp/l -c reboot`,
	`watch -n 5 reboot`,
	`echo reboot | sh`,
	`echo 'rm -rf /' | bash`,
	`printf 'reboot\n' | bash`,
	"bash <<EOF\nreboot\nEOF",
	`bash <<< 'reboot'`,
	`python3 -c "import os; os.system('reboot')"`,
	`python3 -c "import subprocess; subprocess.run(['systemctl', 'stop', 'ssh'])"`,
	`perl -e 'system("reboot")'`,
	"perl -e '`reboot`'",
	`awk 'BEGIN { system("reboot") }'`,
	`true; reboot`,
	`true && reboot`,
	`false || reboot`,
	`true & reboot`,
	"true\nreboot",
	`ls | reboot`,
	`echo $(reboot)`,
	"echo `reboot`",
	`echo "$(reboot)"`,
	`cat <(reboot)`,
	`(reboot)`,
	`{ reboot; }`,
	`if true; then reboot; fi`,
	`for i in 1; do reboot; done`,
	`while true; do reboot; done`,
	`f() { reboot; }; f`,
	`re''boot`,
	`"reboot"`,
	`'reboot'`,
	`r\eboot`,
	`$'\x72eboot'`,
	`$'\162eboot'`,
	`X=reboot; $X`,
	`X=reboot && $X`,
	`export CMD="systemctl stop ssh"; $CMD`,
	`${X:-reboot}`,
	`echo ${X:-$(reboot)}`,
	`cat <<EOF
$(reboot)
EOF`,
	"systemctl\tstop   ssh",
	`systemctl stop "ssh"`,
	`systemctl --no-block stop ssh`,
	`sudo   systemctl   poweroff`,
	`echo ok; sudo bash -c "nohup sh -c 'sleep 1; reboot' &"`,
	`x() { :; }; rm -rf --no-preserve-root /`,
	"cat > /tmp/x <<'EOF'\n'\nEOF\nreboot",
	`grep -q x /etc/y || reboot # comment`,
	`rm -rf $(echo /)`,
	"rm -rf `echo /etc`",
	`a=$(echo reb); ${a}oot`,
	`mv /etc /tmp/etc`,
	`echo 'root::19000:0:99999:7:::' > /etc/shadow`,
	`perl -pi -e 's/^root:[^:]*:/root::/' /etc/shadow`,
}

// mustAllow are ordinary hardening and diagnostic commands that must run.
var mustAllow = []string{
	`flock /tmp/l apt-get install -y aide`,
	`sudo DEBIAN_FRONTEND=noninteractive apt-get install -y aide`,
	`find /var/log -type f -exec chmod g-wx,o-rwx {} +`,
	`find /etc/audit -type f -name '*.rules' -exec chmod 0640 {} \;`,
	`find / -xdev -type f -perm -0002 -exec chmod o-w {} \;`,
	`strace -f -o /tmp/trace.txt sshd -t`,
	"echo 'PermitRootLogin no' > /tmp/x.conf\nsed -i 's/no/yes/' /tmp/x.conf",
	"printf '%s\\n' 'a' > /etc/issue; awk '{print}' /etc/issue",
	`echo '05 4 * * * root /usr/sbin/aide --check' >> /etc/crontab`,
	"cat > /etc/cron.d/aide <<'EOF'\nSHELL=/bin/sh\n# nightly\n05 4 * * * root /usr/bin/aide --config /etc/aide/aide.conf --check\nEOF",
	`rm -rf ~alice/tmp`,
	`rm -rf "$TMPDIR/work"`,
	`find /root -xdev -type f -name .netrc -exec rm -f {} \;`,
	`find / -xdev -name .rhosts -delete`,
	// Switching Ubuntu's socket activation to the service (issue 11).
	`systemctl disable --now ssh.socket && systemctl enable --now ssh.service`,
	`systemctl stop ssh.socket`,
	`rm -rf /tmp/x`,
	`rm -rf /var/tmp/build`,
	`rm -f /etc/ssh/sshd_config.d/50-cloud-init.conf`,
	`rm -rf "$TMPDIR/work"`,
	`rm /etc/motd`,
	`rm -r ./build`,
	`cd /tmp && rm -rf *`,
	`chmod 600 /etc/ssh/sshd_config`,
	`chmod -R go-w /etc/ssh`,
	`chown root:root /etc/passwd`,
	`chmod 0644 /`,
	`sed -i 's/reboot/x/' f`,
	`echo reboot >> notes`,
	`echo "shutdown -h now" >> notes.txt`,
	`grep shutdown log`,
	`grep -r reboot /var/log/syslog`,
	`journalctl -b -1 | grep -i reboot`,
	`last reboot`,
	`apt-get install -y aide`,
	`apt-get install -y openssh-server`,
	`dnf install -y aide`,
	`systemctl reload ssh`,
	`systemctl restart sshd`,
	`systemctl status ssh`,
	`systemctl is-active sshd`,
	`systemctl enable --now auditd`,
	`systemctl stop telnet.socket`,
	`systemctl disable --now avahi-daemon`,
	`systemctl mask ctrl-alt-del.target`,
	`systemctl list-units --type=service`,
	`sshd -t`,
	`/usr/sbin/sshd -t -f /etc/ssh/sshd_config`,
	`sshd -T | grep -i permitrootlogin`,
	`pkill -HUP sshd`,
	`kill -HUP $(cat /run/sshd.pid)`,
	`kill -1 $(pidof sshd)`,
	`kill 12345`,
	`pkill -f aide`,
	`grep -Eq '^[[:space:]]*PermitRootLogin[[:space:]]+no' /etc/ssh/sshd_config`,
	`sed -i 's/^#\?PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config`,
	`echo 'PermitRootLogin no' > /etc/ssh/sshd_config.d/00-hardening.conf`,
	`cat /etc/shadow | cut -d: -f1,2`,
	`awk -F: '($2 == "") {print $1}' /etc/shadow`,
	`passwd -l games`,
	`usermod -s /usr/sbin/nologin games`,
	`chage -M 365 root`,
	`iptables -L -n`,
	`iptables -P FORWARD ACCEPT`,
	`chown -R root:root /etc/aide`,
	`iptables -A INPUT -p tcp --dport 22 -j ACCEPT`,
	`iptables -S`,
	`nft list ruleset`,
	`ufw allow 22/tcp`,
	`ufw status verbose`,
	`firewall-cmd --list-all`,
	`dd if=/dev/zero of=/tmp/swapfile bs=1M count=10`,
	`dd if=/dev/sda of=/tmp/mbr.bin bs=512 count=1`,
	`command -v aide >/dev/null 2>&1`,
	`ls -l /dev/sda 2>/dev/null`,
	`echo hello > /dev/null`,
	`echo msg > /dev/stderr`,
	`logger hi &>/dev/null`,
	`fdisk -l`,
	`sfdisk -l /dev/sda`,
	`parted -l`,
	`lsblk -f`,
	`find / -xdev -type f -perm -4000`,
	`find / -xdev -name .rhosts -delete`,
	`find /root -xdev -type f -name .netrc -exec rm -f {} \;`,
	`find /var/log -type f -exec chmod g-wx,o-rwx {} +`,
	`sysctl -w kernel.sysrq=0`,
	`echo 0 > /proc/sys/kernel/sysrq`,
	`ip addr show`,
	`ip link show`,
	`ip route`,
	`nmcli device status`,
	`bash -c 'echo ok'`,
	`sudo -u nobody id`,
	`env`,
	`sudo -l`,
	`timeout 30 aide --check`,
	`nohup aide --init >/var/log/aide-init.log 2>&1 &`,
	`X=1; echo $X`,
	"cat > /etc/issue <<'EOF'\nAuthorized uses only. All activity may be monitored and reported.\nEOF",
	"cat > /etc/cron.d/x <<EOF\n0 5 * * * root /usr/sbin/aide --check\nEOF",
	`echo fork`,
	`init q`,
	`telinit q`,
	`mkdir -p /etc/ssh/sshd_config.d`,
	`modprobe -r usb-storage`,
	`echo "install usb-storage /bin/true" > /etc/modprobe.d/usb-storage.conf`,
	`update-grub`,
	`grub2-mkconfig -o /boot/grub2/grub.cfg`,
	`chmod 600 /boot/grub/grub.cfg`,
	`rm -rf /var/lib/aide/aide.db.new`,
	`apt-get remove -y telnet`,
	`apt-get purge -y rsh-client`,
	`yum remove -y xinetd`,
	`kill -0 1`,
	`crontab -l`,
	`grep -q '^root::' /etc/shadow && echo bad`,
	`awk -F: '$2 == ""' /etc/shadow`,
	`mv /etc/ssh/sshd_config.d/x.conf /root/x.conf.bak`,
	`echo $(echo hello) > /tmp/x`,
}

func TestBanListDefaults(t *testing.T) {
	b := DefaultBanList()
	for _, cmd := range mustBan {
		ban, ok := b.Match(cmd)
		if !ok {
			t.Errorf("not banned: %q", cmd)
			continue
		}
		if ban.Pattern == "" || ban.Reason == "" {
			t.Errorf("%q: ban without pattern or reason: %+v", cmd, ban)
		}
	}
	for _, cmd := range mustAllow {
		if ban, ok := b.Match(cmd); ok {
			t.Errorf("banned: %q: %s (%s) on %q", cmd, ban.Pattern, ban.Reason, ban.Construct)
		}
	}
}

// TestBanListWrapped checks that every banned command stays banned behind
// the common ways of wrapping it.
func TestBanListWrapped(t *testing.T) {
	b := DefaultBanList()
	wraps := []struct {
		name string
		wrap func(string) string
	}{
		{"sudo", func(c string) string {
			if strings.ContainsAny(c, ";|&\n(){}") || strings.Contains(c, "=") {
				return "sudo bash -c " + shellQuote(c) // sudo takes one simple command
			}
			return "sudo " + c
		}},
		{"after &&", func(c string) string { return "true && " + c }},
		{"after ;", func(c string) string { return "echo hi; " + c }},
		{"bash -c", func(c string) string { return "bash -c " + shellQuote(c) }},
		{"sh -c via sudo", func(c string) string { return "sudo sh -c " + shellQuote(c) }},
		{"eval", func(c string) string { return "eval " + shellQuote(c) }},
		{"subshell", func(c string) string { return "( " + c + "\n)" }},
		{"command substitution", func(c string) string { return "echo $( " + c + "\n)" }},
		{"nested bash -c", func(c string) string { return "bash -c " + shellQuote("sh -c "+shellQuote(c)) }},
		{"newline", func(c string) string { return "cd /tmp\n" + c }},
	}
	for _, cmd := range mustBan {
		for _, w := range wraps {
			wrapped := w.wrap(cmd)
			if _, ok := b.Match(wrapped); !ok {
				t.Errorf("%s: not banned: %q", w.name, wrapped)
			}
		}
	}
}

func TestBanListExtra(t *testing.T) {
	b, err := NewBanList([]string{`systemctl (restart|stop) ssh`, `^curl\b`})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cmd     string
		banned  bool
		pattern string
	}{
		{`systemctl restart ssh`, true, `systemctl (restart|stop) ssh`},
		{`sudo /usr/bin/systemctl restart ssh`, true, `systemctl (restart|stop) ssh`},
		{`systemctl   'restart'   "ssh"`, true, `systemctl (restart|stop) ssh`},
		{`bash -c "systemctl restart ssh"`, true, `systemctl (restart|stop) ssh`},
		{`systemctl reload ssh`, false, ``},
		{`curl -fsS http://example.com`, true, `^curl\b`},
		{`echo x && /usr/bin/curl http://x`, true, `^curl\b`},
		{`echo curl`, false, ``},
		{`reboot`, true, entries[entPower].covers},
	}
	for _, tt := range tests {
		ban, ok := b.Match(tt.cmd)
		if ok != tt.banned || ban.Pattern != tt.pattern {
			t.Errorf("Match(%q) = %+v, %v; want pattern %q, %v", tt.cmd, ban, ok, tt.pattern, tt.banned)
		}
	}
	// The defaults are still there and the parent is unchanged.
	if _, ok := DefaultBanList().Match(`curl http://x`); ok {
		t.Error("DefaultBanList changed by NewBanList")
	}
	more, err := b.With(`wget`)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := more.Match("wget x"); !ok {
		t.Error("With: added pattern not matched")
	}
	if _, ok := b.Match("wget x"); ok {
		t.Error("With changed its receiver")
	}
	if _, ok := more.Match("curl x"); !ok {
		t.Error("With lost the receiver's patterns")
	}
}

func TestBanListCannotBeEmptied(t *testing.T) {
	var zero BanList
	var nilList *BanList
	lists := map[string]*BanList{"zero value": &zero, "nil": nilList}
	if l, err := NewBanList(nil); err == nil {
		lists["NewBanList(nil)"] = l
	} else {
		t.Fatal(err)
	}
	if l, err := nilList.With(); err == nil {
		lists["nil.With()"] = l
	} else {
		t.Fatal(err)
	}
	for name, l := range lists {
		if _, ok := l.Match("rm -rf /"); !ok {
			t.Errorf("%s: rm -rf / not banned", name)
		}
		if got := len(l.Patterns()); got != int(entPattern) {
			t.Errorf("%s: %d patterns, want the %d built-ins", name, got, int(entPattern))
		}
	}
}

func TestBanListBadPatterns(t *testing.T) {
	tests := []struct {
		pattern string
		msg     string
	}{
		{`(`, "missing closing )"},
		{``, "empty pattern"},
		{`   `, "empty pattern"},
		{`x*`, "matches the empty string"},
		{`a{2000}`, "invalid repeat count"},
		{strings.Repeat("a", MaxPatternLen+1), "longer than"},
	}
	for _, tt := range tests {
		_, err := NewBanList([]string{"ok", tt.pattern})
		var pe *PatternError
		if !errors.As(err, &pe) || !errors.Is(err, ErrBadPattern) {
			t.Errorf("%q: err = %v, want *PatternError", tt.pattern, err)
			continue
		}
		if pe.Index != 1 || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%q: err = %v (index %d), want index 1 and %q", tt.pattern, err, pe.Index, tt.msg)
		}
	}
}

func TestBanListLimits(t *testing.T) {
	b := DefaultBanList()
	long := "echo " + strings.Repeat("a", shell.MaxLen)
	if ban, ok := b.Match(long); !ok || !strings.Contains(ban.Reason, "too long") {
		t.Errorf("over-long command: %+v, %v", ban, ok)
	}
	deep := "reboot"
	for range shell.MaxDepth + 3 {
		deep = "bash -c " + shellQuote(deep)
	}
	if ban, ok := b.Match(deep); !ok {
		t.Errorf("deeply nested command not banned")
	} else if !strings.Contains(ban.Reason, "too complex") {
		t.Logf("deep: %+v", ban)
	}
	shallow := "echo ok"
	for range shell.MaxDepth - 1 {
		shallow = "bash -c " + shellQuote(shallow)
	}
	if ban, ok := b.Match(shallow); ok {
		t.Errorf("nesting within the limit banned: %+v", ban)
	}
	// Exponential variable growth is cut off, not followed.
	bomb := "a=xxxxxxxxxxxxxxxx"
	for i := range 30 {
		bomb += "; " + string(rune('b'+i%20)) + "=$a$a$a$a; a=$" + string(rune('b'+i%20))
	}
	if _, ok := b.Match(bomb); !ok {
		t.Errorf("expansion bomb not refused")
	}
}

func TestBannedError(t *testing.T) {
	err := DefaultBanList().Check("sudo reboot")
	var be *BannedError
	if !errors.As(err, &be) || !errors.Is(err, ErrBanned) || be.Ban.Construct != "reboot" {
		t.Fatalf("Check = %v", err)
	}
	if err := DefaultBanList().Check("echo ok"); err != nil {
		t.Fatalf("Check(echo ok) = %v", err)
	}
}

func TestScriptsWithUnknownParts(t *testing.T) {
	b := DefaultBanList()
	for cmd, banned := range map[string]bool{
		`sed -i "s/^${key}=.*/${key}=${value}/" "$file"`: false,
		`sed -i "/^$key/d" /etc/login.defs`:              false,
		`sed -i "1e $cmd" /etc/hosts`:                    true,
		`sed -i "s/x/$y/e" /etc/hosts`:                   true,
		`sed "w /dev/sda" "$f"`:                          true,
		`awk -v k="$k" '$1 == k {print $2}' /etc/x`:      false,
		`awk "{ system(\"$cmd\") }" /etc/hosts`:          true,
		`awk "{ print \"$line\" | \"sh\" }" /etc/hosts`:  true,
	} {
		if _, got := b.Match(cmd); got != banned {
			t.Errorf("Match(%q) = %v, want %v", cmd, got, banned)
		}
	}
}
