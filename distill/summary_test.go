package distill

import (
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nightshift-dev/nightshift"
)

// wordCounter counts whitespace-separated words: a stand-in tokenizer for
// the abbreviation unit tests only (the real tokenizer lives in package
// budget). The golden tests use the package's default estimate counter.
type wordCounter struct{}

func (wordCounter) Count(s string) int { return len(strings.Fields(s)) }

func TestAbbreviate(t *testing.T) {
	d := New(Config{Counter: wordCounter{}, CommandTokens: 6})
	tests := []struct {
		name, cmd string
		budget    int
		want      string
	}{
		{"fits", `apt-get install -y aide`, 6, `apt-get install -y aide`},
		{"head and target", `sed -i -e s/a/b/ -e s/c/d/ -e s/e/f/ /etc/aide/aide.conf`, 5, `sed -i -e … /etc/aide/aide.conf`},
		{"chained program kept", `sed -i -E s/x/y/ /etc/ssh/sshd_config && systemctl restart sshd`, 8, `sed -i … /etc/ssh/sshd_config && systemctl … sshd`},
		{"wrapper head", `sudo apt-get install -y -q --no-install-recommends aide aide-common`, 6, `sudo apt-get install … aide aide-common`},
		{"tiny budget cuts", `a b c d e f g h`, 4, `a b … h`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			full := oneLine(tt.cmd)
			got := d.abbreviate(full, Targets(tt.cmd), headWords(analyze(tt.cmd)), tt.budget)
			if got != tt.want {
				t.Errorf("abbreviate(%q, %d)\n got %q\nwant %q", full, tt.budget, got, tt.want)
			}
			if n := d.count(got); n > tt.budget {
				t.Errorf("%q has %d tokens, budget %d", got, n, tt.budget)
			}
		})
	}
}

func TestAbbreviateBudgetHolds(t *testing.T) {
	long := "sudo bash -c '" + strings.Repeat("sed -i s/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/b/ /etc/x; ", 40) + "'"
	for _, budget := range []int{4, 8, 24, 60} {
		d := New(Config{CommandTokens: budget})
		s := d.Summarize(Turn{Number: 1, Steps: []Step{{Action: nightshift.ActionRan, Tool: nightshift.ToolApply, Command: long, ExitCode: 1}}})
		if n := d.count(s.Steps[0].Command); n > budget {
			t.Errorf("budget %d: command %q has %d tokens", budget, s.Steps[0].Command, n)
		}
		if n := d.count(s.Line()); n > d.maxLineTokens {
			t.Errorf("budget %d: line has %d tokens, max %d", budget, n, d.maxLineTokens)
		}
	}
}

func TestLineBudget(t *testing.T) {
	var steps []Step
	for i := 0; i < 12; i++ {
		steps = append(steps, Step{Action: nightshift.ActionRan, Tool: nightshift.ToolApply, Command: "sed -i 's/x/y/' /etc/a /etc/b /etc/c /etc/d && systemctl restart sshd auditd", ExitCode: 1,
			Stderr: "sed: can't read /etc/a: No such file or directory\nsudo: a password is required\nbash: x: command not found\nE: Unable to locate package y"})
	}
	for _, max := range []int{16, 40, 120, 400} {
		d := New(Config{MaxLineTokens: max})
		line := d.Summarize(Turn{Number: 7, Steps: steps, Check: nightshift.CheckFail}).Line()
		if n := d.count(line); n > max {
			t.Errorf("max %d: %d tokens: %s", max, n, line)
		}
		if !strings.HasPrefix(line, "[Turn 7") || !strings.HasSuffix(line, "]") {
			t.Errorf("max %d: malformed %q", max, line)
		}
	}
}

func TestLinePhrases(t *testing.T) {
	d := New(Config{})
	tests := []struct {
		name string
		turn Turn
		want string
	}{
		{"no call", Turn{Number: 2}, "[Turn 2: made no tool call]"},
		{"gave up without step", Turn{Number: 3, GaveUp: true}, "[Turn 3: gave up]"},
		{"blocked without pattern", Turn{Number: 4, Steps: []Step{{Tool: nightshift.ToolApply, Command: "reboot", Action: nightshift.ActionBlocked}}}, "[Turn 4: blocked `reboot` (ban list)]"},
		{"rejected", Turn{Number: 5, Steps: []Step{{Tool: nightshift.ToolApply, Action: nightshift.ActionMalformed, Note: `missing "command"`}}}, `[Turn 5: rejected a malformed ssh_apply call (missing "command")]`},
		{"unknown tool", Turn{Number: 6, Steps: []Step{{Action: nightshift.ActionRan, Tool: "read_file", ExitCode: 0}}}, "[Turn 6: called read_file — exit 0]"},
		{"signal", Turn{Number: 7, Steps: []Step{{Action: nightshift.ActionRan, Command: "aideinit", Signal: "9", ExitCode: 137}}, Check: nightshift.CheckError}, "[Turn 7: ran `aideinit` — killed by SIGKILL; re-check errored]"},
		{"lost", Turn{Number: 8, Steps: []Step{{Command: "dnf -y update", Action: nightshift.ActionUnknown}}}, "[Turn 8: lost the connection running `dnf -y update` — outcome unknown]"},
		{"program, not its substitution", Turn{Number: 11, Steps: []Step{{Action: nightshift.ActionRan, Command: "kill -HUP $(cat /run/sshd.pid)"}}}, "[Turn 11: ran `kill -HUP $(cat /run/sshd.pid)` — exit 0]"},
		{"exit 0 is not success", Turn{Number: 9, Steps: []Step{{Action: nightshift.ActionRan, Command: "true"}}, Check: nightshift.CheckFail}, "[Turn 9: ran `true` — exit 0; re-check failed]"},
		{"hidden targets named", Turn{Number: 10, Steps: []Step{{Action: nightshift.ActionRan, Command: "cat > /etc/issue <<'EOF'\nAuthorized uses only.\nEOF"}}}, "[Turn 10: ran `cat >/etc/issue <<'EOF' …` — exit 0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := d.Summarize(tt.turn).Line(); got != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
	// A hand-built Summary renders in full.
	s := Summary{Turn: 1, Steps: []StepSummary{{Tool: nightshift.ToolApply, Command: "ls", Program: "ls"}}, Check: nightshift.CheckPass}
	if got, want := s.Line(), "[Turn 1: ran `ls` — exit 0; re-check passed]"; got != want {
		t.Errorf("hand-built: %s, want %s", got, want)
	}
}

func TestMerge(t *testing.T) {
	d := New(Config{})
	mk := func(n int, cmd string, exit int, stderr string, c nightshift.CheckStatus) Summary {
		return d.Summarize(Turn{Number: n, Steps: []Step{{Action: nightshift.ActionRan, Tool: nightshift.ToolApply, Command: cmd, ExitCode: exit, Stderr: stderr}}, Check: c})
	}
	ss := []Summary{
		mk(1, "sed -i 's/a/b/' /etc/aide.conf", 1, "sed: -e expression #1, char 5: unterminated `s' command", nightshift.CheckFail),
		mk(2, "apt-get install -y aide", 100, "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 1 (apt-get)", nightshift.CheckFail),
		mk(3, `sed  -i "s/a/c/" /etc/aide.conf`, 1, "sed: -e expression #1, char 5: unterminated `s' command", nightshift.CheckFail),
		mk(4, "apt-get install -y aide", 100, "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 1 (apt-get)", nightshift.CheckFail),
		mk(5, "sed -i 's/a/d/' /etc/aide.conf", 1, "sed: -e expression #1, char 5: unterminated `s' command", nightshift.CheckFail),
	}
	want := "[Turns 1–5: ran sed on /etc/aide.conf ×3, apt-get install aide ×2 — re-check failed every time; sed expression error ×3, dpkg lock held ×2]"
	if got := Merge(ss); got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
	if Merge(nil) != "" {
		t.Error("Merge(nil) is not empty")
	}
	// Order of input does not change the span.
	rev := []Summary{ss[4], ss[3], ss[2], ss[1], ss[0]}
	if got := Merge(rev); !strings.HasPrefix(got, "[Turns 1–5: ran sed") {
		t.Errorf("reversed: %s", got)
	}
}

func TestProgramAndGist(t *testing.T) {
	d := New(Config{})
	tests := []struct{ cmd, prog, gist string }{
		{`kill -HUP $(cat /run/sshd.pid)`, "kill", "kill"},
		{`sudo DEBIAN_FRONTEND=noninteractive apt-get install -y aide`, "apt-get install", "apt-get install aide"},
		{`echo 'Banner /etc/issue.net' | sudo tee -a /etc/ssh/sshd_config`, "tee", "tee on /etc/ssh/sshd_config"},
		{`setsid -f nice -n 5 sed -i 's/a/b/' /etc/login.defs`, "sed", "sed on /etc/login.defs"},
		{`flock /run/l systemctl mask ctrl-alt-del.target`, "systemctl mask", "systemctl mask ctrl-alt-del.target"},
		{`su -c 'systemctl restart auditd' root`, "systemctl restart", "systemctl restart auditd"},
		{`chroot /mnt dnf -y remove telnet-server`, "dnf remove", "dnf remove telnet-server"},
		{`sudo bash -c 'echo x; chmod 600 /etc/crontab'`, "chmod", "chmod on /etc/crontab"},
		{`find /var/log -type f -exec chmod g-wx,o-rwx {} +`, "find", "find"},
		{`> /etc/cron.deny`, "", "redirection on /etc/cron.deny"},
	}
	for _, tt := range tests {
		s := d.Summarize(Turn{Number: 1, Steps: []Step{{Action: nightshift.ActionRan, Tool: nightshift.ToolApply, Command: tt.cmd}}}).Steps[0]
		if s.Program != tt.prog || s.Gist != tt.gist {
			t.Errorf("%s: program %q gist %q, want %q %q", tt.cmd, s.Program, s.Gist, tt.prog, tt.gist)
		}
	}
}

// TestREADMELine: the README's sample line is what Example_readme prints
// (its "// Output:" comment, which go test checks against Summarize).
func TestREADMELine(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var sample string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "    [Turn ") {
			sample = strings.TrimPrefix(l, "    ")
			break
		}
	}
	if sample == "" {
		t.Fatal("the README has no indented sample line")
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "readme_example_test.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var output string
	for _, ex := range doc.Examples(f) {
		if ex.Name == "_readme" {
			output = strings.TrimSpace(ex.Output)
		}
	}
	if output == "" {
		t.Fatal("readme_example_test.go has no Example_readme with an Output comment")
	}
	if output != sample {
		t.Errorf("README:         %s\nExample_readme: %s", sample, output)
	}
}
