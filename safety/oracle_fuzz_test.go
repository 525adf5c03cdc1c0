package safety_test

import (
	"context"
	"flag"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/nightshift-dev/nightshift/internal/testenv"
	"github.com/nightshift-dev/nightshift/safety"
)

var (
	oracleMutations = flag.Int("oracle-mutations", 400, "number of mutants TestOracleMutations checks")
)

// mutator rewrites a command the way an adversary would to hide it from a
// checker (control characters, quotes, line continuations, comments,
// braces, here-documents, wrappers); bash runs most mutants as before.
type mutator struct {
	name string
	fn   func(r *rand.Rand, cmd string) string
}

var controlChars = []string{"\r", "\v", "\f", "\x1b", "\u00a0", "\t"}

var wrapperPrefixes = []string{
	"sudo ", "sudo -u root ", "sudo -E -- ", "env ", "env -i PATH=/usr/bin:/bin ", "env -- ", "nice ", "nice -n 5 ",
	"nohup ", "timeout 5 ", "timeout -s KILL 5 ", "setsid ", "setsid -f ", "command ", "exec ", "builtin ",
	"time ", "time -p ", "/usr/bin/time -o /tmp/t ", "stdbuf -o0 ", "ionice -c3 ", "chrt -o 0 ", "taskset 1 ",
	"flock /tmp/l ", "chroot / ", "nsenter -t 1 -m ", "unshare -m ", "setpriv --reuid=0 ", "pkexec ",
	"busybox ", "xargs ", "watch -n1 ", "runuser -u root -- ", "doas ",
}

// quoteSingle quotes s for bash.
func quoteSingle(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// firstWord splits cmd into its leading word (letters, digits, . _ / -)
// and the rest.
func firstWord(cmd string) (string, string) {
	i := 0
	for i < len(cmd) && strings.IndexByte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-", cmd[i]) >= 0 {
		i++
	}
	return cmd[:i], cmd[i:]
}

var mutators = []mutator{
	{"control char before comment", func(r *rand.Rand, c string) string {
		return "true" + controlChars[r.IntN(3)] + "#; " + c
	}},
	{"control char anywhere", func(r *rand.Rand, c string) string {
		i := r.IntN(len(c) + 1)
		return c[:i] + controlChars[r.IntN(len(controlChars))] + c[i:]
	}},
	{"control char at end", func(r *rand.Rand, c string) string {
		return c + controlChars[r.IntN(3)]
	}},
	{"quoted program name", func(r *rand.Rand, c string) string {
		w, rest := firstWord(c)
		if len(w) < 2 {
			return c
		}
		k := r.IntN(len(w)-1) + 1
		switch r.IntN(5) {
		case 0:
			return w[:k] + "''" + w[k:] + rest
		case 1:
			return `"` + w + `"` + rest
		case 2:
			return `\` + w + rest
		case 3:
			return w[:k] + `\` + w[k:] + rest
		default:
			return "$'" + w + "'" + rest
		}
	}},
	{"glob in program name", func(r *rand.Rand, c string) string {
		w, rest := firstWord(c)
		if len(w) < 2 {
			return c
		}
		k := r.IntN(len(w))
		if w[k] == '/' {
			return c
		}
		return w[:k] + "[" + w[k:k+1] + "]" + w[k+1:] + rest
	}},
	{"variable program name", func(r *rand.Rand, c string) string {
		w, rest := firstWord(c)
		if w == "" {
			return c
		}
		return "p=" + quoteSingle(w) + "; $p" + rest
	}},
	{"line continuation", func(r *rand.Rand, c string) string {
		i := r.IntN(len(c) + 1)
		return c[:i] + "\\\n" + c[i:]
	}},
	{"trailing comment", func(r *rand.Rand, c string) string { return c + " # harmless" }},
	{"comment ending in a backslash", func(r *rand.Rand, c string) string {
		// In bash a comment ends at the newline; the backslash does not
		// continue it.
		return []string{"true # \\\n", "# note \\\n", ": # \\\r\n"}[r.IntN(3)] + c
	}},
	{"continued comment after", func(r *rand.Rand, c string) string { return c + " # x\\\ny" }},
	{"leading comment line", func(r *rand.Rand, c string) string { return "# check the config\n" + c }},
	{"hash inside", func(r *rand.Rand, c string) string {
		i := r.IntN(len(c) + 1)
		return c[:i] + "#" + c[i:]
	}},
	{"brace group", func(r *rand.Rand, c string) string { return "{ " + c + "\n}" }},
	{"subshell", func(r *rand.Rand, c string) string { return "( " + c + "\n)" }},
	{"brace expansion", func(r *rand.Rand, c string) string {
		f := strings.Fields(c)
		if len(f) < 2 || strings.ContainsAny(c, "'\"\\${}()|&;<>`*?[]#\n") {
			return c
		}
		return "{" + strings.Join(f, ",") + "}"
	}},
	{"here-document into bash", func(r *rand.Rand, c string) string { return "bash <<'EOF'\n" + c + "\nEOF" }},
	{"here-document before", func(r *rand.Rand, c string) string {
		d := []string{"EOF", "EOF\r", "'EOF'", "-EOF"}[r.IntN(4)]
		return "cat <<" + d + "\nx\nEOF\n" + c
	}},
	{"arithmetic before", func(r *rand.Rand, c string) string { return "((x=1<<2))\n" + c }},
	{"wrapper", func(r *rand.Rand, c string) string { return wrapperPrefixes[r.IntN(len(wrapperPrefixes))] + c }},
	{"bash -c", func(r *rand.Rand, c string) string {
		return []string{"bash -c ", "sh -c ", "su -c ", "sudo sh -c "}[r.IntN(4)] + quoteSingle(c)
	}},
	{"sh -c with arguments", func(r *rand.Rand, c string) string { return `sh -c '"$@"' sh ` + c }},
	{"after true", func(r *rand.Rand, c string) string {
		return []string{"true; ", "true && ", "false || ", "true\n"}[r.IntN(4)] + c
	}},
	{"if", func(r *rand.Rand, c string) string { return "if true; then " + c + "\nfi" }},
	{"function", func(r *rand.Rand, c string) string { return "f() { " + c + "\n}; f" }},
	{"background", func(r *rand.Rand, c string) string { return c + " &" }},
	{"delete a byte", func(r *rand.Rand, c string) string {
		if c == "" {
			return c
		}
		i := r.IntN(len(c))
		return c[:i] + c[i+1:]
	}},
	{"double a byte", func(r *rand.Rand, c string) string {
		if c == "" {
			return c
		}
		i := r.IntN(len(c))
		return c[:i+1] + c[i:]
	}},
}

// mutate applies one to three mutators chosen by r.
func mutate(r *rand.Rand, cmd string) (string, []string) {
	var names []string
	for n := r.IntN(3) + 1; n > 0; n-- {
		m := mutators[r.IntN(len(mutators))]
		cmd = m.fn(r, cmd)
		names = append(names, m.name)
	}
	return cmd, names
}

// checkAgainstBash runs cmd under bash when Match allows it and fails when
// bash then did something banned. It reports whether cmd was run.
func checkAgainstBash(t *testing.T, run func(string) ([]action, error), bl *safety.BanList, cmd, how string) bool {
	t.Helper()
	if strings.ContainsRune(cmd, 0) {
		return false // bash -c cannot receive a NUL byte
	}
	if _, blocked := bl.Match(cmd); blocked {
		return false
	}
	acts, err := run(cmd)
	if err != nil {
		t.Fatalf("%q: %v", cmd, err)
	}
	if j := judged(acts); len(j) > 0 {
		t.Errorf("Match allows %q (%s), but bash did: %v", cmd, how, j)
	} else if len(acts) > 0 {
		t.Logf("not judged: Match allows %q (%s); bash ran %v", cmd, how, acts)
	}
	return true
}

// TestOracleMutations mutates corpus commands deterministically (the seed
// is logged; set it with -seed or NIGHTSHIFT_SEED, default 11) and requires
// that every mutant Match allows does nothing banned under bash.
func TestOracleMutations(t *testing.T) {
	o := newBashOracle(t)
	bl := safety.DefaultBanList()
	entries := loadOracleCorpora(t)
	seed := testenv.Seed(t, 11)
	t.Logf("%d mutants", *oracleMutations)
	r := rand.New(rand.NewPCG(seed, 0))
	var times oracleTimes
	run := func(cmd string) ([]action, error) {
		tr, err := o.Run(context.Background(), cmd)
		if err != nil {
			return nil, err
		}
		times.add(tr.Duration)
		return bannedActions(bl, tr), nil
	}
	start := time.Now()
	ran := 0
	for i := 0; i < *oracleMutations; i++ {
		e := entries[r.IntN(len(entries))]
		cmd, how := mutate(r, e.Command)
		base := "the original is blocked"
		if _, blocked := bl.Match(e.Command); !blocked {
			base = "the original is allowed too"
		}
		if checkAgainstBash(t, run, bl, cmd, e.Name+": "+strings.Join(how, ", ")+"; "+base) {
			ran++
		}
	}
	t.Logf("%d of %d mutants allowed and run under bash in %v; per run: %s",
		ran, *oracleMutations, time.Since(start).Round(time.Millisecond), times.summary())
}

// FuzzAgainstBash: for any command Match allows, bash does nothing banned.
// The fuzzer's input is a command and a mutation seed (0: none), seeded
// from the corpora.
func FuzzAgainstBash(f *testing.F) {
	o := newBashOracle(f)
	bl := safety.DefaultBanList()
	// The banned corpus as it is and mutated once each; the remediations
	// run in TestOracleCorpus already.
	for i, e := range loadOracleCorpora(f) {
		if e.Oracle != "" {
			f.Add(e.Command, uint64(0))
			f.Add(e.Command, uint64(i+1))
		}
	}
	f.Add("true\r#; rm -rf /", uint64(1))
	f.Fuzz(func(t *testing.T, cmd string, seed uint64) {
		how := "as given"
		if seed != 0 {
			var names []string
			cmd, names = mutate(rand.New(rand.NewPCG(seed, 1)), cmd)
			how = strings.Join(names, ", ")
		}
		run := func(cmd string) ([]action, error) {
			tr, err := o.Run(context.Background(), cmd)
			if err != nil {
				return nil, err
			}
			return bannedActions(bl, tr), nil
		}
		checkAgainstBash(t, run, bl, cmd, how)
	})
}
