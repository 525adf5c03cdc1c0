package distill

import (
	"strings"
	"testing"
	"unicode/utf8"
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
	})
}

// FuzzSummarize checks that no command or output makes a line panic, break
// its form or its budget, or lose determinism.
func FuzzSummarize(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, "sed: -e expression #1, char 3: unterminated `s' command", 1)
	}
	d := New(Config{CommandTokens: 8, MaxLineTokens: 40})
	f.Fuzz(func(t *testing.T, cmd, out string, exit int) {
		turn := Turn{Number: 3, Steps: []Step{{Tool: ToolApply, Command: cmd, Stderr: out, ExitCode: exit}}, Check: Failed}
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
