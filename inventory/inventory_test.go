package inventory

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nightshift-dev/nightshift/internal/goldenfile"
	"github.com/nightshift-dev/nightshift/internal/readfile"
)

// golden compares got with testdata/inventory/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("..", "testdata", "inventory", name), got)
}

func TestLoadGolden(t *testing.T) {
	for _, file := range []string{"hosts.ini", "hosts.yaml"} {
		t.Run(file, func(t *testing.T) {
			inv, err := Load(filepath.Join("..", "testdata", "inventory", file))
			require.NoError(t, err)
			out := struct {
				Hosts  []Host              `json:"hosts"`
				Groups map[string][]string `json:"groups"`
			}{inv.Hosts(), map[string][]string{}}
			for _, g := range inv.Groups() {
				hs, err := inv.Select(g)
				require.NoError(t, err)
				names := []string{}
				for _, h := range hs {
					names = append(names, h.Name)
				}
				out.Groups[g] = names
			}
			b, err := json.MarshalIndent(out, "", "  ")
			require.NoError(t, err)
			golden(t, file+".golden.json", append(b, '\n'))
		})
	}
}

// TestINISemantics states the Ansible behaviours the golden file holds, so a
// wrong golden cannot be accepted silently.
func TestINISemantics(t *testing.T) {
	inv, err := Load(filepath.Join("..", "testdata", "inventory", "hosts.ini"))
	require.NoError(t, err)
	tests := []struct {
		host string
		want Host
	}{
		{"bastion.example.com", Host{Address: "bastion.example.com", Port: 22, User: "jump", Groups: []string{"ungrouped"}}},
		{"web02.example.com", Host{Address: "web02.example.com", Port: 22, User: "deploy", Groups: []string{"prod", "web"}}},
		{"web-canary.example.com", Host{Address: "web-canary.example.com", Port: 2222, User: "canary", Groups: []string{"prod", "web"}}},
		{"db-b.example.com", Host{Address: "10.0.0.9", Port: 22, User: "deploy", Identity: "/keys/db key", Groups: []string{"db", "prod"}}},
		{"db-old", Host{Address: "10.0.0.99", Port: 2200, User: "legacy", Become: true, Groups: []string{"db", "prod"}}},
		{"job3", Host{Address: "job3", Port: 22, Groups: []string{"batch"}}},
	}
	for _, tt := range tests {
		h, ok := inv.Host(tt.host)
		if !assert.True(t, ok, "host %s missing", tt.host) {
			continue
		}
		got := Host{Address: h.Address, Port: h.Port, User: h.User, Identity: h.Identity, Become: h.Become, Groups: h.Groups}
		assert.Equal(t, tt.want, got, tt.host)
	}
	// Deeper group vars win over shallower ones; [all:vars] is lowest.
	web, ok := inv.Host("web01.example.com")
	require.True(t, ok)
	db, ok := inv.Host("db-a.example.com")
	require.True(t, ok)
	assert.Equal(t, "frontend", web.Vars["tier"], "web tier")
	assert.Equal(t, "production", db.Vars["tier"], "db tier")
	assert.Equal(t, "ams", db.Vars["datacenter"], "db datacenter")
	_, ok = inv.Host("job6")
	assert.True(t, ok, "stride range: job6 missing")
	_, ok = inv.Host("job1")
	assert.False(t, ok, "stride range: job1 present")
}

func TestExpand(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{"plain", []string{"plain"}, false},
		{"web[01:03].x", []string{"web01.x", "web02.x", "web03.x"}, false},
		{"w[8:10]", []string{"w8", "w9", "w10"}, false},
		{"w[008:010]", []string{"w008", "w009", "w010"}, false},
		{"[a:c]", []string{"a", "b", "c"}, false},
		{"[A:B]-[1:2]", []string{"A-1", "A-2", "B-1", "B-2"}, false},
		{"n[0:10:5]", []string{"n0", "n5", "n10"}, false},
		{"n[3:1]", nil, true},
		{"n[a:Z]", nil, true},
		{"n[1:2", nil, true},
		{"n1]", nil, true},
		{"n[1]", nil, true},
		{"n[1:2:0]", nil, true},
		{"n[a:5]", nil, true},
		{"n[0:999999]", nil, true},
		{"n[0:999][0:999]", nil, true},
		{"n[0:9223372036854775807:9223372036854775807]", []string{"n0", "n9223372036854775807"}, false},
	}
	for _, tt := range tests {
		got, err := expand(tt.in)
		if tt.wantErr {
			assert.ErrorIs(t, err, ErrRange, "expand(%q)", tt.in)
			continue
		}
		if assert.NoError(t, err, "expand(%q)", tt.in) {
			assert.Equal(t, tt.want, got, "expand(%q)", tt.in)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, format, src string
		line              int
		sentinel          error
		mention           string
	}{
		{"bad section", "ini", "a\n[web\n", 2, ErrSyntax, "no \"]\""},
		{"bad section kind", "ini", "[web:hosts]\n", 1, ErrSyntax, "web:hosts"},
		{"junk after header", "ini", "[web] x\n", 1, ErrSyntax, "after section header"},
		{"host var without =", "ini", "[web]\n\nw1 port\n", 3, ErrSyntax, "\"port\""},
		{"bad port", "ini", "[web]\nw1:99999\n", 2, ErrPort, "99999"},
		{"bad ansible_port", "ini", "[web]\nw1 ansible_port=ssh\n", 2, ErrPort, "ssh"},
		{"bad ansible_become", "ini", "[web]\nw1 ansible_become=sometimes\n", 2, ErrVar, "sometimes"},
		{"bad range", "ini", "[web]\nw[5:1]\n", 2, ErrRange, "after end"},
		{"unterminated quote", "ini", "w1 ansible_user='x\n", 1, ErrSyntax, "quote"},
		{"vars without =", "ini", "[web:vars]\nnonsense\n", 2, ErrSyntax, "key=value"},
		{"child not a name", "ini", "[p:children]\na b\n", 2, ErrSyntax, "not a group name"},
		{"cycle", "ini", "[a:children]\nb\n[b:children]\na\n", 4, ErrCycle, "own descendant"},
		{"all as child", "ini", "[a:children]\nall\n", 2, ErrCycle, "all"},
		{"vars of undeclared group", "ini", "[web]\nw1\n[db:vars]\nx=1\n", 3, ErrUndeclared, "[db:vars]"},
		{"undeclared child", "ini", "[web]\nw1\n[p:children]\nweb\ndb\n", 5, ErrUndeclared, "\"db\""},
		{"host with leading !", "ini", "[web]\n!w1\n", 2, ErrSyntax, "!w1"},
		{"group with leading !", "ini", "[!web]\nw1\n", 1, ErrSyntax, "!web"},
		{"yaml host with space", "yaml", "- host: a b\n", 1, ErrSyntax, "a b"},
		{"yaml syntax", "yaml", "hosts: [a\n", 0, ErrSyntax, "yaml"},
		{"yaml unknown key", "yaml", "- host: a\n  prot: 22\n", 2, ErrUnknownKey, "prot"},
		{"yaml top key", "yaml", "servers: []\n", 1, ErrUnknownKey, "servers"},
		{"yaml no host", "yaml", "- user: a\n", 1, ErrSyntax, "without"},
		{"yaml bad port", "yaml", "- host: a\n  port: 0\n", 2, ErrPort, "port"},
		{"yaml bad group", "yaml", "- host: a\n  groups: [\"x y\"]\n", 2, ErrSyntax, "x y"},
		{"yaml not a list", "yaml", "hosts: a\n", 1, ErrSyntax, "list"},
		{"yaml vars nested", "yaml", "- host: a\n  vars: {k: [1]}\n", 2, ErrSyntax, "\"k\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.format == "ini" {
				_, err = ParseINI("site.ini", []byte(tt.src))
			} else {
				_, err = ParseYAML("site.yaml", []byte(tt.src))
			}
			var pe *ParseError
			require.ErrorAs(t, err, &pe)
			assert.ErrorIs(t, err, tt.sentinel)
			assert.Equal(t, tt.line, pe.Line, "line of %v", err)
			assert.Contains(t, err.Error(), "site.", "the file's name")
			assert.Contains(t, err.Error(), tt.mention)
		})
	}
}

func TestSelect(t *testing.T) {
	inv, err := ParseINI("t.ini", []byte("solo\n[web]\nw1\nw2\n[db]\nd1\nw1\n[prod:children]\nweb\ndb\n[d1]\nsolo\n"))
	require.NoError(t, err)
	names := func(hs []Host) string {
		var s []string
		for _, h := range hs {
			s = append(s, h.Name)
		}
		return strings.Join(s, ",")
	}
	tests := []struct {
		patterns []string
		want     string
		err      error
	}{
		{nil, "solo,w1,w2,d1", nil},
		{[]string{"all"}, "solo,w1,w2,d1", nil},
		{[]string{"web"}, "w1,w2", nil},
		{[]string{"db", "web"}, "w1,w2,d1", nil},
		{[]string{"prod"}, "w1,w2,d1", nil},
		{[]string{"ungrouped"}, "", nil},
		{[]string{"d1", "solo"}, "solo,d1", nil},
		{[]string{"d1"}, "solo,d1", nil}, // both a group and a host
		{[]string{"prod", "!db"}, "w2", nil},
		{[]string{"!web"}, "solo,d1", nil},
		{[]string{"all", "!d1"}, "w1,w2", nil},
		{[]string{"nosuch"}, "", ErrNoMatch},
		{[]string{"web", "!nosuch"}, "", ErrNoMatch},
	}
	for _, tt := range tests {
		got, err := inv.Select(tt.patterns...)
		if tt.err != nil {
			assert.ErrorIs(t, err, tt.err, "Select(%v)", tt.patterns)
		} else if assert.NoError(t, err, "Select(%v)", tt.patterns) {
			assert.Equal(t, tt.want, names(got), "Select(%v)", tt.patterns)
		}
	}
	// Returned hosts are copies.
	hs, err := inv.Select("w1")
	require.NoError(t, err)
	require.NotEmpty(t, hs)
	hs[0].Groups[0] = "changed"
	h, ok := inv.Host("w1")
	require.True(t, ok)
	assert.NotEqual(t, "changed", h.Groups[0], "Select returned a host sharing memory with the inventory")
}

func TestDestination(t *testing.T) {
	tests := []struct {
		h    Host
		want string
	}{
		{Host{Name: "a"}, "a"},
		{Host{Name: "a", Address: "10.0.0.1", User: "u", Port: 2222}, "u@10.0.0.1:2222"},
		{Host{Name: "v6", Address: "fe80::1", Port: 22}, "[fe80::1]:22"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.h.Destination(), "%+v", tt.h)
	}
}

func TestLoadErrors(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "missing.ini"))
	assert.ErrorIs(t, err, os.ErrNotExist, "missing file")
	inv, err := ParseYAML("empty.yaml", nil)
	require.NoError(t, err, "empty YAML")
	assert.Empty(t, inv.Hosts(), "empty YAML")
}

// TestBoundedInputs: duplicate YAML keys are refused (yaml.v3 would keep
// the last), the host entries of a whole inventory are capped (not only
// each range), and a FIFO or a device is refused by name, without hanging.
func TestBoundedInputs(t *testing.T) {
	dir := t.TempDir()
	var ten strings.Builder
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&ten, "h%d-[0:99999]\n", i)
	}
	fifo := filepath.Join(dir, "hosts.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	tests := []struct {
		name, file, data string
		want             error
		msg              string
	}{
		{"two hosts lists", "dup.yaml", "hosts:\n  - web1\nhosts:\n  - web2\n", ErrSyntax, `dup.yaml:3: syntax error: key "hosts" appears twice (first at line 1)`},
		{"two keys in a host", "dup2.yaml", "hosts:\n  - host: web1\n    port: 22\n    port: 2222\n", ErrSyntax, `key "port" appears twice (first at line 3)`},
		// fault: duplicate-host
		{"one host twice", "twice.yaml", "hosts:\n  - host: web1\n    port: 22\n  - web2\n  - host: web1\n    port: 2222\n", ErrDuplicateHost, `twice.yaml:5: duplicate host: host "web1" is listed twice (first at line 2)`},
		{"one name twice", "twice2.yaml", "- web1\n- web1\n", ErrDuplicateHost, `twice2.yaml:2: duplicate host: host "web1" is listed twice (first at line 1)`},
		{"two documents", "two.yaml", "hosts:\n  - web1\n---\nhosts:\n  - web2\n", ErrSyntax, `two.yaml:3: syntax error: more than one YAML document (one inventory per file)`},
		{"total expansion", "ten.ini", ten.String(), ErrRange, `ten.ini:2: invalid host range: "h1-[0:99999]": the inventory would hold more than 100000 host entries`},
		{"fifo", "", "", readfile.ErrNotRegular, "hosts.yaml: not a regular file (a FIFO)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := fifo
			if tt.file != "" {
				path = filepath.Join(dir, tt.file)
				require.NoError(t, os.WriteFile(path, []byte(tt.data), 0o644))
			}
			_, err := Load(path)
			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}
