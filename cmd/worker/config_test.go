package main

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigFile: what a configuration file sets, what a flag already
// given keeps, and each malformed file's message.
func TestConfigFile(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		given      []string // flags on the command line
		check      func(t *testing.T, m *runMeta, r *runFlags)
		wantErr    string
	}{
		{name: "empty", file: "", check: func(t *testing.T, m *runMeta, r *runFlags) { assert.Equal(t, defaultBaseURL, m.BaseURL) }},
		{name: "comments only", file: "# nothing\n", check: func(t *testing.T, m *runMeta, r *runFlags) { assert.Equal(t, defaultBaseURL, m.BaseURL) }},
		{name: "values", file: "rules: [a.yaml, b.yaml]\nrule: x\nretry-deadline: 90s\nno-lessons: true\nparallel-hosts: 8\nsandbox: auto\n",
			check: func(t *testing.T, m *runMeta, r *runFlags) {
				assert.Equal(t, stringList{"a.yaml", "b.yaml"}, r.rulesPaths)
				assert.Equal(t, stringList{"x"}, r.ruleIDs)
				assert.Equal(t, 90*time.Second, m.RetryDeadline)
				assert.True(t, r.observe.noLessons)
				assert.Equal(t, 8, m.ParallelHosts)
				assert.Equal(t, sandboxAuto, m.Sandbox)
			}},
		{name: "a flag given wins", file: "parallel-hosts: 8\nrules: [a.yaml]\n", given: []string{"--parallel-hosts", "2", "--rules", "c.yaml"},
			check: func(t *testing.T, m *runMeta, r *runFlags) {
				assert.Equal(t, 2, m.ParallelHosts)
				assert.Equal(t, stringList{"c.yaml"}, r.rulesPaths, "a repeatable flag given is not added to")
			}},
		{name: "unknown key", file: "base-url: http://a:1/v1\nbse-url: x\n", wantErr: "c.yaml:2: unknown key \"bse-url\": not a flag of worker run"},
		{name: "config key", file: "config: other.yaml\n", wantErr: "c.yaml:1: unknown key \"config\": not a flag of worker run"},
		{name: "unknown key given on the command line too", file: "zone: a\n", given: []string{"--parallel-hosts", "2"},
			wantErr: "c.yaml:1: unknown key \"zone\": not a flag of worker run"},
		{name: "twice", file: "rule: a\nrule: b\n", wantErr: "c.yaml:2: key \"rule\" given twice (first at line 1)"},
		{name: "list for one value", file: "journal:\n  - a.db\n", wantErr: "c.yaml:2: journal: takes one value, not a list"},
		{name: "mapping value", file: "journal: {a: b}\n", wantErr: "c.yaml:1: journal: want a value, not a mapping"},
		{name: "nested list", file: "rules: [[a]]\n", wantErr: "c.yaml:1: rules: line 1: want a value, not a list or mapping"},
		{name: "null", file: "journal: ~\n", wantErr: "c.yaml:1: journal: no value"},
		{name: "bad value", file: "\n\nretry-deadline: soon\n", wantErr: "c.yaml:3: retry-deadline: parse error"},
		{name: "bad sandbox", file: "sandbox: maybe\n", wantErr: `c.yaml:1: sandbox: "maybe" is not a sandbox mode (required, auto or off)`},
		{name: "not a mapping", file: "[a, b]\n", wantErr: "c.yaml:1: want a mapping of flag names to values"},
		{name: "key not a scalar", file: "? [a]\n: b\n", wantErr: "c.yaml:1: a key must be a flag name"},
		{name: "second document", file: "rule: a\n---\nrule: b\n", wantErr: "c.yaml:2: a second YAML document (one mapping of flag names is expected)"},
		{name: "not YAML", file: "rule: [a\n", wantErr: "c.yaml: not valid YAML: yaml: line 1: did not find expected ',' or ']'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, r := &runMeta{}, &runFlags{}
			fs := newRunFlags(m, r, io.Discard)
			_, err := fs.parse(tc.given)
			require.NoError(t, err)
			given := map[string]bool{}
			for _, a := range tc.given {
				if a[0] == '-' {
					given[a[2:]] = true
				}
			}
			err = fs.applyFile("c.yaml", []byte(tc.file), given)
			if tc.wantErr != "" {
				var ue *usageError
				require.True(t, errors.As(err, &ue), "%v", err)
				assert.EqualError(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			tc.check(t, m, r)
		})
	}
}

// FuzzConfigFile: any file is read or refused with a usage error, never a
// panic.
func FuzzConfigFile(f *testing.F) {
	for _, seed := range []string{"", "rules: [a.yaml]\nparallel-hosts: 8\n", "a: b\n---\n", "? [a]\n: b\n", "rules: [[a]]\n", "journal: ~\n", "&a b: *a\n", "- 1\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fs := newRunFlags(&runMeta{}, &runFlags{}, io.Discard)
		if _, err := fs.parse(nil); err != nil {
			t.Fatal(err)
		}
		if err := fs.applyFile("f.yaml", data, map[string]bool{}); err != nil {
			var ue *usageError
			if !errors.As(err, &ue) {
				t.Fatalf("not a usage error: %v", err)
			}
		}
	})
}
