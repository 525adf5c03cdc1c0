package inventory

import (
	"errors"
	"testing"
)

func fuzzCheck(t *testing.T, inv *Inventory, err error) {
	if err != nil {
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("error %v is not a *ParseError", err)
		}
		return
	}
	for _, h := range inv.Hosts() {
		if h.Name == "" || h.Port < 0 || h.Port > 65535 {
			t.Fatalf("bad host %+v", h)
		}
		if got, err := inv.Select(h.Name); err != nil || len(got) == 0 {
			t.Fatalf("Select(%q) of a listed host: %v", h.Name, err)
		}
	}
	for _, g := range inv.Groups() {
		if _, err := inv.Select(g); err != nil {
			t.Fatalf("Select(%q) of a listed group: %v", g, err)
		}
	}
}

func FuzzParseINI(f *testing.F) {
	for _, s := range []string{
		"a\n[web]\nw[01:03] ansible_port=22\n[p:children]\nweb\n[p:vars]\nx=1\n",
		"[a:children]\nb\n[b:children]\na\n",
		"h:22 k='v w' # c\n",
		"n[0:10:5][a:b]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		inv, err := ParseINI("fuzz.ini", data)
		fuzzCheck(t, inv, err)
	})
}

func FuzzParseYAML(f *testing.F) {
	for _, s := range []string{
		"- a\n- host: b\n  port: 22\n  groups: [x]\n  vars: {k: v}\n",
		"hosts:\n  - a\n",
		"hosts: ~\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		inv, err := ParseYAML("fuzz.yaml", data)
		fuzzCheck(t, inv, err)
	})
}
