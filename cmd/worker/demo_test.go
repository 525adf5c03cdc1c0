package main

import (
	"strings"
	"testing"
)

// TestDemo runs the README's first command: the sample rule is fixed on a
// disposable local target and the table is printed.
func TestDemo(t *testing.T) {
	code, out, errOut := cli(t, "", "demo")
	if code != exitOK {
		t.Fatalf("demo: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"sshd_disable_root_login", "fixed", "now says: PermitRootLogin no", "PROMPT/LIMIT"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}
