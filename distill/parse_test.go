package distill

import (
	"reflect"
	"testing"
)

func TestTargets(t *testing.T) {
	tests := []struct {
		name, cmd string
		want      []string
	}{
		{"sed -i", `sed -i 's/a/b/' /etc/ssh/sshd_config`, []string{"/etc/ssh/sshd_config"}},
		{"sed -i suffix and -e", `sed -i.bak -e 's/a/b/' -e 's/c/d/' /etc/a /etc/b`, []string{"/etc/a", "/etc/b"}},
		{"sed --in-place", `sed --in-place=.orig --expression='s/x/y/' /etc/x.conf`, []string{"/etc/x.conf"}},
		{"sed -Ei cluster", `sed -Ei 's/^#?(MaxAuthTries).*/\1 4/' /etc/ssh/sshd_config`, []string{"/etc/ssh/sshd_config"}},
		{"sed without -i writes nothing", `sed -n '/x/p' /etc/a`, nil},
		{"sudo sed and systemctl", `sudo sed -i 's/x/y/' /etc/ssh/sshd_config && sudo systemctl restart sshd`, []string{"/etc/ssh/sshd_config", "sshd"}},
		{"tee -a behind a pipe", `echo "PermitRootLogin no" | sudo tee -a /etc/ssh/sshd_config >/dev/null`, []string{"/etc/ssh/sshd_config"}},
		{"redirections", `echo x > /etc/a; echo y >>/etc/b 2>/tmp/err 2>&1 &>/etc/c`, []string{"/etc/a", "/etc/b", "/tmp/err", "/etc/c"}},
		{"dev null and fd dup skipped", `cmd >/dev/null 2>&1`, nil},
		{"heredoc to a file", "cat > /etc/aide/aide.conf.d/99_x <<'EOF'\n/etc p+i\nEOF\naideinit -y -f", []string{"/etc/aide/aide.conf.d/99_x"}},
		{"heredoc into a shell", "bash <<'EOF'\nsed -i 's/a/b/' /etc/a\nsystemctl restart auditd\nEOF", []string{"/etc/a", "auditd"}},
		{"sh -c script", `sudo sh -c 'echo "x" >> /etc/sysctl.d/99-x.conf; sysctl -w net.ipv4.ip_forward=0'`, []string{"/etc/sysctl.d/99-x.conf", "net.ipv4.ip_forward"}},
		{"cp mv install ln", `cp -a /tmp/a /etc/a && mv /var/lib/aide/aide.db.new /var/lib/aide/aide.db && install -m 0600 -o root /tmp/k /etc/k && ln -sf /etc/k /etc/k2`, []string{"/etc/a", "/var/lib/aide/aide.db", "/etc/k", "/etc/k2"}},
		{"cp -t", `cp -t /etc/ssh/ a b`, []string{"/etc/ssh/"}},
		{"install -d", `install -d -m 0700 /run/sshd /var/lib/aide`, []string{"/run/sshd", "/var/lib/aide"}},
		{"chmod chown chgrp", `chmod -R go-w /etc/audit && chown root:root /etc/passwd /etc/group && chgrp shadow /etc/shadow`, []string{"/etc/audit", "/etc/passwd", "/etc/group", "/etc/shadow"}},
		{"chmod --reference", `chmod --reference=/etc/passwd /etc/group`, []string{"/etc/group"}},
		{"chmod symbolic -w mode", `chmod -w /etc/issue`, []string{"/etc/issue"}},
		{"touch mkdir rm truncate", `touch /etc/cron.allow; mkdir -p -m 700 /root/.ssh; rm -f /etc/cron.deny; truncate -s 0 /etc/motd`, []string{"/etc/cron.allow", "/root/.ssh", "/etc/cron.deny", "/etc/motd"}},
		{"systemctl units", `systemctl enable --now aidecheck.timer auditd.service`, []string{"aidecheck.timer", "auditd.service"}},
		{"systemctl daemon-reload", `systemctl daemon-reload`, nil},
		{"systemctl -p option", `systemctl show -p ActiveState sshd`, []string{"sshd"}},
		{"service", `service ssh restart`, []string{"ssh"}},
		{"apt-get with -o and env", `sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -o Dpkg::Options::=--force-confold aide aide-common`, []string{"aide", "aide-common"}},
		{"apt update touches no package", `apt-get update && apt purge -y telnet`, []string{"telnet"}},
		{"dnf yum microdnf", `dnf -y --setopt=install_weak_deps=False install aide && yum remove -y rsh && microdnf install openscap`, []string{"aide", "rsh", "openscap"}},
		{"dnf --enablerepo separate", `dnf --enablerepo crb install -y aide`, []string{"aide"}},
		{"dpkg -i and --configure -a", `dpkg -i /tmp/x.deb; dpkg --configure -a`, []string{"/tmp/x.deb"}},
		{"rpm", `rpm -ivh /tmp/aide.rpm; rpm -e telnet; rpm -qa`, []string{"/tmp/aide.rpm", "telnet"}},
		{"sysctl", `sysctl -w kernel.randomize_va_space=2 net.ipv4.ip_forward=0; sysctl -p`, []string{"kernel.randomize_va_space", "net.ipv4.ip_forward"}},
		{"augtool set", `augtool -s set /files/etc/ssh/sshd_config/PermitRootLogin no`, []string{"/files/etc/ssh/sshd_config/PermitRootLogin"}},
		{"augtool script on stdin", "augtool -s <<EOF\nset /files/etc/ssh/sshd_config/X11Forwarding no\nrm /files/etc/ssh/sshd_config/Banner\nsave\nEOF", []string{"/files/etc/ssh/sshd_config/X11Forwarding", "/files/etc/ssh/sshd_config/Banner"}},
		{"timeout and env wrappers", `timeout 30 env LANG=C nice -n 10 tee /etc/x`, []string{"/etc/x"}},
		{"reserved words", `if grep -q x /etc/a; then sed -i 's/x/y/' /etc/a; fi`, []string{"/etc/a"}},
		{"for loop over a literal list", `for f in /etc/a /etc/b; do chmod 600 "$f"; done`, []string{"/etc/a", "/etc/b"}},
		{"unknown variable as written", `chmod 600 "$f" ~/.ssh/authorized_keys`, []string{"$f", "~/.ssh/authorized_keys"}},
		{"quoted path with space", `echo x > '/etc/my dir/f'`, []string{"/etc/my dir/f"}},
		{"repeats once", `sed -i s/a/b/ /etc/a; sed -i s/c/d/ /etc/a`, []string{"/etc/a"}},
		{"setsid", `setsid -f sed -i 's/a/b/' /etc/ssh/sshd_config`, []string{"/etc/ssh/sshd_config"}},
		{"setsid with a redirection", `setsid --wait tee /etc/issue.net >/dev/null`, []string{"/etc/issue.net"}},
		{"flock then the command", `flock -w 10 /var/lib/dpkg/lock-frontend dpkg-reconfigure tzdata`, []string{"tzdata"}},
		{"flock -c script", `flock /run/x.lock -c 'systemctl restart auditd && chmod 0640 /var/log/audit/audit.log'`, []string{"auditd", "/var/log/audit/audit.log"}},
		{"su -c script", `su -c "sysctl -w kernel.dmesg_restrict=1 && echo ok >> /etc/motd" root`, []string{"kernel.dmesg_restrict", "/etc/motd"}},
		{"su - root -c", `su - root -c 'dnf -y remove telnet'`, []string{"telnet"}},
		{"runuser -u", `runuser -u root -- systemctl mask ctrl-alt-del.target`, []string{"ctrl-alt-del.target"}},
		{"chroot", `chroot /mnt/sysimage systemctl enable auditd`, []string{"auditd"}},
		{"chroot with an option", `chroot --userspec=0:0 / chmod 600 /boot/grub/grub.cfg`, []string{"/boot/grub/grub.cfg"}},
		{"nested wrappers", `sudo -n timeout 60 nice -n 5 setsid flock /tmp/l bash -c 'cp /tmp/a /etc/a'`, []string{"/etc/a"}},
		{"sudo with an environment assignment", `sudo DEBIAN_FRONTEND=noninteractive dpkg-reconfigure -f noninteractive tzdata`, []string{"tzdata"}},
		{"env -S", `env -S 'LANG=C systemctl restart chronyd'`, []string{"chronyd"}},
		{"find -exec", `find /etc/ssh -name '*_key' -exec chmod 0600 {} \;`, nil},
		// xargs given echo's literal words: they are chmod's operands.
		{"xargs", `echo /etc/a | xargs chmod 600 /etc/b`, []string{"/etc/b", "/etc/a"}},
		{"xargs from an unknown input", `cat list | xargs chmod 600 /etc/b`, []string{"/etc/b"}},
		{"group redirection", `{ echo a; echo b; } > /etc/issue`, []string{"/etc/issue"}},
		{"subshell redirection", `(cd /etc && cat motd) >>/tmp/out`, []string{"/tmp/out"}},
		{"redirection without a command", `> /etc/cron.deny`, []string{"/etc/cron.deny"}},
		{"variable assigned earlier", `f=/etc/issue; chmod 644 "$f"`, []string{"/etc/issue"}},
		{"command substitution", `chmod 600 $(ls /etc/ssh/*_key)`, []string{"$(ls /etc/ssh/*_key)"}},
		{"here-string into bash", `bash <<< 'systemctl disable --now avahi-daemon'`, []string{"avahi-daemon"}},
		{"pipe into sh", `echo 'rm -f /etc/hosts.equiv' | sh`, []string{"/etc/hosts.equiv"}},
		{"augtool script from a pipe", `printf 'set /files/etc/login.defs/PASS_MAX_DAYS 90\nsave\n' | augtool`, []string{"/files/etc/login.defs/PASS_MAX_DAYS"}},
		{"GNU long option abbreviation", `cp --target-dir=/etc/pam.d /tmp/common-auth`, []string{"/etc/pam.d"}},
		{"options after operands", `systemctl enable --now aidecheck.timer -q`, []string{"aidecheck.timer"}},
		{"control character", "sed -i s/a/b/ /etc/a\r", nil},
		{"empty", ``, nil},
		{"unterminated quote", `sed -i 's/a/b /etc/a`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Targets(tt.cmd)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Targets(%q)\n got %q\nwant %q", tt.cmd, got, tt.want)
			}
		})
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct {
		name, cmd, want string
	}{
		{"quotes and spaces", `sed  -i "s/a/b/"  f`, `sed -i s/a/b/ f`},
		{"single quotes", `sed -i 's/a/b/' f`, `sed -i s/a/b/ f`},
		{"needs quotes", `echo "PermitRootLogin no"`, `echo 'PermitRootLogin no'`},
		{"embedded single quote", `echo "it's"`, `echo 'it'\''s'`},
		{"escapes", `echo a\ b`, `echo 'a b'`},
		{"expansion kept", `chmod 600 "$f" $HOME/x`, `chmod 600 "$f" $HOME/x`},
		{"command substitution kept", `kill -HUP $(cat /run/sshd.pid)`, `kill -HUP $(cat /run/sshd.pid)`},
		{"glob kept", `chmod 600 /etc/ssh/*_key`, `chmod 600 /etc/ssh/*_key`},
		{"quoted glob stays quoted", `find / -name '*.conf'`, `find / -name '*.conf'`},
		{"operators spaced", `a&&b||c|d;e`, `a && b || c | d; e`},
		{"redirections joined", `echo x >  /etc/f 2>&1`, `echo x >/etc/f 2>&1`},
		{"comments dropped", "apt-get install -y aide # install\n", `apt-get install -y aide`},
		{"line continuation", "apt-get install \\\n  -y aide", `apt-get install -y aide`},
		{"blank lines collapse", "a\n\n\nb\n", "a\nb"},
		{"heredoc body kept", "cat > f <<'EOF'\n  x  y\nEOF\necho done", "cat >f <<'EOF'\n  x  y\nEOF\necho done"},
		{"heredoc unquoted delimiter", "cat > f <<EOF\n$x\nEOF", "cat >f <<EOF\n$x\nEOF"},
		{"here-string", `grep -q x <<< "$v"`, `grep -q x <<<"$v"`},
		{"empty quotes", `echo ''`, `echo ''`},
		{"ansi-c", `printf $'a\tb'`, `printf $'a\tb'`},
		{"empty", "  \n ", ""},
		{"compound command on one line", "if grep -q x /etc/a; then\n  sed -i 's/x/y/' /etc/a\nfi", "if grep -q x /etc/a; then sed -i s/x/y/ /etc/a; fi"},
		{"background", "sleep 1 &  wait", "sleep 1 & wait"},
		{"statement after a heredoc on its line", "cat <<EOF; echo hi\nbody\nEOF", "cat <<EOF\nbody\nEOF\necho hi"},
		{"double-quoted delimiter", "cat <<\"EOF\"\n$x\nEOF", "cat <<'EOF'\n$x\nEOF"},
		{"dash heredoc body kept", "cat <<-EOF\n\tx\n\tEOF", "cat <<-EOF\n\tx\n\tEOF"},
		{"substitution re-spaced, its quoting kept", `echo "$(cat  '/etc/a b')" $(ls "x")`, `echo "$(cat '/etc/a b')" $(ls "x")`},
		{"quoted reserved word as a program", `'if' x`, `'if' x`},
		{"quoted assignment as a program", `'A=1' x`, `'A=1' x`},
		{"variable then quoted name text", `echo $x'y'`, `echo $x'y'`},
		{"quoted tilde", `echo '~'/x ~/y`, `echo '~/x' ~/y`},
		{"empty quotes keep a word", `echo ""$x`, `echo ''$x`},
		{"empty quotes dropped next to text", `echo ""abc`, `echo abc`},
		{"syntax error collapsed", "echo  'unterminated\n\n  x", "echo 'unterminated\nx"},
		{"control character kept", "echo  a\r", "echo a\r"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Canonical(tt.cmd)
			if got != tt.want {
				t.Errorf("Canonical(%q)\n got %q\nwant %q", tt.cmd, got, tt.want)
			}
			if again := Canonical(got); again != got {
				t.Errorf("not idempotent: %q -> %q", got, again)
			}
		})
	}
	if Canonical(`sed -i 's/a/b/' f`) != Canonical(`sed  -i "s/a/b/"  f`) {
		t.Error("the issue's example pair has different keys")
	}
	if Canonical(`chmod 600 "$f"`) == Canonical(`chmod 600 '$f'`) {
		t.Error(`"$f" and '$f' must differ: one expands`)
	}
}
