package debtarget

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMountsUnder(t *testing.T) {
	// Lines in the format of /proc/self/mountinfo (proc(5)).
	const info = `22 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda rw
40 22 0:5 / /tmp/nightshift-debian-1/root/proc rw - proc proc rw
41 40 0:5 /sys /tmp/nightshift-debian-1/root/proc/sys ro - proc proc rw
42 22 0:6 / /tmp/nightshift-debian-10/root rw - tmpfs tmpfs rw
43 22 0:7 / /tmp/with\040space/x rw - tmpfs tmpfs rw
44 22 0:8 / /tmp/nightshift-debian-1 rw - tmpfs tmpfs rw
short line
`
	path := filepath.Join(t.TempDir(), "mountinfo")
	if err := os.WriteFile(path, []byte(info), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dir  string
		want []string
	}{
		{"/tmp/nightshift-debian-1", []string{"/tmp/nightshift-debian-1/root/proc", "/tmp/nightshift-debian-1/root/proc/sys", "/tmp/nightshift-debian-1"}},
		{"/tmp/nightshift-debian-1/", []string{"/tmp/nightshift-debian-1/root/proc", "/tmp/nightshift-debian-1/root/proc/sys", "/tmp/nightshift-debian-1"}},
		{"/tmp/nightshift-debian-10", []string{"/tmp/nightshift-debian-10/root"}},
		{"/tmp/with space", []string{"/tmp/with space/x"}},
		{"/tmp/none", nil},
	}
	for _, tt := range tests {
		got := MountsUnder(path, tt.dir)
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("MountsUnder(%q) = %q, want %q", tt.dir, got, tt.want)
		}
	}
	if got := MountsUnder(filepath.Join(t.TempDir(), "missing"), "/"); len(got) != 1 {
		t.Errorf("an unreadable mountinfo gave %q; want one entry so nothing is deleted", got)
	}
}

func TestUnescapeMountinfo(t *testing.T) {
	for in, want := range map[string]string{`/a\040b`: "/a b", `/a\011b\134`: "/a\tb\\", `/tail\04`: `/tail\04`, `/x\999`: `/x\999`, "/plain": "/plain"} {
		if got := unescapeMountinfo(in); got != want {
			t.Errorf("unescapeMountinfo(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestControlConfig(t *testing.T) {
	c := controlConfig(2222, false)
	for _, want := range []string{"ListenAddress 127.0.0.1:2222\n", "AuthorizedKeysFile /etc/nightshift/authorized_keys\n", "PasswordAuthentication no\n", "PermitRootLogin prohibit-password\n"} {
		if !strings.Contains(c, want) {
			t.Errorf("control config lacks %q:\n%s", want, c)
		}
	}
	if strings.Contains(c, "/etc/ssh/") {
		t.Errorf("control config refers to /etc/ssh:\n%s", c)
	}
	// With Options.SudoLogin, a login's own ~/.ssh/authorized_keys too.
	if c := controlConfig(2222, true); !strings.Contains(c, "AuthorizedKeysFile /etc/nightshift/authorized_keys .ssh/authorized_keys\n") {
		t.Errorf("control config with a sudo login lacks the login's own authorized_keys:\n%s", c)
	}
}
