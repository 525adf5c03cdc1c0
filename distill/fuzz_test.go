package distill

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nightshift-dev/nightshift"
	"github.com/nightshift-dev/nightshift/shell"
)

var fuzzSeeds = []string{
	`sudo sed -i 's/^#\?PermitRootLogin.*/PermitRootLogin no/' /etc/ssh/sshd_config && sudo systemctl restart sshd`,
	`echo "PermitRootLogin no" | sudo tee -a /etc/ssh/sshd_config >/dev/null`,
	"cat > /etc/x <<'EOF'\nbody $x\nEOF\nbash <<-E\n\tsed -i s/a/b/ /etc/y\n\tE\n",
	`sudo sh -c 'echo "x" >> /etc/f; sysctl -w a.b=1'`,
	`for f in /etc/*.conf; do chmod 600 "$f"; done`,
	`kill -HUP $(cat /run/sshd.pid) ${X:-y} ` + "`id -u`",
	`printf $'a\tb' > "/tmp/$(date)" 2>&1 <<< 'x'`,
	`diff <(sort a) >(cat) ''#x "unterminated`,
	`a\`, `'`, `"`, `$(`, `<<`, `2>&`, `\` + "\n", "#c\n\n;", `$"x"`, `''#$x`,
	`augtool -s <<EOF` + "\nset /files/etc/x/y z\nEOF",
}

func FuzzTargets(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		ts := Targets(cmd)
		seen := map[string]bool{}
		for _, x := range ts {
			if x == "" || seen[x] {
				t.Fatalf("Targets(%q) = %q: empty or repeated target", cmd, ts)
			}
			seen[x] = true
		}
	})
}

func FuzzCanonical(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		c := Canonical(cmd)
		if again := Canonical(c); again != c {
			t.Fatalf("not idempotent:\ninput %q\nonce  %q\ntwice %q", cmd, c, again)
		}
		checkSameMeaning(t, cmd, c)
	})
}

// checkSameMeaning checks that a command bash parses keeps its meaning in
// canonical form: package shell reads the same commands, with the same
// words, redirections and standard input, from both.
func checkSameMeaning(t *testing.T, cmd, c string) {
	t.Helper()
	if _, err := shell.Parse(cmd); err != nil || strings.HasSuffix(cmd, `\`) || tildeEscape.MatchString(cmd) {
		// A final backslash is a literal one, which Canonical quotes;
		// a backslash in a tilde prefix stops the expansion, which
		// Canonical writes with quotes and the analysis reads as an
		// unknown user's home: not compared.
		return
	}
	if _, err := shell.Parse(c); err != nil {
		t.Fatalf("canonical form does not parse: %v\ninput %q\nform  %q", err, cmd, c)
	}
	a, b := analyze(cmd), analyze(c)
	if got, want := describe(b), describe(a); got != want {
		t.Fatalf("canonical form means something else:\ninput %q\nform  %q\nreads\n%s\nwant\n%s", cmd, c, got, want)
	}
}

var tildeEscape = regexp.MustCompile(`~[^/\s]*\\`)

func describe(an *shell.Analysis) string {
	var b strings.Builder
	// Kinds and values, not glob patterns: a final backslash reads as a
	// literal one either way.
	word := func(w shell.Word) string { return fmt.Sprintf("%d:%q", w.Kind, w.Value) }
	for _, c := range an.Commands {
		for _, w := range c.Args {
			b.WriteString(word(w) + " ")
		}
		fmt.Fprintf(&b, "via %q stdin %v %q\n", c.Via, c.Stdin, c.StdinText)
		for _, r := range c.Redirs {
			fmt.Fprintf(&b, "  %s %s\n", r.Op, word(r.Target))
		}
	}
	return b.String()
}

// FuzzSummarize checks that no command or output makes a line panic, break
// its form or its budget, or lose determinism.
func FuzzSummarize(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, "sed: -e expression #1, char 3: unterminated `s' command", 1)
	}
	d := New(Config{CommandTokens: 8, MaxLineTokens: 40})
	f.Fuzz(func(t *testing.T, cmd, out string, exit int) {
		turn := Turn{Number: 3, Steps: []Step{{Action: nightshift.ActionRan, Tool: nightshift.ToolApply, Command: cmd, Stderr: out, ExitCode: exit}}, Check: nightshift.CheckFail}
		line := d.Summarize(turn).Line()
		if !strings.HasPrefix(line, "[Turn 3") || !strings.HasSuffix(line, "]") {
			t.Fatalf("malformed line %q", line)
		}
		if n := d.count(line); n > 40 {
			t.Fatalf("line %q has %d tokens", line, n)
		}
		if utf8.ValidString(cmd) && !utf8.ValidString(line) {
			t.Fatalf("line %q is not valid UTF-8", line)
		}
		if again := d.Summarize(turn).Line(); again != line {
			t.Fatalf("not deterministic: %q %q", line, again)
		}
	})
}

// FuzzErrorLine: ErrorLine and CheckLine never panic, return valid UTF-8
// within their bound, on one line, taken from the output (its start
// before any middle cut).
func FuzzErrorLine(f *testing.F) {
	for _, s := range []string{"E: Unable to locate package x\n", "sed: -e expression #1, char 3: unknown command: `x'\n",
		"/etc/ssh/sshd_config: line 3: Bad configuration option: Foo\n", "Rule\txccdf_org.x_rule_y\nResult\tfail\n", "Rule\t" + strings.Repeat("r", 400) + "\nResult\terror\n",
		"+ trace\n\n", "\xff\xfe error \xc3", strings.Repeat("error ", 100), ""} {
		f.Add(s, 1)
		f.Add(s, 0)
	}
	f.Fuzz(func(t *testing.T, out string, exit int) {
		for _, l := range []string{ErrorLine(out, exit), CheckLine(out)} {
			if !utf8.ValidString(l) || strings.Contains(l, "\n") || len(l) > errorLineBytes+len("oscap: ")+len("…") {
				t.Fatalf("line %q of %q: invalid, multi-line or too long", l, out)
			}
		}
		if l := ErrorLine(out, exit); l != "" {
			head, _, _ := strings.Cut(l, "…")
			if !strings.Contains(strings.ToValidUTF8(out, "�"), head) {
				t.Fatalf("ErrorLine(%q) = %q: not from the output", out, l)
			}
		}
	})
}
