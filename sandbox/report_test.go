package sandbox

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestReportFacts reads the sections that carry facts of the host for the
// judge (the PAM view, programs shadowed in root's PATH, the worker's
// address), as the helper writes them (pam_facts, shadow_facts,
// origin_fact), and refuses a malformed shadows list.
func TestReportFacts(t *testing.T) {
	sec := func(name, body string) string { return fmt.Sprintf("%s %d\n%s\n", name, len(body), body) }
	base := sec("exit", "0") + sec("mounts", "0 overlay /\n") + sec("upper", "") + sec("lower", "") + sec("deleted", "") + sec("actions", "")
	pam := "file before /etc/pam.d/sshd\n|@include common-auth\n|account required pam_nologin.so\nfile before /etc/securetty\n" +
		"file after /etc/pam.d/sshd\n|account required pam_access.so\n|\nfile after /etc/security/access.conf\n|-:ALL:ALL\n" +
		"module before pam_nologin.so 1\nmodule after pam_access.so 0\nlogin ops\ngroups ops ops sudo\ngroups root root\n"
	r, err := parseReport([]byte(base + sec("pam", pam) + sec("shadows", "/usr/local/bin/ls\x00/usr/bin/ls\x00") + sec("origin", "192.0.2.7")))
	if err != nil {
		t.Fatal(err)
	}
	eff, _, err := r.effects()
	if err != nil {
		t.Fatal(err)
	}
	v := eff.PAM
	if v == nil {
		t.Fatal("no PAM view")
	}
	for _, c := range []struct{ got, want string }{
		{v.Before.Files["/etc/pam.d/sshd"], "@include common-auth\naccount required pam_nologin.so\n"},
		{v.After.Files["/etc/pam.d/sshd"], "account required pam_access.so\n\n"},
		{v.After.Files["/etc/security/access.conf"], "-:ALL:ALL\n"},
		{v.Login, "ops"},
		{strings.Join(v.Groups["ops"], " "), "ops sudo"},
		{eff.Shadows["/usr/local/bin/ls"], "/usr/bin/ls"},
		{eff.Origin, "192.0.2.7"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if s, ok := v.Before.Files["/etc/securetty"]; !ok || s != "" {
		t.Errorf("an empty file is listed empty: %q, %v", s, ok)
	}
	if _, ok := v.After.Files["/etc/securetty"]; ok {
		t.Error("a file absent after is listed")
	}
	if !v.Before.Modules["pam_nologin.so"] || v.After.Modules["pam_access.so"] || !slices.Contains(v.Groups["root"], "root") {
		t.Errorf("modules or groups misread: %+v %+v", v.Before.Modules, v.After.Modules)
	}

	r, err = parseReport([]byte(base + sec("pam", "") + sec("shadows", "")))
	if err != nil {
		t.Fatal(err)
	}
	if eff, _, err = r.effects(); err != nil || eff.PAM != nil || eff.Shadows != nil || eff.Origin != "" {
		t.Errorf("empty sections: %+v, %v", eff, err)
	}
	r, err = parseReport([]byte(base + sec("shadows", "/usr/local/bin/ls\x00")))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err = r.effects(); err == nil {
		t.Error("a shadows list with an odd number of fields was accepted")
	}
}
