package inventory

import (
	"fmt"
	"strings"
	"testing"
)

func BenchmarkParseINI(b *testing.B) {
	var sb strings.Builder
	for g := 0; g < 50; g++ {
		fmt.Fprintf(&sb, "[g%02d]\nhost%02d-[001:200].example.com ansible_user=deploy\n[g%02d:vars]\nzone=z%d\n", g, g, g, g%5)
	}
	sb.WriteString("[prod:children]\n")
	for g := 0; g < 50; g++ {
		fmt.Fprintf(&sb, "g%02d\n", g)
	}
	data := []byte(sb.String())
	b.ReportAllocs()
	for b.Loop() {
		inv, err := ParseINI("bench.ini", data)
		if err != nil {
			b.Fatal(err)
		}
		if len(inv.hosts) != 10000 {
			b.Fatalf("%d hosts", len(inv.hosts))
		}
	}
}
