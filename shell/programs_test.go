package shell

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift/internal/testenv"
)

// argKind is how an option takes its argument.
type argKind int

const (
	noArg argKind = iota
	needsArg
	optionalArg
)

func (k argKind) String() string {
	switch k {
	case noArg:
		return "no argument"
	case needsArg:
		return "an argument"
	case optionalArg:
		return "an optional argument"
	default:
		return "?"
	}
}

var (
	helpLine  = regexp.MustCompile(`^ {1,8}(-\S.*?)(?: {2,}|$)`)
	helpLong  = regexp.MustCompile(`^(--[a-zA-Z0-9][-a-zA-Z0-9]*)(\[=[^\]]*\]|=\S+| \S+)?$`)
	helpShort = regexp.MustCompile(`^-([a-zA-Z0-9])( \S+|\[\S+\]|\S+)?$`)
)

// helpOptions reads the options a GNU program's --help lists ("-t,
// --target-directory=DIRECTORY", "--backup[=CONTROL]", "-l N") with how
// each takes its argument; a short option takes its long form's kind (an
// optional long argument is given to the short one attached only).
func helpOptions(help string) map[string]argKind {
	kindOf := func(arg string) argKind {
		switch {
		case arg == "":
			return noArg
		case strings.HasPrefix(arg, "["):
			return optionalArg
		default:
			return needsArg
		}
	}
	out := map[string]argKind{}
	for line := range strings.SplitSeq(help, "\n") {
		m := helpLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		parts := strings.Split(m[1], ", ")
		long, hasLong := argKind(0), false
		for _, p := range parts {
			if lm := helpLong.FindStringSubmatch(strings.TrimSpace(p)); lm != nil {
				long, hasLong = kindOf(lm[2]), true
				out[lm[1]] = long
			}
		}
		for _, p := range parts {
			sm := helpShort.FindStringSubmatch(strings.TrimSpace(p))
			if sm == nil {
				continue
			}
			k := kindOf(sm[2])
			if hasLong && sm[2] == "" {
				k = long
				if k == optionalArg {
					k = noArg // -u for --remove[=HOW]: the short form takes none
				}
			}
			out["-"+sm[1]] = k
		}
	}
	return out
}

// kindIn is how o takes the option's argument, and whether o has it.
func kindIn(o Options, name string) (argKind, bool) {
	if c, short := strings.CutPrefix(name, "-"); short && !strings.HasPrefix(c, "-") {
		switch {
		case strings.Contains(o.Args, c):
			return needsArg, true
		case strings.Contains(o.Optional, c):
			return optionalArg, true
		case strings.Contains(o.Flags, c):
			return noArg, true
		}
		return 0, false
	}
	for k, list := range [][]string{o.Long, o.LongArgs, o.LongOpt} {
		if slices.Contains(list, name) {
			return argKind(k), true
		}
	}
	return 0, false
}

// TestProgramOptionsMatchHelp: every option the real coreutils and sed of
// this machine list in --help is in the table and takes its argument the
// same way (an optional "=value" also accepts the bare option, so a table
// entry newer versions made optional, such as --update, passes).
func TestProgramOptionsMatchHelp(t *testing.T) {
	for _, prog := range []string{"rm", "mv", "cp", "ln", "install", "chmod", "chown", "chgrp", "chcon", "touch", "mkdir", "rmdir", "truncate", "tee", "shred", "sed"} {
		t.Run(prog, func(t *testing.T) {
			path, err := exec.LookPath(prog)
			if err != nil {
				testenv.Unavailable(t, "%s is not installed", prog)
			}
			cmd := exec.Command(path, "--help")
			cmd.Env = append(os.Environ(), "LC_ALL=C")
			help, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s --help: %v", prog, err)
			}
			want := helpOptions(string(help))
			if len(want) < 5 {
				t.Fatalf("read only %v from %s --help:\n%s", want, prog, help)
			}
			o, ok := ProgramOptions(prog)
			if !ok {
				t.Fatalf("%s is not in the table", prog)
			}
			for name, k := range want {
				got, ok := kindIn(o, name)
				switch {
				case !ok:
					t.Errorf("%s %s (%v) is not in the table", prog, name, k)
				case got != k && !(got == optionalArg && k == noArg && strings.HasPrefix(name, "--")):
					t.Errorf("%s %s takes %v, the table says %v", prog, name, k, got)
				}
			}
		})
	}
}

// TestProgramOptionsTable: no option is listed twice (a long option in two
// lists would resolve as ambiguous), aliases share their program's table,
// and what ProgramOptions returns is the caller's own.
func TestProgramOptionsTable(t *testing.T) {
	for prog, o := range programOptions {
		seen := map[string]bool{}
		for _, name := range slices.Concat(o.Long, o.LongArgs, o.LongOpt) {
			if seen[name] || !strings.HasPrefix(name, "--") {
				t.Errorf("%s: long option %q listed twice or without --", prog, name)
			}
			seen[name] = true
			if full, ok := o.Resolve(name + "=x"); !ok || full != name {
				t.Errorf("%s: %s resolves to %q, %v", prog, name, full, ok)
			}
		}
		for _, c := range o.Flags + o.Args + o.Optional {
			if n := strings.Count(o.Flags+o.Args+o.Optional, string(c)); n != 1 {
				t.Errorf("%s: short option -%c listed %d times", prog, c, n)
			}
		}
	}
	for alias, prog := range programAliases {
		a, _ := ProgramOptions(alias)
		p, _ := ProgramOptions(prog)
		if a.Flags != p.Flags || !slices.Equal(a.LongArgs, p.LongArgs) {
			t.Errorf("%s does not take %s's options", alias, prog)
		}
	}
	if _, ok := ProgramOptions("nosuchprogram"); ok {
		t.Error("ProgramOptions(nosuchprogram) is ok")
	}
	o, _ := ProgramOptions("cp")
	o.LongArgs[0] = "--changed"
	if again, _ := ProgramOptions("cp"); again.LongArgs[0] == "--changed" {
		t.Error("changing the returned Options changed the table")
	}
	if full, ok := o.Resolve("--target=/tmp"); !ok || full != "--target-directory" {
		t.Errorf("cp --target=/tmp resolves to %q, %v; want --target-directory", full, ok)
	}
	if _, ok := o.Resolve("--re"); ok {
		t.Error("cp --re (--recursive, --reflink, --remove-destination) resolves")
	}
}
