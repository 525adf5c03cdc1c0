package safety

import (
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift/shell"
)

// BenchmarkMatchTypical: one model command of ordinary size.
func BenchmarkMatchTypical(b *testing.B) {
	bl, err := NewBanList([]string{`systemctl (restart|stop) ssh`})
	if err != nil {
		b.Fatal(err)
	}
	cmd := `sed -i 's/^#\?PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config && sshd -t && systemctl reload ssh`
	for b.Loop() {
		bl.Match(cmd)
	}
}

// BenchmarkMatchHeredoc: a 4 KiB configuration file written with a
// here-document.
func BenchmarkMatchHeredoc(b *testing.B) {
	cmd := "cat > /etc/ssh/sshd_config.d/00-hardening.conf <<'EOF'\n" +
		strings.Repeat("PermitRootLogin no\nMaxAuthTries 4\nClientAliveInterval 300\n", 64) + "EOF\nsshd -t"
	bl := DefaultBanList()
	for b.Loop() {
		bl.Match(cmd)
	}
}

// BenchmarkMatchWorstCase: the slowest of the pathological inputs of
// shell.MaxLen bytes found so far (a long list of Python string literals).
func BenchmarkMatchWorstCase(b *testing.B) {
	cmd := "python3 -c '" + strings.Repeat(`"a",`, (shell.MaxLen-100)/5) + "'"
	bl := DefaultBanList()
	for b.Loop() {
		bl.Match(cmd)
	}
}
