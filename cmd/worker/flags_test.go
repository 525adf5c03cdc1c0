package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/nightshift-dev/nightshift/batch"
	"github.com/nightshift-dev/nightshift/budget"
	"github.com/nightshift-dev/nightshift/fleet"
	"github.com/nightshift-dev/nightshift/internal/goldenfile"
	"github.com/nightshift-dev/nightshift/sshexec"
	"github.com/nightshift-dev/nightshift/worker"
)

// commandHelp is the arguments that print each registry command's help.
var commandHelp = map[command][]string{
	cmdFix: {"help", "fix"}, cmdRun: {"run", "--help"}, cmdResume: {"resume", "--help"}, cmdServe: {"fleet", "serve", "--help"},
	cmdStart: {"fleet", "start", "--help"}, cmdFleetStatus: {"fleet", "status", "--help"}, cmdFleetReport: {"fleet", "report", "--help"},
	cmdFleetCancel: {"fleet", "cancel", "--help"}, cmdFleetUndo: {"fleet", "undo", "--help"}, cmdHistory: {"history", "--help"},
	cmdUndo: {"undo", "--help"}, cmdDemo: {"demo", "--help"}, cmdSimulate: {"simulate-server", "--help"}, cmdTokens: {"tokens", "--help"},
	cmdCheckCommand: {"check-command", "--help"}, cmdRecipes: {"recipes", "--help"}, cmdExport: {"export", "--help"},
	cmdFleetExport: {"fleet", "export", "--help"},
}

// TestFlagRegistry: every flag in a command's help is the registry's for
// that command, each flag the registry gives a command is in its help
// once, and no command has two specs of one name.
func TestFlagRegistry(t *testing.T) {
	t.Parallel()
	require.Len(t, commandHelp, len(commandNames))
	for c, args := range commandHelp {
		t.Run(commandNames[c], func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), args, nil, &out, &out)
			require.ErrorIs(t, err, errHelp)
			help := out.String()
			for _, m := range regexp.MustCompile(`(?m)^  --?([a-z0-9-]+)`).FindAllStringSubmatch(help, -1) {
				_, ok := specFor(m[1], c)
				assert.True(t, ok, "--%s is not the registry's", m[1])
			}
			seen := map[string]bool{}
			for _, s := range flagRegistry {
				if s.cmds&c == 0 {
					continue
				}
				assert.False(t, seen[s.name], "two specs of --%s", s.name)
				seen[s.name] = true
				dash := "--"
				if len(s.name) == 1 {
					dash = "-"
				}
				re := regexp.MustCompile(`(?m)^  ` + dash + regexp.QuoteMeta(s.name) + `( |$)`)
				assert.Len(t, re.FindAllString(help, -1), 1, "--%s in the help", s.name)
			}
			for _, g := range groupOrder {
				assert.LessOrEqual(t, strings.Count(help, "\n"+g+":\n"), 1, "group %s", g)
			}
		})
	}
}

// TestHelpGolden: the help of 'worker' and of each registry command, as
// generated from the registry, is testdata/help/NAME.golden (go test
// -run TestHelpGolden -update rewrites them: review the diff).
func TestHelpGolden(t *testing.T) {
	cases := map[string][]string{"worker": {"--help"}}
	for c, args := range commandHelp {
		if c != cmdFix {
			cases[strings.ReplaceAll(commandNames[c], " ", "-")] = args
		}
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			require.ErrorIs(t, run(context.Background(), args, nil, &out, &out), errHelp)
			goldenfile.Check(t, filepath.Join("testdata", "help", name+".golden"), out.Bytes())
		})
	}
}

// libraryConfigs are the configuration types flags set, by the name a
// spec's field gives.
var libraryConfigs = map[string]reflect.Type{
	"worker.Config": reflect.TypeFor[worker.Config](), "worker.ClientConfig": reflect.TypeFor[worker.ClientConfig](), "worker.Recipes": reflect.TypeFor[worker.Recipes](),
	"batch.Config": reflect.TypeFor[batch.Config](), "budget.Config": reflect.TypeFor[budget.Config](),
	"sshexec.Config": reflect.TypeFor[sshexec.Config](), "fleet.Night": reflect.TypeFor[fleet.Night](),
	"fleet.ModelSpec": reflect.TypeFor[fleet.ModelSpec](), "fleet.DatastreamSource": reflect.TypeFor[fleet.DatastreamSource](),
	"fleet.ServeConfig": reflect.TypeFor[fleet.ServeConfig](), "fleet.Activities": reflect.TypeFor[fleet.Activities](),
	"fleet.TLS": reflect.TypeFor[fleet.TLS](), "client.Options": reflect.TypeFor[client.Options](),
}

// TestFlagFields: the library field each flag names exists, so that the
// registry cannot name a field that was renamed or removed.
func TestFlagFields(t *testing.T) {
	for _, s := range flagRegistry {
		if s.field == "" {
			continue
		}
		i := strings.LastIndexByte(s.field, '.')
		typ, ok := libraryConfigs[s.field[:i]]
		if !assert.True(t, ok, "--%s: unknown type in %s", s.name, s.field) {
			continue
		}
		_, ok = typ.FieldByName(s.field[i+1:])
		assert.True(t, ok, "--%s: %s has no field %s", s.name, typ, s.field[i+1:])
	}
}

// TestStartRefusesRunFlags: every flag of 'worker run' that 'fleet start'
// does not take says why, and start refuses it by name before reading any
// file.
func TestStartRefusesRunFlags(t *testing.T) {
	runFS := newRunFlags(&runMeta{}, &runFlags{}, io.Discard)
	n := 0
	runFS.VisitAll(func(f *flag.Flag) {
		if _, ok := specFor(f.Name, cmdStart); ok {
			return
		}
		n++
		s, _ := specFor(f.Name, cmdRun)
		assert.NotEmpty(t, s.notNight, "--%s: no reason a night does not take it", f.Name)
		args := []string{"fleet", "start", "--rules", "missing.yaml", "--inventory", "missing.yaml", "--" + f.Name}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
			args = append(args, "x")
		}
		err := run(context.Background(), args, nil, io.Discard, io.Discard)
		var ue *usageError
		if assert.True(t, errors.As(err, &ue), "--%s: %v", f.Name, err) {
			assert.Equal(t, "fleet start: --"+f.Name+" is a flag of 'worker run' that a night does not take: "+s.notNight, err.Error())
		}
	})
	assert.Positive(t, n)
}

// TestParseInterspersed: flags before, between and after positional
// arguments; "--" ends the flags unless it is a flag's value.
func TestParseInterspersed(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		pos       []string
		html      string
		wait      bool
		wantError string
	}{
		{args: []string{"tonight"}, pos: []string{"tonight"}},
		{args: []string{"tonight", "--html", "n.html"}, pos: []string{"tonight"}, html: "n.html"},
		{args: []string{"--wait", "a", "--html=n.html", "b"}, pos: []string{"a", "b"}, html: "n.html", wait: true},
		{args: []string{"a", "--", "--html", "b"}, pos: []string{"a", "--html", "b"}},
		{args: []string{"--html", "--", "a"}, pos: []string{"a"}, html: "--"},
		{args: []string{"--wait", "--", "--wait"}, pos: []string{"--wait"}, wait: true},
		{args: []string{"a", "-", "b"}, pos: []string{"a", "-", "b"}},
		{args: []string{"a", "--frob"}, wantError: "flag provided but not defined: -frob"},
		{args: []string{"a", "--html"}, wantError: "flag needs an argument: -html"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			html := fs.String("html", "", "")
			wait := fs.Bool("wait", false, "")
			pos, err := parseInterspersed(fs, tc.args)
			if tc.wantError != "" {
				require.EqualError(t, err, tc.wantError)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.pos, pos)
			assert.Equal(t, tc.html, *html)
			assert.Equal(t, tc.wait, *wait)
		})
	}
}
