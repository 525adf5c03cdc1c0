package rules

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
// MaxCommandLen bytes found so far (a long list of Python string literals).
func BenchmarkMatchWorstCase(b *testing.B) {
	cmd := "python3 -c '" + strings.Repeat(`"a",`, (MaxCommandLen-100)/5) + "'"
	bl := DefaultBanList()
	for b.Loop() {
		bl.Match(cmd)
	}
}

// BenchmarkLoadValid: loading the example rule directory.
func BenchmarkLoadValid(b *testing.B) {
	dir := filepath.Join(testdataDir, "valid")
	for b.Loop() {
		if _, err := Load(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseLarge: a 1000-rule file.
func BenchmarkParseLarge(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("rules:\n")
	for i := range 1000 {
		sb.WriteString("  - id: rule_" + strings.Repeat("x", i%7) + "_" + string(rune('a'+i%26)) + "_" + strconv.Itoa(i) + "\n")
		sb.WriteString("    title: A rule\n    check: grep -q x /etc/y\n    banned: ['systemctl (restart|stop) ssh']\n    max_attempts: 10\n")
	}
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse("large.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}
