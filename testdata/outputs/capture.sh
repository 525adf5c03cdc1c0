#!/bin/bash
# capture.sh regenerates the outputs in this directory that were captured
# from the real tools (see README.md for which ones). It needs root on a
# disposable Debian 12 machine or container with network access to Debian's
# mirrors, and changes that machine: it installs packages (aide, aide-common,
# augeas-tools, openscap-scanner, ssg-debian, and a throwaway package it
# builds), holds the dpkg lock and edits files under /tmp. Never run it on a
# machine you care about. The tests do not run it.
set -u
out=${1:-$(dirname "$0")}
work=$(mktemp -d)
cd "$work" || exit 1

# run FILE CMD...: run CMD through bash with stderr merged into stdout, as
# the worker captures it, and append the exit status.
run() {
	local f=$1; shift
	bash -c "$*" > "$out/$f" 2>&1
	echo "[exit status $?]" >> "$out/$f"
}

export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8

# apt-get: success, unknown package, dpkg lock held, dpkg interrupted.
apt-get remove -y -q libpam-pwquality cracklib-runtime >/dev/null 2>&1
run apt-get-install-success.txt "apt-get install -y libpam-pwquality"
run apt-get-install-unable-to-locate.txt "apt-get update 2>&1 | tail -n 6; apt-get install -y openssh-server-hardened; apt-get install -y libpam-cracklib; apt-cache search --names-only pwquality; apt-cache policy libpam-pwquality libpam-cracklib aide"
run apt-get-not-root.txt "id; su nobody -s /bin/bash -c 'apt-get install -y aide; dpkg --configure -a; apt-get update'; su nobody -s /bin/bash -c 'sudo -n apt-get install -y aide'; id nobody; ls -la /var/lib/dpkg/lock* /var/lib/apt/lists/lock /var/cache/apt/archives/lock"
printf 'deb http://mirror.internal.invalid/debian bookworm main\ndeb http://security.internal.invalid/debian-security bookworm-security main\n' > bad.list
run apt-get-update-failed-fetch.txt "apt-get update -o Dir::Etc::SourceList=$work/bad.list -o Dir::Etc::SourceParts=/nonexistent; apt-get install -y --no-download aide-common -o Dir::Etc::SourceList=$work/bad.list -o Dir::Etc::SourceParts=/nonexistent; cat $work/bad.list"
apt-get remove -y -q auditd audispd-plugins >/dev/null 2>&1
# Hold the dpkg frontend lock the way unattended-upgrades does (an fcntl
# lock, process name "unattended-upgr").
python3 -c '
import ctypes, fcntl, time
ctypes.CDLL(None).prctl(15, b"unattended-upgr", 0, 0, 0)
f = open("/var/lib/dpkg/lock-frontend", "w")
fcntl.lockf(f, fcntl.LOCK_EX)
time.sleep(20)' &
holder=$!
sleep 3
run apt-get-install-dpkg-lock.txt "apt-get install -y auditd audispd-plugins; echo; echo '+ apt-get -o DPkg::Lock::Timeout=6 install -y auditd'; apt-get -o DPkg::Lock::Timeout=6 install -y auditd; echo; echo '+ dpkg --configure -a'; dpkg --configure -a; echo '+ ps -o pid,comm -p $holder'; ps -o pid,comm -p $holder"
kill $holder; wait $holder 2>/dev/null
touch /var/lib/dpkg/updates/0042
run apt-get-install-dpkg-interrupted.txt "apt-get install -y auditd; echo '+ ls -la /var/lib/dpkg/updates'; ls -la /var/lib/dpkg/updates; echo '+ dpkg --audit'; dpkg --audit; echo '+ apt-get -s install auditd'; apt-get -s install auditd"
rm -f /var/lib/dpkg/updates/0042

# dpkg --configure -a with a package whose postinst fails.
mkdir -p pkg/DEBIAN pkg/etc/nightshift
printf 'Package: nightshift-broken-postinst\nVersion: 1.0\nArchitecture: all\nMaintainer: test <test@example.invalid>\nDescription: postinst fails\n' > pkg/DEBIAN/control
printf '#!/bin/sh\necho "Setting up audit rules in /etc/audit/rules.d/50-nightshift.rules"\necho "augenrules: No rules" >&2\nexit 1\n' > pkg/DEBIAN/postinst
chmod 755 pkg/DEBIAN/postinst
echo "x" > pkg/etc/nightshift/x.conf
dpkg-deb --build pkg nightshift-broken-postinst.deb >/dev/null
run dpkg-install-postinst-failed.txt "dpkg -i nightshift-broken-postinst.deb; echo; echo '+ apt-get install -y auditd'; apt-get install -y auditd"
run dpkg-configure-a.txt "dpkg --configure -a; echo '+ dpkg --audit'; dpkg --audit; echo '+ dpkg -l | grep -v ^ii'; dpkg -l | grep -v '^ii'; echo '+ dpkg --configure nightshift-broken-postinst'; dpkg --configure nightshift-broken-postinst"
dpkg --purge nightshift-broken-postinst >/dev/null 2>&1

# sshd -t on broken copies of the real configuration.
cp /etc/ssh/sshd_config bad1
sed -i 's/^#PermitRootLogin.*/PermitRootLogn no/' bad1
printf 'UsePrivilegeSeparation sandbox\nPermitRootLogin maybe\n' >> bad1
cp /etc/ssh/sshd_config bad2
printf 'PermitRootLogin\nClientAliveInterval 300s0\n' >> bad2
run sshd-t-errors.txt "set -x; sed -n '/^[A-Za-z]/p' bad1; sshd -t -f bad1; sshd -t -f bad2; grep -n PermitRoot bad1 bad2; sshd -T -f /etc/ssh/sshd_config | head -n 40"

# aide 0.18: --init, --check with changes, missing database, config errors.
mkdir -p tree/etc && cp -r /etc/ssh /etc/pam.d /etc/security tree/etc/
cat > aide.conf <<CONF
database_in=file:$work/aide.db
database_out=file:$work/aide.db.new
gzip_dbout=no
report_url=stdout
Checksums = sha256+sha512
Full = p+i+n+u+g+s+b+m+c+Checksums
$work/tree/etc Full
CONF
run aide-init.txt "aide --config aide.conf --init"
mv aide.db.new aide.db
chmod 600 tree/etc/ssh/sshd_config; echo "PermitRootLogin no" >> tree/etc/ssh/sshd_config
rm tree/etc/pam.d/chfn; touch tree/etc/security/new.conf
run aide-check-changes.txt "aide --config aide.conf --check"
run aide-check-no-database.txt "aide --config /etc/aide/aide.conf --check; echo status \$?; ls -la /var/lib/aide/; grep -rn -e database -e report_url /etc/aide/aide.conf /etc/aide/aide.conf.d | head -n 20; aide --config /etc/aide/aide.conf --config-check; echo status \$?; aide --version 2>&1 | head -n 30"
sed 's/^Full = .*/Full = p+i+n+u+g+s+b+m+c+sha256+bogus/; s/^report_url=stdout/report_url=stdout\n@@ifdef FOO\nNORMAL = R+sha512/' aide.conf > aide-bad.conf
sed 's/^Full = .*/Full = p+i+n+u+g+s+b+m+c+sha256+bogus/' aide.conf > aide-bad2.conf
printf 'database_in=file:/var/lib/aide/aide.db\nverbose=5\n/etc R+sha256 x\n!/etc/mtab$\n=/boot$ R\n' > aide-bad3.conf
run aide-config-error.txt "aide --config aide-bad.conf --init; echo status \$?; aide --config aide-bad2.conf --init; echo status \$?; aide --config aide-bad3.conf --config-check; echo status \$?; echo '+ aideinit -y -f'; aideinit -y -f -c aide-bad2.conf; echo; cat -n aide-bad.conf aide-bad2.conf aide-bad3.conf"

# augtool errors (and one success).
cp /etc/ssh/sshd_config sshd_config.test
run augtool-errors.txt "augtool -s set /files/etc/ssh/sshd_config/PermitRootLogin[ no; augtool -r $work -s set /files/sshd_config.test/PermitRootLogin no; augtool -s set /files/etc/nonexistent/foo bar; printf 'set /files/etc/ssh/sshd_config/Match[1]/Condition/User root\nset /files/etc/ssh/sshd_config/Match[1]/Settings/X11Forwarding\nsave\nprint /augeas//error\n' | augtool; augtool print /augeas/files/etc/ssh/sshd_config; augtool match '/files/etc/ssh/sshd_config/*' | head -n 30" 
head -c 7000 "$out/augtool-errors.txt" | head -n -1 > augtool.tmp; { cat augtool.tmp; echo "[output cut at 7000 bytes for this fixture]"; tail -n 32 "$out/augtool-errors.txt"; } > "$out/augtool-errors.txt"

# sed errors.
cp /etc/ssh/sshd_config s.conf
run sed-errors.txt "set -x; sed -i 's/^#\\?PermitRootLogin.*/PermitRootLogin no' s.conf; sed -i 's/^PermitRootLogin.*/PermitRootLogin no/g x' s.conf; sed -i '/^PermitRootLogin/{s/yes/no/' s.conf; sed -i 's/a/b/' /etc/ssh/sshd_config.d/50-cloud-init.conf; sed -i 's/UsePAM yes/UsePAM no/' /proc/version; sed -n '/PermitRootLogin/p' s.conf; grep -c '' s.conf; sed -i -e 's/^X11Forwarding yes/X11Forwarding no/' -e s.conf; sed -i 's/\(PermitRootLogin\) .*/\2 no/' s.conf; sed --in-place=.bak -E 's/^#?(MaxAuthTries).*/\\1 4/' s.conf && grep -n MaxAuthTries s.conf s.conf.bak; sed -i 's|^#Banner none|Banner /etc/issue.net|' /etc/ssh/sshd_config.d; sed --version | head -n 1"

# find / as an unprivileged user: a permission-denied flood.
run find-permission-denied.txt "su nobody -s /bin/sh -c 'find / -xdev -name \"*.rules\" 2>&1' | grep -v '^/usr/share' | head -n 160"

# oscap xccdf eval on one rule and on a small profile slice.
ds=/usr/share/xml/scap/ssg/content/ssg-debian11-ds.xml
run oscap-xccdf-eval.txt "oscap xccdf eval --profile xccdf_org.ssgproject.content_profile_anssi_np_nt28_minimal --results results.xml $ds | head -n 120"

# systemctl and journalctl in a container without systemd as PID 1.
run systemctl-no-systemd.txt "systemctl restart sshd; systemctl status ssh; journalctl -u ssh --no-pager -n 20; service ssh status; service sshd restart; ls -la /run/systemd/system; cat /proc/1/comm; ps -eo pid,ppid,user,comm,args --sort=pid | cut -c1-140 | head -n 40"

# Commands that are not there, a timeout, a SIGKILL, sysctl.
run command-not-found.txt "authselect select sssd with-faillock --force; getenforce; semanage port -l | grep ssh; update-crypto-policies --set DEFAULT:NO-SHA1; grubby --update-kernel=ALL --args=audit=1; echo PATH=\$PATH; ls /usr/sbin | head -n 120 | column -c 120"
run aide-init-timeout-killed.txt "echo '+ timeout 5 aide --init'; timeout 5 aide --config /etc/aide/aide.conf --init; echo status \$?; echo '+ aide --init (killed after 4 s)'; aide --config /etc/aide/aide.conf --init & pid=\$!; sleep 4; kill -9 \$pid; wait \$pid; echo status \$?; ls -la /var/lib/aide; grep -c . /etc/aide/aide.conf; ls /etc/aide/aide.conf.d | head -n 80 | column -c 120"
run sysctl-system.txt "sysctl -w kernel.randomize_va_space=2; sysctl -w net.ipv4.conf.all.send_redirects=0; echo 0 > /proc/sys/net/ipv4/ip_forward; sysctl --system 2>&1 | tail -n 25; sysctl -a 2>/dev/null | grep -E '^(kernel\.(kptr|dmesg|rand|yama|perf)|net\.ipv4\.conf\.(all|default)\.)' | head -n 60"

# ls -la /etc
run ls-la-etc.txt "ls -la /etc"
rm -rf "$work"
