package safety_test

import (
	"testing"

	"github.com/nightshift-dev/nightshift/safety"
)

// TestCertainty: refusals the text determines are certain; those resting
// on what is only known when the command runs are not, and MatchCertain
// allows them. A certain ban later in a command line is reported before
// an uncertain one.
func TestCertainty(t *testing.T) {
	tests := []struct {
		cmd     string
		banned  bool
		certain bool
	}{
		{`rm -rf /etc`, true, true},
		{`x=/dev/sdb; dd if=/dev/zero of=${x%b}a`, true, true},
		{`a=(stop ssh); systemctl "${a[@]}"`, true, true},
		{`kill -9 01`, true, true},
		{`find / -delete -name x`, true, true},
		{`apt-get -y remove '?name(openssh-server)'`, true, true},
		{`echo x > /etc/shadow`, true, true},
		{`rm -rf "$d"`, true, false},
		{`systemctl ${x:-stop} ssh`, true, false},
		{`kill "$pid"`, true, false},
		{`python3 -c 'print(1)'`, true, false},
		{`eval "$CMD"`, true, false},
		{`sed -i '/^+:/d' /etc/shadow`, true, false},
		{`"${cmd[@]}"; rm -rf /usr`, true, true},
		{`apt purge '~c'`, false, false},
		// Links the command line makes are followed under them.
		{`ln -s /etc ./e; rm -rf ./e/*`, true, true},
		{`cd /tmp && ln -s ../usr u && rm -rf u/lib`, true, true},
		{`ln -s /etc /tmp/e; rm -f /tmp/e`, false, false},
		{`ln -s /tmp/x /tmp/y; rm -rf /tmp/y/z`, false, false},
		{`firewall-cmd --permanent --zone=$zone --add-service=ssh`, false, false},
		{`firewall-cmd --set-default-zone=$z`, true, false},
		{`firewall-cmd $opt`, true, false},
		{`ufw allow from "$ip" to any port 22`, false, false},
		{`ufw default "$p" incoming`, true, false},
		{`nft add rule inet filter input ip saddr $ip accept`, true, false},
		// Root taking the directories of program trees is harmless; the
		// files (chown clears setuid bits), other trees, or -R are not.
		{`find -H /bin/ -type d -exec chown -L 0 {} \;`, false, false},
		{`find /usr/lib -type d -exec chgrp root {} +`, false, false},
		{`find /bin -type d -exec chown -R 0 {} \;`, true, true},
		{`find /bin -exec chown 0 {} \;`, true, true},
		{`find /var -type d -exec chown 0 {} \;`, true, true},
		{`find /usr -type d -exec chown nobody {} \;`, true, true},
		// The backup takes the live file; anything else onto them is banned.
		{`cp /etc/shadow /etc/shadow-`, false, false},
		{`cp /etc/shadow- /etc/shadow`, true, true},
		{`cp /tmp/x /etc/shadow-`, true, true},
		// IFS= before read is read's alone: the array after the loop is still known.
		{"c=(rm -rf); while IFS= read -r l; do :; done < /x; \"${c[@]}\" /etc", true, true},
		{`find /etc -name '*.bak' -delete`, false, false},
	}
	bl := safety.DefaultBanList()
	for _, tt := range tests {
		ban, banned := bl.Match(tt.cmd)
		if banned != tt.banned || ban.Certain != tt.certain {
			t.Errorf("Match(%q) = banned %v certain %v (%s), want banned %v certain %v", tt.cmd, banned, ban.Certain, ban, tt.banned, tt.certain)
		}
		if _, c := bl.MatchCertain(tt.cmd); c != (tt.banned && tt.certain) {
			t.Errorf("MatchCertain(%q) = %v, want %v", tt.cmd, c, tt.banned && tt.certain)
		}
	}
}
