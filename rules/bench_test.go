package rules

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

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
